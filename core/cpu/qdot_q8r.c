/* qdot_q8r.c — Q8_0 products with the weight rows as vector lanes (see qdot_q8r.h).

   Why. Sixteen sequences decoding together make every product a 16-row one, which prefill's int8
   tiles (matmul_avx512.c) take; they copied each 32-row tile of the file's rows into a panel of
   quads with the rows as lanes before multiplying, and with 16 activation rows the copy was not
   paid back: 0.8B Q8_0, 2 threads, 16 sequences, perf: 38 % of the step in the packing, 26 % in
   the kernel (docs/PERFORMANCE.md). Laid out once, when the backend copies the matrix, as the
   panel holds it, the tiles read the weights where they are, and fewer rows (1 to 15 sequences)
   get the kernel below, which sums 16 rows per VPDPBUSD as qdot_q4r.c does for Q4_K. CPUs with
   AMX tiles take qdot_amx.c's layout instead.

   Layout (TL_Q8_0_R16). Per unit of 16 rows, nb = K/32 blocks (nb even: q8r_layout_fits),
   nb·544 bytes = the 16 rows' bytes, units one after another; per pair of blocks j, j+1:
     quads[2][8][64]   block j+i, chunk c: bytes 4r .. 4r+3 = row r's qs[4c .. 4c+3] + 128 (the
                       signed byte with its top bit flipped: VPDPBUSD's unsigned operand)
     d[2][16]          row r's f16 scale of block j+i
   1,088 bytes = 17 lines, so every pair, chunk and pair's scales start on a 64-byte line.
   Why pairs: a decode product reads its matrix once, and one thread's units are then one
   sequential stream, which the hardware prefetcher follows at the read loop's rate. With all of
   a unit's quads first and its scales after them, two streams, it read 20–21 GB/s where a plain
   read of the same bytes gave 31–33, and no software prefetch distance closed the gap
   (docs/PERFORMANCE.md, "Decode products: one stream per thread, no software prefetch").

   Arithmetic, per row r, activation row x (Q8_0 form: steps xd_j, values, xb_j = −128·Σ_j q) and
   block j in order:
     isum_j = xb_j + Σ_c Σ_{k<4} (q_k + 128)·x_k      (int32, exact: Σ q·x over the block)
     acc = fma((float)isum_j, d_j·xd_j, acc)         (d_j·xd_j one f32 product)
   acc starts at 0 and is the result. Every step is per lane, so a row's result does not depend on
   the rows beside it or on how many activation rows pass (tests/core/cpu/qdot_q8r.c checks this
   against the same steps in scalar C). It differs from the file layout's kernels (and llama.cpp's)
   in f32 rounding only. */
#include "core/cpu/qdot_q8r.h"

#include <stdlib.h>
#include <string.h>

#include "core/cpu/qdot.h"
#include "core/fp16.h"
#include "core/quant.h"

#define UNIT_BLOCK_BYTES (Q8R_ROWS * sizeof(block_q8_0)) /* 544: one block of the unit's 16 rows */
_Static_assert(Q8R_PAIR_BYTES == 2 * UNIT_BLOCK_BYTES, "a pair is two blocks' bytes of the unit's 16 rows");

static int64_t n_blocks(const tensor *w) { return w->ne[0] / QK8_0; }

const uint8_t *q8r_unit_base(const tensor *w, int64_t u)
{
    return (const uint8_t *)w->data + (size_t)u * (size_t)n_blocks(w) * UNIT_BLOCK_BYTES;
}

bool q8r_layout_fits(const tensor *w)
{
    return w->type == DT_Q8_0 && w->layout == TL_ROWS && tensor_is_contiguous(w) && w->ne[2] == 1 &&
           w->ne[3] == 1 && w->ne[1] % Q8R_ROWS == 0 && w->ne[0] % (2 * QK8_0) == 0;
}

bool q8r_layout(tensor *w)
{
    const int64_t nb = n_blocks(w);
    const size_t rb = w->nb[1], unit = (size_t)Q8R_ROWS * rb;
    char *scratch = malloc(unit);
    if (!scratch)
        return false;
    for (int64_t u = 0; u < w->ne[1] / Q8R_ROWS; u++) {
        uint8_t *unit_bytes = (uint8_t *)w->data + (size_t)u * unit; /* the same bytes */
        memcpy(scratch, unit_bytes, unit);
        for (int r = 0; r < Q8R_ROWS; r++)
            for (int64_t j = 0; j < nb; j++) {
                const block_q8_0 *b = (const block_q8_0 *)(const void *)(scratch + (size_t)r * rb) + j;
                uint8_t *quads = unit_bytes + q8r_quads_at(j);
                memcpy(unit_bytes + q8r_scales_at(j) + 2 * r, &b->d, 2);
                for (int c = 0; c < 8; c++)
                    for (int k = 0; k < 4; k++)
                        quads[64 * c + 4 * r + k] = (uint8_t)(b->qs[4 * c + k] ^ 0x80);
            }
    }
    free(scratch);
    w->layout = TL_Q8_0_R16;
    return true;
}

