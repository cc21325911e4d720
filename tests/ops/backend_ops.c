/* tests/ops/backend_ops.c — every op of core/ops.h from one table, in the spirit of ggml's
   test-backend-ops. Each row (tests/ops/rows_*.h) names an op, its input makers, its cases
   (awkward shapes: 1, odd and prime sizes, rows longer than a workgroup, thousands of rows;
   strided views and in-place calls; every dtype), a double-precision reference
   (tests/support/op_ref.c) and the tolerance of the CPU against it. For each case, with inputs
   made fresh from the seed and identical on every backend:
     1. the CPU backend (2 threads) vs the reference, at the row's tolerance;
     2. OPC_THREADS: the CPU on 1 and 3 threads gives the very same bits (OPC_THREADS_REF: each
        within the tolerance, where the split changes the summation order);
     3. each Vulkan configuration vs the CPU and vs the reference, relative L2 <= 1e-4 (the
        matmul row: of Σ|w||x|, err_of below) (f32 paths
        that differ from the CPU in summation order and in the shaders' exp/erf/sin/cos, which
        stay near 1e-6): the default kernels (subgroup arithmetic where the device has it); the
        plain kernels (vk_backend_params.plain_kernels) for the cases of ops with a
        feature-dependent kernel (OPC_PLAIN) and every row's first case; 16 KiB of shared memory
        (vk_backend_params.max_shared_override, the Vulkan minimum: the small-device attention
        tiles) for OPC_SHARED16 cases and every row's first case; 32 KiB and 256 KiB
        storage windows for the cases sized to split across them (OPC_SPLIT, OPC_SPLIT256); and,
        for op_matmul's OPC_PLAIN cases of quantised weights, the not-exact decode kernels forced on (int-dot, fp16:
        vk_backend_params.force_matvec, backend_vulkan_set_exact false; int-dot wide, the Q4_K and
        Q5_K cases only: the other dtypes run int-dot's kernels there), whose products of up to 8
        x rows in the dtypes they take are held to their own bounds (rounded_case below). The
        validation layer is on: zero errors. OPC_CPU_ONLY cases probe the CPU kernel's own
        blocking and do not run on Vulkan.
   Bit-exact rows (OP_BITS: copies, lookups) compare bytes instead; every output is read back
   with a check that nothing outside its view changed. Without a Vulkan device the Vulkan checks
   are skipped visibly (once per row and configuration), unless SEER_REQUIRE_VULKAN=1 (CI) makes
   that a failure. Checks that are not one op on one input (error paths, failed allocations, a
   chain of dependent ops in one submit, sequences split over calls) follow the table
   (op_checks.h). Each row prints the CPU seconds its stages took; an argument runs only the rows
   whose name starts with it.

   Adding an op: write its reference in tests/support/op_ref.c, then one row — make, ref, run,
   tolerance, cases — in the rows_*.h of its family, listed in that file's table. */
#include "op_test.h"

#include <time.h>

#include "core/cpu/cpu.h"
#include "vulkan/vk_test.h"

static backend *cpu_be, *cpu1_be, *cpu3_be; /* the CPU compared with everything; 1 and 3 threads */
static backend *cpu_nx_be;                  /* the CPU not exact: what the int-dot kernel is held to */

#define VK_TOL 1e-4 /* relative L2, Vulkan vs CPU and vs the reference (see the header) */

enum { /* the not-exact configurations (forced decode kernels) last: vk_config_takes */
    VK_DEFAULT, VK_PLAIN, VK_SHARED16, VK_WINDOW, VK_WINDOW256, VK_INT_DOT, VK_INT_DOT_WIDE, VK_FP16, VK_CONFIGS
};
static const char *const vk_config_name[VK_CONFIGS] = {"vulkan", "vulkan plain kernels", "vulkan 16 KiB shared",
                                                       "vulkan 32 KiB window", "vulkan 256 KiB window",
                                                       "vulkan int-dot", "vulkan int-dot wide", "vulkan fp16"};
/* The cases a configuration runs: the windows take the cases sized for them, the others the rest;
   plain and 16 KiB shared also only the cases flagged for them, and every row's first; int-dot,
   int-dot wide and fp16 only op_matmul's flagged cases of the dtypes they change (vk_config_takes). */
