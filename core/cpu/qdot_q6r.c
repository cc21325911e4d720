/* qdot_q6r.c — Q6_K decode products with the weight rows as vector lanes (see qdot_q6r.h).

   Why. llama.cpp's Q4_K_M files keep the output head (248,320 × hidden for Qwen3.5) and half the
   attention values and FFN down matrices in Q6_K. The file's Q6_K kernel (qdot_x86.c) puts a
   superblock's values along the vector lanes and, per weight row, unpacks them, scales 16 sub-blocks
   and reduces lanes: one thread read Q6_K at about half the memory's rate, and it was 35 % of a
   one-sequence decode step (0.8B Q4_K_M, 1 thread, perf; docs/PERFORMANCE.md). Here 16 weight rows
   are interleaved as qdot_q4r.c does for Q4_K: one 512-bit vector holds the same 4 values of all 16
   rows, VPDPBUSD against the activation's 4 values broadcast sums 16 rows at once, the scales are
   vectors of the 16 rows (formed once per superblock for every activation row), and nothing needs
   a lane reduction.

   Layout (TL_Q6_K_R16). Per unit of 16 rows and superblock i, 3360 bytes = 16 × 210, units in
   (unit, superblock) order, so the matrix keeps its size and each thread's units are one
   sequential stream:
     d[16]            the rows' f16 factors
     sc[16][16]       sc[j][r] = row r's scale of sub-block j (values 16j .. 16j+15)
     step[16][3][64]  64-byte chunks: ql chunk c, bytes 4r .. 4r+3, is row r's ql[4c .. 4c+3];
                      qh chunk c likewise of qh
   Step s = 8h + t (half h: values 128h ..; t = 0..7) holds ql chunks 16h+t and 16h+8+t and qh
   chunk 8h+t, which hold the 6-bit values (unsigned, q − 32 is the weight) 128h + 32k + 4t + b for
   k = 0..3: the low nibbles of the first ql chunk with qh's bits 0–1 (k = 0), of the second with
   bits 2–3 (k = 1), the high nibbles of the first with bits 4–5 (k = 2), of the second with bits
   6–7 (k = 3), as dequantize_row reads a block; they lie in sub-block 8h + 2k + t/4. The steps are
   stored in the order the kernel takes them, so it reads each unit front to back: with the file's
   order of chunks (ql, then qh) one thread read 17–21 GB/s where a plain read loop reads 30
   (ops_bench --decode; docs/PERFORMANCE.md).

   Arithmetic, per row r, activation row x (Q8_K: d_x, qs, bsums per 16 values) and superblock:
     isum_j = Σ_{k in sub-block j} q_k·x_k − 32·bsums_j   (int32, exact: Σ (q − 32)·x)
     t = 0;  for j in the order h = 0..1, t/4 = 0..1, k = 0..3 (j = 8h + 2k + t/4):
                 t = fma((float)isum_j, d·sc_j, t)        (d·sc_j one f32 product)
     acc = fma(t, d_x, acc)
   acc starts at 0 and is the result. Every step is per lane, so a row's result does not depend on
   the rows beside it or on how many activation rows pass (tests/core/cpu/qdot_q6r.c checks this
   against the same steps in scalar C). It differs from the file layout's kernels (and llama.cpp's)
   in f32 rounding only. */
#include "core/cpu/qdot_q6r.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/qdot.h"

typedef struct {
    uint16_t d[Q6R_ROWS];
    int8_t sc[QK_K / 16][Q6R_ROWS];
    uint8_t step[16][3][64];
} q6r_unit16;
_Static_assert(sizeof(q6r_unit16) == Q6R_ROWS * sizeof(block_q6_K), "a unit is 16 superblocks' bytes");

static int64_t n_super(const tensor *w) { return w->ne[0] / QK_K; }

