/* qdot_x86_kern.h — the body of the x86-64 qdot kernels (qdot.h), compiled twice by qdot_x86.c:
   once for AVX2 and once for AVX-512 VNNI. The two differ only in sum_u8s8() (how four u8×s8
   products become one int32 lane), so the unpacking of every weight format is written once.
   Before including, qdot_x86.c defines KTGT (the target attribute), KFN(name) (the suffixed
   function name), sum_u8s8 and madd16_acc. Not a header of its own: include nowhere else. */

#define KINL KTGT __attribute__((always_inline)) static inline

/* Σ of the 8 lanes */
KINL float KFN(hsum)(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Signed × signed: |a|·(b with a's sign), the unsigned operand u8s8 products need (|a| ≤ 128
   fits u8; with AVX2's 16-bit pair sums 2·128·127 < 2^15). */
KINL __m256i KFN(sum_s8s8)(__m256i a, __m256i b)
{
    return sum_u8s8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

KINL __m256i KFN(load32)(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* A Q4_K superblock's 8 six-bit scales into int16 lanes 0..7 and its 8 mins into lanes 8..15
   (get_scale_min_k4 for all sub-blocks at once, on 32-bit words). */
KINL __m256i KFN(scales_mins_k4)(const uint8_t *scales)
{
    uint32_t u[4];
    memcpy(u, scales, 12);
    u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
    const uint32_t m_lo = u[1] & 0x3f3f3f3f;
    u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
    u[2] = m_lo;
    u[0] &= 0x3f3f3f3f;
    return _mm256_cvtepu8_epi16(_mm_set_epi32((int)u[3], (int)u[2], (int)u[1], (int)u[0]));
}

/* One 32-block: acc += Σq·xq · a (a already holds the weight scale × the activation scale). */
KINL __m256 KFN(fma_blk)(__m256i isum, float a, __m256 acc)
{
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(a), acc);
}

/* Q8_0 decode is bound by the weight stream (0.8B: 0.81 GB per token, a third of it the tied
   vocabulary head), so its kernels fetch ahead themselves: one L2 hint per two blocks (68 bytes),
   QDOT_Q8_AHEAD bytes ahead, runs through row ends into the next rows, where matmul.c's hints per
   row came in bursts that waited on the line-fill buffers. With the weights in 2 MiB pages (a
   page walk per 4 KiB otherwise) this took 0.8B Q8_0 decode, 1 thread, from 15.5 to 17.8 tokens/s
   (2048 ahead: 17.5; 8192: 17.6; 12288: 17.4; a hint per block: 17.2) on one Zen 4 VM with 69 GB/s.
   On another (AMD EPYC, AVX-512, 30 GB/s, 2026-11-28) far hints cost half the rate: tg64 at 1 / 2
   threads with 512 ahead 20.5 / 31.8 tokens/s, 1024: 20.9 / 31.4, 2048: 14.1 / 22.6, 4096: 11.1 /
   19.6, 16384: 13.1 / -, no hint (0 ahead): 20.2 / - (docs/PERFORMANCE.md). 1024 keeps nearly all
   of the first machine's gain and all of the second's. Reads past the matrix's end are hints only:
   they cannot fault. */
#define QDOT_Q8_AHEAD 1024
KINL void KFN(q8_ahead)(const block_q8_0 *b) { __builtin_prefetch((const char *)b + QDOT_Q8_AHEAD, 0, 1); }

#ifndef QDOT_NO_Q8_0
/* Q8_0 against the activation row of qdot_quantize_act (the blocks, then xd[nb], qdot.h): per
   block and row, isum = Σ w·x exact in int32 lanes (|w| against x with w's sign: VPMADDUBSW
   wants an unsigned side), then acc += isum · (wd·xd), the scale products formed 8 blocks per
   multiply as each group of 8 blocks begins (in the same pass over the weights: a pass of its own
   over the scales cost 5 % at one row). The AVX-512 VNNI family has its own 512-bit kernel
   (qdot_x86.c) with the same lanes and operations, so the families agree bit for bit.
   rows_q8_0_blk: block j for the nx rows, |w| made once, then per row the exact sum and one
   multiply-add by that row's scale product S[8r]. */
KINL void KFN(rows_q8_0_blk)(const block_q8_0 *b, const char *xv, size_t x_rb, int64_t j, const float *S,
                             __m256 *acc, const int nx)
{
    const __m256i wq = KFN(load32)(b[j].qs), wabs = _mm256_sign_epi8(wq, wq);
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++) {
        const block_q8x *x = (const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + j;
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_u8s8(wabs, _mm256_sign_epi8(KFN(load32)(x->qs), wq))),
                                 _mm256_broadcast_ss(&S[8 * r]), acc[r]);
    }
}

KINL const float *KFN(q8_xd)(const char *xv, size_t x_rb, int r, int64_t nb)
{
    return (const float *)(const void *)((const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + nb);
}

KINL void KFN(rows_q8_0_n)(const void *w, const char *xv, size_t x_rb, int64_t nb, float *out, const int nx)
{
    const block_q8_0 *b = w;
    /* even blocks into acc0, odd into acc1: consecutive blocks do not wait on one another's add
       (two named arrays, so the accumulators stay registers) */
    __m256 acc0[QDOT_MAX_ROWS], acc1[QDOT_MAX_ROWS];
    float S[8 * QDOT_MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        acc0[r] = acc1[r] = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= nb; j += 8) {
        const __m256 wd = _mm256_cvtph_ps(_mm_set_epi16((short)b[j + 7].d, (short)b[j + 6].d, (short)b[j + 5].d,
                                                        (short)b[j + 4].d, (short)b[j + 3].d, (short)b[j + 2].d,
                                                        (short)b[j + 1].d, (short)b[j].d));
#pragma GCC unroll 4
        for (int r = 0; r < nx; r++)
            _mm256_storeu_ps(&S[8 * r], _mm256_mul_ps(wd, _mm256_loadu_ps(KFN(q8_xd)(xv, x_rb, r, nb) + j)));
#pragma GCC unroll 1
        for (int k = 0; k < 8; k += 2) {
            KFN(q8_ahead)(&b[j + k]);
            KFN(rows_q8_0_blk)(b, xv, x_rb, j + k, S + k, acc0, nx);
            KFN(rows_q8_0_blk)(b, xv, x_rb, j + k + 1, S + k + 1, acc1, nx);
        }
    }
    for (; j < nb; j++) { /* the last nb % 8 blocks: the same products one at a time */
#pragma GCC unroll 4
        for (int r = 0; r < nx; r++)
            S[8 * r] = _cvtsh_ss(b[j].d) * KFN(q8_xd)(xv, x_rb, r, nb)[j];
        KFN(rows_q8_0_blk)(b, xv, x_rb, j, S, j % 2 ? acc1 : acc0, nx);
    }
#pragma GCC unroll 4
    for (int r = 0; r < nx; r++)
        out[r] = KFN(hsum)(_mm256_add_ps(acc0[r], acc1[r]));
}

/* One row: the several-row kernel with nx = 1, so a sequence decoded alone and in a batch gets
   the same result bit for bit. */
KTGT static float KFN(dot_q8_0)(const void *w, const void *xv, int64_t nb)
{
    float out;
    KFN(rows_q8_0_n)(w, xv, 0, nb, &out, 1);
    return out;
}

KTGT static void KFN(rows_q8_0)(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: KFN(rows_q8_0_n)(w, x, x_rb, nb, out, 1); break;
    case 2: KFN(rows_q8_0_n)(w, x, x_rb, nb, out, 2); break;
    case 3: KFN(rows_q8_0_n)(w, x, x_rb, nb, out, 3); break;
    default: KFN(rows_q8_0_n)(w, x, x_rb, nb, out, 4); break;
    }
}
#endif

KTGT static float KFN(dot_q4_0)(const void *w, const void *xv, int64_t nb)
{
    const block_q8x *x = xv;
    const block_q4_0 *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps();
    float off = 0;
    for (int64_t j = 0; j < nb; j++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b[j].qs);
        /* values 0..15 low nibbles, 16..31 high nibbles */
        const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), m4);
        const float d = _cvtsh_ss(b[j].d);
        acc = KFN(fma_blk)(sum_u8s8(q, KFN(load32)(x[j].qs)), d * x[j].d, acc);
        off += 8 * d * x[j].s; /* x = d·(q − 8) */
    }
    return KFN(hsum)(acc) - off;
}