static const unsigned vk_config_cases[VK_CONFIGS] = {0, 0, 0, OPC_SPLIT, OPC_SPLIT256, 0, 0, 0};
static const unsigned vk_config_only[VK_CONFIGS] = {0, OPC_PLAIN, OPC_SHARED16, 0, 0, OPC_PLAIN, OPC_PLAIN, OPC_PLAIN};
static backend *vk_be[VK_CONFIGS];
static const char *vk_missing; /* why there is no Vulkan backend, or NULL */
static unsigned vk_skip_said;  /* configurations whose missing backend the current row has reported */

#include "rows_elementwise.h"
#include "rows_norm.h"
#include "rows_rope.h"
#include "rows_matmul.h"
#include "rows_seq.h"

/* CPU seconds (all threads, lavapipe's included) spent per stage of the current row: making and
   referencing, the CPU backends, each Vulkan configuration — printed per row, to keep the
   program's cost in view (CI has two cores). */
enum { T_REF, T_CPU, T_VK };
static double t_spent[T_VK + VK_CONFIGS];
static clock_t t_mark;

static void t_charge(int stage)
{
    clock_t now = clock();
    t_spent[stage] += (double)(now - t_mark) / CLOCKS_PER_SEC;
    t_mark = now;
}

/* The dtypes whose decode products a not-exact configuration runs on its own kernel
   (vulkan/op_matmul.c mv_path); the others stay on the f32 kernels there. */
static bool rounded_type(int v, enum dtype t)
{
    return ((v == VK_INT_DOT || v == VK_INT_DOT_WIDE) && is_blocks(t)) ||
           (v == VK_FP16 && (t == DT_Q8_0 || t == DT_Q4_0));
}

/* The not-exact configurations change op_matmul only: they run its cases of the quantised dtypes
   up to 67 x rows (more than 8, and the K-quants under fp16: that they stay on the f32 kernels;
   longer prefills would only repeat those kernels, at CI's expense); int-dot wide only Q4_K's
   and Q5_K's, the dtypes whose kernels it changes. */
static bool vk_config_takes(int v, const struct op_row *r, const struct op_case *c)
{
    if (v == VK_INT_DOT_WIDE && c->type != DT_Q4_K && c->type != DT_Q5_K)
        return false;
    return v < VK_INT_DOT || (r == &row_matmul && is_blocks(c->type) && c->p[2] * mm_n2(c) <= 67);
}

/* The products the not-exact configurations run on their own kernels (rounded_type's dtypes, at
   most 8 x rows); every other case must meet VK_TOL there too. Their errors
   are measured against the scale of the terms, not of the sums, as ||got − want|| / ||scale||
   with scale = Σ_k |w||x| per output (matmul_scale): a product of one or a few outputs may cancel
   to near zero (a single 32-term dot product read 1.2e-2 relative L2 where its terms allowed
   1e-3). Bounds:
   - int-dot (and its wide Q4_K and Q5_K builds: the same integer sums) vs the CPU not exact
     (core/cpu/qdot.h): both round the activations to the same int8
     blocks and form the same integer block sums, so only the f32 summation of the blocks differs:
     ~1e-8 of Σ|w||x| here, bound 1e-6. Against the reference the 8-bit activations show, and
     there the bound is proven: q = round(127·x/amax) is within 1/2 of 127·x/amax and d =
     f16(amax/127) within 2^-11 of amax/127, so |x − d·q| <= amax·(1/254 + 2^-11) = 0.0044·amax
     per element (Q4_K's Q8_K: d = amax/127 in f32, 1/254): bound 4.5e-3 of Σ|w|·amax (its
     block's), ~1e-4 here.
   - fp16 vs the f32 CPU and the reference: each weight and activation rounded to f16 (relative
     step u = 2^-11 = 4.9e-4), each lane's 8-term fma chain and the lanes' sum rounded at the
     f16 step of its running sum, f32 across blocks: at worst 11u = 5.4e-3 of Σ|w||x| with every
     rounding at its limit and of one sign. Rounding errors of random sign partly cancel: ~3e-5
     measured on 800-term products, up to 2.6e-4 on a single 32-term one; bound 2e-3 (4u).
   That the rounded kernels ran at all is checked per row: the largest error of their cases
   against the exact f32 CPU exceeds 1e-5 (the f32 kernels stay near 1e-7 by this measure). */