/* Byte offsets in a unit of ql chunk c (0..31) and qh chunk c (0..15) (the layout above). */
static size_t ql_chunk(int c) { return offsetof(q6r_unit16, step) + (size_t)(3 * (8 * (c / 16) + c % 8) + (c / 8) % 2) * 64; }
static size_t qh_chunk(int c) { return offsetof(q6r_unit16, step) + (size_t)(3 * c + 2) * 64; }

static const q6r_unit16 *unit_at(const tensor *w, int64_t u, int64_t i)
{
    return (const q6r_unit16 *)(const void *)((const char *)w->data + ((size_t)u * (size_t)n_super(w) + (size_t)i) *
                                                                          sizeof(q6r_unit16));
}

bool q6r_layout_fits(const tensor *w)
{
    return w->type == DT_Q6_K && w->layout == TL_ROWS && tensor_is_contiguous(w) && w->ne[2] == 1 && w->ne[3] == 1 &&
           w->ne[1] % Q6R_ROWS == 0;
}

bool q6r_layout(tensor *w)
{
    const int64_t nsb = n_super(w);
    const size_t rb = w->nb[1], unit = (size_t)Q6R_ROWS * rb;
    char *scratch = malloc(unit);
    if (!scratch)
        return false;
    for (int64_t u = 0; u < w->ne[1] / Q6R_ROWS; u++) {
        q6r_unit16 *dst = (q6r_unit16 *)(void *)((char *)w->data + (size_t)u * unit); /* the same bytes */
        memcpy(scratch, dst, unit);
        for (int r = 0; r < Q6R_ROWS; r++)
            for (int64_t i = 0; i < nsb; i++) {
                const block_q6_K *b = (const block_q6_K *)(const void *)(scratch + (size_t)r * rb) + i;
                q6r_unit16 *o = dst + i;
                o->d[r] = b->d;
                for (int j = 0; j < QK_K / 16; j++)
                    o->sc[j][r] = b->scales[j];
                for (int c = 0; c < 32; c++)
                    memcpy((char *)o + ql_chunk(c) + 4 * r, b->ql + 4 * c, 4);
                for (int c = 0; c < 16; c++)
                    memcpy((char *)o + qh_chunk(c) + 4 * r, b->qh + 4 * c, 4);
            }
    }
    free(scratch);
    w->layout = TL_Q6_K_R16;
    return true;
}

void q6r_block(const tensor *w, int64_t r, int64_t i, block_q6_K *out)
{
    const q6r_unit16 *s = unit_at(w, r / Q6R_ROWS, i);
    const int lane = (int)(r % Q6R_ROWS);
    out->d = s->d[lane];
    for (int j = 0; j < QK_K / 16; j++)
        out->scales[j] = s->sc[j][lane];
    for (int c = 0; c < 32; c++)
        memcpy(out->ql + 4 * c, (const char *)s + ql_chunk(c) + 4 * lane, 4);
    for (int c = 0; c < 16; c++)
        memcpy(out->qh + 4 * c, (const char *)s + qh_chunk(c) + 4 * lane, 4);
}

