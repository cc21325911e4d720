/* rows_seq.h — rows of tests/ops/backend_ops.c for the sequence ops: the causal depthwise conv
   (spec §2.5 step 2), Gated DeltaNet in both forms (spec §2.5 steps 5–8) and attention
   (spec §2.6 step 6, §4.5). Their outputs are followed by the state they leave behind. */

/* ---- conv1d_causal ---------------------------------------------------------------------------- */

/* Case: ne[0] T, ne[1] the plan: the sequence is fed in the calls conv_plans[plan] (lengths;
   plan 0 is one call of T), the state carried between them; p {C, K}. OPC_STRIDED: x rows 5
   floats apart; OPC_ALT: the state starts as K − 1 random earlier inputs instead of zeros (a
   carried state is the history). Parents: 0 x (the whole sequence), 1 w {K, C}, 2 state
   {C, K − 1}, 3 out {C, T}. Compared: all outputs (relative L2), then the final state, which must
   be exactly the last K − 1 inputs (zero-padded on the left when fewer were seen). */
static const int64_t conv_plans[][10] = {
    {0}, {1, 5, 3}, {2, 2, 5}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 32}, {65, 1}, {3, 6}, {33, 37},
};

static int64_t conv_T(const struct op_case *c) { return c->ne[0]; }

static void make_conv(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t C = c->p[0], K = c->p[1], T = conv_T(c);
    op_add_input(d, DT_F32, C + (c->flags & OPC_STRIDED ? 5 : 0), T, 1, 1, fill_normal);
    op_add_input(d, DT_F32, K, C, 1, 1, fill_half);
    op_add_input(d, DT_F32, C, K - 1, 1, 1, c->flags & OPC_ALT ? fill_normal : NULL);
    if (!(c->flags & OPC_ALT)) /* a fresh sequence: zeros */
        d->in[2].bytes = calloc(d->in[2].nbytes, 1);
    op_add_input(d, DT_F32, C, T, 1, 1, NULL);
    d->n_out = (size_t)(C * T + C * (K - 1));
    d->n_exact = (size_t)(C * (K - 1));
}

static void ref_conv_row(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t C = c->p[0], K = c->p[1], T = conv_T(c), xrow = d->in[0].ne[0];
    /* h = [state rows; x rows]: the whole history */
    float *h = malloc((size_t)(C * (K - 1 + T)) * sizeof *h);
    memcpy(h, d->in[2].val, (size_t)(C * (K - 1)) * sizeof *h);
    for (int64_t t = 0; t < T; t++)
        memcpy(h + (K - 1 + t) * C, d->in[0].val + t * xrow, (size_t)C * sizeof *h);
    double *out = want;
    ref_conv(h, d->in[1].val, C, K, K - 1 + T, K - 1, out);
    for (int64_t i = 0; i < C * (K - 1); i++)
        out[C * T + i] = h[T * C + i];
    free(h);
}

static int run_conv(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    const int64_t C = c->p[0], K = c->p[1], T = conv_T(c);
    const size_t xrow = b->t[0]->nb[1];
    int rc = SEER_OK;
    const int64_t *plan = c->ne[1] ? conv_plans[c->ne[1]] : (const int64_t[]){T};
    for (int64_t i = 0, t0 = 0; i < 10 && t0 < T && rc == SEER_OK; t0 += plan[i++]) {
        const int64_t n = plan[i];
        tensor x = tensor_view(b->t[0], 2, (int64_t[]){C, n}, (size_t[]){4, xrow}, (size_t)t0 * xrow);
        tensor out = tensor_view(b->t[3], 2, (int64_t[]){C, n}, (size_t[]){4, (size_t)C * 4}, (size_t)(t0 * C) * 4);
        rc = op_conv1d_causal(b->be, &out, &x, b->t[1], b->t[2]);
    }
    if (rc == SEER_OK)
        rc = backend_tensor_get(b->t[3], got, 0, (size_t)(C * T) * 4);
    if (rc == SEER_OK)
        rc = backend_tensor_get(b->t[2], (float *)got + C * T, 0, (size_t)(C * (K - 1)) * 4);
    return rc;
}

/* The CPU sweep: C 1, 7, 37, 130 × K 2, 4, 5, contiguous and strided, fed as one call of 9,
   1+5+3, 2+2+5, one call of 2 (< K − 1) and 9 single tokens; a given state; the pool at 6151
   channels. Then the Vulkan list, all from a carried random state: T 1, 2 (< K − 1) to 300, 1000
   channels strided, a prefill then a decode step, K 17 (16 carried rows), and 4000-byte rows of
   which a 32 KiB window holds 8, so a prefill runs in pieces. */
#define CONV_C(C, T, plan)                                                                                           \
    {NE(T, plan), PAR(C, 2)}, {NE(T, plan), PAR(C, 4)}, {NE(T, plan), PAR(C, 5)},                                    \
        {NE(T, plan), PAR(C, 2), .flags = OPC_STRIDED}, {NE(T, plan), PAR(C, 4), .flags = OPC_STRIDED},              \
        {NE(T, plan), PAR(C, 5), .flags = OPC_STRIDED}
