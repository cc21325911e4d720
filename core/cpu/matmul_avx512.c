/* matmul_avx512.c — AVX-512 kernels of matmul_x86.h for prefill-sized products (many activation
   rows): a tile of 32 weight rows × KCP columns is packed once (lanes = weight rows) and
   multiplied with every activation row, NR rows at a time, by a register-blocked kernel.
     - F32/F16/BF16 weights: the tile is dequantised to f32; f32 fused multiply-adds.
     - Q8_0/Q4_K weights: the integer weights are kept (widened to int16 pairs) and the activations
       are rounded to int16 per 32-element block (scale amax/32767, relative error ≤ 2^-16 of the
       block's largest value, ~2e-5 rel-L2 on a dot product, inside the 1e-4 f32 bound); VPDPWSSD
       multiplies 32 pairs per instruction, twice the f32 FMA rate, and the block sums are scaled
       in f32 (Q4_K: minus the sub-block min times the exact f32 sum of the activations).
     - Not exact (backend_cpu_set_exact false, the default of seer's commands): Q8_0/Q4_K/Q5_K/Q6_K
       weights as unsigned bytes (K-quant values as they are, Q8_0 + 128) and activations rounded to
       int8 per 32-element block (scale amax/127, llama.cpp's rounding for its integer dot
       products); VPDPBUSD multiplies 64 byte pairs per instruction, twice the int16 rate. Q8_0's
       +128 comes back out as 128 × the block's sum of rounded activations; Q4_K/Q5_K's mins as
       dmin·m × the exact sum of the activations; Q6_K (q − 32, a scale per 16 values) takes each
       half of a block on its own: 32 × the half's sum of rounded activations out, then its scale.
     - Not exact, F16/BF16 weights, on CPUs with AVX512-BF16: weights and activations rounded to
       bf16 (to nearest even; a BF16 file's weights as they are), the precision Hugging Face's
       reference runs the model in (docs/MODEL.md §9); VDPBF16PS multiplies 32 pairs per
       instruction into f32 lanes, twice the f32 FMA rate. Each product of two bf16 values is exact
       in f32, so the only loss is the rounding of the operands (2^-9 relative at most).
   Compiled for AVX-512 F/BW/VL/VNNI by target attribute; matmul.c calls it only after
   mm_avx512_available() (matmul_x86.c, with the other CPU checks, below this file and qdot_q4r.c
   which both use it). Divisions: weight types · activation rounding · packing · kernels · tiles */
#include "core/cpu/matmul_x86.h"
#include "core/cpu/qdot_amx.h"
#include "core/cpu/qdot_q4r.h"
#include "core/cpu/qdot_q6r.h"
#include "core/cpu/qdot_q8r.h"

#ifdef SEER_MM_X86
#include <immintrin.h>
#include <string.h>

#include "core/fp16.h"
#include "core/quant.h"
#include "core/util.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define I512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"), always_inline)) static inline
/* the bf16 path's functions: only called after mm_avx512_bf16_available() */
#define TBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16,avx2,fma,f16c")))
#define IBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16,avx2,fma,f16c"), always_inline)) \
    static inline
#define UNROLL _Pragma("GCC unroll 16")

/* Tile: 2 strips of 16 weight rows (one zmm of lanes each). NR activation rows per kernel call:
   f32 8 (16 accumulators), int16 and int8 6 (12 integer + 12 float accumulators of the 32
   registers). */
#define NR_F32 8
#define NR_I16 6
#define NR_BF16 8
_Static_assert(MM512_TILE == 32 && MM512_KC % QK_K == 0, "tile shape");

/* ---- weight types ------------------------------------------------------------------------- */

bool mm_avx512_int16_type(enum dtype t) { return t == DT_Q8_0 || t == DT_Q4_K; }
bool mm_avx512_u8_type(enum dtype t) { return mm_avx512_int16_type(t) || t == DT_Q5_K || t == DT_Q6_K; }
bool mm_avx512_bf16_type(enum dtype t) { return t == DT_F16 || t == DT_BF16; }

/* The chunk [kc, kc+len) of the row one tile below `row`, which this thread packs next (tile_worker
   hands each thread a run of tiles): a tile's rows are read a chunk at a time, a stride the
   hardware prefetchers do not follow, and with few activation rows (sequences decoding together)
   waiting on these loads was most of the product's time: 0.8B Q8_0, 16 sequences, 2 threads,
   83–89 → 104–114 tokens/s (docs/PERFORMANCE.md). Past the matrix's last row it prefetches what
   follows, which never faults. */
static inline void prefetch_below(const struct mm_job *j, const uint8_t *row, int64_t kc, int64_t len)
{
    const struct dtype_info *ti = dtype_info(j->type);
    const int64_t b0 = kc / ti->block_elems, b1 = (kc + len + ti->block_elems - 1) / ti->block_elems;
    const char *next = (const char *)row + (size_t)MM512_TILE * j->w_rs + (size_t)b0 * (size_t)ti->block_bytes;
    for (int64_t at = 0; at < (b1 - b0) * ti->block_bytes; at += 64)
        _mm_prefetch(next + at, _MM_HINT_T0);
}

/* ---- activation rounding ------------------------------------------------------------------- */