/* The 8 scales and mins of a Q4_K/Q5_K superblock as d·sc and dmin·m. */
KINL void KFN(k_scales)(const uint8_t *scales, float d, float dmin, float *sc, float *mn)
{
    for (int s = 0; s < 8; s++) {
        uint8_t a, m;
        get_scale_min_k4(s, scales, &a, &m);
        sc[s] = d * a;
        mn[s] = dmin * m;
    }
}

/* Q4_K × Q8_K (qdot.h): per 64-value group, VPMADDUBSW pairs nibbles with activations into int16
   (≤ 2·15·127) and VPMADDWD multiplies those pairs by the sub-block's 6-bit scale into int32
   (≤ 2·3810·63), so a superblock is one int32 vector and one f32 multiply-add; the mins meet the
   activations' 16-value sums in integers. Both families use this body: a VPDPBUSD would still need
   the scale multiply that VPMADDWD gives for free (VNNI's VPDPWSSD also adds it to the sum). */
KTGT static float KFN(dot_q4_K)(const void *w, const void *xv, int64_t nb)
{
    const block_q4_K *b = w;
    const block_q8k *x = xv;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const __m256i sm = KFN(scales_mins_k4)(b[i].scales);
        const __m128i sc = _mm256_castsi256_si128(sm);
        const __m256i scales = _mm256_set_m128i(sc, sc);
        /* mins: Σ m_j·(Σ of sub-block j's activations) in int32 lanes */
        const __m256i bs = KFN(load32)(x[i].bsums);
        const __m128i pair = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        const __m128i pm = _mm_madd_epi16(_mm256_extracti128_si256(sm, 1), pair);
        accm = _mm_fmadd_ps(_mm_set1_ps(_cvtsh_ss(b[i].dmin) * x[i].d), _mm_cvtepi32_ps(pm), accm);
        __m256i sumi = _mm256_setzero_si256();
        for (int g = 0; g < 4; g++) {
            /* int16 lane j of `scales` broadcast: sub-blocks 2g and 2g+1 */
            const __m256i s0 = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)((4 * g + 1) << 8 | 4 * g)));
            const __m256i s1 = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)((4 * g + 3) << 8 | (4 * g + 2))));
            const __m256i v = KFN(load32)(b[i].qs + 32 * g);
            const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
            sumi = madd16_acc(sumi, _mm256_maddubs_epi16(lo, KFN(load32)(x[i].qs + 64 * g)), s0);
            sumi = madd16_acc(sumi, _mm256_maddubs_epi16(hi, KFN(load32)(x[i].qs + 64 * g + 32)), s1);
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_set1_ps(_cvtsh_ss(b[i].d) * x[i].d), acc);
    }
    accm = _mm_add_ps(accm, _mm_movehl_ps(accm, accm));
    accm = _mm_add_ss(accm, _mm_movehdup_ps(accm));
    return KFN(hsum)(acc) - _mm_cvtss_f32(accm);
}