#define CONV_PLAN(T, plan) CONV_C(1, T, plan), CONV_C(7, T, plan), CONV_C(37, T, plan), CONV_C(130, T, plan)
static const struct op_case conv_cases[] = {
    CONV_PLAN(9, 0), CONV_PLAN(9, 1), CONV_PLAN(9, 2), CONV_PLAN(2, 0), CONV_PLAN(9, 3),
    {NE(3), PAR(37, 4), .flags = OPC_ALT},
    {NE(33, 4), PAR(6151, 4), .flags = OPC_THREADS},
    {NE(1), PAR(37, 4), .flags = OPC_ALT}, {NE(2), PAR(37, 4), .flags = OPC_ALT},
    {NE(7), PAR(37, 4), .flags = OPC_ALT}, {NE(64), PAR(37, 4), .flags = OPC_ALT},
    {NE(65), PAR(37, 4), .flags = OPC_ALT}, {NE(300), PAR(37, 4), .flags = OPC_ALT},
    {NE(300), PAR(1000, 4), .flags = OPC_ALT | OPC_STRIDED}, {NE(66, 5), PAR(37, 4), .flags = OPC_ALT},
    {NE(9, 6), PAR(129, 2), .flags = OPC_ALT | OPC_STRIDED}, {NE(20), PAR(6, 17), .flags = OPC_ALT},
    {NE(65), PAR(1000, 4), .flags = OPC_ALT | OPC_SPLIT},
    {NE(70, 7), PAR(1000, 4), .flags = OPC_ALT | OPC_STRIDED | OPC_SPLIT},
    /* fewer 8-channel groups (1) than threads (3), long enough to take the pool */
    {NE(1500), PAR(6, 4), .flags = OPC_ALT | OPC_THREADS},
};
static const struct op_row row_conv = {"conv1d_causal", 0, make_conv, ref_conv_row, run_conv, fill_normal, OP_L2,
                                       1e-5, "K f32 products and sums (~3e-7)", OP_CASES(conv_cases), "T plan", "C K"};

/* ---- Gated DeltaNet --------------------------------------------------------------------------- */

/* Case: ne {T, plan, cut}; p {dk, dv, Hk, Hv}. Plans: 0 one call; 1 calls of 1, 70, 64, 165
   tokens; 2 a first call of `cut` tokens, then one token per call. The rows: recurrent,
   chunked, and "prefill + decode" (the first call chunked, the rest recurrent: how the model
   uses them), the state carried between calls. OPC_ALT: llama.cpp's tiled value-head order
   (value head j reads key head j mod Hk) instead of grouped (j / (Hv/Hk)). OPC_STRIDED: q, k, v
   are views of one {2·Hk·dk + Hv·dv + 3, T} tensor laid out as the conv output (spec §2.5 step
   3), g and beta of one {2·Hv + 1, T}. OPC_IN_PLACE: out is v's own tensor. Inputs are realistic
   (spec §2.5 steps 4–6): L2-normalised q and k, β = σ(·), g = −exp(A_log)·softplus(a + dt_bias);
   the last value head decays strongly at every token (g in [−10, −5], so the log-decay within a
   chunk reaches −640) and the others at ~10% of tokens; the state starts non-zero. Parents
   (contiguous): 0 q, 1 k, 2 v, 3 g, 4 beta, 5 state, 6 out; (strided): 0 qkv, 1 gb, 2 state,
   3 out. Compared: out {dv, Hv, T} and the final state {dv, dk, Hv}, each within the tolerance. */
enum { GDN_REC, GDN_CHUNKED, GDN_MIXED };

static void gdn_l2normalise(float *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    const float r = (float)(1.0 / sqrt(s + 1e-6)); /* spec §2.5 step 6 */
    for (int64_t i = 0; i < n; i++)
        x[i] *= r;
}