/* Rows [n0,n1) of x: per 32-element block b, scale s = amax/32767, q = round(x/s) (to nearest
   even), sum = Σx in f32. A zero block gets s = 0, q = 0. */
T512 void mm_avx512_quantize_rows(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, int16_t *xq,
                                  float *xs, float *xsum)
{
    const int64_t nb = K / 32;
    for (int64_t n = n0; n < n1; n++) {
        const float *xr = x + n * x_rs;
        int16_t *q = xq + n * K;
        for (int64_t b = 0; b < nb; b++) {
            const __m512 v0 = _mm512_loadu_ps(xr + 32 * b), v1 = _mm512_loadu_ps(xr + 32 * b + 16);
            const __m512 a = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1));
            const float amax = _mm512_reduce_max_ps(a);
            const float inv = amax > 0 ? 32767.0f / amax : 0.0f;
            const __m512 iv = _mm512_set1_ps(inv);
            const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, iv)), q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, iv));
            /* vpmovsdw saturates; |x·inv| ≤ 32767 up to one rounding anyway */
            _mm256_storeu_si256((__m256i *)(void *)(q + 32 * b), _mm512_cvtsepi32_epi16(q0));
            _mm256_storeu_si256((__m256i *)(void *)(q + 32 * b + 16), _mm512_cvtsepi32_epi16(q1));
            xs[n * nb + b] = amax / 32767.0f;
            xsum[n * nb + b] = _mm512_reduce_add_ps(_mm512_add_ps(v0, v1));
        }
    }
}

/* Rows [n0,n1) of x: per 32-element block b, scale s = amax/127, q = round(x/s) (to nearest even;
   llama.cpp rounds half away from zero, which differs only on exact ties), sum = Σx in f32 and
   qsum = Σq. A zero block gets s = 0, q = 0. */
T512 void mm_avx512_quantize_rows_i8(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, int8_t *xq,
                                     float *xs, float *xsum, int32_t *xqsum, int32_t *xqsum16)
{
    const int64_t nb = K / 32;
    for (int64_t n = n0; n < n1; n++) {
        const float *xr = x + n * x_rs;
        int8_t *q = xq + n * K;
        for (int64_t b = 0; b < nb; b++) {
            const __m512 v0 = _mm512_loadu_ps(xr + 32 * b), v1 = _mm512_loadu_ps(xr + 32 * b + 16);
            const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
            const __m512 iv = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
            const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, iv)), q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, iv));
            _mm_storeu_si128((__m128i *)(void *)(q + 32 * b), _mm512_cvtsepi32_epi8(q0));
            _mm_storeu_si128((__m128i *)(void *)(q + 32 * b + 16), _mm512_cvtsepi32_epi8(q1));
            xs[n * nb + b] = amax / 127.0f;
            xsum[n * nb + b] = _mm512_reduce_add_ps(_mm512_add_ps(v0, v1));
            xqsum[n * nb + b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
            if (xqsum16) {
                xqsum16[2 * (n * nb + b)] = _mm512_reduce_add_epi32(q0);
                xqsum16[2 * (n * nb + b) + 1] = _mm512_reduce_add_epi32(q1);
            }
        }
    }
}

/* 32 floats as 32 bf16 (to nearest even), in order. */
IBF __m512i bf16x32(const float *v)
{
    return (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(v + 16), _mm512_loadu_ps(v));
}

TBF void mm_avx512_round_bf16(const float *x, int64_t x_rs, int64_t n0, int64_t n1, int64_t K, uint16_t *xb)
{
    for (int64_t n = n0; n < n1; n++)
        for (int64_t k = 0; k < K; k += 32)
            _mm512_storeu_si512(xb + n * K + k, bf16x32(x + n * x_rs + k));
}

/* ---- packing -------------------------------------------------------------------------------- */

/* f32 tile: strip s holds [k][16 lanes] for rows 16s..16s+15; missing rows are zero. */
static void pack_f32(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t len, float *panel,
                     float *row)
{
    const struct dtype_info *di = dtype_info(j->type);
    const size_t off = (size_t)(kc / di->block_elems) * (size_t)di->block_bytes;
    for (int64_t r = 0; r < MM512_TILE; r++) {
        float *dst = panel + (r / 16) * MM512_KC * 16 + (r % 16);
        if (r < mb)
            mm_x86_dequant(j->type, j->w + (size_t)(m0 + r) * j->w_rs + off, row, len);
        else
            memset(row, 0, (size_t)len * sizeof *row);
        for (int64_t k = 0; k < len; k++)
            dst[16 * k] = row[k];
    }
}

/* bf16 tile: strip s holds, per pair p of the chunk, 16 lanes of (w[2p], w[2p+1]) as bf16 — the
   operand layout of VDPBF16PS. Missing rows are zero. */
struct bf16_panel {
    uint32_t q[2][MM512_KC / 2][16];
};

/* row: MM512_KC floats of scratch (F16 rows are widened there, then rounded) */
TBF static void pack_bf16(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t len, struct bf16_panel *p,
                          float *row)
{
    uint32_t pairs[MM512_KC / 2] __attribute__((aligned(64)));
    for (int64_t r = 0; r < MM512_TILE; r++) {
        const uint8_t *src = j->w + (size_t)(m0 + r) * j->w_rs;
        if (r >= mb) {
            memset(pairs, 0, sizeof pairs);
        } else if (j->type == DT_BF16) {
            memcpy(pairs, src + (size_t)kc * 2, (size_t)len * 2);
        } else {
            mm_x86_dequant(j->type, src + (size_t)kc * 2, row, len);
            for (int64_t k = 0; k < len; k += 32)
                _mm512_store_si512(pairs + k / 2, bf16x32(row + k));
        }
        for (int64_t i = 0; i < len / 2; i++)
            p->q[r / 16][i][r % 16] = pairs[i];
    }
}

