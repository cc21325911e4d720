/* Tests vision/vit.c, vision/merger.c and vision/load.c against the numpy reference
   (tests/reference/vision_ref.py, float64, written from spec §4 independently of the C code) on
   tiny random towers of the real architecture (tests/reference/gen_tiny.py), fresh seed and fresh
   pixel rows each run. Every source must give the reference's merged embeddings: the HF directory
   (bf16 safetensors) and the mmproj GGUFs in F32, F16 and BF16 — the tiny weights are bf16 values,
   exactly representable in all three — and Q8_0 (lossy: a looser bound, plus the same file's
   weights dequantised to F32 within f32 rounding). Grids: one image, two images of different
   sizes in one call, a video (t = 2, two segments), merged sizes 2×6 and 6×2, a 1×1 merged image,
   an image taller than the 48×48 position grid.
   Towers of head dim 16 (the presets), 64 and 72 (the real models'). Also: bad grids are refused,
   a text GGUF is not a tower, and the scratch plan of a 4096-token image of the 9B. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/quant.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "vision/vit.h"

/* Merged embeddings vs the float64 reference: relative L2 ≤ 1e-4 for the exact (f32 path) sources. */
#define TOL_REF 1e-4
/* Q8_0 mmproj vs the reference of the unquantised weights: Q8_0 rounds each weight to 1/254 of
   its block's largest magnitude, ~0.3 % relative noise per matrix; five matrices deep. */
#define TOL_Q8_REF 3e-2
/* Q8_0 mmproj vs the same file's weights dequantised to F32: the same products, except that the
   CPU's AVX-512 Q8_0 kernel rounds activations to int16 per 32-block (core/cpu/matmul_avx512.c,
   ~1.5e-5 relative per value); measured ≤ 6e-5. */
#define TOL_Q8_DEQ 2e-4
/* F16 and BF16 mmprojs on a backend that is not exact (seer's commands): on CPUs with AVX512-BF16 the
   products and attention round their operands to bf16 (≤ 2^-9 relative each, core/cpu/gemm_bf16.h),
   through every block; measured 3.0e-3 to 5.6e-3 on these towers (where the CPU has it) */
#define TOL_NOT_EXACT 1e-2

#define MAX_GRIDS 4

struct call {
    const char *what;
    int n;
    struct vis_grid g[MAX_GRIDS];
};

/* h, w in patches (multiples of 2): merged sizes h/2 × w/2 */
static const struct call calls[] = {
    {"one image 3x2 merged", 1, {{1, 6, 4}}},
    {"two images of different sizes", 2, {{1, 4, 4}, {1, 2, 6}}},
    {"video t=2 (two segments)", 1, {{2, 4, 2}}},
    {"2x6 and 6x2 merged, a 1x1 image, a video", 4, {{1, 4, 12}, {1, 12, 4}, {1, 2, 2}, {2, 2, 4}}},
    {"50 patch rows: the 48-row position table upsampled", 1, {{1, 50, 4}}},
};

static int64_t call_patches(const struct call *c)
{
    int64_t n = 0;
    for (int i = 0; i < c->n; i++)
        n += c->g[i].t * c->g[i].h * c->g[i].w;
    return n;
}

static float *read_file_f32(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *v = malloc((size_t)sz + 1);
    if (v && fread(v, 1, (size_t)sz, f) != (size_t)sz) {
        free(v);
        v = NULL;
    }
    fclose(f);
    *n = (size_t)sz / 4;
    return v;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        diag("command failed (%d): %s", rc, cmd);
    return rc;
}