#define TOL_INT_DOT_CPU 1e-6
#define TOL_INT_DOT_REF 4.5e-3
#define TOL_FP16 2e-3
#define VK_MATVEC_MAX_N_TEST 8 /* x rows up to which a product is decode-shaped (vk_internal.h VK_MATVEC_MAX_N) */
static double rounded_err_max[VK_CONFIGS]; /* the current row's largest rounded-case error vs the exact CPU */

static bool rounded_case(int v, const struct op_row *r, const struct op_case *c)
{
    return r == &row_matmul && rounded_type(v, c->type) && c->p[2] * mm_n2(c) <= VK_MATVEC_MAX_N_TEST;
}

/* Σ_k |w_mk|·s_nk per output of a matmul case (ref_matmul's layout): s = |x|, or with `amax` the
   largest |x| of the block holding x_nk that its int8 rounding takes the step from (32 elements;
   256 for Q4_K, whose activations the CPU rounds as llama.cpp's Q8_K). */
static double *matmul_scale(const struct op_case *c, const struct op_data *d, bool amax)
{
    const int64_t K = c->p[0], M = c->p[1], NN = c->p[2] * mm_n2(c), pk = d->in[0].ne[0];
    const int64_t lead = c->p[3] == MM_VIEWS ? dtype_info(c->type)->block_elems : 0;
    float *w = malloc((size_t)(K * M) * sizeof *w), *x = malloc((size_t)(K * NN) * sizeof *x);
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++)
            w[m * K + k] = fabsf(d->in[0].val[m * pk + lead + k]);
    tensor wp = op_host_parent(d, 0), xp = op_host_parent(d, 1), wv, xv;
    matmul_views(c, &wp, &xp, &wv, &xv);
    op_gather_vals(&d->in[1], &xp, &xv, x);
    const int64_t bl = c->type == DT_Q4_K ? 256 : 32; /* K is whole blocks of the quantised dtypes */
    for (int64_t b = 0; b < K * NN / bl; b++) {
        float a = 0;
        for (int64_t i = 0; i < bl; i++)
            a = fmaxf(a, fabsf(x[bl * b + i]));
        for (int64_t i = 0; i < bl; i++)
            x[bl * b + i] = amax ? a : fabsf(x[bl * b + i]);
    }
    double *sc = calloc((size_t)(M * NN), sizeof *sc);
    ref_matmul(w, x, K, M, NN, sc);
    free(w), free(x);
    return sc;
}

/* ||got − want|| / ||scale||, want from the CPU (f32) or the reference (double). */
static double err_scaled(const float *got, const float *want_f, const double *want_d, const double *scale, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        const double dv = (double)got[i] - (want_f ? (double)want_f[i] : want_d[i]);
        e += dv * dv;
        s += scale[i] * scale[i];
    }
    return s > 0 ? sqrt(e / s) : sqrt(e);
}

/* ---- running one case on one backend -------------------------------------------------------- */

/* Makes the case's parents on be (bytes or sentinel), runs the row and fills got. */
static int run_on(backend *be, const struct op_row *r, const struct op_case *c, const struct op_data *d, void *got)
{
    struct op_bufs b = {be, d, {0}};
    backend_buffer *buf[OP_MAX_IN] = {0};
    int rc = SEER_OK;
    for (int i = 0; i < d->n_in && rc == SEER_OK; i++) {
        const struct op_in *in = &d->in[i];
        b.t[i] = calloc(1, sizeof(tensor));
        if (!b.t[i] || !tensor_init4(b.t[i], in->type, in->ne[0], in->ne[1], in->ne[2], in->ne[3])) {
            rc = SEER_ENOMEM;
            break;
        }
        snprintf(b.t[i]->name, sizeof b.t[i]->name, "%s_in%d", r->name, i);
        rc = backend_tensor_alloc(be, b.t[i], &buf[i]);
        if (rc == SEER_OK && in->bytes) {
            rc = backend_tensor_set(b.t[i], in->bytes, 0, in->nbytes);
        } else if (rc == SEER_OK) {
            unsigned char *s = malloc(in->nbytes);
            memset(s, OP_SENTINEL, in->nbytes);
            rc = backend_tensor_set(b.t[i], s, 0, in->nbytes);
            free(s);
        }
    }
    if (rc == SEER_OK)
        rc = r->run(r, c, &b, got);
    for (int i = 0; i < d->n_in; i++) {
        backend_buffer_free(buf[i]);
        free(b.t[i]);
    }
    return rc;
}

