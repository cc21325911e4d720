/* op_checks_vulkan.h — the Vulkan part of op_checks.h: a chain of dependent ops recorded into one
   submit (the recorder's barriers order them), small uploads recorded between ops, what a shader
   cannot report (bad ids), and the layouts and sizes the backend refuses with SEER_EUNSUPPORTED
   naming the op. */

/* Recorded back to back with one read at the end, so the recorder's barriers are what orders
   them (the validation layer's synchronization checks see any that is missing):
     y = rmsnorm(x, nw, shift 1); z = w1·y; u = w2·x (independent of z); z += u; z *= b;
   then 600 × (z += c; z += −c), 1200 more dispatches than one descriptor pool holds, so the
   recorder also has to submit early and go on. */
#if SEER_HAVE_VULKAN
#define CHAIN_K 300
#define CHAIN_M 200
#define CHAIN_N 5
#define CHAIN_PAIRS 600

struct chain_data {
    float *x, *nw, *w1, *w2, *b, *c, *negc;
};

static int run_chain(backend *be, const struct chain_data *d, float **out)
{
    tensor *x = chk_tensor(be, DT_F32, CHAIN_K, CHAIN_N, 1, d->x), *nw = chk_tensor(be, DT_F32, CHAIN_K, 1, 1, d->nw);
    tensor *w1 = chk_tensor(be, DT_F32, CHAIN_K, CHAIN_M, 1, d->w1);
    tensor *w2 = chk_tensor(be, DT_F16, CHAIN_K, CHAIN_M, 1, d->w2);
    tensor *b = chk_tensor(be, DT_F32, CHAIN_M, 1, 1, d->b), *c = chk_tensor(be, DT_F32, CHAIN_M, CHAIN_N, 1, d->c);
    tensor *negc = chk_tensor(be, DT_F32, CHAIN_M, CHAIN_N, 1, d->negc);
    tensor *y = chk_tensor(be, DT_F32, CHAIN_K, CHAIN_N, 1, NULL);
    tensor *z = chk_tensor(be, DT_F32, CHAIN_M, CHAIN_N, 1, NULL);
    tensor *u = chk_tensor(be, DT_F32, CHAIN_M, CHAIN_N, 1, NULL);
    tensor *all[] = {x, nw, w1, w2, b, c, negc, y, z, u};
    int rc = SEER_ENOMEM;
    if (x && nw && w1 && w2 && b && c && negc && y && z && u) {
        rc = op_rmsnorm(be, y, x, nw, 1.0f, 1e-6f);
        rc = rc ? rc : op_matmul(be, z, w1, y);
        rc = rc ? rc : op_matmul(be, u, w2, x);
        rc = rc ? rc : op_add(be, z, z, u);
        rc = rc ? rc : op_mul(be, z, z, b);
        for (int i = 0; i < CHAIN_PAIRS && rc == SEER_OK; i++) {
            rc = op_add(be, z, z, c);
            rc = rc ? rc : op_add(be, z, z, negc);
        }
        if (rc == SEER_OK)
            *out = vk_test_read_f32(z);
    }
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        vk_test_tensor_free(all[i]);
    return rc;
}

static void check_chain(backend *vk, const char *config)
{
    struct chain_data d;
    float **bufs[] = {&d.x, &d.nw, &d.w1, &d.w2, &d.b, &d.c, &d.negc};
    const size_t sizes[] = {CHAIN_K * CHAIN_N, CHAIN_K, CHAIN_K * CHAIN_M, CHAIN_K * CHAIN_M, CHAIN_M,
                            CHAIN_M * CHAIN_N, CHAIN_M * CHAIN_N};
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++) {
        *bufs[i] = malloc(sizes[i] * sizeof(float));
        op_fill_normal(*bufs[i], sizes[i], 1.0f);
    }
    for (int i = 0; i < CHAIN_M * CHAIN_N; i++)
        d.negc[i] = -d.c[i];
    /* the adds of c and −c cancel up to f32 rounding (~1e-7 each, a random walk): leave them out */
    double *ref = calloc(CHAIN_M * CHAIN_N, sizeof *ref), y[CHAIN_K];
    for (int n = 0; n < CHAIN_N; n++) {
        const float *xn = d.x + n * CHAIN_K;
        ref_norm_row(REF_RMS, xn, NULL, d.nw, NULL, 1.0, 1e-6, CHAIN_K, y);
        for (int m = 0; m < CHAIN_M; m++) {
            double s = 0;
            for (int k = 0; k < CHAIN_K; k++)
                s += d.w1[m * CHAIN_K + k] * y[k] + (double)ref_round(DT_F16, d.w2[m * CHAIN_K + k]) * xn[k];
            ref[n * CHAIN_M + m] = s * d.b[m];
        }
    }
    float *got[2] = {NULL, NULL};
    int rc = run_chain(vk, &d, &got[0]), rc_cpu = run_chain(cpu_be, &d, &got[1]);
    double ec = rc || rc_cpu ? INFINITY : rel_l2(got[0], got[1], CHAIN_M * CHAIN_N);
    double er = rc ? INFINITY : rel_l2_d(got[0], ref, CHAIN_M * CHAIN_N);
    ok(ec <= VK_TOL && er <= VK_TOL,
       "%s: a chain of %d dependent ops in one sync vs cpu %.2e, vs reference %.2e <= 1e-4", config,
       5 + 2 * CHAIN_PAIRS, ec, er);
    free(got[0]), free(got[1]), free(ref);
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++)
        free(*bufs[i]);
}