/* int16 tile: strip s holds, per 32-block b and pair p, 16 lanes of (q[2p], q[2p+1]) — the
   operand layout of VPDPWSSD — and per block the lanes' scale (and Q4_K min). Missing rows and
   blocks are zero. */
struct i16_panel {
    int16_t q[2][MM512_KC / 32][16][16][2];
    float d[2][MM512_KC / 32][16];
    float m[2][MM512_KC / 32][16];
};

static void put_pairs(struct i16_panel *p, int s, int64_t b, int lane, const int *q)
{
    for (int i = 0; i < 16; i++) {
        p->q[s][b][i][lane][0] = (int16_t)q[2 * i];
        p->q[s][b][i][lane][1] = (int16_t)q[2 * i + 1];
    }
}

static void pack_i16(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t len, struct i16_panel *p)
{
    const int64_t nb = len / 32;
    int q[32];
    memset(p, 0, sizeof *p);
    for (int64_t r = 0; r < mb; r++) {
        const int s = (int)(r / 16), lane = (int)(r % 16);
        const uint8_t *row = j->w + (size_t)(m0 + r) * j->w_rs;
        prefetch_below(j, row, kc, len);
        if (j->type == DT_Q8_0) {
            const block_q8_0 *blk = (const block_q8_0 *)(const void *)row + kc / QK8_0;
            for (int64_t b = 0; b < nb; b++) {
                for (int i = 0; i < 32; i++)
                    q[i] = blk[b].qs[i];
                put_pairs(p, s, b, lane, q);
                p->d[s][b][lane] = f16_to_f32(blk[b].d);
            }
        } else { /* Q4_K: 256-element blocks, 8 sub-blocks of 32 with their own scale and min */
            for (int64_t b = 0; b < nb; b++) {
                const block_q4_K *blk = (const block_q4_K *)(const void *)row + (kc + 32 * b) / QK_K;
                const int sub = (int)(((kc + 32 * b) % QK_K) / 32), g = sub / 2;
                uint8_t sc, mn;
                get_scale_min_k4(sub, blk->scales, &sc, &mn);
                for (int i = 0; i < 32; i++)
                    q[i] = sub % 2 ? blk->qs[32 * g + i] >> 4 : blk->qs[32 * g + i] & 0xF;
                put_pairs(p, s, b, lane, q);
                p->d[s][b][lane] = f16_to_f32(blk->d) * sc;
                p->m[s][b][lane] = f16_to_f32(blk->dmin) * mn;
            }
        }
    }
}

/* int8 tile: strip s holds, per 32-block b and quad i, 16 lanes of the weight bytes 4i..4i+3 as
   unsigned values (the u8 operand layout of VPDPBUSD), and per block the lanes' scale (and Q4_K
   min). Missing rows and blocks are zero. */
struct u8_panel {
    uint8_t q[2][MM512_KC / 32][8][16][4];
    float d[2][MM512_KC / 32][16];  /* Q6_K: the scale of values 0..15 */
    float m[2][MM512_KC / 32][16];  /* Q6_K: the scale of values 16..31 */
};

/* What the int8 kernel does with a block's sum besides scaling it by d (kern_u8). */
enum u8_mode {
    U8_BIAS,  /* Q8_0: weights stored + 128; 128·Σq_x out */
    U8_MIN,   /* Q4_K, Q5_K: − m·Σx */
    U8_HALVES /* Q6_K: weights stored + 32; per 16 values 32·Σq_x out, then that half's scale */
};

/* One block's 32 weight bytes (already unsigned) into its lane: 8 quads, 64 bytes apart. */
I512 void put_quads(struct u8_panel *p, int s, int64_t b, int lane, __m256i v)
{
    uint32_t quad[8];
    _mm256_storeu_si256((__m256i *)(void *)quad, v);
    for (int i = 0; i < 8; i++)
        memcpy(p->q[s][b][i][lane], &quad[i], 4);
}

/* pack_u8 for Q8_0 in the AMX layout (qdot_amx.h): a strip of 16 rows is one unit there, read in
   memory order (block by block, rows inside), so the stream stays sequential; row by row, as the
   file's layout is read, it jumps 1088 bytes per pair of blocks and every line was a cache miss
   (0.8B prefill 256 tokens: 175 against 200 tokens/s on the file's layout). */
T512 static void pack_u8_t16(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t nb, struct u8_panel *p)
{
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    for (int s = 0; s < (int)(mb / 16); s++)
        for (int64_t b = 0; b < nb; b++)
            for (int lane = 0; lane < 16; lane++) {
                uint16_t d;
                const int8_t *qs = qamx_block(j->t16, m0 + 16 * s + lane, kc / QK8_0 + b, &d);
                put_quads(p, s, b, lane, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)qs), bias));
                p->d[s][b][lane] = f16_to_f32(d);
            }
}