static const char *rc_text(int rc) { return rc == OP_EGAPS ? "wrote outside its output view" : seer_last_error(); }

/* got vs a double reference: relative L2 over all but the last n_exact values, which must be
   equal. Returns the error (INFINITY when the exact tail differs). */
static double err_ref(const struct op_data *d, const float *got, const double *want)
{
    size_t n = d->n_out - d->n_exact;
    double e = d->part ? fmax(rel_l2_d(got, want, d->part), rel_l2_d(got + d->part, want + d->part, n - d->part))
                       : rel_l2_d(got, want, n);
    for (size_t i = n; i < d->n_out; i++)
        if (got[i] != (float)want[i])
            return INFINITY;
    return e;
}

static double err_cpu(const struct op_data *d, const float *got, const float *cpu)
{
    size_t n = d->n_out - d->n_exact;
    double e = d->part ? fmax(rel_l2(got, cpu, d->part), rel_l2(got + d->part, cpu + d->part, n - d->part))
                       : rel_l2(got, cpu, n);
    return memcmp(got + n, cpu + n, d->n_exact * sizeof(float)) ? INFINITY : e;
}

/* The matmul row's measure (its header): the error against Σ|w||x| per output, where an f32 dot
   product's rounding lives, instead of against the sums, one of which may cancel to near zero
   (K = 2063, M = N = 1 summed to 0.0076 at seed 963657171, and f32's 5.9e-6 read 7.7e-4).
   Other rows: relative L2. want_f (a backend's f32) or want_d (the double reference). */
static double err_of(const struct op_data *d, const double *scale, const float *got, const float *want_f,
                     const double *want_d)
{
    if (scale)
        return err_scaled(got, want_f, want_d, scale, d->n_out);
    return want_f ? err_cpu(d, got, want_f) : err_ref(d, got, want_d);
}

static size_t bytes_differ(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != b[i];
    return bad;
}

/* Appends "name=value" for each of the space-separated names, or "{v0,v1,v2,v3}" after `tag`. */
static int describe_vals(char *out, size_t size, const char *names, const char *tag, const int64_t v[4])
{
    if (!names)
        return v[0] || v[1] || v[2] || v[3]
                   ? snprintf(out, size, " %s{%lld,%lld,%lld,%lld}", tag, (long long)v[0], (long long)v[1],
                              (long long)v[2], (long long)v[3])
                   : 0;
    int n = 0;
    for (int i = 0; i < 4 && *names; i++) {
        int len = (int)strcspn(names, " ");
        if (names[0] != '_') /* "_": unused */
            n += snprintf(out + n, size - (size_t)n, " %.*s=%lld", len, names, (long long)v[i]);
        names += len + (names[len] == ' ');
    }
    return n;
}

static void describe(const struct op_row *r, const struct op_case *c, char *what, size_t size)
{
    int n = snprintf(what, size, "%s", r->name);
    n += describe_vals(what + n, size - (size_t)n, r->ne_names, "", c->ne);
    n += describe_vals(what + n, size - (size_t)n, r->p_names, "p", c->p);
    if (c->type != DT_F32)
        n += snprintf(what + n, size - (size_t)n, " %s", dtype_name(c->type));
    if (c->s != 0)
        n += snprintf(what + n, size - (size_t)n, " s=%g", c->s);
    snprintf(what + n, size - (size_t)n, "%s%s%s%s", c->flags & OPC_STRIDED ? " strided" : "",
             c->flags & OPC_IN_PLACE ? " in place" : "", c->flags & OPC_ALT ? " alt" : "",
             c->flags & (OPC_SPLIT | OPC_SPLIT256) ? " split" : "");
}