static void make_gdn(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t T = c->ne[0], dk = c->p[0], dv = c->p[1], Hk = c->p[2], Hv = c->p[3];
    float *q = malloc((size_t)(dk * Hk * T) * sizeof *q), *k = malloc((size_t)(dk * Hk * T) * sizeof *k);
    float *v = malloc((size_t)(dv * Hv * T) * sizeof *v), *g = malloc((size_t)(Hv * T) * sizeof *g);
    float *beta = malloc((size_t)(Hv * T) * sizeof *beta);
    op_fill_normal(q, (size_t)(dk * Hk * T), 1.0f);
    op_fill_normal(k, (size_t)(dk * Hk * T), 1.0f);
    op_fill_normal(v, (size_t)(dv * Hv * T), 1.0f);
    for (int64_t i = 0; i < Hk * T; i++)
        gdn_l2normalise(q + i * dk, dk), gdn_l2normalise(k + i * dk, dk);
    for (int64_t j = 0; j < Hv; j++) {
        const double A = test_randf(0.5f, 4.0f), dt = test_randf(-3.0f, 0.0f); /* exp(A_log), dt_bias */
        for (int64_t t = 0; t < T; t++) {
            double gg = -A * ref_unary(UNARY_SOFTPLUS, test_randn() + dt);
            if (j == Hv - 1 || test_randf(0, 1) < 0.1f)
                gg = test_randf(-10.0f, -5.0f);
            g[t * Hv + j] = (float)gg;
            beta[t * Hv + j] = (float)(1.0 / (1.0 + exp(-2.0 * test_randn())));
        }
    }
    const int64_t *src_ne[5] = {(int64_t[]){dk, Hk}, (int64_t[]){dk, Hk}, (int64_t[]){dv, Hv}, (int64_t[]){Hv, 1},
                                (int64_t[]){Hv, 1}};
    const float *src[5] = {q, k, v, g, beta};
    if (c->flags & OPC_STRIDED) { /* one row per token: [q | k | v | 3 unused], [g | beta | 1 unused] */
        const int64_t CD = 2 * Hk * dk + Hv * dv + 3;
        op_add_input(d, DT_F32, CD, T, 1, 1, fill_normal);
        op_add_input(d, DT_F32, 2 * Hv + 1, T, 1, 1, fill_normal);
        for (int i = 0; i < 5; i++) {
            const int64_t len = src_ne[i][0] * src_ne[i][1], at = i < 3 ? (i == 0 ? 0 : i == 1 ? Hk * dk : 2 * Hk * dk)
                                                                        : (i == 3 ? 0 : Hv);
            for (int64_t t = 0; t < T; t++)
                for (int64_t e = 0; e < len; e++)
                    op_put(&d->in[i < 3 ? 0 : 1], (size_t)(t * (i < 3 ? CD : 2 * Hv + 1) + at + e),
                           src[i][t * len + e]);
        }
    } else {
        for (int i = 0; i < 5; i++) {
            op_add_input(d, DT_F32, src_ne[i][0], src_ne[i][1], T, 1, fill_normal);
            for (int64_t e = 0; e < src_ne[i][0] * src_ne[i][1] * T; e++)
                op_put(&d->in[i], (size_t)e, src[i][e]);
        }
    }
    op_add_input(d, DT_F32, dv, dk, Hv, 1, fill_normal);
    for (size_t i = 0; i < d->in[d->n_in - 1].nbytes / 4; i++) /* S ~ N(0, 0.3) */
        op_put(&d->in[d->n_in - 1], i, 0.3f * d->in[d->n_in - 1].val[i]);
    op_add_input(d, DT_F32, dv, Hv, T, 1, NULL);
    free(q), free(k), free(v), free(g), free(beta);
    d->n_out = (size_t)(dv * Hv * T + dv * dk * Hv);
    d->part = (size_t)(dv * Hv * T);
}

/* The five inputs as (views of) parents; returns the indices of the state and out parents. */
static void gdn_views(const struct op_case *c, tensor *const *t, tensor v[5], int *st, int *out)
{
    const int64_t T = c->ne[0], dk = c->p[0], dv = c->p[1], Hk = c->p[2], Hv = c->p[3];
    if (c->flags & OPC_STRIDED) {
        const size_t f = 4, CD = t[0]->nb[1], GB = t[1]->nb[1];
        v[0] = tensor_view(t[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, CD}, 0);
        v[1] = tensor_view(t[0], 3, (int64_t[]){dk, Hk, T}, (size_t[]){f, dk * f, CD}, Hk * dk * f);
        v[2] = tensor_view(t[0], 3, (int64_t[]){dv, Hv, T}, (size_t[]){f, dv * f, CD}, 2 * Hk * dk * f);
        v[3] = tensor_view(t[1], 2, (int64_t[]){Hv, T}, (size_t[]){f, GB}, 0);
        v[4] = tensor_view(t[1], 2, (int64_t[]){Hv, T}, (size_t[]){f, GB}, Hv * f);
        *st = 2, *out = 3;
    } else {
        for (int i = 0; i < 5; i++)
            v[i] = *t[i];
        v[3] = tensor_view(t[3], 2, (int64_t[]){Hv, T}, (size_t[]){4, t[3]->nb[1]}, 0);
        v[4] = tensor_view(t[4], 2, (int64_t[]){Hv, T}, (size_t[]){4, t[4]->nb[1]}, 0);
        *st = 5, *out = c->flags & OPC_IN_PLACE ? 2 : 6;
    }
}

static void ref_gdn(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t T = c->ne[0], dk = c->p[0], dv = c->p[1], Hk = c->p[2], Hv = c->p[3];
    tensor par[OP_MAX_IN], *pp[OP_MAX_IN], v[5];
    for (int i = 0; i < d->n_in; i++)
        par[i] = op_host_parent(d, i), pp[i] = &par[i];
    int st, out;
    gdn_views(c, pp, v, &st, &out);
    float *x[5];
    for (int i = 0; i < 5; i++) {
        const int pi = c->flags & OPC_STRIDED ? (i < 3 ? 0 : 1) : i;
        x[i] = malloc((size_t)tensor_nelements(&v[i]) * sizeof(float));
        op_gather_vals(&d->in[pi], pp[pi], &v[i], x[i]);
    }
    double *o = want, *S = o + dv * Hv * T, *kv = malloc((size_t)dv * sizeof *kv);
    for (int64_t i = 0; i < dv * dk * Hv; i++)
        S[i] = d->in[st].val[i];
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < Hv; j++) {
            /* spec §2.5 step 5 (grouped) or llama.cpp's tiled order */
            const int64_t hk = c->flags & OPC_ALT ? j % Hk : j / (Hv / Hk);
            const float *qt = x[0] + (t * Hk + hk) * dk, *kt = x[1] + (t * Hk + hk) * dk;
            const float *vt = x[2] + (t * Hv + j) * dv;
            ref_gdn_step(S + j * dk * dv, qt, kt, vt, exp((double)x[3][t * Hv + j]), x[4][t * Hv + j],
                         (double)(1.0f / sqrtf((float)dk)), dk, dv, kv, o + (t * Hv + j) * dv);
        }
    for (int i = 0; i < 5; i++)
        free(x[i]);
    free(kv);
}