/* The reference's output for these pixels, or NULL (a failed test says why). */
static float *reference(const char *hf, const struct call *c, const float *pix, int64_t N, size_t *n_out)
{
    char pix_path[600], out_path[600], grid[256] = "", cmd[2400];
    snprintf(pix_path, sizeof pix_path, "%s/pixels.f32", test_tmp_dir());
    snprintf(out_path, sizeof out_path, "%s/ref.f32", test_tmp_dir());
    FILE *f = fopen(pix_path, "wb");
    size_t wrote = f ? fwrite(pix, sizeof *pix, (size_t)N * 1536, f) : 0;
    if (f)
        fclose(f);
    if (!ok(wrote == (size_t)N * 1536, "pixels written to %s", pix_path))
        return NULL;
    for (int i = 0; i < c->n; i++)
        snprintf(grid + strlen(grid), sizeof grid - strlen(grid), "%s%lld,%lld,%lld", i ? ";" : "",
                 (long long)c->g[i].t, (long long)c->g[i].h, (long long)c->g[i].w);
    snprintf(cmd, sizeof cmd, "python3 %s tower --model %s --pixels %s --grid '%s' --out %s 2>>%s/reference.log",
             test_src_path("tests/reference/vision_ref.py"), hf, pix_path, grid, out_path, test_tmp_dir());
    if (!ok(run(cmd) == 0, "%s: reference ran", c->what))
        return NULL;
    return read_file_f32(out_path, n_out);
}

/* A copy of m's weights where every Q8_0 matrix is its F32 dequantisation (the "same file's
   values"): buffers of the copy are listed in `own` and freed by the caller. */
static int dequantised_copy(const vit_model *m, vit_model *cp, backend_buffer **own, int *n_own, int cap)
{
    *cp = *m;
    cp->blocks = malloc(sizeof *cp->blocks * (size_t)m->cfg.depth);
    memcpy(cp->blocks, m->blocks, sizeof *cp->blocks * (size_t)m->cfg.depth);
    tensor *mats[64];
    int n = 0;
    mats[n++] = &cp->merge_fc1_w, mats[n++] = &cp->merge_fc2_w;
    for (int64_t j = 0; j < m->cfg.depth && n + 4 <= (int)ARRAY_LEN(mats); j++) {
        mats[n++] = &cp->blocks[j].qkv_w, mats[n++] = &cp->blocks[j].proj_w;
        mats[n++] = &cp->blocks[j].fc1_w, mats[n++] = &cp->blocks[j].fc2_w;
    }
    int n_q8 = 0;
    for (int i = 0; i < n && *n_own < cap; i++) {
        tensor *t = mats[i];
        if (t->type != DT_Q8_0)
            continue;
        n_q8++;
        int64_t ne = tensor_nelements(t);
        size_t bytes = tensor_nbytes(t);
        char *raw = malloc(bytes);
        float *v = malloc(sizeof *v * (size_t)ne);
        backend_tensor_get(t, raw, 0, bytes);
        dequantize_row(DT_Q8_0, raw, v, ne);
        tensor f;
        tensor_init4(&f, DT_F32, t->ne[0], t->ne[1], 1, 1);
        if (backend_tensor_alloc(m->be, &f, &own[*n_own]) == SEER_OK) {
            (*n_own)++;
            backend_tensor_set(&f, v, 0, (size_t)ne * sizeof *v);
            *t = f;
        }
        free(raw);
        free(v);
    }
    return n_q8;
}

static void check_q8(backend *be, vit_model *m, const char *label, const struct call *c, const float *pix,
                     const float *ref, size_t n_out)
{
    float *got = calloc(n_out, sizeof *got), *deq = calloc(n_out, sizeof *deq);
    int rc = vit_encode(m, pix, c->g, c->n, got);
    double e = rc ? INFINITY : rel_l2(got, ref, n_out);
    ok(e <= TOL_Q8_REF, "%s: %s: rel L2 %.2e vs the reference of the unquantised weights (<= %.0e) %s", label,
       c->what, e, TOL_Q8_REF, rc ? seer_last_error() : "");
    vit_model cp;
    backend_buffer *own[64];
    int n_own = 0;
    int n_q8 = dequantised_copy(m, &cp, own, &n_own, (int)ARRAY_LEN(own));
    ok(n_q8 > 0, "%s: %d Q8_0 matrices in the file", label, n_q8);
    rc = vit_encode(&cp, pix, c->g, c->n, deq);
    e = rc ? INFINITY : rel_l2(got, deq, n_out);
    ok(e <= TOL_Q8_DEQ, "%s: %s: rel L2 %.2e vs the same file's weights dequantised to F32 (<= %.0e) %s", label,
       c->what, e, TOL_Q8_DEQ, rc ? seer_last_error() : "");
    for (int i = 0; i < n_own; i++)
        backend_buffer_free(own[i]);
    free(cp.blocks);
    free(got), free(deq);
    (void)be;
}