static void run_case(const struct op_row *r, const struct op_case *c, bool first)
{
    char what[300];
    describe(r, c, what, sizeof what);
    struct op_data d = {0};
    r->make(r, c, &d);
    const bool l2 = r->cmp == OP_L2;
    const size_t gsz = l2 ? sizeof(float) : 1;
    void *want = calloc(d.n_out ? d.n_out : 1, l2 ? sizeof(double) : 1);
    void *cpu = calloc(d.n_out ? d.n_out : 1, gsz), *got = calloc(d.n_out ? d.n_out : 1, gsz);
    r->ref(r, c, &d, want);
    const double tol = c->tol ? c->tol : r->tol;
    double *scale = r == &row_matmul ? matmul_scale(c, &d, false) : NULL, *scale_q = NULL;
    const char *measure = scale ? "of Σ|w||x|" : "rel L2";
    t_charge(T_REF);

    int rc = run_on(cpu_be, r, c, &d, cpu);
    bool cpu_ok;
    if (rc != SEER_OK)
        cpu_ok = ok(0, "%s: cpu: %s", what, rc_text(rc));
    else if (l2)
        cpu_ok = ok(err_of(&d, scale, cpu, NULL, want) <= tol, "%s: cpu vs reference, %s %.2e <= %.0e%s", what,
                    measure, err_of(&d, scale, cpu, NULL, want), tol, d.n_exact ? " (state exact)" : "");
    else
        cpu_ok = ok(!memcmp(cpu, want, d.n_out), "%s: cpu equals the reference bit for bit (%zu of %zu bytes differ)",
                    what, bytes_differ(cpu, want, d.n_out), d.n_out);

    if (c->flags & OPC_THREADS) {
        int rc1 = run_on(cpu1_be, r, c, &d, got);
        bool same = rc1 == SEER_OK && !memcmp(got, cpu, d.n_out * gsz);
        int rc3 = run_on(cpu3_be, r, c, &d, got);
        same &= rc3 == SEER_OK && !memcmp(got, cpu, d.n_out * gsz);
        ok(same && cpu_ok, "%s: cpu on 1 and 3 threads gives the 2-thread bits", what);
    }
    if (c->flags & OPC_THREADS_REF) {
        int rc1 = run_on(cpu1_be, r, c, &d, got);
        double e1 = rc1 == SEER_OK ? err_of(&d, scale, got, NULL, want) : INFINITY;
        int rc3 = run_on(cpu3_be, r, c, &d, got);
        double e3 = rc3 == SEER_OK ? err_of(&d, scale, got, NULL, want) : INFINITY;
        ok(e1 <= tol && e3 <= tol, "%s: cpu on 1 and 3 threads vs reference, %s %.2e, %.2e <= %.0e", what, measure, e1,
           e3, tol);
    }
    t_charge(T_CPU);

    float *cpu_nx = NULL; /* the not-exact CPU's result, made for the first int-dot comparison */
    for (int v = 0; v < VK_CONFIGS; v++) {
        if (c->flags & OPC_CPU_ONLY)
            break;
        if ((c->flags & (OPC_SPLIT | OPC_SPLIT256)) != vk_config_cases[v] || !vk_config_takes(v, r, c))
            continue;
        if (vk_config_only[v] && !(c->flags & vk_config_only[v]) && !first)
            continue;
        if (!vk_be[v]) { /* once per row and configuration */
            if (!(vk_skip_said & 1u << v)) {
                char name[200];
                snprintf(name, sizeof name, "%s: every case on %s", r->name, vk_config_name[v]);
                skip(vk_missing ? vk_missing : "this Vulkan configuration could not be made", name);
            }
            vk_skip_said |= 1u << v;
            continue;
        }
        memset(got, 0, d.n_out * gsz);
        rc = run_on(vk_be[v], r, c, &d, got);
        if (rc != SEER_OK) {
            ok(0, "%s: %s: %s", what, vk_config_name[v], rc_text(rc));
        } else if (rounded_case(v, r, c)) {
            if (!scale_q)
                scale_q = matmul_scale(c, &d, true);
            const double ec = err_scaled(got, cpu, NULL, scale, d.n_out), er = err_scaled(got, NULL, want, scale, d.n_out);
            rounded_err_max[v] = fmax(rounded_err_max[v], ec);
            if (v == VK_FP16) {
                ok(cpu_ok && ec <= TOL_FP16 && er <= TOL_FP16, "%s: %s vs cpu %.2e, vs reference %.2e, <= %.0e of Σ|w||x|",
                   what, vk_config_name[v], ec, er, TOL_FP16);
            } else {
                if (!cpu_nx && (cpu_nx = calloc(d.n_out, sizeof(float))) && run_on(cpu_nx_be, r, c, &d, cpu_nx))
                    free(cpu_nx), cpu_nx = NULL;
                const double en = cpu_nx ? err_scaled(got, cpu_nx, NULL, scale, d.n_out) : INFINITY;
                const double eq = err_scaled(got, NULL, want, scale_q, d.n_out);
                ok(cpu_ok && en <= TOL_INT_DOT_CPU && eq <= TOL_INT_DOT_REF,
                   "%s: %s vs cpu not exact %.2e <= %.0e of Σ|w||x|, vs reference %.2e <= %.1e of Σ|w|·amax", what,
                   vk_config_name[v], en, TOL_INT_DOT_CPU, eq, TOL_INT_DOT_REF);
            }
        } else if (l2) {
            double ec = err_of(&d, scale, got, cpu, NULL), er = err_of(&d, scale, got, NULL, want);
            ok(cpu_ok && ec <= VK_TOL && er <= VK_TOL, "%s: %s vs cpu %.2e, vs reference %.2e, %s <= 1e-4", what,
               vk_config_name[v], ec, er, measure);
        } else {
            ok(cpu_ok && !memcmp(got, cpu, d.n_out), "%s: %s equals the cpu bit for bit (%zu of %zu bytes differ)",
               what, vk_config_name[v], bytes_differ(got, cpu, d.n_out), d.n_out);
        }
        t_charge(T_VK + v);
    }
    for (int i = 0; i < d.n_in; i++)
        free(d.in[i].bytes), free(d.in[i].val);
    free(d.aux);
    free(want), free(cpu), free(got), free(cpu_nx), free(scale), free(scale_q);
}

