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
   past n, no state to copy to) change nothing. The same through qwen35_feed_batch: two prompts
   marked in one pass beside a sequence decoding a token. */
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

/* The two calls: pre, then ids[0, at) (lg_a: its last logits; *after_a: the recurrent half then),
   then ids[at, n) (lg_end: the last logits). *two holds the whole sequence. */
static int two_calls(const qwen35_model *m, const int32_t *pre, const int32_t *ids, int64_t n, int64_t at, float *lg_a,
                     float *lg_end, qwen35_state **two, qwen35_state **after_a)
{
    *after_a = NULL;
    if (!(*two = started(m, pre, lg_a)))
        return SEER_ENOMEM;
    int rc = qwen35_state_create_recurrent(m, after_a);
    rc = rc ? rc : qwen35_eval(m, *two, ids, at, QWEN35_LOGITS_LAST, lg_a, true);
    for (int64_t il = 0; rc == SEER_OK && il < m->cfg.n_layer; il++)
        if (!m->layers[il].is_attn) {
            rc = op_cpy(m->be, &(*after_a)->conv_state[il], &(*two)->conv_state[il]);
            rc = rc ? rc : op_cpy(m->be, &(*after_a)->ssm_state[il], &(*two)->ssm_state[il]);
        }
    rc = rc ? rc : backend_sync(m->be);
    if (!rc)
        (*after_a)->n_past = (*two)->n_past, (*after_a)->pos_next = (*two)->pos_next;
    if (at < n)
        rc = rc ? rc : qwen35_eval(m, *two, ids + at, n - at, QWEN35_LOGITS_LAST, lg_end, true);
    else if (!rc)
        memcpy(lg_end, lg_a, (size_t)m->cfg.n_vocab * sizeof *lg_end);
    return rc;
}

/* The marked pass (`one`, its copy `rec`, lg_mark, lg_pass) against the two calls. */
static void check_against(const qwen35_model *m, const qwen35_state *one, const qwen35_state *rec,
                          const float *lg_mark, const float *lg_pass, const qwen35_state *two,
                          const qwen35_state *after_a, const float *lg_a, const float *lg_end, int64_t at,
                          const char *what)
{
    const size_t V = (size_t)m->cfg.n_vocab;
    ok(rec->n_past == after_a->n_past && rec->pos_next == after_a->pos_next && one->n_past == two->n_past &&
           one->pos_next == two->pos_next,
       "%s, at %lld: the mark's n_past %lld and pos_next %lld (want %lld, %lld); the state's %lld, %lld", what,
       (long long)at, (long long)rec->n_past, (long long)rec->pos_next, (long long)after_a->n_past,
       (long long)after_a->pos_next, (long long)one->n_past, (long long)one->pos_next);
    const double e_rec = worst_state(m, rec, after_a, 0), e_kv = worst_state(m, one, two, N_PRE + at);
    const double e_lm = rel_l2(lg_mark, lg_a, V), e_end = rel_l2(lg_pass, lg_end, V);
    ok(e_rec <= TOL, "%s, at %lld: marked conv and recurrent state vs the first call's: rel L2 %.2e (<= %.0e)", what,
       (long long)at, e_rec, TOL);
    ok(e_lm <= TOL, "%s, at %lld: marked logits vs the first call's: rel L2 %.2e (<= %.0e)", what, (long long)at,
       e_lm, TOL);
    ok(e_kv <= TOL, "%s, at %lld: KV rows before the mark vs the first call's: rel L2 %.2e (<= %.0e)", what,
       (long long)at, e_kv, TOL);
    ok(e_end <= TOL, "%s, at %lld: last logits vs the second call's: rel L2 %.2e (<= %.0e)", what, (long long)at,
       e_end, TOL);
}

static void check_mark(const qwen35_model *m, const int32_t *pre, const int32_t *ids, int64_t at, const char *be)
{
    const size_t V = (size_t)m->cfg.n_vocab;
    float *lg_a = calloc(V, sizeof(float)), *lg_end = calloc(V, sizeof(float));
    float *lg_mark = calloc(V, sizeof(float)), *lg_pass = calloc(V, sizeof(float));
    qwen35_state *two = NULL, *one = started(m, pre, lg_mark), *rec = NULL, *after_a = NULL;
    int rc = one && lg_a && lg_end && lg_mark && lg_pass ? SEER_OK : SEER_ENOMEM;
    rc = rc ? rc : two_calls(m, pre, ids, N_IDS, at, lg_a, lg_end, &two, &after_a);
    /* the one pass */
    rc = rc ? rc : qwen35_state_create_recurrent(m, &rec);
    const struct qwen35_mark mk = {.at = at, .rec = rec, .logits = lg_mark};
    rc = rc ? rc : qwen35_eval_mark(m, one, ids, N_IDS, QWEN35_LOGITS_LAST, lg_pass, true, &mk);
    if (ok(rc == SEER_OK, "%s: mark after %lld of %d ids %s", be, (long long)at, N_IDS, rc ? seer_last_error() : ""))
        check_against(m, one, rec, lg_mark, lg_pass, two, after_a, lg_a, lg_end, at, be);
    qwen35_state_free(two), qwen35_state_free(one), qwen35_state_free(rec), qwen35_state_free(after_a);
    free(lg_a), free(lg_end), free(lg_mark), free(lg_pass);
}