/* One Q4_K sub-block (32 values of `blk`) into its lane: the nibbles as unsigned bytes, d·sc, dmin·m. */
I512 void put_q4_K_sub(struct u8_panel *p, int s, int64_t b, int lane, const block_q4_K *blk, int sub)
{
    uint8_t sc, mn;
    get_scale_min_k4(sub, blk->scales, &sc, &mn);
    /* sub-blocks 2g and 2g+1 are the low and high nibbles of the same 32 bytes */
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(blk->qs + 32 * (sub / 2)));
    put_quads(p, s, b, lane, _mm256_and_si256(sub % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0x0F)));
    p->d[s][b][lane] = f16_to_f32(blk->d) * sc;
    p->m[s][b][lane] = f16_to_f32(blk->dmin) * mn;
}

/* pack_u8 for Q4_K interleaved (qdot_q4r.h): a strip of 16 rows is one unit there, already in the
   panel's order. */
T512 static void pack_u8_r16(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t nb, struct u8_panel *p)
{
    for (int s = 0; s < (int)(mb / 16); s++)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t k = kc + 32 * b; /* superblock k / 256, sub-block k % 256 / 32 */
            q4r_panel_sub(j->r16, m0 / 16 + s, k / QK_K, (int)(k % QK_K / 32), p->q[s][b], p->d[s][b], p->m[s][b]);
        }
}

/* One Q5_K sub-block into its lane: Q4_K's nibbles with bit `sub` of qh as the fifth bit. */
I512 void put_q5_K_sub(struct u8_panel *p, int s, int64_t b, int lane, const block_q5_K *blk, int sub)
{
    uint8_t sc, mn;
    get_scale_min_k4(sub, blk->scales, &sc, &mn);
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(blk->qs + 32 * (sub / 2)));
    const __m256i lo = _mm256_and_si256(sub % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0x0F));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(const void *)blk->qh);
    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, sub), _mm256_set1_epi8(1));
    put_quads(p, s, b, lane, _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4)));
    p->d[s][b][lane] = f16_to_f32(blk->d) * sc;
    p->m[s][b][lane] = f16_to_f32(blk->dmin) * mn;
}

/* One Q6_K sub-block of 32 (j = 4h + t: half h, t as in dot_q6_K) into its lane: the 6-bit values
   unsigned (q − 32 is the weight), the two 16-value scales as d·sc in d and m. */
I512 void put_q6_K_sub(struct u8_panel *p, int s, int64_t b, int lane, const block_q6_K *blk, int j)
{
    const int h = j / 4, t = j % 4;
    const __m256i ql = _mm256_loadu_si256((const __m256i *)(const void *)(blk->ql + 64 * h + 32 * (t % 2)));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(const void *)(blk->qh + 32 * h));
    const __m256i lo = _mm256_and_si256(t < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0F));
    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * t), _mm256_set1_epi8(3));
    put_quads(p, s, b, lane, _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4)));
    const float d = f16_to_f32(blk->d);
    p->d[s][b][lane] = d * blk->scales[8 * h + 2 * t];
    p->m[s][b][lane] = d * blk->scales[8 * h + 2 * t + 1];
}

T512 static void pack_u8(const struct mm_job *j, int64_t m0, int64_t mb, int64_t kc, int64_t len, struct u8_panel *p)
{
    const int64_t nb = len / 32;
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    memset(p, 0, sizeof *p);
    if (j->t16) {
        pack_u8_t16(j, m0, mb, kc, nb, p);
        return;
    }
    if (j->r16) {
        pack_u8_r16(j, m0, mb, kc, nb, p);
        return;
    }
    if (j->q6r) { /* a chunk is one superblock (MM512_KC == QK_K): each row's, as the file holds it */
        for (int64_t r = 0; r < mb; r++) {
            block_q6_K blk;
            q6r_block(j->q6r, m0 + r, kc / QK_K, &blk);
            for (int64_t b = 0; b < nb; b++)
                put_q6_K_sub(p, (int)(r / 16), b, (int)(r % 16), &blk, (int)b);
        }
        return;
    }
    for (int64_t r = 0; r < mb; r++) {
        const int s = (int)(r / 16), lane = (int)(r % 16);
        const uint8_t *row = j->w + (size_t)(m0 + r) * j->w_rs;
        prefetch_below(j, row, kc, len);
        if (j->type == DT_Q8_0) {
            const block_q8_0 *blk = (const block_q8_0 *)(const void *)row + kc / QK8_0;
            for (int64_t b = 0; b < nb; b++) {
                /* q + 128 for a signed byte is its bits with the top one flipped */
                put_quads(p, s, b, lane, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)blk[b].qs), bias));
                p->d[s][b][lane] = f16_to_f32(blk[b].d);
            }
        } else { /* K-quants: 256-element blocks, 8 sub-blocks of 32 */
            for (int64_t b = 0; b < nb; b++) {
                const int64_t sb = (kc + 32 * b) / QK_K;
                const int sub = (int)(((kc + 32 * b) % QK_K) / 32);
                if (j->type == DT_Q4_K)
                    put_q4_K_sub(p, s, b, lane, (const block_q4_K *)(const void *)row + sb, sub);
                else if (j->type == DT_Q5_K)
                    put_q5_K_sub(p, s, b, lane, (const block_q5_K *)(const void *)row + sb, sub);
                else
                    put_q6_K_sub(p, s, b, lane, (const block_q6_K *)(const void *)row + sb, sub);
            }
        }
    }
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* out rows n < nr, columns [0,32) of the tile (masks cut missing weight rows): c = (acc ? out : 0)
   + panel · x. `nr` is a constant after inlining. */
