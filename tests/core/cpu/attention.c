/* Tests core/cpu/attention.c (op_attention) against a naive double-precision softmax attention
   written here from spec §2.6 step 6 (GQA: query head h reads kv head h/(nh/nkv); causal mask)
   and §4.5 (segment mask): prefill, continued prefill and decode (q_pos0 > 0), several segment
   layouts, GQA ratios 1 and 4, head dims 256/64/72 (and 20 for vector tails), f16 K/V, K/V as
   strided views of a larger cache, large scores, in-place output, 1 and 3 threads, and failed
   scratch allocation. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/fp16.h"
#include "core/ops.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

/* Relative L2 against the double reference. f32 scores and sums over ≤ 300 keys of ≤ 256-long
   products round near 1e-6; 1e-4 leaves margin. f16 K/V use the same bound because the
   reference is fed the same f16-rounded values, so only the op's own f32 arithmetic differs. */
#define TOL 1e-4

enum kv_layout {
    KV_CONTIG,      /* {hd, nkv, Tk} */
    KV_CACHE_TOK,   /* view of a cache {hd, cap, nkv}: per kv head, tokens consecutive (HF [nkv, T, hd]) */
    KV_CACHE_HEAD,  /* view of the first Tk tokens of a cache {hd, nkv, cap} */
};

enum seg_kind { SEG_NONE, SEG_RUNS, SEG_INTERLEAVED };

struct attn_case {
    const char *what;
    int64_t hd, nh, nkv, T, Tk, q_pos0;
    enum seg_kind seg;
    enum dtype kvt;
    enum kv_layout layout;
    float qscale;  /* multiplies q: 1, or large to push scores to hundreds */
    bool inplace;  /* out is q's tensor */
};

/* SEG_RUNS: runs of these lengths, cycled until T is filled (T = 50 is exactly one cycle) */
static const int seg_runs[] = {7, 20, 1, 22};

static void make_seg(const struct attn_case *c, int32_t *seg)
{
    if (c->seg == SEG_RUNS) {
        int64_t i = 0;
        for (int32_t r = 0; i < c->T; r++)
            for (int n = 0; n < seg_runs[r % 4] && i < c->T; n++, i++)
                seg[i] = 100 - 3 * r; /* ids need not be small or increasing */
    } else {
        for (int64_t i = 0; i < c->T; i++)
            seg[i] = (int32_t)((i * 7) % 3); /* one id in scattered positions */
    }
}

/* out[t][h][e] in double, from the logical arrays q{hd,nh,T}, k,v{hd,nkv,Tk}. */
static void attn_ref(const struct attn_case *c, const float *q, const float *k, const float *v, const int32_t *seg,
                     double scale, double *out)
{
    int64_t hd = c->hd, r = c->nh / c->nkv;
    double *s = malloc(sizeof(double) * (size_t)c->Tk);
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t h = 0; h < c->nh; h++) {
            const float *qr = q + (t * c->nh + h) * hd;
            int64_t g = h / r;
            double m = -INFINITY, l = 0;
            for (int64_t j = 0; j < c->Tk; j++) {
                bool vis = c->seg == SEG_NONE ? j <= c->q_pos0 + t : seg[j] == seg[t];
                s[j] = NAN;
                if (!vis)
                    continue;
                double d = 0;
                for (int64_t e = 0; e < hd; e++)
                    d += (double)qr[e] * k[(j * c->nkv + g) * hd + e];
                s[j] = d * scale;
                m = fmax(m, s[j]);
            }
            double *o = out + (t * c->nh + h) * hd;
            memset(o, 0, sizeof(double) * (size_t)hd);
            for (int64_t j = 0; j < c->Tk; j++) {
                if (isnan(s[j]))
                    continue;
                double p = exp(s[j] - m);
                l += p;
                for (int64_t e = 0; e < hd; e++)
                    o[e] += p * v[(j * c->nkv + g) * hd + e];
            }
            for (int64_t e = 0; e < hd; e++)
                o[e] /= l;
        }
    free(s);
}

/* A K or V tensor holding the logical {hd,nkv,Tk} array x in the case's dtype and layout; the
   rest of a cache is filled with large values so reading outside the view would show. Returns
   the view in *view and the owning tensor (free it). x is rounded to f16 in place for F16, so
   the reference sees exactly what the op reads. */