void q8r_dequant(const tensor *w, int64_t r, int64_t k0, float *dst, int64_t n)
{
    const uint8_t *unit = q8r_unit_base(w, r / Q8R_ROWS);
    const int lane = (int)(r % Q8R_ROWS);
    for (int64_t k = 0; k < n; k += QK8_0) {
        const int64_t j = (k0 + k) / QK8_0;
        const uint8_t *quads = unit + q8r_quads_at(j);
        block_q8_0 b;
        memcpy(&b.d, unit + q8r_scales_at(j) + 2 * lane, 2);
        for (int c = 0; c < 8; c++)
            for (int i = 0; i < 4; i++)
                b.qs[4 * c + i] = (int8_t)(quads[64 * c + 4 * lane + i] ^ 0x80);
        dequantize_row(DT_Q8_0, &b, dst + k, QK8_0);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "core/cpu/matmul_x86.h"

bool q8r_ready(void)
{
    const char *off = getenv("SEER_NO_Q8_0_R16");
    return (!off || !*off) && mm_avx512_available();
}

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define UNROLL _Pragma("GCC unroll 8")

/* An activation row's parts in qdot.h's Q8_0 form (nb blocks): the steps, the values (after xd[nb]
   and xc[nb][8]) and −128·Σq per block. */
static inline void act_parts(const char *x, int64_t nb, const float **xd, const int8_t **xq, const int32_t **xb)
{
    *xd = (const float *)(const void *)((const block_q8x *)(const void *)x + nb);
    *xq = (const int8_t *)(const void *)(*xd + 9 * nb);
    *xb = (const int32_t *)(const void *)(*xq + QK8_0 * nb);
}

/* acc + VPDPBUSD(v, the 4 bytes at p broadcast to every lane), the broadcast folded into the
   instruction's memory operand ({1to16}), which GCC does not do from _mm512_set1_epi32: with 8
   activation rows half of unit_n's instructions were separate VPBROADCASTDs, and one thread decoding
   8 sequences went from 95.9–99.5 to 106.2–106.9 tokens/s with the folded form (0.8B Q8_0; 2B 42.0
   → 47.5; docs/PERFORMANCE.md, "Q8_0 decode a pair at a time"). */
T512 __attribute__((always_inline)) static inline __m512i dpbusd_bcst(__m512i acc, __m512i v, const int8_t *p)
{
    __asm__("vpdpbusd %[x]%{1to16%}, %[v], %[acc]"
            : [acc] "+v"(acc)
            : [v] "v"(v), [x] "m"(*(const int32_t *)(const void *)p));
    return acc;
}

/* The header's arithmetic for nx activation rows (2 to 8: a constant after inlining, so the
   accumulators stay in registers and the rows' VPDPBUSD chains interleave). Activation row n's
   parts (qdot.h's Q8_0 form): steps at xd, values at xq, −128·Σq at xb.
   A pair at a time, from a pointer that steps the pair's 1,088 bytes, the pair's 32 scales read as
   one line, one chain per row and block. The loop it replaced went block by block, its addresses
   from the block index, half a line of scales per block, each row's chunks in two chains: one
   thread decoding 2, 4 and 8 sequences went from 54–58, 93–97 and 86–88 tokens/s to 62–67, 107–109
   and 101–103 (0.8B Q8_0; docs/PERFORMANCE.md, "Q8_0 decode a pair at a time").
   No software prefetch: the unit is read front to back, which the hardware prefetcher follows.
   Hints into L2 4 and 16 blocks ahead, which the two-stream layout needed, cost a third on this
   one (a probe of this loop, 1 thread: 28.5–29.7 GB/s without, 19.4–21.1 with). */
T512 __attribute__((always_inline)) static inline void unit_n(const tensor *w, int64_t u, const char *x, size_t x_rb,
                                                              float *out, size_t out_stride, const int nx)
{
    const int64_t nb = n_blocks(w);
    const uint8_t *q = q8r_unit_base(w, u);
    const float *xd[Q8R_MAX_X];
    const int8_t *xq[Q8R_MAX_X];
    const int32_t *xb[Q8R_MAX_X];
    __m512 acc[Q8R_MAX_X];
    UNROLL
    for (int n = 0; n < nx; n++) {
        act_parts(x + (size_t)n * x_rb, nb, &xd[n], &xq[n], &xb[n]);
        acc[n] = _mm512_setzero_ps();
    }
    for (int64_t j = 0; j < nb; j += 2, q += Q8R_PAIR_BYTES) {
        __m512i a[2][Q8R_MAX_X];
        UNROLL
        for (int h = 0; h < 2; h++)
            UNROLL
            for (int n = 0; n < nx; n++)
                a[h][n] = _mm512_set1_epi32(xb[n][j + h]);
        UNROLL
        for (int h = 0; h < 2; h++)
            UNROLL
            for (int c = 0; c < 8; c++) {
                const __m512i v = _mm512_loadu_si512(q + 512 * h + 64 * c);
                UNROLL
                for (int n = 0; n < nx; n++)
                    a[h][n] = dpbusd_bcst(a[h][n], v, xq[n] + QK8_0 * (j + h) + 4 * c);
            }
        const __m512i d = _mm512_loadu_si512(q + 1024); /* the pair's 2 × 16 f16 scales */
        UNROLL
        for (int h = 0; h < 2; h++) {
            const __m512 wd = _mm512_cvtph_ps(h ? _mm512_extracti64x4_epi64(d, 1) : _mm512_castsi512_si256(d));
            UNROLL
            for (int n = 0; n < nx; n++)
                acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[h][n]), _mm512_mul_ps(wd, _mm512_set1_ps(xd[n][j + h])),
                                         acc[n]);
        }
    }
    UNROLL
    for (int n = 0; n < nx; n++)
        _mm512_storeu_ps(out + (size_t)n * out_stride, acc[n]);
}