I512 void kern_f32(const float *panel, const float *const *xr, const int nr, int64_t len, float *const *orow,
                   __mmask16 k0, __mmask16 k1, bool acc)
{
    __m512 c0[NR_F32], c1[NR_F32];
    const float *pa = panel, *pb = panel + MM512_KC * 16;
    UNROLL
    for (int n = 0; n < nr; n++) {
        c0[n] = acc ? _mm512_maskz_loadu_ps(k0, orow[n]) : _mm512_setzero_ps();
        c1[n] = acc ? _mm512_maskz_loadu_ps(k1, orow[n] + 16) : _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < len; k++) {
        const __m512 a0 = _mm512_load_ps(pa + 16 * k), a1 = _mm512_load_ps(pb + 16 * k);
        UNROLL
        for (int n = 0; n < nr; n++) {
            const __m512 b = _mm512_set1_ps(xr[n][k]);
            c0[n] = _mm512_fmadd_ps(a0, b, c0[n]);
            c1[n] = _mm512_fmadd_ps(a1, b, c1[n]);
        }
    }
    UNROLL
    for (int n = 0; n < nr; n++) {
        _mm512_mask_storeu_ps(orow[n], k0, c0[n]);
        _mm512_mask_storeu_ps(orow[n] + 16, k1, c1[n]);
    }
}

/* The int16 kernel over nb blocks: per block, 16 VPDPWSSD steps per row and strip into int32
   lanes (|sum| ≤ 32·127·32767 < 2^31), then one multiply-add by weight scale × activation scale
   (Q4_K: minus min × activation sum) into f32 accumulators. xq[n], xs[n], xsum[n] point at the
   chunk's first block of row n. */
I512 void kern_i16(const struct i16_panel *p, const int16_t *const *xq, const float *const *xs,
                   const float *const *xsum, const int nr, int64_t nb, bool q4k, float *const *orow, __mmask16 k0,
                   __mmask16 k1, bool acc)
{
    __m512 f0[NR_I16], f1[NR_I16];
    UNROLL
    for (int n = 0; n < nr; n++) {
        f0[n] = acc ? _mm512_maskz_loadu_ps(k0, orow[n]) : _mm512_setzero_ps();
        f1[n] = acc ? _mm512_maskz_loadu_ps(k1, orow[n] + 16) : _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        __m512i i0[NR_I16], i1[NR_I16];
        UNROLL
        for (int n = 0; n < nr; n++)
            i0[n] = i1[n] = _mm512_setzero_si512();
        UNROLL
        for (int i = 0; i < 16; i++) {
            const __m512i w0 = _mm512_load_si512(p->q[0][b][i]), w1 = _mm512_load_si512(p->q[1][b][i]);
            UNROLL
            for (int n = 0; n < nr; n++) {
                int32_t pair;
                memcpy(&pair, xq[n] + 32 * b + 2 * i, sizeof pair);
                const __m512i xv = _mm512_set1_epi32(pair);
                i0[n] = _mm512_dpwssd_epi32(i0[n], w0, xv);
                i1[n] = _mm512_dpwssd_epi32(i1[n], w1, xv);
            }
        }
        const __m512 d0 = _mm512_load_ps(p->d[0][b]), d1 = _mm512_load_ps(p->d[1][b]);
        UNROLL
        for (int n = 0; n < nr; n++) {
            const __m512 s = _mm512_set1_ps(xs[n][b]);
            f0[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0[n]), _mm512_mul_ps(d0, s), f0[n]);
            f1[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1[n]), _mm512_mul_ps(d1, s), f1[n]);
        }
        if (q4k) {
            const __m512 m0 = _mm512_load_ps(p->m[0][b]), m1 = _mm512_load_ps(p->m[1][b]);
            UNROLL
            for (int n = 0; n < nr; n++) {
                const __m512 sx = _mm512_set1_ps(xsum[n][b]);
                f0[n] = _mm512_fnmadd_ps(m0, sx, f0[n]);
                f1[n] = _mm512_fnmadd_ps(m1, sx, f1[n]);
            }
        }
    }
    UNROLL
    for (int n = 0; n < nr; n++) {
        _mm512_mask_storeu_ps(orow[n], k0, f0[n]);
        _mm512_mask_storeu_ps(orow[n] + 16, k1, f1[n]);
    }
}

/* Where kern_u8 reads a tile's two strips of 16 weight rows: per strip s, block b's quads at
   q[s] + 512·b and its f32 scales at d[s] + 16·b (a u8_panel's q[s][b] and d[s][b], its m
   likewise), or, for a Q8_0 matrix laid out as qdot_q8r.c says and read in place (`half`: f16
   scales), both at their q8r_quads_at(b) and q8r_scales_at(b) from q[s] (d unused). */
struct u8_src {
    const uint8_t *q[2];
    const void *d[2];
    const float *m[2];
};

