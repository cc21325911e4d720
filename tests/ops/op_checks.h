/* op_checks.h — the checks of tests/ops/backend_ops.c that are not one op on one input: exact
   values at a function's edges (softplus's threshold, GELU's two forms, which RoPE frequency
   reads which position), equalities between calls (a sequence in pieces vs one call, the two
   GDN forms), error paths and failed allocations, and a chain of dependent ops recorded into one
   Vulkan submit. */

/* A contiguous f32 tensor on be holding x (n values); NULL after a failed test. */
static tensor *chk_tensor(backend *be, enum dtype t, int64_t ne0, int64_t ne1, int64_t ne2, const float *x)
{
    return vk_test_tensor(be, t, ne0, ne1, ne2, 1, x);
}

/* Every backend the checks run on: the CPU, and Vulkan's default configuration when there is one. */
static int chk_backends(backend *out[2])
{
    out[0] = cpu_be;
    out[1] = vk_be[VK_DEFAULT];
    return out[1] ? 2 : 1;
}

/* ---- edges of functions ----------------------------------------------------------------------- */

static float *chk_unary(backend *be, enum unary_op op, const float *x, int64_t n)
{
    tensor *tx = chk_tensor(be, DT_F32, n, 1, 1, x), *ty = chk_tensor(be, DT_F32, n, 1, 1, NULL);
    float *y = tx && ty && op_unary(be, op, ty, tx) == SEER_OK ? vk_test_read_f32(ty) : NULL;
    vk_test_tensor_free(tx), vk_test_tensor_free(ty);
    return y;
}

static void check_activation_edges(backend *be)
{
    /* softplus (spec §2.5 step 4): above 20 the input itself, which also keeps log1p(exp(x)) from
       overflowing f32 for x >~ 88; below, log(1 + e^x) */
    const float xs[] = {20.5f, 21.0f, 25.0f, 88.5f, 100.0f, 1000.0f, 19.0f, -30.0f};
    float *y = chk_unary(be, UNARY_SOFTPLUS, xs, 8);
    bool thr = y != NULL;
    for (int i = 0; thr && i < 6; i++)
        thr &= y[i] == xs[i];
    ok(thr, "%s: softplus returns x exactly for x > 20 (20.5 .. 1000, no overflow to inf)", backend_name(be));
    ok(y && fabs(y[6] - log1p(exp(19.0))) <= 1e-6 * 19.0 && fabs(y[7] - log1p(exp(-30.0))) <= 1e-6 * 1e-13,
       "%s: softplus below the threshold is log(1+e^x) (19 -> %.9g, -30 -> %.3g)", backend_name(be), y ? y[6] : 0,
       y ? y[7] : 0);
    free(y);
    /* GELU tanh and erf are distinct approximations (spec §4.5 vs §4.6): each within 1e-5 of its
       own formula, and further than that from the other's */
    const int64_t n = 4097;
    float *x = malloc((size_t)n * sizeof *x);
    test_fill_uniform(x, (size_t)n, -4.0f, 4.0f);
    double *rt = malloc((size_t)n * sizeof *rt), *re = malloc((size_t)n * sizeof *re);
    for (int64_t i = 0; i < n; i++)
        rt[i] = ref_unary(UNARY_GELU_TANH, x[i]), re[i] = ref_unary(UNARY_GELU_ERF, x[i]);
    float *yt = chk_unary(be, UNARY_GELU_TANH, x, n), *ye = chk_unary(be, UNARY_GELU_ERF, x, n);
    double tt = yt ? rel_l2_d(yt, rt, (size_t)n) : INFINITY, ee = ye ? rel_l2_d(ye, re, (size_t)n) : INFINITY;
    double te = yt ? rel_l2_d(yt, re, (size_t)n) : 0, et = ye ? rel_l2_d(ye, rt, (size_t)n) : 0;
    ok(tt <= 1e-5 && ee <= 1e-5 && te > 1e-4 && et > 1e-4,
       "%s: gelu_tanh and gelu_erf each match their own formula (%.1e, %.1e) and not the other's (%.1e, %.1e)",
       backend_name(be), tt, ee, te, et);
    free(x), free(rt), free(re), free(yt), free(ye);
}