/* dot_q4_K for nx activation rows (qdot_rows_fn): a superblock's scales and nibbles are unpacked
   once for all rows, then each row in turn takes the whole superblock (its integer sum stays in a
   register: looping over rows inside the 64-value groups instead kept the sums in memory, ~2×
   slower); each row's integer sums and its two accumulators follow dot_q4_K's order, so each
   result is dot_q4_K's bit for bit. */
KINL void KFN(rows_q4_K_n)(const void *w, const char *xv, size_t x_rb, int64_t nb, float *out, const int nx)
{
    const block_q4_K *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc[QDOT_MAX_ROWS];
    __m128 accm[QDOT_MAX_ROWS];
    for (int r = 0; r < nx; r++)
        acc[r] = _mm256_setzero_ps(), accm[r] = _mm_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const __m256i sm = KFN(scales_mins_k4)(b[i].scales);
        const __m128i sc = _mm256_castsi256_si128(sm), mins = _mm256_extracti128_si256(sm, 1);
        const __m256i scales = _mm256_set_m128i(sc, sc);
        const float d = _cvtsh_ss(b[i].d), dmin = _cvtsh_ss(b[i].dmin);
        __m256i lo[4], hi[4], s0[4], s1[4];
        for (int g = 0; g < 4; g++) {
            s0[g] = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)((4 * g + 1) << 8 | 4 * g)));
            s1[g] = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)((4 * g + 3) << 8 | (4 * g + 2))));
            const __m256i v = KFN(load32)(b[i].qs + 32 * g);
            lo[g] = _mm256_and_si256(v, m4), hi[g] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        }
        for (int r = 0; r < nx; r++) {
            const block_q8k *x = (const block_q8k *)(const void *)(xv + (size_t)r * x_rb) + i;
            const __m256i bs = KFN(load32)(x->bsums);
            const __m128i pair = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
            accm[r] = _mm_fmadd_ps(_mm_set1_ps(dmin * x->d), _mm_cvtepi32_ps(_mm_madd_epi16(mins, pair)), accm[r]);
            __m256i sumi = _mm256_setzero_si256();
            for (int g = 0; g < 4; g++) {
                sumi = madd16_acc(sumi, _mm256_maddubs_epi16(lo[g], KFN(load32)(x->qs + 64 * g)), s0[g]);
                sumi = madd16_acc(sumi, _mm256_maddubs_epi16(hi[g], KFN(load32)(x->qs + 64 * g + 32)), s1[g]);
            }
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_set1_ps(d * x->d), acc[r]);
        }
    }
    for (int r = 0; r < nx; r++) {
        __m128 m = _mm_add_ps(accm[r], _mm_movehl_ps(accm[r], accm[r]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[r] = KFN(hsum)(acc[r]) - _mm_cvtss_f32(m);
    }
}

KTGT static void KFN(rows_q4_K)(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: KFN(rows_q4_K_n)(w, x, x_rb, nb, out, 1); break;
    case 2: KFN(rows_q4_K_n)(w, x, x_rb, nb, out, 2); break;
    case 3: KFN(rows_q4_K_n)(w, x, x_rb, nb, out, 3); break;
    default: KFN(rows_q4_K_n)(w, x, x_rb, nb, out, 4); break;
    }
}