static int run_gdn(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    const int64_t T = c->ne[0], dk = c->p[0], dv = c->p[1], Hk = c->p[2], Hv = c->p[3];
    const float scale = 1.0f / sqrtf((float)dk);
    const enum gdn_head_order order = c->flags & OPC_ALT ? GDN_V_TILED : GDN_V_GROUPED;
    static const int64_t cuts1[] = {1, 71, 135};
    tensor v[5];
    int st, out, rc = SEER_OK;
    gdn_views(c, b->t, v, &st, &out);
    tensor *o = b->t[out];
    for (int64_t t0 = 0, t1, call = 0; rc == SEER_OK && t0 < T; t0 = t1, call++) {
        t1 = c->ne[1] == 0 ? T : c->ne[1] == 1 ? (call < 3 ? cuts1[call] : T) : (call == 0 ? c->ne[2] : t0 + 1);
        const int64_t n = t1 - t0;
        tensor qv = tensor_view(&v[0], 3, (int64_t[]){dk, Hk, n}, v[0].nb, (size_t)t0 * v[0].nb[2]);
        tensor kv = tensor_view(&v[1], 3, (int64_t[]){dk, Hk, n}, v[1].nb, (size_t)t0 * v[1].nb[2]);
        tensor vv = tensor_view(&v[2], 3, (int64_t[]){dv, Hv, n}, v[2].nb, (size_t)t0 * v[2].nb[2]);
        tensor gv = tensor_view(&v[3], 2, (int64_t[]){Hv, n}, v[3].nb, (size_t)t0 * v[3].nb[1]);
        tensor bv = tensor_view(&v[4], 2, (int64_t[]){Hv, n}, v[4].nb, (size_t)t0 * v[4].nb[1]);
        tensor ov = tensor_view(o, 3, (int64_t[]){dv, Hv, n}, o->nb, (size_t)t0 * o->nb[2]);
        const bool chunked = r->arg == GDN_CHUNKED || (r->arg == GDN_MIXED && call == 0);
        rc = chunked ? op_gdn_chunked(b->be, &ov, &qv, &kv, &vv, &gv, &bv, b->t[st], scale, order)
                     : op_gdn_recurrent(b->be, &ov, &qv, &kv, &vv, &gv, &bv, b->t[st], scale, order);
    }
    if (rc == SEER_OK)
        rc = backend_tensor_get(o, got, 0, (size_t)(dv * Hv * T) * 4);
    if (rc == SEER_OK)
        rc = backend_tensor_get(b->t[st], (float *)got + dv * Hv * T, 0, (size_t)(dv * dk * Hv) * 4);
    return rc;
}

/* The CPU list: dk/dv 16/32 and 128/128 × Hv = Hk and 2·Hk × T 1, 7, 63, 64, 65 (the CPU chunk
   boundaries), 130, 300 (CPU only); strided; tiled; a 300-token sequence in 4 calls; the pool (1 and 3
   threads) and out over v. Then the Vulkan list: 128/128 and 24/40 in both orders, T 1 .. 300,
   every other one strided; out over v; 1×1 heads; dk 300 beyond the chunk kernels' 256 rows
   (chunked falls back to the token kernel); and two 300-token sequences whose q/k/v parent
   (1.5 KiB a token) a 256 KiB window holds ~170 tokens of. */
#define GDN_T(dk, dv, Hv, fl)                                                                                        \
    {NE(1), PAR(dk, dv, 2, Hv), .flags = fl}, {NE(7), PAR(dk, dv, 2, Hv), .flags = fl},                              \
        {NE(63), PAR(dk, dv, 2, Hv), .flags = fl}, {NE(64), PAR(dk, dv, 2, Hv), .flags = fl},                        \
        {NE(65), PAR(dk, dv, 2, Hv), .flags = fl}, {NE(130), PAR(dk, dv, 2, Hv), .flags = fl},                       \
        {NE(300), PAR(dk, dv, 2, Hv), .flags = fl}