static void check_vulkan_errors(backend *vk)
{
    /* a tensor of another backend */
    tensor *a = chk_tensor(vk, DT_F32, 8, 2, 1, NULL), *c = chk_tensor(cpu_be, DT_F32, 8, 2, 1, NULL);
    if (a && c)
        ok(op_add(vk, a, a, c) == SEER_EINVAL && strstr(seer_last_error(), "not in a buffer of this backend"),
           "vulkan: a cpu tensor in a vulkan op: SEER_EINVAL (%s)", seer_last_error());
    vk_test_tensor_free(c);
    /* a layout the kernels cannot index: an f32 view starting 2 bytes into its buffer */
    if (a) {
        tensor v = tensor_view(a, 1, (int64_t[]){7}, (size_t[]){4}, 2);
        int rc = op_softmax(vk, &v, &v, 1.0f);
        ok(rc == SEER_EUNSUPPORTED && strstr(seer_last_error(), "op_softmax") &&
               strstr(seer_last_error(), "multiple of 4"),
           "vulkan: an f32 view at a 2-byte offset: SEER_EUNSUPPORTED naming the op (%s)", seer_last_error());
    }
    vk_test_tensor_free(a);
    /* a weight row longer than the storage window cannot be split */
    struct vk_backend_params p = vk_backend_params_default();
    p.max_storage_range_override = 2048;
    backend *tiny = NULL;
    if (backend_vulkan_create(&p, &tiny) == SEER_OK) {
        tensor *w = chk_tensor(tiny, DT_F32, 1000, 3, 1, NULL), *x = chk_tensor(tiny, DT_F32, 1000, 1, 1, NULL);
        tensor *o = chk_tensor(tiny, DT_F32, 3, 1, 1, NULL);
        if (w && x && o)
            ok(op_matmul(tiny, o, w, x) == SEER_EUNSUPPORTED && strstr(seer_last_error(), "exceeds"),
               "vulkan: a 4000-byte row with a 2 KiB window: SEER_EUNSUPPORTED (%s)", seer_last_error());
        vk_test_tensor_free(w), vk_test_tensor_free(x), vk_test_tensor_free(o);
        backend_free(tiny);
    } else {
        ok(0, "vulkan: create with a 2 KiB window: %s", seer_last_error());
    }
    /* gdn with out over q: other workgroups still read the q rows an output block overwrites */
    tensor *q = chk_tensor(vk, DT_F32, 8, 2, 5, NULL), *k = chk_tensor(vk, DT_F32, 8, 2, 5, NULL);
    tensor *g = chk_tensor(vk, DT_F32, 2, 5, 1, NULL), *st = chk_tensor(vk, DT_F32, 8, 8, 2, NULL);
    if (q && k && g && st)
        ok(op_gdn_recurrent(vk, q, q, k, q, g, g, st, 0.3f, GDN_V_GROUPED) == SEER_EUNSUPPORTED &&
               strstr(seer_last_error(), "overlap"),
           "vulkan: gdn with out over q: SEER_EUNSUPPORTED (%s)", seer_last_error());
    vk_test_tensor_free(q), vk_test_tensor_free(k), vk_test_tensor_free(g), vk_test_tensor_free(st);
    /* head dims above 256 have no kernel */
    q = chk_tensor(vk, DT_F32, 260, 1, 2, NULL);
    if (q) {
        struct attn_mask m = {.kind = ATTN_CAUSAL, .q_pos0 = 0};
        ok(op_attention(vk, q, q, q, q, 1.0f, &m) == SEER_EUNSUPPORTED && strstr(seer_last_error(), "head dim"),
           "vulkan: attention with hd 260: SEER_EUNSUPPORTED (%s)", seer_last_error());
    }
    vk_test_tensor_free(q);
    /* ids outside [0, V) cannot be reported from a shader: those rows come out as zeros, the
       others exact, and nothing is read out of bounds (the validation layer would see it) */
    struct op_case gc = {PAR(64, 10, 4), .type = DT_Q8_0};
    struct op_data d = {0};
    make_get_rows(&row_get_rows, &gc, &d);
    const int32_t ids[4] = {3, -1, 10, 9};
    memcpy(d.in[1].bytes, ids, sizeof ids);
    float *got = calloc(4 * 64, sizeof *got);
    int rc = run_on(vk, &row_get_rows, &gc, &d, got);
    bool zeros = rc == SEER_OK;
    for (int i = 64; i < 3 * 64; i++)
        zeros &= got[i] == 0.0f;
    ok(zeros && !memcmp(got, d.in[0].val + 3 * 64, 64 * 4) && !memcmp(got + 3 * 64, d.in[0].val + 9 * 64, 64 * 4),
       "vulkan: get_rows with ids -1 and V: those rows are zeros, the valid ones exact (%s)",
       rc ? seer_last_error() : "ok");
    free(got);
    for (int i = 0; i < d.n_in; i++)
        free(d.in[i].bytes), free(d.in[i].val);
}