/* One token whose T, H and W positions all differ: frequency 1 must turn by H, 2 by W, 3 by T,
   and every frequency i by axis i mod 3 for Qwen's sections {11, 11, 10} (spec §3.3); dims
   64..255 untouched. Vision: inv_freq[0] = 1, so pair 0 turns by exactly the row and pair
   dh/4 by exactly the column (spec §4.4). The reference's own axis rule is what this pins. */
static void check_rope_axes(backend *be)
{
    const struct rope_text_params p = {64, 1e7f, {11, 11, 10}};
    const int hd = 256;
    const float pos[3] = {7, 1000, 250}; /* T, H, W */
    float *x = malloc((size_t)hd * sizeof *x);
    op_fill_normal(x, (size_t)hd, 1.0f);
    for (int i = 1; i <= 3; i++) /* pairs of known size, so a wrong angle cannot hide in tiny values */
        x[i] = 1.0f, x[i + 32] = -0.5f;
    tensor *tx = chk_tensor(be, DT_F32, hd, 1, 1, x), *ty = chk_tensor(be, DT_F32, hd, 1, 1, NULL);
    tensor *tp = test_tensor(be, DT_I32, 1, 3, 1, 1, pos);
    float *y = tx && ty && tp && op_rope_text(be, ty, tx, tp, &p) == SEER_OK ? vk_test_read_f32(ty) : NULL;
    double err[32][3];
    for (int i = 0; i < 32; i++)
        for (int a = 0; a < 3; a++) {
            double ang = (double)((float)pos[a] * (float)pow(1e7, -2.0 * i / 64));
            double e0 = x[i] * cos(ang) - x[i + 32] * sin(ang), e1 = x[i + 32] * cos(ang) + x[i] * sin(ang);
            err[i][a] = y ? fmax(fabs(y[i] - e0), fabs(y[i + 32] - e1)) : INFINITY;
        }
    /* 1e-5 absolute on unit-normal inputs; a wrong axis is off by O(1) */
    ok(err[1][1] <= 1e-5 && err[1][0] > 1e-3 && err[1][2] > 1e-3 && err[2][2] <= 1e-5 && err[2][0] > 1e-3 &&
           err[2][1] > 1e-3 && err[3][0] <= 1e-5 && err[3][1] > 1e-3 && err[3][2] > 1e-3,
       "%s: rope_text frequency 1 turns by the H position, 2 by W, 3 by T (%.1e %.1e %.1e)", backend_name(be),
       err[1][1], err[2][2], err[3][0]);
    bool all = y != NULL, pass = y != NULL;
    for (int i = 0; i < 32; i++)
        all &= err[i][i % 3] <= 1e-5;
    for (int d = 64; y && d < hd; d++)
        pass &= y[d] == x[d];
    ok(all && pass, "%s: all 32 frequencies follow the i mod 3 axis rule; dims 64..255 untouched", backend_name(be));
    free(y);
    vk_test_tensor_free(tx), vk_test_tensor_free(ty), vk_test_tensor_free(tp);

    const int dh = 72;
    const float vpos[2] = {3, 11};
    tx = chk_tensor(be, DT_F32, dh, 1, 1, x), ty = chk_tensor(be, DT_F32, dh, 1, 1, NULL);
    tp = test_tensor(be, DT_I32, 1, 2, 1, 1, vpos);
    y = tx && ty && tp && op_rope_vision(be, ty, tx, tp, 1e4f) == SEER_OK ? vk_test_read_f32(ty) : NULL;
    double er = y ? fabs(y[0] - (x[0] * cos(3.0) - x[36] * sin(3.0))) : INFINITY;
    double ec = y ? fabs(y[18] - (x[18] * cos(11.0) - x[54] * sin(11.0))) : INFINITY;
    double wrong = y ? fabs(y[0] - (x[0] * cos(11.0) - x[36] * sin(11.0))) : 0;
    ok(er <= 1e-5 && ec <= 1e-5 && wrong > 1e-3,
       "%s: rope_vision pair 0 turns by the row (3), pair dh/4 by the col (11)", backend_name(be));
    free(y), free(x);
    vk_test_tensor_free(tx), vk_test_tensor_free(ty), vk_test_tensor_free(tp);
}