#define GDN_VK(dk, dv, Hk, Hv, fl, T, views) {NE(T), PAR(dk, dv, Hk, Hv), .flags = (fl) | ((views) ? OPC_STRIDED : 0)}
static const struct op_case gdn_cases[] = {
    GDN_T(16, 32, 2, OPC_CPU_ONLY), GDN_T(16, 32, 4, OPC_CPU_ONLY), GDN_T(128, 128, 2, OPC_CPU_ONLY),
    GDN_T(128, 128, 4, OPC_CPU_ONLY),
    {NE(130), PAR(128, 128, 2, 4), .flags = OPC_STRIDED}, {NE(97), PAR(24, 40, 1, 3), .flags = OPC_STRIDED},
    {NE(65), PAR(16, 16, 2, 4), .flags = OPC_ALT}, {NE(130), PAR(32, 24, 3, 9), .flags = OPC_ALT | OPC_STRIDED},
    {NE(300, 1), PAR(128, 128, 2, 4)},
    {NE(150), PAR(32, 48, 3, 6), .flags = OPC_THREADS}, {NE(150), PAR(32, 48, 3, 6), .flags = OPC_IN_PLACE},
    GDN_VK(128, 128, 2, 2, 0, 1, 1), GDN_VK(128, 128, 2, 2, 0, 7, 0), GDN_VK(128, 128, 2, 2, 0, 64, 1),
    GDN_VK(128, 128, 2, 2, 0, 65, 0),
    GDN_VK(128, 128, 2, 4, 0, 1, 0), GDN_VK(128, 128, 2, 4, 0, 7, 1), GDN_VK(128, 128, 2, 4, 0, 64, 0),
    GDN_VK(128, 128, 2, 4, 0, 65, 1), GDN_VK(128, 128, 2, 4, 0, 300, 0),
    GDN_VK(128, 128, 2, 4, OPC_ALT, 1, 1), GDN_VK(128, 128, 2, 4, OPC_ALT, 7, 0),
    GDN_VK(128, 128, 2, 4, OPC_ALT, 64, 1),
    GDN_VK(128, 128, 2, 4, OPC_ALT, 65, 0), GDN_VK(128, 128, 2, 4, OPC_ALT, 300, 1),
    GDN_VK(24, 40, 3, 3, OPC_ALT, 1, 0), GDN_VK(24, 40, 3, 3, OPC_ALT, 7, 1), GDN_VK(24, 40, 3, 3, OPC_ALT, 64, 0),
    GDN_VK(24, 40, 3, 3, OPC_ALT, 65, 1), GDN_VK(24, 40, 3, 3, OPC_ALT, 300, 0),
    GDN_VK(24, 40, 3, 6, OPC_ALT, 1, 1), GDN_VK(24, 40, 3, 6, OPC_ALT, 7, 0), GDN_VK(24, 40, 3, 6, OPC_ALT, 64, 1),
    GDN_VK(24, 40, 3, 6, OPC_ALT, 65, 0), GDN_VK(24, 40, 3, 6, OPC_ALT, 300, 1),
    GDN_VK(24, 40, 3, 6, 0, 1, 0), GDN_VK(24, 40, 3, 6, 0, 7, 1), GDN_VK(24, 40, 3, 6, 0, 64, 0),
    GDN_VK(24, 40, 3, 6, 0, 65, 1), GDN_VK(24, 40, 3, 6, 0, 300, 0),
    GDN_VK(24, 40, 3, 6, OPC_ALT | OPC_IN_PLACE, 65, 0), GDN_VK(24, 40, 3, 6, OPC_IN_PLACE, 7, 0),
    GDN_VK(1, 1, 1, 1, 0, 65, 0), GDN_VK(1, 1, 1, 1, 0, 7, 0), GDN_VK(300, 8, 1, 2, 0, 70, 0),
    GDN_VK(24, 40, 3, 6, OPC_ALT | OPC_SPLIT256, 300, 1), GDN_VK(24, 40, 3, 6, OPC_SPLIT256, 300, 1),
};
/* prefill + decode: a chunked prefix of all but the last 3 tokens; 250 + 50 steps (the CPU's) */
static const struct op_case gdn_mixed_cases[] = {
    {NE(70, 2, 67), PAR(128, 128, 2, 4), .flags = OPC_STRIDED},
    {NE(130, 2, 127), PAR(24, 40, 3, 6), .flags = OPC_ALT | OPC_STRIDED},
    {NE(300, 2, 250), PAR(128, 128, 2, 4), .flags = OPC_CPU_ONLY},
};
/* 1e-4: dk-long f32 dot products accumulated over T steps stay near 1e-6 */
static const struct op_row row_gdn_rec = {"gdn_recurrent", GDN_REC, make_gdn, ref_gdn, run_gdn, fill_normal, OP_L2,
                                          1e-4, "f32 dot products over T steps",
                                          OP_CASES(gdn_cases), "T plan cut", "dk dv Hk Hv"};
static const struct op_row row_gdn_chunked = {"gdn_chunked", GDN_CHUNKED, make_gdn, ref_gdn, run_gdn, fill_normal,
                                              OP_L2, 1e-4, "the WY form reorders the same f32 maths",
                                              OP_CASES(gdn_cases), "T plan cut", "dk dv Hk Hv"};
static const struct op_row row_gdn_mixed = {"gdn_chunked+recurrent", GDN_MIXED, make_gdn, ref_gdn, run_gdn,
                                            fill_normal, OP_L2, 1e-4, "as the two forms",
                                            OP_CASES(gdn_mixed_cases), "T plan cut", "dk dv Hk Hv"};

/* ---- attention -------------------------------------------------------------------------------- */

/* Case: ne {hd, nh, T, Tk}; p {nkv, q_pos0, mask, layout}; type: K/V's dtype (F32, F16 or Q8_0:
   values drawn in f32, quantised by ref_quantize_q8_0 and compared on their dequantised values);
   s: q's spread (1, or large to push scores to hundreds). Masks: causal from q_pos0; segments
   in runs of 7, 20, 1, 22 tokens (cycled, ids neither small nor increasing); ids (7t) mod 3;
   runs of 37%, 45% and the rest; ids t mod 3. Layouts of K and V: contiguous {hd, nkv, Tk}; the
   first Tk tokens of a cache {hd, nkv, cap}; of a cache {hd, cap, nkv} (each kv head's tokens
   together, HF's [nkv, T, hd]) — the rest of a cache holds values of 1000..2000, so reading
   outside the view shows. OPC_STRIDED: q is the q half of a [q | gate] projection {2·hd·nh, T}
   (spec §2.6 step 1); OPC_IN_PLACE: out is q's own tensor; OPC_ALT (q8_0): kv head 0's values
   of V are 1e-3 times smaller, so their blocks' steps d are f16 subnormals (amax/127 < 2^-14),
   which a shader reading d with unpackHalf2x16 may flush to zero. Parents: 0 q, 1 k, 2 v, 3 out,
   4 segment ids. The scale is 1/sqrt(hd) (spec §2.6). */