/* ---- the table ------------------------------------------------------------------------------ */

static const struct op_row *const *const tables[] = {
    elementwise_rows, norm_rows, rope_rows, matmul_rows, seq_rows,
};
static const size_t table_sizes[] = {
    ARRAY_LEN(elementwise_rows), ARRAY_LEN(norm_rows), ARRAY_LEN(rope_rows), ARRAY_LEN(matmul_rows),
    ARRAY_LEN(seq_rows),
};

#include "op_checks.h"

/* The row's shape macros expand to some cases more than once (a broadcast pattern that equals
   the full shape for a 1-row tensor, lists that overlap): those run once. */
static bool listed_before(const struct op_row *r, size_t k)
{
    for (size_t a = 0; a < k; a++)
        if (!memcmp(&r->cases[a], &r->cases[k], sizeof r->cases[k]))
            return true;
    return false;
}

/* Opens the Vulkan configurations; a missing device is a visible skip, or a failure under
   SEER_REQUIRE_VULKAN=1. */
static void open_vulkan(void)
{
#if SEER_HAVE_VULKAN
    static char why[1200];
    struct vk_backend_params p = vk_backend_params_default();
    p.enable_validation = true;
    if (backend_vulkan_create(&p, &vk_be[VK_DEFAULT]) != SEER_OK) {
        snprintf(why, sizeof why, "no Vulkan device on this machine (%s)", seer_last_error());
        vk_missing = why;
        vk_be[VK_DEFAULT] = NULL;
        if (vk_test_required())
            ok(0, "SEER_REQUIRE_VULKAN=1 but %s", why);
        return;
    }
    diag("%s", vk_be[VK_DEFAULT]->description);
    vk_be[VK_PLAIN] = vk_test_backend_with(0, true);
    p.max_shared_override = 16 << 10;
    if (!ok(backend_vulkan_create(&p, &vk_be[VK_SHARED16]) == SEER_OK, "vulkan backend with 16 KiB of shared memory"))
        vk_be[VK_SHARED16] = NULL;
    vk_be[VK_WINDOW] = vk_test_backend(32 << 10);
    vk_be[VK_WINDOW256] = vk_test_backend(256 << 10);
    /* the not-exact kernels, forced where the device supports but may not accelerate them: a
       device without the feature is a visible skip of those rows (the configuration is NULL) */
    p.max_shared_override = 0;
    for (int v = VK_INT_DOT; v <= VK_FP16; v++) {
        p.force_matvec = v == VK_INT_DOT        ? VK_MATVEC_INT_DOT
                         : v == VK_INT_DOT_WIDE ? VK_MATVEC_INT_DOT_WIDE
                                                : VK_MATVEC_FP16;
        if (backend_vulkan_create(&p, &vk_be[v]) == SEER_OK)
            backend_vulkan_set_exact(vk_be[v], false);
        else
            diag("%s: %s", vk_config_name[v], seer_last_error()), vk_be[v] = NULL;
    }
#else
    vk_missing = "built without Vulkan (SEER_VULKAN=OFF)";
#endif
}