/* ---- calls in pieces -------------------------------------------------------------------------- */

/* A sequence in pieces gives the very same bits as one call: each conv output sees the same
   inputs in the same order whichever call it falls in; the state after equals too. */
static void check_conv_pieces(backend *be)
{
    struct op_case c = {NE(9, 0), PAR(37, 4)};
    struct op_data d = {0};
    make_conv(&row_conv, &c, &d);
    float *y[3];
    int rc = SEER_OK;
    static const int64_t plans[3] = {0, 1, 3}; /* one call, 1+5+3, 9 single tokens */
    for (int i = 0; i < 3; i++) {
        c.ne[1] = plans[i];
        y[i] = calloc(d.n_out, sizeof(float));
        rc |= run_on(be, &row_conv, &c, &d, y[i]);
    }
    ok(rc == SEER_OK && !memcmp(y[0], y[1], d.n_out * 4) && !memcmp(y[0], y[2], d.n_out * 4),
       "%s: conv C=37 K=4: 1+5+3 calls and 9 single tokens give one call's outputs and state, bit for bit",
       backend_name(be));
    for (int i = 0; i < 3; i++)
        free(y[i]);
    for (int i = 0; i < d.n_in; i++)
        free(d.in[i].bytes), free(d.in[i].val);
}

/* op_matmul_n gives each product op_matmul's bits: four matrices (q8_0 and q4_K twice each, so
   two share each rounding of x on the CPU's 8-bit path; then with an f16 one, which that path does
   not take, so the products go one by one) against 1, 3 and 17 rows of x, on the exact and the
   8-bit CPU paths and on Vulkan; and refuses 0 or 5 products, a K that differs, overlapping
   outputs. */
static void check_matmul_n_set(backend *be, const enum dtype *types, const char *what)
{
    enum { K = 512, NW = 4 };
    static const int64_t rows[NW] = {37, 70, 5, 19};
    const bool cpu = !strcmp(backend_name(be), "cpu");
    tensor *w[NW] = {0};
    int rc = SEER_OK;
    for (int i = 0; i < NW && rc == SEER_OK; i++) {
        float *v = malloc((size_t)(K * rows[i]) * sizeof *v);
        for (int64_t k = 0; k < K * rows[i]; k++)
            v[k] = test_randf(-1.0f, 1.0f);
        w[i] = chk_tensor(be, types[i], K, rows[i], 1, NULL);
        rc = w[i] ? backend_tensor_set_f32(w[i], v) : SEER_EINVAL;
        free(v);
    }
    static const int64_t Ns[3] = {1, 3, 17};
    for (int c = 0; c < 3 && rc == SEER_OK; c++)
        for (int exact = 0; exact <= (int)cpu; exact++) {
            const int64_t N = Ns[c];
            float *xv = malloc((size_t)(K * N) * sizeof *xv);
            for (int64_t k = 0; k < K * N; k++)
                xv[k] = test_randf(-2.0f, 2.0f);
            tensor *x = chk_tensor(be, DT_F32, K, N, 1, xv), *one[NW], *all[NW];
            int same = 0, made = x != NULL;
            for (int i = 0; i < NW; i++) {
                one[i] = chk_tensor(be, DT_F32, rows[i], N, 1, NULL);
                all[i] = chk_tensor(be, DT_F32, rows[i], N, 1, NULL);
                made &= one[i] && all[i];
            }
            if (cpu)
                backend_cpu_set_exact(be, exact);
            if (made) {
                for (int i = 0; i < NW && rc == SEER_OK; i++)
                    rc = op_matmul(be, one[i], w[i], x);
                if (rc == SEER_OK)
                    rc = op_matmul_n(be, NW, all, (const tensor *const *)w, x);
                for (int i = 0; i < NW && rc == SEER_OK; i++) {
                    size_t n = (size_t)(rows[i] * N);
                    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
                    if (!backend_tensor_get_f32(one[i], a) && !backend_tensor_get_f32(all[i], b))
                        same += !memcmp(a, b, n * sizeof *a);
                    free(a), free(b);
                }
            }
            if (cpu)
                backend_cpu_set_exact(be, true);
            ok(rc == SEER_OK && same == NW, "%s%s: op_matmul_n of %s weights, N = %lld: %d of %d products equal "
               "op_matmul's bit for bit", backend_name(be), cpu ? (exact ? " exact" : " 8-bit") : "", what,
               (long long)N, same, NW);
            for (int i = 0; i < NW; i++)
                vk_test_tensor_free(one[i]), vk_test_tensor_free(all[i]);
            vk_test_tensor_free(x);
            free(xv);
        }
    /* refusals, before anything runs */
    tensor *x = chk_tensor(be, DT_F32, K, 2, 1, NULL), *xk = chk_tensor(be, DT_F32, K - 32, 2, 1, NULL);
    tensor *o = chk_tensor(be, DT_F32, rows[0], 2, 1, NULL), *o2 = chk_tensor(be, DT_F32, rows[2], 2, 1, NULL);
    if (x && xk && o && o2) {
        tensor *outs[5] = {o, o2, o, o2, o};
        const tensor *ws[5] = {w[0], w[2], w[0], w[2], w[0]};
        tensor sub = tensor_view(o, 2, (int64_t[]){rows[2], 2}, (size_t[]){4, (size_t)rows[2] * 4}, 0);
        ok(op_matmul_n(be, 0, outs, ws, x) == SEER_EINVAL && op_matmul_n(be, 5, outs, ws, x) == SEER_EINVAL &&
           op_matmul_n(be, 2, outs, ws, xk) == SEER_EINVAL &&
           op_matmul_n(be, 2, (tensor *[]){o, &sub}, ws, x) == SEER_EINVAL && strstr(seer_last_error(), "overlap"),
           "%s: op_matmul_n refuses 0 and 5 products, a K that differs, overlapping outputs: %s", backend_name(be),
           seer_last_error());
    }
    vk_test_tensor_free(x), vk_test_tensor_free(xk), vk_test_tensor_free(o), vk_test_tensor_free(o2);
    for (int i = 0; i < NW; i++)
        vk_test_tensor_free(w[i]);
}