void q6r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n)
{
    for (int64_t k = 0; k < n; k += QK_K) {
        block_q6_K b;
        q6r_block(w, r, (k0 + k) / QK_K, &b);
        dequantize_row(DT_Q6_K, &b, dst + k, QK_K);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "core/cpu/matmul_x86.h"

bool q6r_ready(void)
{
    const char *off = getenv("SEER_NO_Q6K_R16");
    return (!off || !*off) && mm_avx512_available();
}

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define UNROLL _Pragma("GCC unroll 8")

/* The header's arithmetic for nx activation rows (a constant after inlining). */
T512 __attribute__((always_inline)) static inline void unit_n(const tensor *w, int64_t u, const char *x, size_t x_rb,
                                                              float *out, size_t out_stride, const int nx)
{
    const int64_t nsb = n_super(w);
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    __m512 acc[Q6R_MAX_X];
    UNROLL
    for (int n = 0; n < nx; n++)
        acc[n] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nsb; i++) {
        const q6r_unit16 *s = unit_at(w, u, i);
        /* No software prefetch: the units are read front to back, which the hardware prefetcher
           follows. The unit two ahead into L2 had taken one thread from 20–21 to 22.5–25.7 GB/s
           when the steps were first stored in reading order; without it, on the same kind of VM
           later, 29–30 against 22–23 (ops_bench --decode, alternating; docs/PERFORMANCE.md,
           "Decode products: one stream per thread, no software prefetch"). */
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s->d));
        const block_q8k *xb[Q6R_MAX_X];
        __m512 t[Q6R_MAX_X];
        UNROLL
        for (int n = 0; n < nx; n++)
            xb[n] = (const block_q8k *)(const void *)(x + (size_t)n * x_rb) + i, t[n] = _mm512_setzero_ps();
        UNROLL
        for (int h = 0; h < 2; h++)
            UNROLL
            for (int tq = 0; tq < 2; tq++) {
                __m512i a[Q6R_MAX_X][4];
                UNROLL
                for (int n = 0; n < nx; n++)
                    UNROLL
                    for (int k = 0; k < 4; k++)
                        a[n][k] = _mm512_set1_epi32(-32 * xb[n]->bsums[8 * h + 2 * k + tq]);
                UNROLL
                for (int t4 = 0; t4 < 4; t4++) {
                    const int tt = 4 * tq + t4, st = 8 * h + tt;
                    const __m512i la = _mm512_loadu_si512(s->step[st][0]), lb = _mm512_loadu_si512(s->step[st][1]);
                    const __m512i hb = _mm512_loadu_si512(s->step[st][2]);
                    __m512i v[4];
                    v[0] = _mm512_or_si512(_mm512_and_si512(la, m4), _mm512_and_si512(_mm512_slli_epi16(hb, 4), m30));
                    v[1] = _mm512_or_si512(_mm512_and_si512(lb, m4), _mm512_and_si512(_mm512_slli_epi16(hb, 2), m30));
                    v[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(la, 4), m4), _mm512_and_si512(hb, m30));
                    v[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(lb, 4), m4),
                                           _mm512_and_si512(_mm512_srli_epi16(hb, 2), m30));
                    UNROLL
                    for (int n = 0; n < nx; n++)
                        UNROLL
                        for (int k = 0; k < 4; k++) {
                            int32_t quad;
                            memcpy(&quad, xb[n]->qs + 128 * h + 32 * k + 4 * tt, 4);
                            a[n][k] = _mm512_dpbusd_epi32(a[n][k], v[k], _mm512_set1_epi32(quad));
                        }
                }
                UNROLL
                for (int k = 0; k < 4; k++) {
                    const int j = 8 * h + 2 * k + tq;
                    const __m512 dsc = _mm512_mul_ps(
                        d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)s->sc[j]))));
                    UNROLL
                    for (int n = 0; n < nx; n++)
                        t[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[n][k]), dsc, t[n]);
                }
            }
        UNROLL
        for (int n = 0; n < nx; n++)
            acc[n] = _mm512_fmadd_ps(t[n], _mm512_set1_ps(xb[n]->d), acc[n]);
    }
    UNROLL
    for (int n = 0; n < nx; n++)
        _mm512_storeu_ps(out + (size_t)n * out_stride, acc[n]);
}

T512 void q6r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    const char *xc = x;
    switch (nx) {
    case 1: unit_n(w, u, xc, x_rb, out, out_stride, 1); break;
    case 2: unit_n(w, u, xc, x_rb, out, out_stride, 2); break;
    case 3: unit_n(w, u, xc, x_rb, out, out_stride, 3); break;
    default: unit_n(w, u, xc, x_rb, out, out_stride, 4); break;
    }
}
#else
bool q6r_ready(void) { return false; }
/* unreachable: no matrix takes the layout where q6r_ready() is false */
void q6r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    (void)w, (void)u, (void)x, (void)x_rb, (void)nx, (void)out, (void)out_stride;
}
#endif