enum { ATT_CAUSAL, ATT_RUNS, ATT_SCATTER, ATT_THIRDS, ATT_MOD3 };
enum { KV_CONTIG, KV_CACHE, KV_HEAD_MAJOR };

static int64_t attn_cap(const struct op_case *c) { return c->ne[3] + 37 > 100 ? c->ne[3] + 37 : 100; }

static void fill_junk(float *x, size_t n) { test_fill_uniform(x, n, 1000.0f, 2000.0f); }

/* Bytes of one K/V row of hd values (34 per 32 for q8_0). */
static size_t attn_row_bytes(const struct op_case *c)
{
    size_t rb = 0;
    dtype_row_bytes(c->type, c->ne[0], &rb);
    return rb;
}

static void attn_kv_view(const struct op_case *c, const tensor *parent, tensor *view)
{
    const int64_t hd = c->ne[0], nkv = c->p[0], Tk = c->ne[3], cap = attn_cap(c);
    const size_t es = (size_t)dtype_info(c->type)->block_bytes, rb = attn_row_bytes(c);
    if (c->p[3] == KV_CONTIG)
        *view = *parent;
    else if (c->p[3] == KV_CACHE)
        *view = tensor_view(parent, 3, (int64_t[]){hd, nkv, Tk}, (size_t[]){es, rb, rb * (size_t)nkv}, 0);
    else
        *view = tensor_view(parent, 3, (int64_t[]){hd, nkv, Tk}, (size_t[]){es, rb * (size_t)cap, rb}, 0);
}

/* Index, in the parent's packed values, of element e of kv head g, token j of a K/V view (the
   parents' rows are whole head rows, so a byte offset names a row whatever the dtype). */
static size_t attn_kv_index(const struct op_case *c, const tensor *view, int64_t e, int64_t g, int64_t j)
{
    return (view->offset + (size_t)g * view->nb[1] + (size_t)j * view->nb[2]) / attn_row_bytes(c) * (size_t)c->ne[0] +
           (size_t)e;
}

static void attn_q_view(const struct op_case *c, const tensor *parent, tensor *view)
{
    const int64_t hd = c->ne[0], nh = c->ne[1], T = c->ne[2];
    *view = c->flags & OPC_STRIDED
                ? tensor_view(parent, 3, (int64_t[]){hd, nh, T}, (size_t[]){4, (size_t)(2 * hd) * 4, parent->nb[1]}, 0)
                : *parent;
}

static void make_attention(const struct op_row *r, const struct op_case *c, struct op_data *d)
{
    (void)r;
    const int64_t hd = c->ne[0], nh = c->ne[1], T = c->ne[2], Tk = c->ne[3], nkv = c->p[0], cap = attn_cap(c);
    if (c->flags & OPC_STRIDED)
        op_add_input(d, DT_F32, 2 * hd * nh, T, 1, 1, fill_normal);
    else
        op_add_input(d, DT_F32, hd, nh, T, 1, fill_normal);
    for (size_t i = 0; c->s != 0 && i < d->in[0].nbytes / 4; i++)
        op_put(&d->in[0], i, (float)c->s * d->in[0].val[i]);
    for (int kv = 0; kv < 2; kv++) {
        struct op_in *in = &d->in[d->n_in];
        const enum dtype made = c->type == DT_Q8_0 ? DT_F32 : c->type; /* q8_0: quantised below */
        if (c->p[3] == KV_CONTIG)
            op_add_input(d, made, hd, nkv, Tk, 1, fill_normal);
        else if (c->p[3] == KV_CACHE)
            op_add_input(d, made, hd, nkv, cap, 1, fill_junk);
        else
            op_add_input(d, made, hd, cap, nkv, 1, fill_junk);
        tensor parent, view; /* described in the final dtype (q8_0 strides before quantising) */
        tensor_init4(&parent, c->type, in->ne[0], in->ne[1], in->ne[2], 1);
        attn_kv_view(c, &parent, &view);
        const double tiny = c->flags & OPC_ALT && kv == 1 ? 1e-3 : 1.0;
        for (int64_t j = 0; j < Tk; j++)
            for (int64_t g = 0; g < nkv; g++)
                for (int64_t e = 0; e < hd; e++)
                    op_put(in, attn_kv_index(c, &view, e, g, j), (float)(test_randn() * (g == 0 ? tiny : 1.0)));
        if (c->type == DT_Q8_0) {
            const size_t n = in->nbytes / 4;
            in->type = DT_Q8_0, in->nbytes = n / 32 * 34;
            ref_quantize_q8_0(in->val, (int64_t)n, in->bytes); /* fits: 34 of 128 bytes per block */
            ref_dequantize_q8_0(in->bytes, (int64_t)n, in->val);
        }
    }
    op_add_input(d, DT_F32, hd, nh, T, 1, NULL);
    int32_t *seg = malloc((size_t)T * sizeof *seg);
    for (int64_t t = 0, run = 0, left = 7; t < T; t++) {
        static const int runs[] = {7, 20, 1, 22};
        switch (c->p[2]) {
        case ATT_RUNS:
            if (left == 0)
                run++, left = runs[run % 4];
            seg[t] = (int32_t)(100 - 3 * run), left--;
            break;
        case ATT_SCATTER: seg[t] = (int32_t)((t * 7) % 3); break;
        case ATT_THIRDS: seg[t] = t < T * 37 / 100 ? 10 : t < T * 82 / 100 ? 11 : 12; break;
        default: seg[t] = (int32_t)(t % 3);
        }
    }
    op_add_i32(d, T, 1, seg);
    free(seg);
    d->n_out = (size_t)(hd * nh * T);
}

