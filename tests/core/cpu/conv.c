/* Tests core/cpu/conv.c through op_conv1d_causal against a double-precision reference written
   here from spec §2.5 step 2 (c_t[ch] = Σ_k w[ch,k]·m_{t−K+1+k}[ch], zeros before the sequence)
   and the conv-state notes after step 10 (the state is the last K−1 inputs): a fresh zero state
   equals left zero padding, a carried state equals the history, prompts split into chunks
   (1+5+3, 2+2+5, token by token) equal one call, strided inputs, and 1 vs 2 threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static backend *be1, *be2; /* 1 and 2 threads */

/* Whole-sequence reference: m is the full input history {C, Ttot} (m[t*C + c]); outputs for
   t = t0 .. Ttot−1 go to out[(t − t0)*C + c]. Inputs before t = 0 are zero (spec §2.5 step 2). */
static void ref_conv(const float *m, const float *w, int C, int K, int Ttot, int t0, double *out)
{
    for (int t = t0; t < Ttot; t++)
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                int tau = t - (K - 1) + k; /* tap K−1 is the current token: no flip */
                s += tau < 0 ? 0.0 : (double)w[c * K + k] * m[(size_t)tau * C + c];
            }
            out[(size_t)(t - t0) * C + c] = s;
        }
}

/* Feeds x{C,T} (a slice of m starting at token t0) through op_conv1d_causal with state st;
   out_all receives the outputs at rows t0.. . x_strided: x is a view with padded rows. */
static int run_chunk(backend *be, const float *m, int C, int t0, int T, tensor *tw, tensor *st, float *out_all,
                     int x_strided)
{
    tensor *base = test_tensor(be, DT_F32, C + (x_strided ? 5 : 0), T, 1, 1, NULL);
    for (int t = 0; t < T; t++)
        memcpy((char *)base->data + (size_t)t * base->nb[1], m + (size_t)(t0 + t) * C, (size_t)C * sizeof(float));
    int64_t ne[2] = {C, T};
    size_t nb[2] = {4, base->nb[1]};
    tensor x = tensor_view(base, 2, ne, nb, 0);
    tensor *to = test_tensor(be, DT_F32, C, T, 1, 1, NULL);
    int rc = op_conv1d_causal(be, to, &x, tw, st);
    if (rc == SEER_OK)
        memcpy(out_all + (size_t)t0 * C, to->data, (size_t)C * T * sizeof(float));
    else
        diag("conv: %s", seer_last_error());
    test_tensor_free(base), test_tensor_free(to);
    return rc;
}

struct conv_setup {
    int C, K, Ttot;
    float *m, *w;
    tensor *tw, *st;
};

static void setup(struct conv_setup *s, backend *be, int C, int K, int Ttot)
{
    s->C = C, s->K = K, s->Ttot = Ttot;
    s->m = malloc((size_t)C * Ttot * sizeof *s->m);
    s->w = malloc((size_t)C * K * sizeof *s->w);
    test_fill_normal(s->m, (size_t)C * Ttot, 1.0f);
    test_fill_normal(s->w, (size_t)C * K, 0.5f);
    s->tw = test_tensor(be, DT_F32, K, C, 1, 1, s->w);
    s->st = test_tensor(be, DT_F32, C, K - 1, 1, 1, NULL);
    memset(s->st->data, 0, tensor_nbytes(s->st)); /* fresh sequence */
}

static void teardown(struct conv_setup *s)
{
    free(s->m), free(s->w);
    test_tensor_free(s->tw), test_tensor_free(s->st);
}

/* Runs the sequence in chunks (lengths in `chunks`, summing to Ttot) from a zero state; returns
   the rel L2 of all outputs vs the zero-padded reference, and whether the final state equals the
   last K−1 inputs exactly. */