static tensor *make_kv(backend *be, const struct attn_case *c, float *x, tensor *view)
{
    int64_t hd = c->hd, nkv = c->nkv, Tk = c->Tk, cap = c->layout == KV_CONTIG ? Tk : MAX(100, Tk + 7);
    size_t es = c->kvt == DT_F16 ? 2 : 4;
    tensor *t = c->layout == KV_CACHE_TOK ? test_tensor(be, c->kvt, hd, cap, nkv, 1, NULL)
                                          : test_tensor(be, c->kvt, hd, nkv, cap, 1, NULL);
    size_t nel = (size_t)(hd * nkv * cap);
    unsigned char *raw = malloc(nel * es);
    for (size_t i = 0; i < nel; i++) {
        float junk = 1000.0f + test_randf(0, 1000);
        if (es == 2) {
            uint16_t h = f32_to_f16(junk);
            memcpy(raw + i * 2, &h, 2);
        } else {
            memcpy(raw + i * 4, &junk, 4);
        }
    }
    size_t nb1 = c->layout == KV_CACHE_TOK ? es * (size_t)(hd * cap) : es * (size_t)hd;
    size_t nb2 = c->layout == KV_CACHE_TOK ? es * (size_t)hd : es * (size_t)(hd * nkv);
    for (int64_t j = 0; j < Tk; j++)
        for (int64_t g = 0; g < nkv; g++)
            for (int64_t e = 0; e < hd; e++) {
                float *xv = &x[(j * nkv + g) * hd + e];
                unsigned char *dst = raw + (size_t)g * nb1 + (size_t)j * nb2 + (size_t)e * es;
                if (es == 2) {
                    uint16_t h = f32_to_f16(*xv);
                    *xv = f16_to_f32(h);
                    memcpy(dst, &h, 2);
                } else {
                    memcpy(dst, xv, 4);
                }
            }
    backend_tensor_set(t, raw, 0, nel * es);
    free(raw);
    *view = tensor_view(t, 3, (int64_t[]){hd, nkv, Tk}, (size_t[]){es, nb1, nb2}, 0);
    return t;
}

static void check_case(backend *be, const struct attn_case *c, const char *bename)
{
    int64_t hd = c->hd, nq = hd * c->nh * c->T, nkvel = hd * c->nkv * c->Tk;
    float *q = malloc(sizeof(float) * (size_t)nq), *k = malloc(sizeof(float) * (size_t)nkvel);
    float *v = malloc(sizeof(float) * (size_t)nkvel);
    int32_t *seg = malloc(sizeof(int32_t) * (size_t)c->T);
    double *ref = malloc(sizeof(double) * (size_t)nq);
    test_fill_normal(q, (size_t)nq, c->qscale);
    test_fill_normal(k, (size_t)nkvel, 1.0f);
    test_fill_normal(v, (size_t)nkvel, 1.0f);
    tensor kview, vview;
    tensor *kt = make_kv(be, c, k, &kview), *vt = make_kv(be, c, v, &vview);
    tensor *qt = test_tensor(be, DT_F32, hd, c->nh, c->T, 1, q);
    tensor *out = c->inplace ? qt : test_tensor(be, DT_F32, hd, c->nh, c->T, 1, NULL);
    tensor *segt = NULL;
    struct attn_mask mask = {.kind = ATTN_CAUSAL, .q_pos0 = c->q_pos0};
    if (c->seg != SEG_NONE) {
        make_seg(c, seg);
        segt = test_tensor(be, DT_I32, c->T, 1, 1, 1, NULL);
        backend_tensor_set(segt, seg, 0, sizeof(int32_t) * (size_t)c->T);
        mask = (struct attn_mask){.kind = ATTN_SEGMENTS, .seg = segt};
    }
    double scale = 1.0 / sqrt((double)hd); /* spec §2.6: 256^-1/2 for the text model */
    attn_ref(c, q, k, v, seg, scale, ref);
    int rc = op_attention(be, out, qt, &kview, &vview, (float)scale, &mask);
    double err = INFINITY;
    if (rc == SEER_OK) {
        float *o = test_tensor_read(out);
        err = rel_l2_d(o, ref, (size_t)nq);
        free(o);
    }
    ok(rc == SEER_OK && err <= TOL, "%s [%s]: hd %lld nh %lld nkv %lld T %lld Tk %lld%s, rel-L2 %.2e (<= %.0e)%s%s",
       c->what, bename, (long long)hd, (long long)c->nh, (long long)c->nkv, (long long)c->T, (long long)c->Tk,
       c->kvt == DT_F16 ? " f16" : "", err, TOL, rc ? ": " : "", rc ? seer_last_error() : "");
    test_tensor_free(kt), test_tensor_free(vt), test_tensor_free(qt), test_tensor_free(segt);
    if (!c->inplace)
        test_tensor_free(out);
    free(q), free(k), free(v), free(seg), free(ref);
}