/* Uploads of up to 1 KiB (a step's token ids and positions) are recorded into the command
   stream rather than submitted ahead of it (vulkan/memory.c vk_upload), so each must land where
   the eager order puts it, between the ops around it: a (64 floats, 256 bytes) holds A;
   s1 = 2·a; a := B; s2 = 2·a; a := s1 (an op writing a); a[0..31] := C; one read at the end.
   Then s1 = 2A (the op before an upload reads the old bytes), s2 = 2B (the op after, the new),
   a = C followed by 2A's second half (an upload after an op's write lands after it). Doubling is
   exact, so bits are compared; the validation layer checks the barriers. */
static void check_small_uploads(backend *be, const char *config)
{
    enum { N = 64 };
    float A[N], B[N], C[N / 2], w1[N], w2[N], wa[N];
    test_fill_uniform(A, N, -1, 1), test_fill_uniform(B, N, -1, 1), test_fill_uniform(C, N / 2, -1, 1);
    for (int i = 0; i < N; i++)
        w1[i] = 2 * A[i], w2[i] = 2 * B[i], wa[i] = i < N / 2 ? C[i] : 2 * A[i];
    tensor *a = chk_tensor(be, DT_F32, N, 1, 1, A), *s1 = chk_tensor(be, DT_F32, N, 1, 1, NULL);
    tensor *s2 = chk_tensor(be, DT_F32, N, 1, 1, NULL);
    int rc = a && s1 && s2 ? SEER_OK : SEER_ENOMEM;
    if (rc == SEER_OK)
        rc = op_scale(be, s1, a, 2.0f);
    if (rc == SEER_OK)
        rc = backend_tensor_set(a, B, 0, sizeof B);
    if (rc == SEER_OK)
        rc = op_scale(be, s2, a, 2.0f);
    if (rc == SEER_OK)
        rc = op_cpy(be, a, s1);
    if (rc == SEER_OK)
        rc = backend_tensor_set(a, C, 0, sizeof C);
    float *g1 = rc == SEER_OK ? vk_test_read_f32(s1) : NULL, *g2 = g1 ? vk_test_read_f32(s2) : NULL;
    float *ga = g2 ? vk_test_read_f32(a) : NULL;
    ok(ga && !memcmp(g1, w1, sizeof w1) && !memcmp(g2, w2, sizeof w2) && !memcmp(ga, wa, sizeof wa),
       "%s: 256-byte uploads between ops land in order: the op before reads the old bytes, the op after the "
       "new, an upload after an op's write overwrites it (%s)", config, rc ? seer_last_error() : "ok");
    free(g1), free(g2), free(ga);
    vk_test_tensor_free(a), vk_test_tensor_free(s1), vk_test_tensor_free(s2);
}

#endif /* SEER_HAVE_VULKAN */

static void check_vulkan(void)
{
    if (!vk_be[VK_DEFAULT]) {
        skip(vk_missing ? vk_missing : "no Vulkan backend", "vulkan: chain of dependent ops, errors");
        return;
    }
#if SEER_HAVE_VULKAN
    check_chain(vk_be[VK_DEFAULT], vk_config_name[VK_DEFAULT]);
    check_small_uploads(vk_be[VK_DEFAULT], vk_config_name[VK_DEFAULT]);
    if (vk_be[VK_WINDOW])
        check_chain(vk_be[VK_WINDOW], vk_config_name[VK_WINDOW]);
    check_vulkan_errors(vk_be[VK_DEFAULT]);
#endif
}