/* Every source of one generated model against the reference, for every call. */
static void check_model(backend *be, const char *dir, const char *label, const struct call *cs, size_t n_calls)
{
    static const char *files[] = {"hf", "mmproj-f32.gguf", "mmproj-f16.gguf", "mmproj-bf16.gguf", "mmproj-q8_0.gguf"};
    vit_model *models[ARRAY_LEN(files)] = {0};
    char hf[700], path[700];
    snprintf(hf, sizeof hf, "%s/hf", dir);
    for (size_t s = 0; s < ARRAY_LEN(files); s++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[s]);
        int rc = vit_load(path, be, &models[s]);
        ok(rc == SEER_OK, "%s %s: loads (%s)", label, files[s], rc ? seer_last_error() : "ok");
    }
    if (models[0])
        diag("%s: Dv %lld, %lld heads of %lld, MLP %lld, output %lld", label, (long long)models[0]->cfg.n_embd,
             (long long)models[0]->cfg.n_head, (long long)vit_head_dim(&models[0]->cfg),
             (long long)models[0]->cfg.n_ff, (long long)models[0]->cfg.out_dim);
    for (size_t k = 0; k < n_calls; k++) {
        const struct call *c = &cs[k];
        const int64_t N = call_patches(c);
        float *pix = malloc(sizeof *pix * (size_t)N * 1536);
        /* normalised pixels ((p/255 − 0.5)/0.5, spec §5.1) lie in [−1, 1] */
        test_fill_uniform(pix, (size_t)N * 1536, -1.0f, 1.0f);
        size_t n_ref = 0;
        float *ref = reference(hf, c, pix, N, &n_ref);
        const size_t n_out = models[0] ? (size_t)(N / 4 * models[0]->cfg.out_dim) : 0;
        if (ref && !ok(n_ref == n_out, "%s: %s: reference has %zu values (expected %zu)", label, c->what, n_ref,
                       n_out)) {
            free(ref);
            ref = NULL;
        }
        for (size_t s = 0; ref && s < ARRAY_LEN(files); s++) {
            if (!models[s])
                continue;
            char lab[300];
            snprintf(lab, sizeof lab, "%s %s", label, files[s]);
            if (strstr(files[s], "q8_0")) {
                check_q8(be, models[s], lab, c, pix, ref, n_out);
                continue;
            }
            float *got = calloc(n_out, sizeof *got);
            int rc = vit_encode(models[s], pix, c->g, c->n, got);
            double e = rc ? INFINITY : rel_l2(got, ref, n_out);
            ok(e <= TOL_REF, "%s: %s (%lld patches): rel L2 %.2e vs reference (<= %.0e) %s", lab, c->what,
               (long long)N, e, TOL_REF, rc ? seer_last_error() : "");
            if (strstr(files[s], "f16")) { /* f16 and bf16: the 16-bit files the not-exact path takes */
                backend_cpu_set_exact(be, false);
                rc = vit_encode(models[s], pix, c->g, c->n, got);
                backend_cpu_set_exact(be, true);
                e = rc ? INFINITY : rel_l2(got, ref, n_out);
                ok(e <= TOL_NOT_EXACT, "%s: %s, not exact: rel L2 %.2e vs reference (<= %.0e) %s", lab, c->what, e,
                   TOL_NOT_EXACT, rc ? seer_last_error() : "");
            }
            free(got);
        }
        free(ref);
        free(pix);
    }
    for (size_t s = 0; s < ARRAY_LEN(files); s++)
        vit_free(models[s]);
}

