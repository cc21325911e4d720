/* Tests qwen35_eval_mark (lm/qwen35.c): one pass over n prompt ids that also copies out the state
   after the first `at` of them (a chat's turn point, api/generate.c) must give what two calls give —
   qwen35_eval of ids[0, at), then of the rest:
     - the marked copy (every GDN layer's conv window and recurrent state), its n_past and pos_next,
       and the logits of id at−1, against the state and logits after the first call;
     - the KV rows [0, at) the pass left, against the first call's, and the last logits against the
       second call's;
   for marks inside a micro-batch, on its edges, at the first id and at the last, after a state that
   already held tokens (n_past > 0), with micro-batches of 8 so that the n ids span several. Tiny
   random model of the real architecture (lm/randmodel.h), fresh seed and ids each run, f32 weights
   on the CPU's exact path and on Vulkan (lavapipe) when a device is present. Refusals (a mark at 0 or
   past n, no state to copy to) change nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/device.h"
#include "core/cpu/cpu.h"
#include "core/ops.h"
#include "core/util.h"
#include "lm/qwen35.h"
#include "lm/randmodel.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

/* Two calls against one pass with two segments: the same arithmetic but the chunked GDN form's
   blocks and the matmuls' row counts differ, so sums may run in another order. Relative L2. */
#define TOL 1e-4
#define N_UBATCH 8
#define N_PRE 3 /* tokens the state holds before the marked call */
#define N_IDS 19

static const struct randmodel_shape shape = {
    .n_layer = 4, .n_embd = 256, .n_ff = 512, .n_head = 2, .n_head_kv = 1, .head_dim = 128,
    .ssm_n_k_heads = 2, .ssm_n_v_heads = 4, .ssm_d_state = 64, .ssm_conv_kernel = 4,
    .n_vocab = 384, .n_bpe_tokens = 300, .full_attention_interval = 2, .n_rot = 32,
    .sections = {6, 5, 5}, .tie = true,
};

/* t's bytes on the host (NULL after a failure). */
static float *read_tensor(const tensor *t, size_t bytes)
{
    float *v = malloc(bytes ? bytes : 1);
    if (v && backend_tensor_get(t, v, 0, bytes) != SEER_OK) {
        free(v);
        return NULL;
    }
    return v;
}

/* The worst relative L2 between a's and b's tensors of every layer: the recurrent half (conv and
   ssm state) or, with kv_rows > 0, the first kv_rows rows of K and V. */
static double worst_state(const qwen35_model *m, const qwen35_state *a, const qwen35_state *b, int64_t kv_rows)
{
    double worst = 0;
    for (int64_t il = 0; il < m->cfg.n_layer; il++) {
        const bool attn = m->layers[il].is_attn;
        if (attn != (kv_rows > 0))
            continue;
        const tensor *ta[2] = {attn ? &a->k_cache[il] : &a->conv_state[il], attn ? &a->v_cache[il] : &a->ssm_state[il]};
        const tensor *tb[2] = {attn ? &b->k_cache[il] : &b->conv_state[il], attn ? &b->v_cache[il] : &b->ssm_state[il]};
        for (int k = 0; k < 2; k++) {
            const size_t bytes = attn ? (size_t)kv_rows * ta[k]->nb[2] : tensor_nbytes(ta[k]);
            float *va = read_tensor(ta[k], bytes), *vb = read_tensor(tb[k], bytes);
            worst = va && vb ? MAX(worst, rel_l2(va, vb, bytes / sizeof(float))) : 1e30;
            free(va), free(vb);
        }
    }
    return worst;
}

/* A fresh state holding pre[0, N_PRE). */
static qwen35_state *started(const qwen35_model *m, const int32_t *pre, float *lg)
{
    qwen35_state *st = NULL;
    if (qwen35_state_create(m, N_PRE + N_IDS + 4, N_UBATCH, &st) != SEER_OK)
        return NULL;
    if (qwen35_eval(m, st, pre, N_PRE, QWEN35_LOGITS_LAST, lg, true) != SEER_OK) {
        qwen35_state_free(st);
        return NULL;
    }
    return st;
}