static void check_matmul_n(backend *be)
{
    check_matmul_n_set(be, (const enum dtype[]){DT_Q8_0, DT_Q4_K, DT_Q8_0, DT_Q4_K}, "q8_0, q4_K, q8_0, q4_K");
    check_matmul_n_set(be, (const enum dtype[]){DT_Q8_0, DT_Q4_K, DT_F16, DT_Q8_0}, "q8_0, q4_K, f16, q8_0");
}

/* op_linear gives the floats of the ops it stands for (op_matmul, op_add of the bias, op_unary,
   op_add of the residual), bit for bit, on f16 weights (the tower's) with N = 3 and 67 (the pass
   after the product, and the CPU prefill kernel's epilogue as it copies its blocks out), M = 130:
   what keeps the tower's numbers those of its reference tests. And it refuses a residual that
   overlaps its output and a bias of the wrong length. */
static void check_linear_ops(backend *be)
{
    enum { K = 300, M = 130 };
    static const int64_t Ns[2] = {3, 67};
    tensor *w = chk_tensor(be, DT_F16, K, M, 1, NULL), *bias = chk_tensor(be, DT_F32, M, 1, 1, NULL);
    float *wv = malloc(sizeof(float) * K * M), bv[M];
    for (int64_t i = 0; i < K * M; i++)
        wv[i] = test_randf(-1.0f, 1.0f);
    for (int64_t i = 0; i < M; i++)
        bv[i] = test_randf(-1.0f, 1.0f);
    int rc = w && bias ? backend_tensor_set_f32(w, wv) : SEER_EINVAL;
    rc = rc ? rc : backend_tensor_set_f32(bias, bv);
    for (int c = 0; c < 2 && rc == SEER_OK; c++) {
        const int64_t N = Ns[c];
        float *xv = malloc(sizeof(float) * (size_t)(K * N)), *rv = malloc(sizeof(float) * (size_t)(M * N));
        for (int64_t i = 0; i < K * N; i++)
            xv[i] = test_randf(-2.0f, 2.0f);
        for (int64_t i = 0; i < M * N; i++)
            rv[i] = test_randf(-3.0f, 3.0f);
        tensor *x = chk_tensor(be, DT_F32, K, N, 1, xv), *res = chk_tensor(be, DT_F32, M, N, 1, rv);
        tensor *fused = chk_tensor(be, DT_F32, M, N, 1, NULL), *apart = chk_tensor(be, DT_F32, M, N, 1, NULL);
        int same = 0;
        for (int v = 0; v < 2 && x && res && fused && apart; v++) {
            /* v 0: bias + GELU (fc1); v 1: bias + residual (proj, fc2) */
            const struct linear_epilogue ep = {.bias = bias, .act = v == 0, .unary = UNARY_GELU_TANH,
                                               .res = v == 1 ? res : NULL};
            int r = op_linear(be, fused, w, x, &ep);
            r = r ? r : op_matmul(be, apart, w, x);
            r = r ? r : op_add(be, apart, apart, bias);
            r = r ? r : v == 0 ? op_unary(be, UNARY_GELU_TANH, apart, apart) : op_add(be, apart, apart, res);
            float *a = malloc(sizeof(float) * (size_t)(M * N)), *b = malloc(sizeof(float) * (size_t)(M * N));
            if (!r && !backend_tensor_get_f32(fused, a) && !backend_tensor_get_f32(apart, b))
                same += !memcmp(a, b, sizeof(float) * (size_t)(M * N));
            free(a), free(b);
        }
        ok(same == 2, "%s: op_linear of f16 weights, N = %lld: bias + GELU and bias + residual equal the ops apart, "
           "bit for bit (%d of 2)", backend_name(be), (long long)N, same);
        if (c == 1 && x && res && fused) {
            const struct linear_epilogue in_place = {.res = fused}, short_bias = {.bias = res};
            ok(op_linear(be, fused, w, x, &in_place) == SEER_EINVAL && strstr(seer_last_error(), "overlaps") &&
               op_linear(be, fused, w, x, &short_bias) == SEER_EINVAL && strstr(seer_last_error(), "bias"),
               "%s: op_linear refuses a residual that is its output and a bias not {M}: %s", backend_name(be),
               seer_last_error());
        }
        vk_test_tensor_free(x), vk_test_tensor_free(res), vk_test_tensor_free(fused), vk_test_tensor_free(apart);
        free(xv), free(rv);
    }
    vk_test_tensor_free(w), vk_test_tensor_free(bias);
    free(wv);
}