int main(int argc, char **argv)
{
    plan_no_plan();
    test_seed();
    if (backend_cpu_create(2, &cpu_be) != SEER_OK || backend_cpu_create(1, &cpu1_be) != SEER_OK ||
        backend_cpu_create(3, &cpu3_be) != SEER_OK) {
        ok(0, "cpu backends: %s", seer_last_error());
        return done_testing();
    }
    if (backend_cpu_create(2, &cpu_nx_be) != SEER_OK) {
        ok(0, "cpu backend: %s", seer_last_error());
        return done_testing();
    }
    backend_cpu_set_exact(cpu_nx_be, false);
    open_vulkan();
    /* an argument runs only the rows whose name starts with it (for working on one op) */
    const char *only = argc > 1 ? argv[1] : NULL;
    for (size_t t = 0; t < ARRAY_LEN(tables); t++)
        for (size_t i = 0; i < table_sizes[t]; i++) {
            const struct op_row *r = tables[t][i];
            if (only && strncmp(r->name, only, strlen(only)))
                continue;
            memset(t_spent, 0, sizeof t_spent);
            memset(rounded_err_max, 0, sizeof rounded_err_max);
            t_mark = clock();
            size_t n = 0;
            vk_skip_said = 0;
            bool first = true; /* the row's first case for the default kernels, which the plain ones also run */
            for (size_t k = 0; k < r->n_cases; k++) {
                if (listed_before(r, k))
                    continue;
                run_case(r, &r->cases[k], first);
                first &= (r->cases[k].flags & (OPC_CPU_ONLY | OPC_SPLIT | OPC_SPLIT256)) != 0;
                n++;
            }
            diag("%s: %zu cases; CPU seconds: reference %.1f, cpu %.1f, vulkan %.1f, plain %.1f, 16 KiB shared %.1f, "
                 "windows %.1f, int-dot %.1f, int-dot wide %.1f, fp16 %.1f", r->name, n, t_spent[T_REF],
                 t_spent[T_CPU], t_spent[T_VK + VK_DEFAULT], t_spent[T_VK + VK_PLAIN], t_spent[T_VK + VK_SHARED16],
                 t_spent[T_VK + VK_WINDOW] + t_spent[T_VK + VK_WINDOW256], t_spent[T_VK + VK_INT_DOT],
                 t_spent[T_VK + VK_INT_DOT_WIDE], t_spent[T_VK + VK_FP16]);
            for (int v = VK_INT_DOT; v <= VK_FP16 && r == &row_matmul; v++)
                if (vk_be[v])
                    ok(rounded_err_max[v] > 1e-5, "%s: %s ran its rounded kernel (largest error vs the exact cpu "
                       "%.2e > 1e-5 of Σ|w||x|)", r->name, vk_config_name[v], rounded_err_max[v]);
        }
    if (!only)
        op_checks();
    if (!only && vk_be[VK_INT_DOT]) { /* there op_matmul_n rounds x once for its int-dot products */
        diag("op_matmul_n on the %s configuration:", vk_config_name[VK_INT_DOT]);
        check_matmul_n(vk_be[VK_INT_DOT]);
        check_int_dot_ties(vk_be[VK_INT_DOT], cpu_nx_be);
    }
    if (!only && vk_be[VK_INT_DOT_WIDE]) { /* the same, with its Q4_K products on the wide build */
        diag("op_matmul_n on the %s configuration:", vk_config_name[VK_INT_DOT_WIDE]);
        check_matmul_n(vk_be[VK_INT_DOT_WIDE]);
    }
#if SEER_HAVE_VULKAN
    for (int v = 0; v < VK_CONFIGS; v++)
        if (vk_be[v]) {
            vk_test_validation_check(vk_be[v], vk_config_name[v]);
            backend_free(vk_be[v]);
        }
#endif
    backend_free(cpu_be), backend_free(cpu1_be), backend_free(cpu3_be), backend_free(cpu_nx_be);
    return done_testing();
}