static void check_mark(const qwen35_model *m, const int32_t *pre, const int32_t *ids, int64_t at, const char *be)
{
    const size_t V = (size_t)m->cfg.n_vocab;
    float *lg_a = calloc(V, sizeof(float)), *lg_end = calloc(V, sizeof(float));
    float *lg_mark = calloc(V, sizeof(float)), *lg_pass = calloc(V, sizeof(float));
    qwen35_state *two = started(m, pre, lg_a), *one = started(m, pre, lg_a), *rec = NULL, *after_a = NULL;
    int rc = two && one && lg_a && lg_end && lg_mark && lg_pass ? SEER_OK : SEER_ENOMEM;
    /* the two calls; the recurrent half after the first is kept in after_a */
    rc = rc ? rc : qwen35_state_create_recurrent(m, &after_a);
    rc = rc ? rc : qwen35_eval(m, two, ids, at, QWEN35_LOGITS_LAST, lg_a, true);
    const int64_t past_a = two ? two->n_past : 0, pos_a = two ? two->pos_next : 0;
    for (int64_t il = 0; rc == SEER_OK && il < m->cfg.n_layer; il++)
        if (!m->layers[il].is_attn) {
            rc = op_cpy(m->be, &after_a->conv_state[il], &two->conv_state[il]);
            rc = rc ? rc : op_cpy(m->be, &after_a->ssm_state[il], &two->ssm_state[il]);
        }
    rc = rc ? rc : backend_sync(m->be);
    if (at < N_IDS)
        rc = rc ? rc : qwen35_eval(m, two, ids + at, N_IDS - at, QWEN35_LOGITS_LAST, lg_end, true);
    else if (!rc)
        memcpy(lg_end, lg_a, V * sizeof *lg_end);
    /* the one pass */
    rc = rc ? rc : qwen35_state_create_recurrent(m, &rec);
    const struct qwen35_mark mk = {.at = at, .rec = rec, .logits = lg_mark};
    rc = rc ? rc : qwen35_eval_mark(m, one, ids, N_IDS, QWEN35_LOGITS_LAST, lg_pass, true, &mk);
    if (ok(rc == SEER_OK, "%s: mark after %lld of %d ids %s", be, (long long)at, N_IDS, rc ? seer_last_error() : "")) {
        ok(rec->n_past == past_a && rec->pos_next == pos_a && one->n_past == two->n_past &&
               one->pos_next == two->pos_next,
           "%s, at %lld: the mark's n_past %lld and pos_next %lld (want %lld, %lld); the state's %lld, %lld", be,
           (long long)at, (long long)rec->n_past, (long long)rec->pos_next, (long long)past_a, (long long)pos_a,
           (long long)one->n_past, (long long)one->pos_next);
        const double e_rec = worst_state(m, rec, after_a, 0), e_kv = worst_state(m, one, two, N_PRE + at);
        const double e_lm = rel_l2(lg_mark, lg_a, V), e_end = rel_l2(lg_pass, lg_end, V);
        ok(e_rec <= TOL, "%s, at %lld: marked conv and recurrent state vs the first call's: rel L2 %.2e (<= %.0e)", be,
           (long long)at, e_rec, TOL);
        ok(e_lm <= TOL, "%s, at %lld: marked logits vs the first call's: rel L2 %.2e (<= %.0e)", be, (long long)at,
           e_lm, TOL);
        ok(e_kv <= TOL, "%s, at %lld: KV rows before the mark vs the first call's: rel L2 %.2e (<= %.0e)", be,
           (long long)at, e_kv, TOL);
        ok(e_end <= TOL, "%s, at %lld: last logits vs the second call's: rel L2 %.2e (<= %.0e)", be, (long long)at,
           e_end, TOL);
    }
    qwen35_state_free(two), qwen35_state_free(one), qwen35_state_free(rec), qwen35_state_free(after_a);
    free(lg_a), free(lg_end), free(lg_mark), free(lg_pass);
}

static void check_refusals(const qwen35_model *m, const int32_t *pre, const int32_t *ids, const char *be)
{
    float *lg = calloc((size_t)m->cfg.n_vocab, sizeof(float)), *lm = calloc((size_t)m->cfg.n_vocab, sizeof(float));
    qwen35_state *st = started(m, pre, lg), *rec = NULL;
    if (!st || qwen35_state_create_recurrent(m, &rec) != SEER_OK) {
        ok(0, "%s: states for the refusals", be);
    } else {
        const struct qwen35_mark bad[] = {{.at = 0, .rec = rec, .logits = lm}, {.at = N_IDS + 1, .rec = rec, .logits = lm},
                                          {.at = 2, .rec = NULL, .logits = lm}, {.at = 2, .rec = rec, .logits = NULL}};
        for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
            const int rc = qwen35_eval_mark(m, st, ids, N_IDS, QWEN35_LOGITS_LAST, lg, true, &bad[i]);
            ok(rc == SEER_EINVAL && st->n_past == N_PRE, "%s: mark %zu refused (%s), nothing fed", be, i,
               seer_last_error());
        }
    }
    qwen35_state_free(st), qwen35_state_free(rec);
    free(lg), free(lm);
}

static void run_on(backend *be, const char *path)
{
    qwen35_model *m = NULL;
    int rc = qwen35_load(path, be, &m);
    if (!ok(rc == SEER_OK, "model loads on %s %s", backend_name(be), rc ? seer_last_error() : ""))
        return;
    int32_t pre[N_PRE], ids[N_IDS];
    for (int i = 0; i < N_PRE; i++)
        pre[i] = (int32_t)(test_rand_u64() % (uint64_t)shape.n_vocab);
    for (int i = 0; i < N_IDS; i++)
        ids[i] = (int32_t)(test_rand_u64() % (uint64_t)shape.n_vocab);
    /* inside the first micro-batch, its last row, the second's first, inside the last, the last id */
    static const int64_t marks[] = {1, 5, 8, 9, 13, N_IDS};
    for (size_t i = 0; i < ARRAY_LEN(marks); i++)
        check_mark(m, pre, ids, marks[i], backend_name(be));
    check_refusals(m, pre, ids, backend_name(be));
    qwen35_free(m);
}

int main(void)
{
    plan_no_plan();
    char path[700];
    snprintf(path, sizeof path, "%s/model.gguf", test_tmp_dir());
    const struct randmodel_params p = {.wtype = DT_F32, .seed = test_seed(), .n_threads = 2};
    if (!ok(randmodel_write(path, &shape, &p) == SEER_OK, "random model written %s", seer_last_error()))
        return done_testing();
    backend *cpu = NULL;
    if (ok(backend_cpu_create(2, &cpu) == SEER_OK, "cpu backend")) {
        run_on(cpu, path);
        backend_free(cpu);
    }
    backend *vk = NULL;
    const int rc = backend_open("vulkan", 0, &vk);
    const char *req = getenv("SEER_REQUIRE_VULKAN");
    if (rc != SEER_OK && !(req && !strcmp(req, "1"))) {
        char why[600];
        snprintf(why, sizeof why, "no usable Vulkan device: %s", seer_last_error());
        skip(why, "vulkan: marks inside a pass");
    } else if (ok(rc == SEER_OK, "vulkan backend %s", rc ? seer_last_error() : "")) {
        run_on(vk, path);
        backend_free(vk);
    }
    return done_testing();
}