/* qwen35_feed_batch with marks: a sequence decoding one token, then two prompts in the same pass,
   one marked inside its rows and one at its last row (their logits are the mark's too), each
   against its two calls; the decoding one against qwen35_eval of its token. */
#define N_BATCH_SEQ 3
static void check_batch_marks(const qwen35_model *m, const int32_t *pre, const int32_t *ids, const char *be)
{
    const size_t V = (size_t)m->cfg.n_vocab;
    static const int64_t counts[N_BATCH_SEQ] = {1, 11, 6}, at[N_BATCH_SEQ] = {0, 4, 6};
    qwen35_state *ws = NULL, *seqs[N_BATCH_SEQ] = {0}, *rec[N_BATCH_SEQ] = {0}, *two[N_BATCH_SEQ] = {0};
    qwen35_state *after[N_BATCH_SEQ] = {0};
    float *lg = calloc(N_BATCH_SEQ * V, sizeof(float)), *scratch = calloc(V, sizeof(float));
    float *lg_a[N_BATCH_SEQ], *lg_end[N_BATCH_SEQ], *lg_mark[N_BATCH_SEQ];
    struct qwen35_mark mk[N_BATCH_SEQ] = {{0}};
    int rc = lg && scratch ? SEER_OK : SEER_ENOMEM;
    int32_t flat[1 + 11 + 6];
    for (int i = 0, r = 0; i < N_BATCH_SEQ; r += (int)counts[i++]) {
        lg_a[i] = calloc(V, sizeof(float)), lg_end[i] = calloc(V, sizeof(float)), lg_mark[i] = calloc(V, sizeof(float));
        memcpy(flat + r, ids + i, (size_t)counts[i] * sizeof *flat); /* each its own ids */
        if (!lg_a[i] || !lg_end[i] || !lg_mark[i])
            rc = SEER_ENOMEM;
        if (!rc && !(seqs[i] = started(m, pre, scratch)))
            rc = SEER_ENOMEM;
        if (!rc && at[i] > 0) {
            rc = two_calls(m, pre, flat + r, counts[i], at[i], lg_a[i], lg_end[i], &two[i], &after[i]);
            rc = rc ? rc : qwen35_state_create_recurrent(m, &rec[i]);
            mk[i] = (struct qwen35_mark){.at = at[i], .rec = rec[i], .logits = lg_mark[i]};
        } else if (!rc) { /* the decoding one: pre, then its token */
            two[i] = started(m, pre, scratch);
            rc = two[i] ? qwen35_eval(m, two[i], flat + r, 1, QWEN35_LOGITS_LAST, lg_end[i], true) : SEER_ENOMEM;
        }
    }
    rc = rc ? rc : qwen35_state_create(m, 32, 32, &ws);
    rc = rc ? rc : qwen35_feed_batch(m, ws, seqs, flat, counts, N_BATCH_SEQ, lg, mk);
    if (ok(rc == SEER_OK, "%s: feed_batch with two marks %s", be, rc ? seer_last_error() : "")) {
        for (int i = 0; i < N_BATCH_SEQ; i++) {
            char what[120];
            snprintf(what, sizeof what, "%s batch sequence %d (%lld rows)", be, i, (long long)counts[i]);
            if (at[i] > 0) {
                check_against(m, seqs[i], rec[i], lg_mark[i], lg + i * V, two[i], after[i], lg_a[i], lg_end[i], at[i],
                              what);
            } else {
                const double e = rel_l2(lg + i * V, lg_end[i], V);
                ok(e <= TOL && seqs[i]->n_past == two[i]->n_past, "%s: logits vs alone: rel L2 %.2e (<= %.0e)", what, e, TOL);
            }
        }
    }
    /* a mark past its sequence's rows is refused, nothing fed */
    const int64_t past = seqs[1] ? seqs[1]->n_past : 0;
    struct qwen35_mark bad[N_BATCH_SEQ] = {{0}, {.at = 12, .rec = rec[1], .logits = lg_mark[1]}, {0}};
    rc = ws && seqs[0] && seqs[1] && seqs[2] ? qwen35_feed_batch(m, ws, seqs, flat, counts, N_BATCH_SEQ, lg, bad) : SEER_OK;
    ok(rc == SEER_EINVAL && seqs[1] && seqs[1]->n_past == past, "%s: feed_batch refuses a mark after 12 of 11 rows: %s", be,
       seer_last_error());
    for (int i = 0; i < N_BATCH_SEQ; i++) {
        qwen35_state_free(seqs[i]), qwen35_state_free(rec[i]), qwen35_state_free(two[i]), qwen35_state_free(after[i]);
        free(lg_a[i]), free(lg_end[i]), free(lg_mark[i]);
    }
    qwen35_state_free(ws);
    free(lg), free(scratch);
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
    check_batch_marks(m, pre, ids, backend_name(be));
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