KTGT static float KFN(dot_q5_K)(const void *w, const void *xv, int64_t nb)
{
    const block_q8x *x = xv;
    const block_q5_K *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(); /* even and odd sub-blocks */
    float mins = 0;
    for (int64_t i = 0; i < nb / 8; i++, x += 8) {
        float sc[8], mn[8];
        KFN(k_scales)(b[i].scales, _cvtsh_ss(b[i].d), _cvtsh_ss(b[i].dmin), sc, mn);
        const __m256i qh = KFN(load32)(b[i].qh);
        for (int g = 0; g < 4; g++) {
            const __m256i v = KFN(load32)(b[i].qs + 32 * g);
            /* bit s of qh[k] is bit 4 of sub-block s's value k (16-bit shifts: the bits that cross
               into a byte from its neighbour are masked off) */
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), one), 4);
            const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g + 1), one), 4);
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(v, m4), h0);
            const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), h1);
            acc = KFN(fma_blk)(sum_u8s8(lo, KFN(load32)(x[2 * g].qs)), sc[2 * g] * x[2 * g].d, acc);
            acc2 = KFN(fma_blk)(sum_u8s8(hi, KFN(load32)(x[2 * g + 1].qs)), sc[2 * g + 1] * x[2 * g + 1].d, acc2);
            mins += mn[2 * g] * x[2 * g].s + mn[2 * g + 1] * x[2 * g + 1].s;
        }
    }
    return KFN(hsum)(_mm256_add_ps(acc, acc2)) - mins;
}