static double chunked_case(backend *be, int C, int K, const int *chunks, int nchunks, int x_strided, int *state_ok,
                           float **outs)
{
    int Ttot = 0;
    for (int i = 0; i < nchunks; i++)
        Ttot += chunks[i];
    struct conv_setup s;
    setup(&s, be, C, K, Ttot);
    float *y = malloc((size_t)C * Ttot * sizeof *y);
    double *ref = malloc((size_t)C * Ttot * sizeof *ref);
    int rc = SEER_OK;
    for (int i = 0, t0 = 0; i < nchunks && rc == SEER_OK; t0 += chunks[i++])
        rc = run_chunk(be, s.m, C, t0, chunks[i], s.tw, s.st, y, x_strided);
    ref_conv(s.m, s.w, C, K, Ttot, 0, ref);
    double e = rc == SEER_OK ? rel_l2_d(y, ref, (size_t)C * Ttot) : INFINITY;
    /* state = the last K−1 inputs, zero-padded on the left when fewer were seen (spec §2.5) */
    *state_ok = rc == SEER_OK;
    const float *st = s.st->data;
    for (int r = 0; r < K - 1; r++) {
        int tau = Ttot - (K - 1) + r;
        for (int c = 0; c < C; c++)
            *state_ok &= st[r * C + c] == (tau < 0 ? 0.0f : s.m[(size_t)tau * C + c]);
    }
    if (outs)
        *outs = y;
    else
        free(y);
    free(ref);
    teardown(&s);
    return e;
}