I512 const uint8_t *u8_quads(const struct u8_src *src, int s, int64_t b, bool half)
{
    return src->q[s] + (half ? q8r_quads_at(b) : (size_t)(512 * b));
}

/* Strip s's 16 scales of block b (or its m). */
I512 __m512 u8_scales(const struct u8_src *src, int s, int64_t b, bool half, bool m)
{
    if (m)
        return _mm512_load_ps(src->m[s] + 16 * b);
    if (half)
        return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(src->q[s] + q8r_scales_at(b))));
    return _mm512_load_ps((const float *)src->d[s] + 16 * b);
}

/* The int8 kernel over nb blocks: per block, 8 VPDPBUSD steps per row and strip into int32 lanes
   (|sum| ≤ 32·255·127 < 2^20), then as kern_i16. The sums start from the weights' offset times
   the rounded activations' sum: Q8_0 −128·Σq_x, Q6_K −32·Σq_x per 16 values; Q6_K's two halves
   each take 4 of the steps and their own scale (d for values 0..15, m for 16..31; xqsum holds the
   16-value sums there), and Q4_K/Q5_K subtract m·Σx after. `mode` and `half` are constants after
   inlining. */
I512 void kern_u8(const struct u8_src *src, const bool half, const int8_t *const *xq, const float *const *xs,
                  const float *const *xsum, const int32_t *const *xqsum, const int nr, int64_t nb,
                  const enum u8_mode mode, float *const *orow, __mmask16 k0, __mmask16 k1, bool acc)
{
    const int parts = mode == U8_HALVES ? 2 : 1, steps = 8 / parts;
    __m512 f0[NR_I16], f1[NR_I16];
    UNROLL
    for (int n = 0; n < nr; n++) {
        f0[n] = acc ? _mm512_maskz_loadu_ps(k0, orow[n]) : _mm512_setzero_ps();
        f1[n] = acc ? _mm512_maskz_loadu_ps(k1, orow[n] + 16) : _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int h = 0; h < parts; h++) {
            __m512i i0[NR_I16], i1[NR_I16];
            UNROLL
            for (int n = 0; n < nr; n++)
                i0[n] = i1[n] = mode == U8_MIN    ? _mm512_setzero_si512()
                                : mode == U8_BIAS ? _mm512_set1_epi32(-128 * xqsum[n][b])
                                                  : _mm512_set1_epi32(-32 * xqsum[n][2 * b + h]);
            UNROLL
            for (int i = steps * h; i < steps * (h + 1); i++) {
                const __m512i w0 = _mm512_loadu_si512(u8_quads(src, 0, b, half) + 64 * i);
                const __m512i w1 = _mm512_loadu_si512(u8_quads(src, 1, b, half) + 64 * i);
                UNROLL
                for (int n = 0; n < nr; n++) {
                    int32_t quad;
                    memcpy(&quad, xq[n] + 32 * b + 4 * i, sizeof quad);
                    const __m512i xv = _mm512_set1_epi32(quad);
                    i0[n] = _mm512_dpbusd_epi32(i0[n], w0, xv);
                    i1[n] = _mm512_dpbusd_epi32(i1[n], w1, xv);
                }
            }
            const __m512 d0 = u8_scales(src, 0, b, half, h), d1 = u8_scales(src, 1, b, half, h);
            UNROLL
            for (int n = 0; n < nr; n++) {
                const __m512 s = _mm512_set1_ps(xs[n][b]);
                f0[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0[n]), _mm512_mul_ps(d0, s), f0[n]);
                f1[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1[n]), _mm512_mul_ps(d1, s), f1[n]);
            }
        }
        if (mode == U8_MIN) {
            const __m512 m0 = u8_scales(src, 0, b, false, true), m1 = u8_scales(src, 1, b, false, true);
            UNROLL
            for (int n = 0; n < nr; n++) {
                const __m512 sx = _mm512_set1_ps(xsum[n][b]);
                f0[n] = _mm512_fnmadd_ps(m0, sx, f0[n]);
                f1[n] = _mm512_fnmadd_ps(m1, sx, f1[n]);
            }
        }
    }
    UNROLL
    for (int n = 0; n < nr; n++) {
        _mm512_mask_storeu_ps(orow[n], k0, f0[n]);
        _mm512_mask_storeu_ps(orow[n] + 16, k1, f1[n]);
    }
}

/* xr[n]: activation row n's chunk as bf16 pairs; np pairs (half the chunk). */
IBF void kern_bf16(const struct bf16_panel *p, const uint32_t *const *xr, const int nr, int64_t np, float *const *orow,
                   __mmask16 k0, __mmask16 k1, bool acc)
{
    __m512 c0[NR_BF16], c1[NR_BF16];
    UNROLL
    for (int n = 0; n < nr; n++) {
        c0[n] = acc ? _mm512_maskz_loadu_ps(k0, orow[n]) : _mm512_setzero_ps();
        c1[n] = acc ? _mm512_maskz_loadu_ps(k1, orow[n] + 16) : _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < np; k++) {
        const __m512bh a0 = (__m512bh)_mm512_load_si512(p->q[0][k]), a1 = (__m512bh)_mm512_load_si512(p->q[1][k]);
        UNROLL
        for (int n = 0; n < nr; n++) {
            const __m512bh b = (__m512bh)_mm512_set1_epi32((int)xr[n][k]);
            c0[n] = _mm512_dpbf16_ps(c0[n], a0, b);
            c1[n] = _mm512_dpbf16_ps(c1[n], a1, b);
        }
    }
    UNROLL
    for (int n = 0; n < nr; n++) {
        _mm512_mask_storeu_ps(orow[n], k0, c0[n]);
        _mm512_mask_storeu_ps(orow[n] + 16, k1, c1[n]);
    }
}