/* dot_q5_K for nx activation rows (qdot_rows_fn): a superblock's scales and 5-bit values are
   unpacked once for all rows, then each row takes them in dot_q5_K's order, so each result is
   dot_q5_K's bit for bit. llama.cpp's Q4_K_M files keep the GDN input projections (attn_qkv) in
   Q5_K. */
KINL void KFN(rows_q5_K_n)(const void *w, const char *xv, size_t x_rb, int64_t nb, float *out, const int nx)
{
    const block_q5_K *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
    __m256 acc[QDOT_MAX_ROWS], acc2[QDOT_MAX_ROWS];
    float mins[QDOT_MAX_ROWS];
    for (int r = 0; r < nx; r++)
        acc[r] = acc2[r] = _mm256_setzero_ps(), mins[r] = 0;
    for (int64_t i = 0; i < nb / 8; i++) {
        float sc[8], mn[8];
        KFN(k_scales)(b[i].scales, _cvtsh_ss(b[i].d), _cvtsh_ss(b[i].dmin), sc, mn);
        const __m256i qh = KFN(load32)(b[i].qh);
        __m256i lo[4], hi[4];
        for (int g = 0; g < 4; g++) {
            const __m256i v = KFN(load32)(b[i].qs + 32 * g);
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), one), 4);
            const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g + 1), one), 4);
            lo[g] = _mm256_or_si256(_mm256_and_si256(v, m4), h0);
            hi[g] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), h1);
        }
        for (int r = 0; r < nx; r++) {
            const block_q8x *x = (const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + 8 * i;
            for (int g = 0; g < 4; g++) {
                acc[r] = KFN(fma_blk)(sum_u8s8(lo[g], KFN(load32)(x[2 * g].qs)), sc[2 * g] * x[2 * g].d, acc[r]);
                acc2[r] = KFN(fma_blk)(sum_u8s8(hi[g], KFN(load32)(x[2 * g + 1].qs)), sc[2 * g + 1] * x[2 * g + 1].d,
                                       acc2[r]);
                mins[r] += mn[2 * g] * x[2 * g].s + mn[2 * g + 1] * x[2 * g + 1].s;
            }
        }
    }
    for (int r = 0; r < nx; r++)
        out[r] = KFN(hsum)(_mm256_add_ps(acc[r], acc2[r])) - mins[r];
}

KTGT static void KFN(rows_q5_K)(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: KFN(rows_q5_K_n)(w, x, x_rb, nb, out, 1); break;
    case 2: KFN(rows_q5_K_n)(w, x, x_rb, nb, out, 2); break;
    case 3: KFN(rows_q5_K_n)(w, x, x_rb, nb, out, 3); break;
    default: KFN(rows_q5_K_n)(w, x, x_rb, nb, out, 4); break;
    }
}

/* Q6_K: in each 128-value half, sub-block t takes the low (t < 2) or high nibbles of ql row t%2 and
   bits 2t..2t+1 of qh, minus 32; lanes 0–3 of its int32 sums cover values 0..15 (scale 2t),
   lanes 4–7 values 16..31 (scale 2t+1). */
KTGT static float KFN(dot_q6_K)(const void *w, const void *xv, int64_t nb)
{
    const block_q8x *x = xv;
    const block_q6_K *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF), m2 = _mm256_set1_epi8(3), c32 = _mm256_set1_epi8(32);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const float d = _cvtsh_ss(b[i].d);
        for (int h = 0; h < 2; h++, x += 4) {
            const __m256i ql0 = KFN(load32)(b[i].ql + 64 * h), ql1 = KFN(load32)(b[i].ql + 64 * h + 32);
            const __m256i qh = KFN(load32)(b[i].qh + 32 * h);
            const int8_t *sc = b[i].scales + 8 * h;
            for (int t = 0; t < 4; t++) {
                const __m256i ql = t % 2 ? ql1 : ql0;
                const __m256i lo = t < 2 ? _mm256_and_si256(ql, m4) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * t), m2);
                const __m256i q = _mm256_sub_epi8(_mm256_or_si256(lo, _mm256_slli_epi16(hb, 4)), c32);
                const float a = d * x[t].d, s0 = a * sc[2 * t], s1 = a * sc[2 * t + 1];
                const __m256 sv = _mm256_setr_ps(s0, s0, s0, s0, s1, s1, s1, s1);
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(KFN(sum_s8s8)(q, KFN(load32)(x[t].qs))), sv, acc);
            }
        }
    }
    return KFN(hsum)(acc);
}