/* The int-dot kernel's activation rounding equals the CPU's bit for bit, ties included: Q8_0
   weights of one-hot rows (d = 1, one q = 1) make each output exactly d_x·q_x of one activation,
   so any summation order gives the same bits. Activations sit on or within an ulp of
   round(127·x/amax)'s half-integers, where 127/amax one ulp off (a shader division, or an fma
   that rounds twice, as Vulkan allows) moves q by one; random activations meet such a value
   about once per 10^6. */
static void check_int_dot_ties(backend *vk, backend *cpu_nx)
{
    enum { K = 256, N = 8 };
    static unsigned char raw[K * (K / 32) * 34];
    for (int m = 0; m < K; m++) {
        unsigned char *blk = raw + ((size_t)m * (K / 32) + (size_t)m / 32) * 34;
        for (int b = 0; b < K / 32; b++)
            memcpy(raw + ((size_t)m * (K / 32) + (size_t)b) * 34, &(uint16_t){0x3C00}, 2); /* d = 1 */
        blk[2 + m % 32] = 1;
    }
    float *x = malloc((size_t)K * N * sizeof *x);
    for (int b = 0; b < K * N / 32; b++) {
        const float amax = test_randf(0.5f, 8.0f), step = amax / 127.0f;
        for (int i = 0; i < 32; i++) {
            float v = (float)((int)(test_rand_u64() % 127) - 63) * step + 0.5f * step; /* near a tie */
            for (int u = (int)(test_rand_u64() % 3) - 1; u; u -= u > 0 ? 1 : -1)
                v = nextafterf(v, u > 0 ? INFINITY : -INFINITY);
            x[b * 32 + i] = i == 7 ? amax : v;
        }
    }
    backend *bes[2] = {vk, cpu_nx};
    float *got[2] = {0};
    int rc = SEER_OK;
    for (int i = 0; i < 2 && rc == SEER_OK; i++) {
        tensor *w = chk_tensor(bes[i], DT_Q8_0, K, K, 1, NULL), *tx = chk_tensor(bes[i], DT_F32, K, N, 1, x);
        tensor *o = chk_tensor(bes[i], DT_F32, K, N, 1, NULL);
        rc = w && tx && o ? backend_tensor_set(w, raw, 0, sizeof raw) : SEER_EINVAL;
        rc = rc ? rc : op_matmul(bes[i], o, w, tx);
        got[i] = rc ? NULL : vk_test_read_f32(o);
        vk_test_tensor_free(w), vk_test_tensor_free(tx), vk_test_tensor_free(o);
    }
    size_t differ = 0;
    for (size_t k = 0; got[0] && got[1] && k < (size_t)K * N; k++)
        differ += got[0][k] != got[1][k];
    ok(rc == SEER_OK && got[0] && got[1] && differ == 0,
       "%s int-dot: q8_0 activations at rounding ties round as the cpu's 8-bit path (%zu of %d differ) %s",
       backend_name(vk), differ, K * N, rc ? seer_last_error() : "");
    free(got[0]), free(got[1]), free(x);
}