/* Instances for every row count, so each has its accumulators in registers. */
T512 static void run_f32(const float *panel, const float *const *xr, int nr, int64_t len, float *const *orow,
                         __mmask16 k0, __mmask16 k1, bool acc)
{
    switch (nr) {
    case 1: kern_f32(panel, xr, 1, len, orow, k0, k1, acc); break;
    case 2: kern_f32(panel, xr, 2, len, orow, k0, k1, acc); break;
    case 3: kern_f32(panel, xr, 3, len, orow, k0, k1, acc); break;
    case 4: kern_f32(panel, xr, 4, len, orow, k0, k1, acc); break;
    case 5: kern_f32(panel, xr, 5, len, orow, k0, k1, acc); break;
    case 6: kern_f32(panel, xr, 6, len, orow, k0, k1, acc); break;
    case 7: kern_f32(panel, xr, 7, len, orow, k0, k1, acc); break;
    default: kern_f32(panel, xr, 8, len, orow, k0, k1, acc); break;
    }
}

TBF static void run_bf16(const struct bf16_panel *p, const uint32_t *const *xr, int nr, int64_t np,
                         float *const *orow, __mmask16 k0, __mmask16 k1, bool acc)
{
    switch (nr) {
    case 1: kern_bf16(p, xr, 1, np, orow, k0, k1, acc); break;
    case 2: kern_bf16(p, xr, 2, np, orow, k0, k1, acc); break;
    case 3: kern_bf16(p, xr, 3, np, orow, k0, k1, acc); break;
    case 4: kern_bf16(p, xr, 4, np, orow, k0, k1, acc); break;
    case 5: kern_bf16(p, xr, 5, np, orow, k0, k1, acc); break;
    case 6: kern_bf16(p, xr, 6, np, orow, k0, k1, acc); break;
    case 7: kern_bf16(p, xr, 7, np, orow, k0, k1, acc); break;
    default: kern_bf16(p, xr, 8, np, orow, k0, k1, acc); break;
    }
}

T512 static void run_i16(const struct i16_panel *p, const int16_t *const *xq, const float *const *xs,
                         const float *const *xsum, int nr, int64_t nb, bool q4k, float *const *orow, __mmask16 k0,
                         __mmask16 k1, bool acc)
{
    switch (nr) {
    case 1: kern_i16(p, xq, xs, xsum, 1, nb, q4k, orow, k0, k1, acc); break;
    case 2: kern_i16(p, xq, xs, xsum, 2, nb, q4k, orow, k0, k1, acc); break;
    case 3: kern_i16(p, xq, xs, xsum, 3, nb, q4k, orow, k0, k1, acc); break;
    case 4: kern_i16(p, xq, xs, xsum, 4, nb, q4k, orow, k0, k1, acc); break;
    case 5: kern_i16(p, xq, xs, xsum, 5, nb, q4k, orow, k0, k1, acc); break;
    default: kern_i16(p, xq, xs, xsum, 6, nb, q4k, orow, k0, k1, acc); break;
    }
}

/* One instance per mode and scale format (constants inside each), as run_i16 has per row count. */
#define RUN_U8_MODE(mode, half)                                                                            \
    switch (nr) {                                                                                          \
    case 1: kern_u8(src, half, xq, xs, xsum, xqsum, 1, nb, mode, orow, k0, k1, acc); break;               \
    case 2: kern_u8(src, half, xq, xs, xsum, xqsum, 2, nb, mode, orow, k0, k1, acc); break;               \
    case 3: kern_u8(src, half, xq, xs, xsum, xqsum, 3, nb, mode, orow, k0, k1, acc); break;               \
    case 4: kern_u8(src, half, xq, xs, xsum, xqsum, 4, nb, mode, orow, k0, k1, acc); break;               \
    case 5: kern_u8(src, half, xq, xs, xsum, xqsum, 5, nb, mode, orow, k0, k1, acc); break;               \
    default: kern_u8(src, half, xq, xs, xsum, xqsum, 6, nb, mode, orow, k0, k1, acc); break;              \
    }

T512 static void run_u8(const struct u8_src *src, bool half, const int8_t *const *xq, const float *const *xs,
                        const float *const *xsum, const int32_t *const *xqsum, int nr, int64_t nb, enum u8_mode m,
                        float *const *orow, __mmask16 k0, __mmask16 k1, bool acc)
{
    if (m == U8_BIAS && half) {
        RUN_U8_MODE(U8_BIAS, true)
    } else if (m == U8_BIAS) {
        RUN_U8_MODE(U8_BIAS, false)
    } else if (m == U8_MIN) {
        RUN_U8_MODE(U8_MIN, false)
    } else {
        RUN_U8_MODE(U8_HALVES, false)
    }
}
#undef RUN_U8_MODE

/* ---- tiles ---------------------------------------------------------------------------------- */