/* dot_q6_K for nx activation rows (qdot_rows_fn): a superblock's values are assembled once for all
   rows, as the two operands sum_s8s8 makes of them (|q|, and q for the sign), and its 16 scales
   as f32 lanes; each row then takes them in dot_q6_K's order and rounding ((d·step)·scale), so
   each result is dot_q6_K's bit for bit. The tied vocabulary head of llama.cpp's Q4_K_M files is
   Q6_K, and the one-row kernel unpacked it again for every sequence of a batch (4 rows took 4.0×
   one row's time on the 0.8B head's shape). */
KINL void KFN(rows_q6_K_n)(const void *w, const char *xv, size_t x_rb, int64_t nb, float *out, const int nx)
{
    const block_q6_K *b = w;
    const __m256i m4 = _mm256_set1_epi8(0xF), m2 = _mm256_set1_epi8(3), c32 = _mm256_set1_epi8(32);
    __m256 acc[QDOT_MAX_ROWS];
    for (int r = 0; r < nx; r++)
        acc[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const float d = _cvtsh_ss(b[i].d);
        __m256i q[8], u[8];
        __m256 sc[8]; /* block k: lanes 0–3 scale 2k, lanes 4–7 scale 2k+1 (k < 4: the first half's) */
        const __m128i s8 = _mm_loadu_si128((const __m128i *)(const void *)b[i].scales);
        const __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s8));
        const __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s8, 8)));
        for (int k = 0; k < 4; k++) {
            const __m256i idx = _mm256_setr_epi32(2 * k, 2 * k, 2 * k, 2 * k, 2 * k + 1, 2 * k + 1, 2 * k + 1, 2 * k + 1);
            sc[k] = _mm256_permutevar8x32_ps(f0, idx);
            sc[k + 4] = _mm256_permutevar8x32_ps(f1, idx);
        }
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = KFN(load32)(b[i].ql + 64 * h), ql1 = KFN(load32)(b[i].ql + 64 * h + 32);
            const __m256i qh = KFN(load32)(b[i].qh + 32 * h);
            for (int t = 0; t < 4; t++) {
                const __m256i ql = t % 2 ? ql1 : ql0;
                const __m256i lo = t < 2 ? _mm256_and_si256(ql, m4) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * t), m2);
                q[4 * h + t] = _mm256_sub_epi8(_mm256_or_si256(lo, _mm256_slli_epi16(hb, 4)), c32);
                u[4 * h + t] = _mm256_sign_epi8(q[4 * h + t], q[4 * h + t]);
            }
        }
        for (int r = 0; r < nx; r++) {
            const block_q8x *x = (const block_q8x *)(const void *)(xv + (size_t)r * x_rb) + 8 * i;
            for (int k = 0; k < 8; k++) {
                const __m256i isum = sum_u8s8(u[k], _mm256_sign_epi8(KFN(load32)(x[k].qs), q[k]));
                const __m256 sv = _mm256_mul_ps(_mm256_set1_ps(d * x[k].d), sc[k]);
                acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), sv, acc[r]);
            }
        }
    }
    for (int r = 0; r < nx; r++)
        out[r] = KFN(hsum)(acc[r]);
}

KTGT static void KFN(rows_q6_K)(const void *w, const void *x, size_t x_rb, int nx, int64_t nb, float *out)
{
    switch (nx) {
    case 1: KFN(rows_q6_K_n)(w, x, x_rb, nb, out, 1); break;
    case 2: KFN(rows_q6_K_n)(w, x, x_rb, nb, out, 2); break;
    case 3: KFN(rows_q6_K_n)(w, x, x_rb, nb, out, 3); break;
    default: KFN(rows_q6_K_n)(w, x, x_rb, nb, out, 4); break;
    }
}

#undef KINL