/* The chunked form reorders the recurrent form's maths (WY form, spec §2.5 step 8): within 1e-5
   of it on the CPU's GDN cases (both f32); a sequence in 4 calls, and a chunked prefill of 250
   followed by 50 recurrent steps, equal one call within 1e-5. */
static void check_gdn_forms(void)
{
    double worst = 0;
    for (size_t i = 0; i < 35; i++) { /* the CPU list at the head of gdn_cases */
        struct op_data d = {0};
        make_gdn(&row_gdn_rec, &gdn_cases[i], &d);
        float *a = calloc(d.n_out, 4), *b = calloc(d.n_out, 4);
        int rc = run_on(cpu_be, &row_gdn_rec, &gdn_cases[i], &d, a);
        rc |= run_on(cpu_be, &row_gdn_chunked, &gdn_cases[i], &d, b);
        double e = rc ? INFINITY : fmax(rel_l2(b, a, d.part), rel_l2(b + d.part, a + d.part, d.n_out - d.part));
        worst = fmax(worst, e);
        free(a), free(b);
        for (int k = 0; k < d.n_in; k++)
            free(d.in[k].bytes), free(d.in[k].val);
    }
    ok(worst <= 1e-5, "cpu: gdn chunked vs recurrent on 35 cases (out and state): worst rel L2 %.2e <= 1e-5", worst);

    static const char *const what[3] = {"recurrent in calls of 1, 70, 64, 165", "chunked in calls of 1, 70, 64, 165",
                                        "chunked prefill 250 + 50 recurrent steps"};
    const struct op_row *rows[3] = {&row_gdn_rec, &row_gdn_chunked, &row_gdn_mixed};
    for (int m = 0; m < 3; m++) {
        struct op_case one = {NE(300), PAR(128, 128, 2, 4)}, pieces = one;
        pieces.ne[1] = m < 2 ? 1 : 2, pieces.ne[2] = 250;
        struct op_data d = {0};
        make_gdn(rows[m], &one, &d);
        float *a = calloc(d.n_out, 4), *b = calloc(d.n_out, 4);
        int rc = run_on(cpu_be, m == 0 ? &row_gdn_rec : &row_gdn_chunked, &one, &d, a);
        rc |= run_on(cpu_be, rows[m], &pieces, &d, b);
        double e = rc ? INFINITY : fmax(rel_l2(b, a, d.part), rel_l2(b + d.part, a + d.part, d.n_out - d.part));
        ok(e <= 1e-5, "cpu: gdn %s equals one call (out and state): rel L2 %.2e <= 1e-5", what[m], e);
        free(a), free(b);
        for (int k = 0; k < d.n_in; k++)
            free(d.in[k].bytes), free(d.in[k].val);
    }
}