static const struct attn_case cases[] = {
    /* what                            hd   nh nkv   T   Tk  q_pos0 seg          kvt     layout        qscale */
    {"causal prefill GQA 4",           256, 8, 2,  37,  37,  0,  SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"causal prefill GQA 1",           64,  3, 3,  37,  37,  0,  SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"continued prefill q_pos0 32",    256, 8, 2,  5,   37,  32, SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"decode T=1 of 37",               256, 8, 2,  1,   37,  36, SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"decode, cache view (cap 100)",     256, 8, 2,  1,   37,  36, SEG_NONE,        DT_F32, KV_CACHE_TOK,  1, false},
    {"decode, f16 cache view",         256, 8, 2,  1,   37,  36, SEG_NONE,        DT_F16, KV_CACHE_TOK,  1, false},
    {"decode, f16 head-major cache",   72,  8, 2,  1,   37,  36, SEG_NONE,        DT_F16, KV_CACHE_HEAD, 1, false},
    {"decode GQA 1",                   64,  4, 4,  1,   37,  36, SEG_NONE,        DT_F32, KV_CACHE_TOK,  1, false},
    {"decode, odd head_dim",           20,  2, 1,  1,   37,  36, SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"segments 7/20/1/22 GQA 1",       72,  4, 4,  50,  50,  0,  SEG_RUNS,        DT_F32, KV_CONTIG,     1, false},
    {"segments, f16 GQA 4",            64,  8, 2,  50,  50,  0,  SEG_RUNS,        DT_F16, KV_CACHE_TOK,  1, false},
    {"interleaved segment ids",        72,  2, 2,  45,  45,  0,  SEG_INTERLEAVED, DT_F32, KV_CONTIG,     1, false},
    {"long causal, many blocks",       128, 8, 2,  300, 300, 0,  SEG_NONE,        DT_F32, KV_CONTIG,     1, false},
    {"long causal, f16 cache view",    64,  4, 1,  300, 300, 0,  SEG_NONE,        DT_F16, KV_CACHE_TOK,  1, false},
    {"prefill from cache, q_pos0 130", 64,  4, 1,  70,  200, 130, SEG_NONE,       DT_F16, KV_CACHE_HEAD, 1, false},
    {"long segments hd 72",            72,  4, 4,  200, 200, 0,  SEG_RUNS,        DT_F32, KV_CONTIG,     1, false},
    {"large scores (|s| ~ 100s)",      64,  8, 2,  130, 130, 0,  SEG_NONE,        DT_F32, KV_CONTIG,     40, false},
    {"out written over q",             64,  8, 2,  70,  70,  0,  SEG_NONE,        DT_F32, KV_CONTIG,     1, true},
    {"decode, out written over q",     256, 8, 2,  1,   37,  36, SEG_NONE,        DT_F16, KV_CACHE_TOK,  1, true},
};

int main(void)
{
    plan_no_plan();
    test_seed();
    backend *be[2];
    int nthreads[2] = {1, 3};
    for (int b = 0; b < 2; b++)
        if (backend_cpu_create(nthreads[b], &be[b]) != SEER_OK) {
            ok(0, "cpu backend: %s", seer_last_error());
            return done_testing();
        }
    for (int b = 0; b < 2; b++)
        for (size_t i = 0; i < ARRAY_LEN(cases); i++)
            check_case(be[b], &cases[i], b ? "3 threads" : "1 thread");

    /* each allocation failing in turn is reported, not crashed on: causal makes one (scratch),
       segments three (ranges, their sort index, scratch) */
    for (int segs = 0; segs < 2; segs++) {
        int64_t hd = 64, nh = 4, T = 50;
        tensor *q = test_tensor(be[1], DT_F32, hd, nh, T, 1, NULL);
        tensor *k = test_tensor(be[1], DT_F32, hd, nh, T, 1, NULL);
        tensor *out = test_tensor(be[1], DT_F32, hd, nh, T, 1, NULL);
        tensor *seg = test_tensor(be[1], DT_I32, T, 1, 1, 1, NULL);
        struct attn_mask mask = {.kind = ATTN_CAUSAL, .q_pos0 = 0};
        if (segs)
            mask = (struct attn_mask){.kind = ATTN_SEGMENTS, .seg = seg};
        bool all = true;
        for (int n = 1; n <= (segs ? 3 : 1); n++) {
            seer_alloc_fail_after(n);
            int rc = op_attention(be[1], out, q, k, k, 0.125f, &mask);
            seer_alloc_fail_after(0);
            all &= rc == SEER_ENOMEM && strstr(seer_last_error(), "op_attention") != NULL;
        }
        seer_alloc_fail_after(segs ? 4 : 2);
        int rc = op_attention(be[1], out, q, k, k, 0.125f, &mask);
        seer_alloc_fail_after(0);
        ok(all && rc == SEER_OK, "%s: every failed allocation gives SEER_ENOMEM (\"%s\"); none failing succeeds",
           segs ? "segments" : "causal", seer_last_error());
        test_tensor_free(q), test_tensor_free(k), test_tensor_free(out), test_tensor_free(seg);
    }
    backend_free(be[0]);
    backend_free(be[1]);
    return done_testing();
}