static void test_fresh_and_chunked(void)
{
    static const int Cs[] = {1, 7, 37, 130};
    static const int Ks[] = {2, 4, 5};
    static const int one[] = {9}, split[] = {1, 5, 3}, tiny[] = {2, 2, 5}, short1[] = {2},
                     tokens[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const struct { const int *c; int n; const char *name; } plans[] = {
        {one, 1, "one call of 9"},   {split, 3, "1+5+3"}, {tiny, 3, "2+2+5"},
        {short1, 1, "one call of 2 (< K-1)"}, {tokens, 9, "9 single tokens"},
    };
    for (size_t p = 0; p < ARRAY_LEN(plans); p++) {
        double worst = 0;
        int st_all = 1;
        for (size_t a = 0; a < ARRAY_LEN(Cs); a++)
            for (size_t b = 0; b < ARRAY_LEN(Ks); b++)
                for (int strided = 0; strided < 2; strided++) {
                    int st;
                    worst = fmax(worst, chunked_case(be1, Cs[a], Ks[b], plans[p].c, plans[p].n, strided, &st, NULL));
                    st_all &= st;
                }
        /* tolerance 1e-5: K f32 products and sums (~3e-7) */
        ok(worst <= 1e-5, "conv from a zero state, %s, C 1..130, K 2/4/5, contiguous and strided x: equals zero "
                          "left padding (rel L2 %.2e <= 1e-5)", plans[p].name, worst);
        ok(st_all, "conv, %s: final state is exactly the last K-1 inputs (zero-padded)", plans[p].name);
    }
    /* chunked calls give the very same bits as one call: each output sees the same inputs in the
       same order whichever call it falls in */
    float *y_one, *y_split, *y_tok;
    int C = 37, K = 4;
    struct conv_setup s;
    setup(&s, be1, C, K, 9);
    y_one = malloc((size_t)C * 9 * sizeof *y_one);
    y_split = malloc((size_t)C * 9 * sizeof *y_split);
    y_tok = malloc((size_t)C * 9 * sizeof *y_tok);
    int rc = run_chunk(be1, s.m, C, 0, 9, s.tw, s.st, y_one, 0);
    float st_one[3 * 37];
    memcpy(st_one, s.st->data, sizeof st_one);
    memset(s.st->data, 0, tensor_nbytes(s.st));
    rc |= run_chunk(be1, s.m, C, 0, 1, s.tw, s.st, y_split, 0);
    rc |= run_chunk(be1, s.m, C, 1, 5, s.tw, s.st, y_split, 1);
    rc |= run_chunk(be1, s.m, C, 6, 3, s.tw, s.st, y_split, 0);
    int st_same = memcmp(st_one, s.st->data, sizeof st_one) == 0;
    memset(s.st->data, 0, tensor_nbytes(s.st));
    for (int t = 0; t < 9; t++)
        rc |= run_chunk(be1, s.m, C, t, 1, s.tw, s.st, y_tok, 0);
    st_same &= memcmp(st_one, s.st->data, sizeof st_one) == 0;
    ok(rc == SEER_OK && memcmp(y_one, y_split, (size_t)C * 9 * 4) == 0 && memcmp(y_one, y_tok, (size_t)C * 9 * 4) == 0,
       "conv C=37 K=4: 1+5+3 chunks and 9 single tokens give the same bits as one call of 9");
    ok(st_same, "conv: the state after 1+5+3 chunks and after 9 single tokens equals the state after one call");
    free(y_one), free(y_split), free(y_tok);
    teardown(&s);
}

/* A carried, non-zero state is the history: running tokens 6..8 from the state after 0..5 equals
   the reference over the whole sequence. The state is written directly here (not produced by the
   op) to check its layout: row r, oldest first, holds input t0 − (K−1) + r. */
static void test_given_state(void)
{
    int C = 37, K = 4, Ttot = 9, t0 = 6;
    struct conv_setup s;
    setup(&s, be1, C, K, Ttot);
    float *st = s.st->data;
    for (int r = 0; r < K - 1; r++)
        memcpy(st + r * C, s.m + (size_t)(t0 - (K - 1) + r) * C, (size_t)C * sizeof *st);
    float *y = calloc((size_t)C * Ttot, sizeof *y);
    double *ref = malloc((size_t)C * (Ttot - t0) * sizeof *ref);
    int rc = run_chunk(be1, s.m, C, t0, Ttot - t0, s.tw, s.st, y, 0);
    ref_conv(s.m, s.w, C, K, Ttot, t0, ref);
    double e = rc == SEER_OK ? rel_l2_d(y + (size_t)t0 * C, ref, (size_t)C * (Ttot - t0)) : INFINITY;
    ok(e <= 1e-5, "conv from a given state (inputs 3..5) over tokens 6..8 equals the full-sequence reference "
                  "(rel L2 %.2e <= 1e-5)", e);
    free(y), free(ref);
    teardown(&s);
}

static void test_threads(void)
{
    /* 6151 channels x 33 tokens x K 4: enough work for the pool; chunked 1 + 32 so the state
       path runs threaded too */
    int C = 6151, K = 4, T = 33;
    struct conv_setup s1, s2;
    setup(&s1, be1, C, K, T);
    setup(&s2, be2, C, K, T);
    memcpy(s2.m, s1.m, (size_t)C * T * sizeof(float));
    memcpy(s2.w, s1.w, (size_t)C * K * sizeof(float));
    memcpy(s2.tw->data, s1.tw->data, (size_t)C * K * sizeof(float));
    float *y1 = malloc((size_t)C * T * sizeof *y1), *y2 = malloc((size_t)C * T * sizeof *y2);
    int rc = run_chunk(be1, s1.m, C, 0, 1, s1.tw, s1.st, y1, 0) | run_chunk(be1, s1.m, C, 1, T - 1, s1.tw, s1.st, y1, 1);
    rc |= run_chunk(be2, s2.m, C, 0, 1, s2.tw, s2.st, y2, 0) | run_chunk(be2, s2.m, C, 1, T - 1, s2.tw, s2.st, y2, 1);
    ok(rc == SEER_OK && memcmp(y1, y2, (size_t)C * T * 4) == 0 &&
           memcmp(s1.st->data, s2.st->data, tensor_nbytes(s1.st)) == 0,
       "conv C=6151 T=1+32 K=4: 1 and 2 threads give identical outputs and state");
    double *ref = malloc((size_t)C * T * sizeof *ref);
    ref_conv(s1.m, s1.w, C, K, T, 0, ref);
    double e = rel_l2_d(y2, ref, (size_t)C * T);
    ok(e <= 1e-5, "conv with 2 threads vs reference (rel L2 %.2e <= 1e-5)", e);
    free(y1), free(y2), free(ref);
    teardown(&s1), teardown(&s2);
}

int main(void)
{
    plan_no_plan();
    test_seed();
    if (backend_cpu_create(1, &be1) != SEER_OK || backend_cpu_create(2, &be2) != SEER_OK) {
        ok(0, "cpu backends: %s", seer_last_error());
        return done_testing();
    }
    test_fresh_and_chunked();
    test_given_state();
    test_threads();
    backend_free(be1);
    backend_free(be2);
    return done_testing();
}