static void ref_attention_row(const struct op_row *r, const struct op_case *c, const struct op_data *d, void *want)
{
    (void)r;
    const int64_t hd = c->ne[0], nh = c->ne[1], T = c->ne[2], Tk = c->ne[3], nkv = c->p[0];
    tensor par[3], view[3];
    float *x[3];
    for (int i = 0; i < 3; i++) {
        par[i] = op_host_parent(d, i);
        x[i] = malloc((size_t)tensor_nelements(&par[i]) * sizeof(float));
        if (i == 0) {
            attn_q_view(c, &par[0], &view[0]);
            op_gather_vals(&d->in[i], &par[i], &view[i], x[i]);
            continue;
        }
        attn_kv_view(c, &par[i], &view[i]);
        size_t n = 0;
        for (int64_t j = 0; j < Tk; j++)
            for (int64_t g = 0; g < nkv; g++)
                for (int64_t e = 0; e < hd; e++)
                    x[i][n++] = d->in[i].val[attn_kv_index(c, &view[i], e, g, j)];
    }
    const double scale = (double)(float)(1.0 / sqrt((double)hd));
    ref_attention(x[0], x[1], x[2], hd, nh, nkv, T, Tk, c->p[1],
                  c->p[2] == ATT_CAUSAL ? NULL : (const int32_t *)d->in[4].bytes, scale, want);
    for (int i = 0; i < 3; i++)
        free(x[i]);
}

static int run_attention(const struct op_row *r, const struct op_case *c, struct op_bufs *b, void *got)
{
    (void)r;
    tensor q, k, v;
    attn_q_view(c, b->t[0], &q);
    attn_kv_view(c, b->t[1], &k);
    attn_kv_view(c, b->t[2], &v);
    struct attn_mask m = {.kind = ATTN_CAUSAL, .q_pos0 = c->p[1]};
    if (c->p[2] != ATT_CAUSAL)
        m = (struct attn_mask){.kind = ATTN_SEGMENTS, .seg = b->t[4]};
    tensor *out = c->flags & OPC_IN_PLACE ? b->t[0] : b->t[3];
    int rc = op_attention(b->be, out, &q, &k, &v, (float)(1.0 / sqrt((double)c->ne[0])), &m);
    return rc ? rc : op_read_view(b, c->flags & OPC_IN_PLACE ? 0 : 3, out, got);
}

#define ATT(hd, nh, nkv, T, Tk, q0, mask, kvt, lay, fl, qs)                                                          \
    {NE(hd, nh, T, Tk), PAR(nkv, q0, mask, lay), .type = kvt, .flags = fl, .s = qs}
