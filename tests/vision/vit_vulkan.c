/* Tests the vision tower and merger (vision/vit.c, vision/merger.c) on the Vulkan backend
   (lavapipe in CI) against the CPU backend, on tiny random towers (tests/reference/gen_tiny.py,
   fresh seed and pixels each run): the HF directory and the F16 mmproj, grids with two images of
   different sizes and a video (two segments), head dims 16 and 72; then once more through a
   16 KiB storage window, so the pixel rows, qkv and MLP buffers each span several windows.
   Shapes stay tiny: lavapipe is slow. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu/cpu.h"
#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "vision/vit.h"
#include "vulkan/vk_test.h"

#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"

/* Vulkan vs CPU merged embeddings: ≤ 1e-4 relative L2 (both f32 paths; summation order differs). */
#define TOL 1e-4

static const struct vis_grid grids[] = {{1, 4, 6}, {1, 2, 2}, {2, 2, 4}}; /* 24 + 4 + 16 patches */
#define N_PATCHES 44

/* Encodes the same pixels with the model at `path` on both backends and compares. */
static void compare(backend *cpu, backend *vk, const char *path, const char *label, const float *pix)
{
    vit_model *mc = NULL, *mv = NULL;
    int rc = vit_load(path, cpu, &mc);
    if (!ok(rc == SEER_OK, "%s: loads on cpu (%s)", label, rc ? seer_last_error() : "ok"))
        return;
    rc = vit_load(path, vk, &mv);
    if (ok(rc == SEER_OK, "%s: loads on vulkan (%s)", label, rc ? seer_last_error() : "ok")) {
        const size_t n = (size_t)(N_PATCHES / 4 * mc->cfg.out_dim);
        float *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
        rc = vit_encode(mc, pix, grids, (int)ARRAY_LEN(grids), a);
        ok(rc == SEER_OK, "%s: cpu encode (%s)", label, rc ? seer_last_error() : "ok");
        rc = vit_encode(mv, pix, grids, (int)ARRAY_LEN(grids), b);
        double e = rc ? INFINITY : rel_l2(b, a, n);
        ok(e <= TOL, "%s: %d images/videos, %d patches: vulkan vs cpu rel L2 %.2e (<= %.0e) %s", label,
           (int)ARRAY_LEN(grids), N_PATCHES, e, TOL, rc ? seer_last_error() : "");
        free(a), free(b);
    }
    vit_free(mv);
    vit_free(mc);
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    backend *vk, *cpu;
    int status;
    if (!vk_test_open(&vk, &cpu, &status))
        return status;
    float *pix = malloc(sizeof *pix * N_PATCHES * 1536);
    test_fill_uniform(pix, (size_t)N_PATCHES * 1536, -1.0f, 1.0f); /* normalised pixels, spec §5.1 */
    static const struct { const char *label, *vision; } towers[] = {{"hd16", NULL}, {"hd72", "hd72"}};
    char dir[2][600];
    for (size_t i = 0; i < ARRAY_LEN(towers); i++) {
        char cmd[2048], vis[64] = "", path[1300], label[100];
        snprintf(dir[i], sizeof dir[i], "%s/%s", test_tmp_dir(), towers[i].label);
        if (towers[i].vision)
            snprintf(vis, sizeof vis, "--vision %s", towers[i].vision);
        snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu %s >/dev/null",
                 test_src_path("tests/reference/gen_tiny.py"), dir[i], (unsigned long long)(seed + i), vis);
        if (!ok(system(cmd) == 0, "%s: generated", towers[i].label))
            continue;
        static const char *files[] = {"hf", "mmproj-f16.gguf"};
        for (size_t f = 0; f < ARRAY_LEN(files); f++) {
            snprintf(path, sizeof path, "%s/%s", dir[i], files[f]);
            snprintf(label, sizeof label, "%s %s", towers[i].label, files[f]);
            compare(cpu, vk, path, label, pix);
        }
    }
    vk_test_validation_check(vk, "vision tower");
    backend_free(vk);

    /* Every tensor of the call bigger than 16 KiB (pixel rows 270 KB, qkv 17 KB, …) is bound
       through several windows; K and V (5.6 KB each) fit one, as vk_attention requires. */
    if ((vk = vk_test_backend(16 << 10))) {
        char path[1300];
        snprintf(path, sizeof path, "%s/mmproj-f16.gguf", dir[0]);
        compare(cpu, vk, path, "hd16 mmproj-f16.gguf, 16 KiB window", pix);
        vk_test_validation_check(vk, "vision tower, 16 KiB window");
        backend_free(vk);
    }
    free(pix);
    backend_free(cpu);
    return done_testing();
}

#else
int main(void) { return plan_skip_all("built without Vulkan (SEER_VULKAN=OFF)"); }
#endif