/* ---- errors ------------------------------------------------------------------------------------- */

/* Failures return the right code, say why and leave the state untouched. */
static void check_cpu_errors(void)
{
    const int64_t dd = 16, T = 70;
    tensor *q = chk_tensor(cpu_be, DT_F32, dd, 1, T, NULL), *k = chk_tensor(cpu_be, DT_F32, dd, 1, T, NULL);
    tensor *out = chk_tensor(cpu_be, DT_F32, dd, 1, T, NULL), *g = chk_tensor(cpu_be, DT_F32, 1, T, 1, NULL);
    float s0[16 * 16];
    op_fill_normal(s0, 256, 0.3f);
    tensor *st = chk_tensor(cpu_be, DT_F32, dd, dd, 1, s0);
    for (int f = 0; f < 2; f++) {
        seer_alloc_fail_after(1); /* the op's scratch area is its only allocation */
        int rc = f ? op_gdn_chunked(cpu_be, out, q, k, q, g, g, st, 0.25f, GDN_V_GROUPED)
                   : op_gdn_recurrent(cpu_be, out, q, k, q, g, g, st, 0.25f, GDN_V_GROUPED);
        seer_alloc_fail_after(0);
        float *s = vk_test_read_f32(st);
        ok(rc == SEER_ENOMEM && strstr(seer_last_error(), "scratch") && !memcmp(s, s0, sizeof s0),
           "cpu: gdn %s with a failed scratch allocation: SEER_ENOMEM (\"%s\"), state untouched",
           f ? "chunked" : "recurrent", seer_last_error());
        free(s);
    }
    /* a 4th dimension passes ops.c's shape checks (q and k agree) but is outside the contract */
    tensor q4 = tensor_view(q, 4, (int64_t[]){dd, 1, T / 2, 2}, (size_t[]){4, 4 * dd, 4 * dd, 4 * dd * (T / 2)}, 0);
    tensor o3 = tensor_view(out, 3, (int64_t[]){dd, 1, T / 2}, (size_t[]){4, 4 * dd, 4 * dd}, 0);
    tensor g2 = tensor_view(g, 2, (int64_t[]){1, T / 2}, (size_t[]){4, 4}, 0);
    ok(op_gdn_chunked(cpu_be, &o3, &q4, &q4, &o3, &g2, &g2, st, 0.25f, GDN_V_GROUPED) == SEER_EINVAL,
       "cpu: gdn with 4-D q/k: SEER_EINVAL (\"%s\")", seer_last_error());
    vk_test_tensor_free(q), vk_test_tensor_free(k), vk_test_tensor_free(out), vk_test_tensor_free(g);
    vk_test_tensor_free(st);

    /* attention: each allocation failing in turn is reported; causal makes one (scratch),
       segments three (ranges, their sort index, scratch) */
    for (int segs = 0; segs < 2; segs++) {
        const int64_t hd = 64, nh = 4, n = 50;
        q = chk_tensor(cpu3_be, DT_F32, hd, nh, n, NULL), out = chk_tensor(cpu3_be, DT_F32, hd, nh, n, NULL);
        tensor *seg = test_tensor(cpu3_be, DT_I32, n, 1, 1, 1, NULL);
        struct attn_mask mask = {.kind = ATTN_CAUSAL, .q_pos0 = 0};
        if (segs)
            mask = (struct attn_mask){.kind = ATTN_SEGMENTS, .seg = seg};
        bool all = true;
        for (int i = 1; i <= (segs ? 3 : 1); i++) {
            seer_alloc_fail_after(i);
            int rc = op_attention(cpu3_be, out, q, q, q, 0.125f, &mask);
            seer_alloc_fail_after(0);
            all &= rc == SEER_ENOMEM && strstr(seer_last_error(), "op_attention") != NULL;
        }
        seer_alloc_fail_after(segs ? 4 : 2);
        int rc = op_attention(cpu3_be, out, q, q, q, 0.125f, &mask);
        seer_alloc_fail_after(0);
        ok(all && rc == SEER_OK,
           "cpu: attention (%s): every failed allocation gives SEER_ENOMEM; none failing succeeds",
           segs ? "segments" : "causal");
        vk_test_tensor_free(q), vk_test_tensor_free(out), test_tensor_free(seg);
    }

    /* get_rows: ids V and −1 are SEER_EINVAL naming them */
    float tv[32];
    op_fill_normal(tv, 32, 1.0f);
    tensor *table = chk_tensor(cpu_be, DT_F32, 8, 4, 1, tv);
    static const float bad[2][3] = {{0, 4, 1}, {-1, 0, 2}};
    for (int i = 0; i < 2; i++) {
        tensor *ids = test_tensor(cpu_be, DT_I32, 3, 1, 1, 1, bad[i]), *o = chk_tensor(cpu_be, DT_F32, 8, 3, 1, NULL);
        int rc = op_get_rows(cpu_be, o, table, ids);
        ok(rc == SEER_EINVAL && strstr(seer_last_error(), "op_get_rows") && strstr(seer_last_error(), i ? "-1" : "4"),
           "cpu: get_rows id %s is SEER_EINVAL naming it (\"%s\")", i ? "-1" : "4 (= V)", seer_last_error());
        test_tensor_free(ids), vk_test_tensor_free(o);
    }
    vk_test_tensor_free(table);

    /* q8_0 (a q8_0 KV cache): rows must be whole 32-value blocks, in a copy and in attention */
    tensor *c8 = chk_tensor(cpu_be, DT_Q8_0, 64, 2, 1, NULL), *x = chk_tensor(cpu_be, DT_F32, 48, 2, 1, NULL);
    tensor *qa = chk_tensor(cpu_be, DT_F32, 48, 2, 1, NULL), *oa = chk_tensor(cpu_be, DT_F32, 48, 2, 1, NULL);
    tensor c48 = tensor_view(c8, 2, (int64_t[]){48, 2}, c8->nb, 0);
    ok(op_cpy(cpu_be, &c48, x) == SEER_EINVAL && strstr(seer_last_error(), "whole 32-value blocks"),
       "cpu: cpy to q8_0 rows of 48: SEER_EINVAL (\"%s\")", seer_last_error());
    const struct attn_mask causal = {.kind = ATTN_CAUSAL, .q_pos0 = 1};
    tensor k48 = tensor_view(c8, 3, (int64_t[]){48, 1, 2}, (size_t[]){34, 68, 68}, 0);
    ok(op_attention(cpu_be, oa, qa, &k48, &k48, 0.125f, &causal) == SEER_EINVAL &&
           strstr(seer_last_error(), "multiple of 32"),
       "cpu: attention over q8_0 k, v of head dim 48: SEER_EINVAL (\"%s\")", seer_last_error());
    tensor *q32 = chk_tensor(cpu_be, DT_F32, 32, 1, 1, NULL), *o32 = chk_tensor(cpu_be, DT_F32, 32, 1, 1, NULL);
    tensor k_odd = tensor_view(c8, 3, (int64_t[]){32, 1, 2}, (size_t[]){34, 34, 34}, 1);
    ok(op_attention(cpu_be, o32, q32, &k_odd, &k_odd, 0.125f, &causal) == SEER_EINVAL &&
           strstr(seer_last_error(), "even bytes"),
       "cpu: attention over q8_0 rows starting on an odd byte: SEER_EINVAL (\"%s\")", seer_last_error());
    vk_test_tensor_free(c8), vk_test_tensor_free(x), vk_test_tensor_free(qa), vk_test_tensor_free(oa);
    vk_test_tensor_free(q32), vk_test_tensor_free(o32);
}

#include "op_checks_vulkan.h"

static void op_checks(void)
{
    backend *bes[2];
    for (int b = 0, n = chk_backends(bes); b < n; b++) {
        check_activation_edges(bes[b]);
        check_rope_axes(bes[b]);
        check_conv_pieces(bes[b]);
        check_matmul_n(bes[b]);
        check_linear_ops(bes[b]);
    }
    check_gdn_forms();
    check_cpu_errors();
    check_vulkan();
}