static const struct op_case attention_cases[] = {
    /* the CPU list, each on 1, 2 and 3 threads: prefill with GQA 4 and 1, continued prefill,
       decode from a cache (f32, f16, head-major), an odd head dim, segments, long sequences,
       a prefill reading a cache from q_pos0 130, large scores, out over q */
    ATT(256, 8, 2, 37, 37, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(64, 3, 3, 37, 37, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 5, 37, 32, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_F32, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_F16, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(72, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(64, 4, 4, 1, 37, 36, ATT_CAUSAL, DT_F32, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(20, 2, 1, 1, 37, 36, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(72, 4, 4, 50, 50, 0, ATT_RUNS, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(64, 8, 2, 50, 50, 0, ATT_RUNS, DT_F16, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(72, 2, 2, 45, 45, 0, ATT_SCATTER, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(128, 8, 2, 300, 300, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(64, 4, 1, 300, 300, 0, ATT_CAUSAL, DT_F16, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(64, 4, 1, 70, 200, 130, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(72, 4, 4, 200, 200, 0, ATT_RUNS, DT_F32, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(64, 8, 2, 130, 130, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF, 40),
    ATT(64, 8, 2, 70, 70, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_THREADS_REF | OPC_IN_PLACE, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_F16, KV_HEAD_MAJOR, OPC_THREADS_REF | OPC_IN_PLACE, 0),
    /* a q8_0 cache: prefill, decode (head-major too), a prefill continuing a cache, segments */
    ATT(256, 8, 2, 37, 37, 0, ATT_CAUSAL, DT_Q8_0, KV_CONTIG, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_Q8_0, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(64, 4, 1, 70, 200, 130, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(96, 8, 2, 50, 50, 0, ATT_RUNS, DT_Q8_0, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 1, 37, 36, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_THREADS_REF | OPC_ALT, 0),
    /* decode tiles that read the cache in place with 5-8 rows: two tokens of 4 heads (the second
       sees one key more), and 6 heads of one kv head (rows 6 and 7 pad the second group of 4) */
    ATT(256, 8, 2, 2, 40, 38, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 2, 40, 38, ATT_CAUSAL, DT_Q8_0, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(64, 6, 1, 1, 150, 149, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    /* decode over more than SPLIT_KEYS (1024) cached keys: each kv head's keys in ranges, joined
       after (two ranges of 550; three of q8_0, 834 and 832; two tokens), on 1, 2 and 3 threads */
    ATT(256, 8, 2, 1, 1100, 1099, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    ATT(128, 4, 1, 1, 2500, 2499, ATT_CAUSAL, DT_Q8_0, KV_HEAD_MAJOR, OPC_THREADS_REF, 0),
    ATT(256, 8, 2, 2, 1300, 1298, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_THREADS_REF, 0),
    /* the Vulkan list: decode over ~2000 cached keys (split-K), prefill and continued prefill,
       the vision tower's bidirectional segments, strided q, out over q, large scores; those
       flagged OPC_SHARED16 also in the smallest tiles (head dim 256: 4 rows x 8 keys) */
    ATT(256, 8, 2, 1, 2000, 1999, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_STRIDED | OPC_SHARED16, 0),
    ATT(128, 4, 4, 1, 1000, 999, ATT_CAUSAL, DT_F32, KV_CACHE, OPC_SHARED16, 0),
    ATT(72, 4, 1, 1, 1, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, 0, 0),
    ATT(256, 8, 2, 1, 1500, 1499, ATT_CAUSAL, DT_F32, KV_HEAD_MAJOR, 0, 8),
    ATT(256, 8, 2, 300, 300, 0, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_STRIDED | OPC_SHARED16, 0),
    ATT(256, 4, 1, 65, 565, 500, ATT_CAUSAL, DT_F32, KV_CACHE, OPC_SHARED16, 0),
    ATT(64, 8, 2, 7, 1507, 1500, ATT_CAUSAL, DT_F16, KV_HEAD_MAJOR, 0, 0),
    ATT(128, 4, 4, 64, 64, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, OPC_IN_PLACE | OPC_SHARED16, 0),
    ATT(72, 4, 4, 300, 300, 0, ATT_CAUSAL, DT_F32, KV_CONTIG, 0, 8),
    ATT(100, 6, 3, 33, 40, 7, ATT_CAUSAL, DT_F16, KV_CONTIG, OPC_STRIDED, 0),
    ATT(64, 2, 1, 1200, 1200, 0, ATT_CAUSAL, DT_F16, KV_CONTIG, 0, 0),
    ATT(72, 4, 4, 700, 700, 0, ATT_THIRDS, DT_F32, KV_CONTIG, 0, 0),
    ATT(72, 4, 4, 50, 50, 0, ATT_MOD3, DT_F32, KV_CONTIG, OPC_IN_PLACE, 0),
    ATT(64, 2, 2, 257, 257, 0, ATT_THIRDS, DT_F16, KV_CONTIG, OPC_SHARED16, 8),
    /* the tower's shape on the CPU's 8-row softmax lanes: 64-key blocks inside one segment (no mask),
       blocks across segment borders (masked), a last tile of 44 rows (padded to 48 lanes) */
    ATT(64, 12, 12, 300, 300, 0, ATT_THIRDS, DT_F32, KV_CONTIG, 0, 0),
    /* q8_0 K/V: decode over 2000 keys (split-K), prefill, an odd block count per row */
    ATT(256, 8, 2, 1, 2000, 1999, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_STRIDED | OPC_SHARED16, 0),
    ATT(256, 8, 2, 300, 300, 0, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_SHARED16, 0),
    ATT(96, 6, 3, 33, 40, 7, ATT_CAUSAL, DT_Q8_0, KV_HEAD_MAJOR, OPC_STRIDED | OPC_SHARED16, 0),
    ATT(256, 8, 2, 1, 600, 599, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_ALT | OPC_SHARED16, 0),
    /* a 256 KiB window: q of 500 tokens is 1 MB, K/V (f16) 128 KB, so q and out go in pieces */
    ATT(64, 8, 2, 500, 500, 0, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_STRIDED | OPC_SPLIT256, 0),
    ATT(64, 8, 2, 1, 900, 899, ATT_CAUSAL, DT_F16, KV_CACHE, OPC_SPLIT256, 0),
    ATT(64, 8, 2, 1, 900, 899, ATT_CAUSAL, DT_Q8_0, KV_CACHE, OPC_SPLIT256, 0),
};
/* 1e-4: f32 scores and sums over <= 2000 keys of <= 256-long products round near 1e-6; f16 and
   q8_0 K/V are compared on the values they hold (q8_0's ~0.4 % rounding is in the reference's
   input too) */
static const struct op_row row_attention = {"attention", 0, make_attention, ref_attention_row, run_attention,
                                            fill_normal, OP_L2, 1e-4, "f32 scores and sums",
                                            OP_CASES(attention_cases), "hd nh T Tk", "nkv q_pos0 mask kv_layout"};

static const struct op_row *const seq_rows[] = {&row_conv, &row_gdn_rec, &row_gdn_chunked, &row_gdn_mixed,
                                                &row_attention};