/* Grids vit_encode must refuse, and files vit_load must refuse. */
static void check_refusals(backend *be, const char *dir)
{
    char path[700];
    vit_model *m = NULL;
    snprintf(path, sizeof path, "%s/model-f32.gguf", dir);
    int rc = vit_load(path, be, &m);
    ok(rc != SEER_OK && m == NULL, "a text GGUF is not a vision tower: %s", seer_last_error());
    snprintf(path, sizeof path, "%s/mmproj-f16.gguf", dir);
    rc = vit_load(path, be, &m);
    if (!ok(rc == SEER_OK, "mmproj loads (%s)", rc ? seer_last_error() : "ok"))
        return;
    float pix[4 * 1536] = {0}, out[64];
    static const struct { const char *why; struct vis_grid g; } bad[] = {
        {"odd height", {1, 3, 2}}, {"odd width", {1, 2, 1}}, {"t = 0", {0, 2, 2}},
        {"negative side", {1, -2, 2}}, {"side past the limit", {1, 2, VIT_MAX_DIM + 2}},
        {"more than 2^31 patches", {1 << 20, 1 << 10, 1 << 10}},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        rc = vit_encode(m, pix, &bad[i].g, 1, out);
        ok(rc == SEER_EINVAL, "grid with %s refused: %s", bad[i].why, seer_last_error());
    }
    ok(vit_encode(m, pix, &bad[0].g, 0, out) == SEER_EINVAL, "no grids refused: %s",
       seer_last_error());
    vit_free(m);
}

/* The scratch plan of a 4096-token image (64×64 merged, 16384 patches) on the 9B's tower (spec
   §1.1: Dv 1152, Iv 4304, 16 heads, output 4096): finite and a few hundred MiB, growing linearly;
   an impossible count overflows to SIZE_MAX instead of wrapping. */
static void check_plan(void)
{
    struct vit_config c = {.depth = 27, .n_embd = 1152, .n_head = 16, .n_ff = 4304, .out_dim = 4096,
                           .patch_size = 16, .temporal_patch_size = 2, .merge_size = 2, .in_channels = 3,
                           .n_pos = 2304};
    size_t one = vit_scratch_bytes(&c, 16384, 256), two = vit_scratch_bytes(&c, 32768, 256);
    ok(one > ((size_t)16384 * 1152 * 4 * 5) && one < ((size_t)1 << 30), "4096-token image: %.0f MiB of scratch",
       (double)one / (1 << 20));
    ok(two - 256 * 11 == 2 * (one - 256 * 11), "scratch grows linearly with the patches");
    ok(vit_scratch_bytes(&c, INT64_MAX / 2, 256) == SIZE_MAX, "an overflowing patch count gives SIZE_MAX");
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    backend *be;
    if (backend_cpu_create(2, &be) != SEER_OK)
        return ok(0, "cpu backend: %s", seer_last_error()), done_testing();
    static const struct { const char *label, *vision; size_t n_calls; } towers[] = {
        {"hd16", NULL, ARRAY_LEN(calls)},  /* the preset's own tower: every grid */
        {"hd64", "hd64", 2},               /* the real head dims: one image, two images */
        {"hd72", "hd72", 2},
    };
    for (size_t i = 0; i < ARRAY_LEN(towers); i++) {
        char dir[600], cmd[2048], vis[64] = "";
        snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), towers[i].label);
        if (towers[i].vision)
            snprintf(vis, sizeof vis, "--vision %s", towers[i].vision);
        snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu %s --mmproj-types f32,f16,bf16,q8_0 "
                 ">/dev/null", test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)(seed + i), vis);
        if (!ok(run(cmd) == 0, "%s: generated", towers[i].label))
            continue;
        check_model(be, dir, towers[i].label, calls, towers[i].n_calls);
        if (i == 0)
            check_refusals(be, dir);
    }
    check_plan();
    backend_free(be);
    return done_testing();
}