/* One activation row, the decode of one sequence: unit_n's loop and bits, but each block's even and
   odd chunks in two VPDPBUSD chains (int32 sums: exact in any order), so that the one row does not
   wait on the instruction's latency 8 times a block. Against the block-by-block loop it replaced,
   one thread: 0.8B Q8_0 decode 27.5–27.9 → 30.4–31.4 tokens/s, 2B 11.0–11.8 → 12.5–12.6; unit_n's
   one chain per block gave 28.1–30.0 for the 0.8B in the same rounds. */
T512 static void unit_1(const tensor *w, int64_t u, const char *x, float *out)
{
    const int64_t nb = n_blocks(w);
    const uint8_t *q = q8r_unit_base(w, u);
    const float *xd;
    const int8_t *xq;
    const int32_t *xb;
    act_parts(x, nb, &xd, &xq, &xb);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t j = 0; j < nb; j += 2, q += Q8R_PAIR_BYTES, xq += 2 * QK8_0) {
        __m512i a0 = _mm512_set1_epi32(xb[j]), b0 = _mm512_setzero_si512();
        __m512i a1 = _mm512_set1_epi32(xb[j + 1]), b1 = _mm512_setzero_si512();
        UNROLL
        for (int c = 0; c < 8; c += 2) {
            int32_t k0, k1, k2, k3;
            memcpy(&k0, xq + 4 * c, 4), memcpy(&k1, xq + 4 * c + 4, 4);
            memcpy(&k2, xq + QK8_0 + 4 * c, 4), memcpy(&k3, xq + QK8_0 + 4 * c + 4, 4);
            a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512(q + 64 * c), _mm512_set1_epi32(k0));
            b0 = _mm512_dpbusd_epi32(b0, _mm512_loadu_si512(q + 64 * c + 64), _mm512_set1_epi32(k1));
            a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512(q + 512 + 64 * c), _mm512_set1_epi32(k2));
            b1 = _mm512_dpbusd_epi32(b1, _mm512_loadu_si512(q + 512 + 64 * c + 64), _mm512_set1_epi32(k3));
        }
        const __m512i d = _mm512_loadu_si512(q + 1024); /* the pair's 2 × 16 f16 scales */
        const __m512 d0 = _mm512_cvtph_ps(_mm512_castsi512_si256(d));
        const __m512 d1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(d, 1));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a0, b0)), _mm512_mul_ps(d0, _mm512_set1_ps(xd[j])),
                              acc);
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a1, b1)),
                              _mm512_mul_ps(d1, _mm512_set1_ps(xd[j + 1])), acc);
    }
    _mm512_storeu_ps(out, acc);
}

T512 void q8r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    const char *xc = x;
    switch (nx) {
    case 1: unit_1(w, u, xc, out); break;
    case 2: unit_n(w, u, xc, x_rb, out, out_stride, 2); break;
    case 3: unit_n(w, u, xc, x_rb, out, out_stride, 3); break;
    case 4: unit_n(w, u, xc, x_rb, out, out_stride, 4); break;
    case 5: unit_n(w, u, xc, x_rb, out, out_stride, 5); break;
    case 6: unit_n(w, u, xc, x_rb, out, out_stride, 6); break;
    case 7: unit_n(w, u, xc, x_rb, out, out_stride, 7); break;
    default: unit_n(w, u, xc, x_rb, out, out_stride, 8); break;
    }
}
#else
bool q8r_ready(void) { return false; }
/* unreachable: no matrix takes the layout where q8r_ready() is false */
void q8r_unit(const tensor *w, int64_t u, const void *x, size_t x_rb, int nx, float *out, size_t out_stride)
{
    (void)w, (void)u, (void)x, (void)x_rb, (void)nx, (void)out, (void)out_stride;
}
#endif