size_t mm_avx512_scratch_bytes(void)
{
    const size_t f32 = (size_t)MM512_TILE * MM512_KC * sizeof(float) + MM512_KC * sizeof(float);
    const size_t bf16 = sizeof(struct bf16_panel) + MM512_KC * sizeof(float);
    return (MAX(MAX(MAX(f32, bf16), sizeof(struct i16_panel)), sizeof(struct u8_panel)) + 63) / 64 * 64;
}

/* Output columns [m0, m0+mb) for every activation row: per KC chunk, pack the tile, then run the
   kernel over the activation rows; chunks after the first add to what is in out. Every output is
   the same sum in the same order whatever the thread that runs the tile. */
T512 void mm_avx512_tile(const struct mm_job *j, int64_t m0, void *scratch)
{
    const int64_t mb = MIN(MM512_TILE, j->M - m0);
    const __mmask16 k0 = (__mmask16)(mb >= 16 ? 0xFFFF : (1u << mb) - 1);
    const __mmask16 k1 = (__mmask16)(mb >= 32 ? 0xFFFF : mb > 16 ? (1u << (mb - 16)) - 1 : 0);
    const bool i8 = j->xq8 != NULL, i16 = j->xq != NULL || i8, bf = j->xbf != NULL;
    const int nr_max = i16 ? NR_I16 : bf ? NR_BF16 : NR_F32;
    const int64_t nbk = j->K / 32; /* activation blocks per row (int16 path) */
    const enum u8_mode mode = j->type == DT_Q8_0 ? U8_BIAS : j->type == DT_Q6_K ? U8_HALVES : U8_MIN;
    for (int64_t kc = 0; kc < j->K; kc += MM512_KC) {
        const int64_t len = MIN(MM512_KC, j->K - kc);
        struct u8_src src;
        if (i8 && j->q8r) { /* read in place: a 16-row tile's second strip is its first, masked off */
            for (int s = 0; s < 2; s++) {
                const int64_t u = m0 / 16 + (mb > 16 ? s : 0);
                _Static_assert(MM512_KC % 64 == 0, "a chunk starts on a pair of Q8_0 blocks");
                src.q[s] = q8r_unit_base(j->q8r, u) + q8r_quads_at(kc / 32); /* kc / 32 even: a pair's start */
                src.d[s] = NULL;
                src.m[s] = NULL;
            }
        } else if (i8) {
            pack_u8(j, m0, mb, kc, len, scratch);
            const struct u8_panel *p = scratch;
            for (int s = 0; s < 2; s++)
                src.q[s] = &p->q[s][0][0][0][0], src.d[s] = p->d[s][0], src.m[s] = p->m[s][0];
        } else if (i16)
            pack_i16(j, m0, mb, kc, len, scratch);
        else if (bf)
            pack_bf16(j, m0, mb, kc, len, scratch, (float *)((char *)scratch + sizeof(struct bf16_panel)));
        else
            pack_f32(j, m0, mb, kc, len, scratch, (float *)scratch + MM512_TILE * MM512_KC);
        for (int64_t n0 = 0; n0 < j->N; n0 += nr_max) {
            const int nr = (int)MIN(nr_max, j->N - n0);
            float *orow[NR_F32];
            for (int n = 0; n < nr; n++)
                orow[n] = j->out + (n0 + n) * j->M + m0;
            if (i8) {
                const int8_t *xq[NR_I16];
                const float *xs[NR_I16], *xsum[NR_I16];
                const int32_t *xqsum[NR_I16];
                for (int n = 0; n < nr; n++) {
                    xq[n] = j->xq8 + (n0 + n) * j->K + kc;
                    xs[n] = j->xs + (n0 + n) * nbk + kc / 32;
                    xsum[n] = j->xsum + (n0 + n) * nbk + kc / 32;
                    xqsum[n] = mode == U8_HALVES ? j->xqsum16 + (n0 + n) * 2 * nbk + kc / 16
                                                 : j->xqsum + (n0 + n) * nbk + kc / 32;
                }
                run_u8(&src, j->q8r != NULL, xq, xs, xsum, xqsum, nr, len / 32, mode, orow, k0, k1, kc > 0);
            } else if (i16) {
                const int16_t *xq[NR_I16];
                const float *xs[NR_I16], *xsum[NR_I16];
                for (int n = 0; n < nr; n++) {
                    xq[n] = j->xq + (n0 + n) * j->K + kc;
                    xs[n] = j->xs + (n0 + n) * nbk + kc / 32;
                    xsum[n] = j->xsum + (n0 + n) * nbk + kc / 32;
                }
                run_i16(scratch, xq, xs, xsum, nr, len / 32, j->type == DT_Q4_K, orow, k0, k1, kc > 0);
            } else if (bf) {
                const uint32_t *xr[NR_BF16];
                for (int n = 0; n < nr; n++)
                    xr[n] = (const uint32_t *)(const void *)(j->xbf + (n0 + n) * j->K + kc);
                run_bf16(scratch, xr, nr, len / 2, orow, k0, k1, kc > 0);
            } else {
                const float *xr[NR_F32];
                for (int n = 0; n < nr; n++)
                    xr[n] = j->x + (n0 + n) * j->x_rs + kc;
                run_f32(scratch, xr, nr, len, orow, k0, k1, kc > 0);
            }
        }
    }
}

#endif /* SEER_MM_X86 */
