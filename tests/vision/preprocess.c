/* Tests vision/preprocess.c against tests/reference/preprocess_ref.py (written from spec §4.1, §5.2,
   §5.3) and Debian's Pillow (python3-pil), the resizer HF's PIL backend calls:
   1. smart_resize and its video variant on a table of sizes (round-half-even ties, aspect 200 on both
      sides of the limit, 1×1 to 20000×20000, budget overrides, random sizes): equal integers;
   2. bicubic resize of random images (up, down, one axis only, extreme aspect ratios, 1-pixel sides):
      bytes equal Pillow's (the VIS_RESIZE_PILLOW option; tests/vision/resize.c checks the default,
      torchvision's, against the pinned torch);
   3. patchify + normalisation of 1–5 frames with random mean/std: within 1e-6 of the reference;
   4. the whole image path with Pillow's resize, including images that need no resize (never
      resampled: bit-identical);
   5. refused inputs: SEER_EINVAL and a message naming preprocess.c;
   6. the reference's own load_rgb (alpha over white, grey/palette modes, EXIF orientation), which
      the vision reference builds on (`preprocess_ref.py selftest`).
   Parts 1–4 need python3 with numpy and PIL: skipped visibly without them, failed when
   SEER_REQUIRE_ORACLES=1. Part 2's torchvision half runs the reference under $SEER_HF_PYTHON (the
   pinned venv of tests/reference/requirements-hf.txt; scripts/test.sh sets it), skipped visibly
   without it. Each part launches the reference once for all its cases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "seer.h"
#include "support/testutil.h"
#include "tap.h"
#include "vision/preprocess.h"

#define REF_PY "'" SEER_SOURCE_DIR "/tests/reference/preprocess_ref.py'"
#define REF "python3 " REF_PY
#define BAIL(...) (printf("Bail out! " __VA_ARGS__), printf("\n"), exit(2))

static const float half[3] = {0.5f, 0.5f, 0.5f};

static int64_t rand_in(int64_t lo, int64_t hi) { return lo + (int64_t)(test_rand_u64() % (uint64_t)(hi - lo + 1)); }
/* Log-uniform in [lo, hi]: small and large sizes equally often. */
static int64_t rand_log(int64_t lo, int64_t hi)
{
    const double v = exp(log((double)lo) + test_randf(0, 1) * (log((double)hi + 1) - log((double)lo)));
    return MIN(hi, MAX(lo, (int64_t)v));
}

/* A file in the test's private directory; the last four results stay valid. */
static const char *tmp_path(const char *fmt, int i)
{
    static char buf[4][600];
    static int k;
    char name[64];
    k = (k + 1) % 4;
    snprintf(name, sizeof name, fmt, i);
    snprintf(buf[k], sizeof buf[k], "%s/%s", test_tmp_dir(), name);
    return buf[k];
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        BAIL("cannot write %s", path);
}

static void *read_file(const char *path, size_t n)
{
    void *p = malloc(n ? n : 1);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(p, 1, n, f) : 0;
    if (f)
        fclose(f);
    if (!p || got != n)
        BAIL("cannot read %zu bytes of %s", n, path);
    return p;
}

static uint8_t *random_rgb(int32_t w, int32_t h)
{
    const size_t n = (size_t)w * h * 3;
    uint8_t *p = malloc(n);
    if (!p)
        BAIL("out of memory");
    /* half smooth gradients (where resampling is exercised gently), half noise (every lobe matters) */
    const bool noise = test_rand_u64() & 1;
    const int64_t base = rand_in(0, 255);
    for (size_t i = 0; i < n; i++)
        p[i] = noise ? (uint8_t)test_rand_u64() : (uint8_t)((base + (i / 3 % w) * 7 + (i / 3 / w) * 3 + i % 3 * 50) & 255);
    return p;
}

/* Runs the reference under `python` (NULL: Debian's python3, for Pillow); its stdout on success
   (caller frees), NULL after a diag on failure. */
static char *run_ref_in(const char *python, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s%s " REF_PY " %s", python ? "'" : "", python ? python : "python3",
             python ? "'" : "", args);
    struct test_run r = test_run_cmd(cmd);
    if (r.status != 0) {
        diag("%s failed (status %d): %.500s", cmd, r.status, r.err);
        test_run_free(&r);
        return NULL;
    }
    free(r.err);
    return r.out;
}

static char *run_ref(const char *args) { return run_ref_in(NULL, args); }

/* ---- 1. smart_resize ------------------------------------------------------------------------ */

struct size_case {
    char kind; /* 'i' image, 'v' video, 'c' capped video budget */
    int64_t n, h, w, f, lo, hi;
};

static struct size_case cases[4096];
static int n_cases;

static void add(char kind, int64_t n, int64_t h, int64_t w, int64_t f, int64_t lo, int64_t hi)
{
    if (n_cases < (int)ARRAY_LEN(cases))
        cases[n_cases++] = (struct size_case){kind, n, h, w, f, lo, hi};
}

/* The C answer in the reference's output format. */
static void c_answer(const struct size_case *c, char *out, size_t cap)
{
    int64_t a = 0, b = 0;
    int rc = c->kind == 'i'   ? vis_smart_resize(c->h, c->w, c->f, c->lo, c->hi, &a, &b)
             : c->kind == 'v' ? vis_smart_resize_video(c->n, c->h, c->w, c->f, c->lo, c->hi, &a, &b)
                              : vis_video_capped_max_pixels(c->n, c->f, c->lo, c->hi, &a);
    if (rc)
        snprintf(out, cap, "error");
    else if (c->kind == 'c')
        snprintf(out, cap, "%lld", (long long)a);
    else
        snprintf(out, cap, "%lld %lld", (long long)a, (long long)b);
}

static void test_sizes_hand(void)
{
    /* Worked by hand from spec §5.2 (independent of both implementations). */
    int64_t h, w;
    const int64_t big = (int64_t)1 << 40;
    ok(!vis_smart_resize(48, 80, 32, 1, big, &h, &w) && h == 64 && w == 64, "48x80: 1.5 and 2.5 round to even (64x64)");
    ok(!vis_smart_resize(112, 144, 32, 1, big, &h, &w) && h == 128 && w == 128, "112x144: 3.5 -> 4, 4.5 -> 4");
    ok(!vis_smart_resize(1, 1, 32, 65536, 16777216, &h, &w) && h == 256 && w == 256, "1x1 scales up to 256x256");
    ok(!vis_smart_resize(10, 10, 32, 65536, 16777216, &h, &w) && h == 256 && w == 256, "10x10 -> 256x256");
    ok(!vis_smart_resize(20000, 20000, 32, 65536, 16777216, &h, &w) && h == 4096 && w == 4096,
       "20000x20000 -> 4096x4096 (beta = 4.8828125)");
    ok(!vis_smart_resize(1, 200, 32, 65536, 16777216, &h, &w) && !vis_smart_resize(200, 1, 32, 65536, 16777216, &h, &w),
       "aspect ratio 200 accepted both ways");
    ok(vis_smart_resize(1, 201, 32, 65536, 16777216, &h, &w) == SEER_EINVAL &&
           vis_smart_resize(201, 1, 32, 65536, 16777216, &h, &w) == SEER_EINVAL,
       "aspect ratio 201 refused both ways");
    ok(!vis_smart_resize_video(5, 64, 64, 32, 1, 5 * 64 * 64 - 1, &h, &w) && h == 64 && w == 64,
       "video: 5 frames round to tb = 4 (2.5 -> 2), so 4*64*64 fits a 5*64*64-1 budget");
}

static void test_sizes_table(bool have_ref)
{
    const int64_t D_LO = VIS_IMAGE_MIN_PIXELS, D_HI = VIS_IMAGE_MAX_PIXELS;
    const int64_t V_LO = VIS_VIDEO_MIN_PIXELS, V_HI = VIS_VIDEO_MAX_PIXELS, BIG = (int64_t)1 << 40;
    /* .5 ties on either side, with and without the default budget */
    for (int64_t k = 0; k < 40; k++) {
        const int64_t tie = 32 * k + 16;
        add('i', 1, tie, 32 * (k % 7 + 1), 32, D_LO, D_HI);
        add('i', 1, 32 * (k % 5 + 1), tie, 32, 1, BIG);
        add('i', 1, tie, tie + 32, 32, 0, BIG);
        add('v', 2 + k % 9, tie, tie + 64, 32, V_LO, V_HI);
    }
    static const int64_t fixed[][2] = {
        {1, 1}, {10, 10}, {1, 200}, {200, 1}, {1, 201}, {201, 1}, {20000, 20000}, {100, 20000}, {20000, 100},
        {101, 20000}, {16384, 16384}, {4096, 4096}, {4097, 4096}, {256, 256}, {255, 257}, {31, 33}, {3, 600},
        {1080, 1920}, {1920, 1080}, {720, 1280}, {4032, 3024}, {12000, 9000}, {30000, 150}, {2, 2}};
    for (size_t i = 0; i < ARRAY_LEN(fixed); i++) {
        const int64_t h = fixed[i][0], w = fixed[i][1];
        add('i', 1, h, w, 32, D_LO, D_HI);
        add('i', 1, h, w, 32, 0, BIG);
        add('i', 1, h, w, 32, 256 * 256 * 4, 256 * 256 * 4); /* min = max */
        add('i', 1, h, w, 32, 4096, 128 * 128);
        add('i', 1, h, w, 28, 56 * 56, 28 * 28 * 1280); /* Qwen2-VL's factor and budget */
        for (int64_t n = 1; n <= 8; n++)
            add('v', n, h, w, 32, V_LO, V_HI);
        add('v', 768, h, w, 32, V_LO, V_HI);
        add('v', 97, h, w, 32, 128 * 32 * 32, 768 * 32 * 32);
    }
    for (int i = 0; i < 600; i++) {
        const int64_t h = rand_log(1, 30000), w = rand_log(1, 30000);
        const int64_t lo = rand_log(1, 1 << 20), hi = lo + rand_log(1, (int64_t)1 << 26);
        add('i', 1, h, w, 32, D_LO, D_HI);
        add('i', 1, h, w, 32, lo, hi);
        add('v', rand_log(2, 1000), h, w, 32, V_LO, V_HI);
        add('v', rand_log(1, 1000), h, w, rand_in(14, 64), lo, hi);
    }
    static const int64_t frames[] = {1, 2, 3, 4, 7, 100, 767, 768};
    for (size_t i = 0; i < ARRAY_LEN(frames); i++) {
        add('c', frames[i], 0, 0, 32, V_LO, V_HI);
        add('c', frames[i], 0, 0, 32, 128 * 32 * 32, 768 * 32 * 32);
    }
    for (int i = 0; i < 50; i++)
        add('c', rand_log(1, 768), 0, 0, 32, rand_log(1, 1 << 20), ((int64_t)1 << 20) + rand_log(1, 1 << 26));
    if (!have_ref) {
        skip("python3 with numpy and PIL not available", "smart_resize table equals the Python reference");
        return;
    }
    char table[600];
    snprintf(table, sizeof table, "%s", tmp_path("sizes.txt", 0));
    FILE *f = fopen(table, "w");
    if (!f)
        BAIL("cannot write %s", table);
    for (int i = 0; i < n_cases; i++) {
        const struct size_case *c = &cases[i];
        if (c->kind == 'i')
            fprintf(f, "image %lld %lld %lld %lld %lld\n", (long long)c->h, (long long)c->w, (long long)c->f,
                    (long long)c->lo, (long long)c->hi);
        else if (c->kind == 'v')
            fprintf(f, "video %lld %lld %lld %lld %lld %lld\n", (long long)c->n, (long long)c->h, (long long)c->w,
                    (long long)c->f, (long long)c->lo, (long long)c->hi);
        else
            fprintf(f, "cap %lld %lld %lld %lld\n", (long long)c->n, (long long)c->f, (long long)c->lo,
                    (long long)c->hi);
    }
    fclose(f);
    char args[700];
    snprintf(args, sizeof args, "sizes < '%s'", table);
    char *out = run_ref(args);
    int bad = 0, errors = 0, lines = 0;
    for (char *line = out, *next; line && *line && lines < n_cases; line = next, lines++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char mine[64];
        c_answer(&cases[lines], mine, sizeof mine);
        errors += !strcmp(mine, "error");
        if (strcmp(mine, line) && bad++ < 5) {
            const struct size_case *c = &cases[lines];
            diag("%c n=%lld %lldx%lld f=%lld [%lld, %lld]: seer '%s', reference '%s'", c->kind, (long long)c->n,
                 (long long)c->h, (long long)c->w, (long long)c->f, (long long)c->lo, (long long)c->hi, mine, line);
        }
    }
    ok(out && lines == n_cases && bad == 0,
       "smart_resize: %d image/video/cap cases (%d refused) equal the Python reference exactly", lines, errors);
    free(out);
}

/* ---- 2. bicubic resize ---------------------------------------------------------------------- */

/* Random images resized by `kind` against the reference run under `python` (Pillow's resize under
   Debian's python3; torchvision's under the pinned HF venv), or a visible skip when it cannot run. */
static void test_resize(bool have_ref, const char *python, enum vis_resize kind)
{
    const char *whose = kind == VIS_RESIZE_PILLOW ? "Pillow" : "torchvision";
    static const int32_t fixed[][4] = {
        {1, 1, 5, 7},      {1, 1, 1, 3},     {7, 1, 3, 1},      {1, 9, 1, 4},      {3000, 1, 13, 1},
        {1, 3000, 1, 17},  {400, 2, 64, 32}, {2, 400, 32, 64},  {640, 480, 224, 160}, {33, 17, 64, 64},
        {100, 100, 37, 61}, {64, 64, 64, 32}, {64, 64, 32, 64}, {5, 5, 200, 3},    {1021, 769, 512, 384},
        {37, 23, 1024, 640}, {256, 1, 32, 32}, {1, 256, 32, 32}, {999, 998, 1000, 997}, {17, 300, 4, 900},
        {2016, 1512, 1024, 768}, {640, 360, 1792, 1024}, /* photo-sized down and up */
        {1000, 40, 1024, 32}, {40, 1000, 32, 1024}, {1000, 40, 2240, 96}}; /* 25:1, smart_resize's sizes */
    enum { N_RANDOM = 40 };
    const int n = (int)ARRAY_LEN(fixed) + N_RANDOM;
    int32_t sz[ARRAY_LEN(fixed) + N_RANDOM][4];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 4; j++)
            sz[i][j] = i < (int)ARRAY_LEN(fixed) ? fixed[i][j] : (int32_t)rand_log(1, 300);
    for (int i = n - N_RANDOM / 4; i < n; i++) { /* the sizes the image path picks for random images */
        int64_t rh, rw;
        if (!vis_smart_resize(sz[i][1], sz[i][0], VIS_FACTOR, VIS_IMAGE_MIN_PIXELS, 1 << 20, &rh, &rw))
            sz[i][2] = (int32_t)rw, sz[i][3] = (int32_t)rh; /* else (aspect above 200) the random size */
    }
    for (int i = 0; i < n && kind == VIS_RESIZE_TORCHVISION; i++)
        if (sz[i][2] == 1 && sz[i][3] == 1) /* torch 2.14 asserts on a 1×1 uint8 output (never HF's) */
            sz[i][2] = 2;

    /* Equal sizes: a copy, no resampling (Pillow returns im.copy(), torch output.copy_(input)). */
    uint8_t *a = random_rgb(45, 29), *b = malloc(45 * 29 * 3);
    ok(b && !vis_resize_bicubic_rgb8(a, 45, 29, b, 45, 29, kind) && !memcmp(a, b, 45 * 29 * 3),
       "%s: resize to the same size copies the bytes unchanged", whose);
    free(a);
    free(b);
    if (!have_ref) {
        skip(kind == VIS_RESIZE_PILLOW ? "python3 with numpy and PIL not available"
                                       : "SEER_HF_PYTHON (the pinned torch and torchvision) not set",
             kind == VIS_RESIZE_PILLOW ? "bicubic resize equals Pillow" : "bicubic resize equals torchvision");
        return;
    }
    uint8_t *src[ARRAY_LEN(fixed) + N_RANDOM];
    char list[600];
    snprintf(list, sizeof list, "%s", tmp_path("resize.txt", 0));
    FILE *f = fopen(list, "w");
    if (!f)
        BAIL("cannot write %s", list);
    for (int i = 0; i < n; i++) {
        src[i] = random_rgb(sz[i][0], sz[i][1]);
        write_file(tmp_path("rin%d.rgb", i), src[i], (size_t)sz[i][0] * sz[i][1] * 3);
        fprintf(f, "%s %d %d %d %d %s\n", tmp_path("rin%d.rgb", i), sz[i][0], sz[i][1], sz[i][2], sz[i][3],
                tmp_path("rout%d.rgb", i));
    }
    fclose(f);
    char args[700];
    snprintf(args, sizeof args, "%s '%s'", kind == VIS_RESIZE_PILLOW ? "resize" : "resize-torchvision", list);
    char *out = run_ref_in(python, args);
    int max_diff = 0, worst = -1, failed = 0;
    size_t n_diff = 0, n_bytes = 0;
    for (int i = 0; i < n && out; i++) {
        const size_t nb = (size_t)sz[i][2] * sz[i][3] * 3;
        uint8_t *want = read_file(tmp_path("rout%d.rgb", i), nb), *got = malloc(nb);
        if (!got || vis_resize_bicubic_rgb8(src[i], sz[i][0], sz[i][1], got, sz[i][2], sz[i][3], kind)) {
            diag("resize %dx%d -> %dx%d failed: %s", sz[i][0], sz[i][1], sz[i][2], sz[i][3], seer_last_error());
            failed++;
        } else
            for (size_t j = 0; j < nb; j++) {
                const int d = abs((int)got[j] - (int)want[j]);
                n_diff += d != 0;
                if (d > max_diff)
                    max_diff = d, worst = i;
            }
        n_bytes += nb;
        free(want);
        free(got);
    }
    for (int i = 0; i < n; i++)
        free(src[i]);
    if (worst >= 0)
        diag("largest difference %d in %dx%d -> %dx%d", max_diff, sz[worst][0], sz[worst][1], sz[worst][2],
             sz[worst][3]);
    /* Tolerance 0: the arithmetic is the reference's own (integers after the same double weights). */
    ok(out && !failed && n_diff == 0, "bicubic resize of %d images: %zu of %zu bytes differ from %s (max %d; "
       "expect 0)", n, n_diff, n_bytes, whose, max_diff);
    free(out);
}

/* ---- 3. patchify ---------------------------------------------------------------------------- */

/* Compares n_rows × 1536 floats and the grid line "t gh gw" with ours; returns the max |difference|. */
static double compare_rows(const char *path, const float *got, const struct vis_grid *g, const char *grid_line,
                           bool *grid_ok)
{
    long long t, gh, gw;
    *grid_ok = grid_line && sscanf(grid_line, "%lld %lld %lld", &t, &gh, &gw) == 3 && t == g->t && gh == g->h &&
               gw == g->w;
    if (!*grid_ok)
        return INFINITY;
    const size_t n = (size_t)vis_grid_rows(g) * VIS_ROW_DIM;
    float *want = read_file(path, n * sizeof *want);
    const double d = max_abs_diff(got, want, n);
    free(want);
    return d;
}

static void test_patchify(bool have_ref)
{
    static const int32_t shapes[][3] = {{1, 32, 32}, {2, 64, 96}, {3, 96, 64}, {4, 32, 64}, {5, 64, 32}, {1, 160, 96}};
    enum { N = ARRAY_LEN(shapes) };
    if (!have_ref) {
        skip("python3 with numpy and PIL not available", "patchify equals the Python reference");
        return;
    }
    uint8_t *frames[N][5];
    float mean[N][3], std[N][3];
    char list[600];
    snprintf(list, sizeof list, "%s", tmp_path("patchify.txt", 0));
    FILE *f = fopen(list, "w");
    if (!f)
        BAIL("cannot write %s", list);
    for (int i = 0; i < N; i++) {
        const int nf = shapes[i][0], w = shapes[i][1], h = shapes[i][2];
        const size_t fb = (size_t)w * h * 3;
        uint8_t *all = malloc(fb * nf);
        if (!all)
            BAIL("out of memory");
        for (int k = 0; k < nf; k++) {
            frames[i][k] = random_rgb(w, h);
            memcpy(all + fb * k, frames[i][k], fb);
        }
        write_file(tmp_path("pin%d.rgb", i), all, fb * nf);
        free(all);
        for (int c = 0; c < 3; c++)
            mean[i][c] = test_randf(0.2f, 0.8f), std[i][c] = test_randf(0.1f, 0.9f);
        fprintf(f, "%s %d %d %d %.9g %.9g %.9g %.9g %.9g %.9g %s\n", tmp_path("pin%d.rgb", i), nf, w, h,
                (double)mean[i][0], (double)mean[i][1], (double)mean[i][2], (double)std[i][0], (double)std[i][1],
                (double)std[i][2], tmp_path("pout%d.f32", i));
    }
    fclose(f);
    char args[700];
    snprintf(args, sizeof args, "patchify '%s'", list);
    char *out = run_ref(args), *line = out;
    for (int i = 0; i < N; i++) {
        const int nf = shapes[i][0], w = shapes[i][1], h = shapes[i][2];
        struct vis_grid g;
        float *rows = NULL;
        bool grid_ok = false;
        double d = INFINITY;
        if (!vis_patch_grid(nf, w, h, &g) && (rows = malloc((size_t)vis_grid_rows(&g) * VIS_ROW_DIM * sizeof *rows)) &&
            !vis_patchify((const uint8_t *const *)frames[i], nf, w, h, mean[i], std[i], rows, &g) && line)
            d = compare_rows(tmp_path("pout%d.f32", i), rows, &g, line, &grid_ok);
        /* Tolerance 1e-6 absolute: the same f32 operations in the same order (normally 0). */
        ok(grid_ok && d <= 1e-6, "patchify %d frame(s) %dx%d: grid (%lld,%lld,%lld), max |diff| %.3g (<= 1e-6)", nf, w,
           h, (long long)g.t, (long long)g.h, (long long)g.w, d);
        if (line && (line = strchr(line, '\n')))
            line++;
        free(rows);
        for (int k = 0; k < nf; k++)
            free(frames[i][k]);
    }
    free(out);
}

/* ---- 4. the image path ---------------------------------------------------------------------- */

static void test_image(bool have_ref)
{
    static const int64_t shapes[][4] = { /* w, h, min_pixels, max_pixels */
        {50, 40, 65536, 16777216},   {64, 64, 65536, 16777216}, {256, 256, 65536, 16777216},
        {320, 224, 1, 1 << 30},      {300, 200, 1, 65536},      {1000, 30, 4096, 65536},
        {97, 3, 65536, 16777216},    {1, 150, 65536, 16777216}, {480, 640, 65536, 16777216},
        {77, 400, 16384, 131072}};
    enum { N = ARRAY_LEN(shapes) };
    uint8_t *img[N];
    for (int i = 0; i < N; i++)
        img[i] = random_rgb((int32_t)shapes[i][0], (int32_t)shapes[i][1]);

    /* An image already on the grid is patchified from its own bytes (no resampling): its rows equal
       vis_patchify of the original bit for bit. */
    for (int i = 2; i <= 3; i++) {
        const int32_t w = (int32_t)shapes[i][0], h = (int32_t)shapes[i][1];
        struct vis_grid g, g2;
        float *rows = NULL, *direct = NULL;
        const uint8_t *fr = img[i];
        int rc = vis_preprocess_image(img[i], w, h, shapes[i][2], shapes[i][3], VIS_RESIZE_PILLOW, half, half, &rows, &g);
        bool same = !rc && !vis_patch_grid(1, w, h, &g2) &&
                    (direct = malloc((size_t)vis_grid_rows(&g2) * VIS_ROW_DIM * sizeof *direct)) &&
                    !vis_patchify(&fr, 1, w, h, half, half, direct, &g2) && g.h == g2.h && g.w == g2.w &&
                    !memcmp(rows, direct, (size_t)vis_grid_rows(&g2) * VIS_ROW_DIM * sizeof *direct);
        ok(same, "%dx%d needs no resize: rows bit-identical to patchifying the original", w, h);
        free(rows);
        free(direct);
    }
    if (!have_ref) {
        skip("python3 with numpy and PIL not available", "image path equals the Python reference");
        for (int i = 0; i < N; i++)
            free(img[i]);
        return;
    }
    char list[600];
    snprintf(list, sizeof list, "%s", tmp_path("image.txt", 0));
    FILE *f = fopen(list, "w");
    if (!f)
        BAIL("cannot write %s", list);
    for (int i = 0; i < N; i++) {
        write_file(tmp_path("iin%d.rgb", i), img[i], (size_t)shapes[i][0] * shapes[i][1] * 3);
        fprintf(f, "%s %lld %lld %lld %lld %s\n", tmp_path("iin%d.rgb", i), (long long)shapes[i][0],
                (long long)shapes[i][1], (long long)shapes[i][2], (long long)shapes[i][3], tmp_path("iout%d.f32", i));
    }
    fclose(f);
    char args[700];
    snprintf(args, sizeof args, "image '%s'", list);
    char *out = run_ref(args), *line = out;
    for (int i = 0; i < N; i++) {
        const int32_t w = (int32_t)shapes[i][0], h = (int32_t)shapes[i][1];
        struct vis_grid g = {0};
        float *rows = NULL;
        bool grid_ok = false;
        double d = INFINITY;
        if (!vis_preprocess_image(img[i], w, h, shapes[i][2], shapes[i][3], VIS_RESIZE_PILLOW, half, half, &rows, &g) &&
            line)
            d = compare_rows(tmp_path("iout%d.f32", i), rows, &g, line, &grid_ok);
        /* Tolerance 1e-6 absolute: identical resized bytes, then the same f32 operations. */
        ok(grid_ok && d <= 1e-6, "image %dx%d [%lld, %lld] -> grid (%lld,%lld,%lld), %lld tokens, max |diff| %.3g (<= 1e-6)",
           w, h, (long long)shapes[i][2], (long long)shapes[i][3], (long long)g.t, (long long)g.h, (long long)g.w,
           (long long)vis_grid_tokens(&g), d);
        if (line && (line = strchr(line, '\n')))
            line++;
        free(rows);
        free(img[i]);
    }
    free(out);
}

/* ---- 5. refused inputs ---------------------------------------------------------------------- */

static void test_refused(void)
{
    int64_t h, w, p;
    uint8_t px[3 * 64 * 64] = {0};
    float rows[VIS_ROW_DIM * 4];
    struct vis_grid g;
    const uint8_t *fr = px;
    const float zero[3] = {0.5f, 0.0f, 0.5f};
#define REFUSED(call, what)                                                                                          \
    ok((call) == SEER_EINVAL && strstr(seer_last_error(), "preprocess.c"), "refused: %s (%s)", what, seer_last_error())
    REFUSED(vis_smart_resize(0, 10, 32, 1, 100, &h, &w), "zero height");
    REFUSED(vis_smart_resize(10, 10, 32, 200, 100, &h, &w), "min_pixels above max_pixels");
    REFUSED(vis_smart_resize(10, 10, 0, 1, 100, &h, &w), "factor 0");
    REFUSED(vis_smart_resize((int64_t)1 << 40, 1 << 30, 32, 1, 100, &h, &w), "a side above VIS_MAX_SIDE");
    REFUSED(vis_smart_resize_video(1, 64, 64, 32, 1, 1 << 20, &h, &w), "a one-frame video");
    REFUSED(vis_smart_resize_video(4, 1, 300, 32, 1, 1 << 20, &h, &w), "video aspect 300 after the upscale");
    REFUSED(vis_video_capped_max_pixels(0, 32, 4096, 1 << 20, &p), "capped budget for 0 frames");
    REFUSED(vis_resize_bicubic_rgb8(px, 0, 4, px, 4, 4, VIS_RESIZE_PILLOW), "resize from width 0");
    REFUSED(vis_resize_bicubic_rgb8(px, 4, 4, px + 48, 2, 2, (enum vis_resize)7), "an unknown resize kind");
    REFUSED(vis_patch_grid(1, 48, 64, &g), "patchify a 48-wide frame (not a multiple of 32)");
    REFUSED(vis_patch_grid(0, 64, 64, &g), "patchify no frames");
    REFUSED(vis_patchify(&fr, 1, 32, 32, half, zero, rows, &g), "std of 0");
#undef REFUSED
}

static bool req_oracles(void)
{
    const char *req = getenv("SEER_REQUIRE_ORACLES");
    return req && *req && strcmp(req, "0");
}

int main(void)
{
    plan_no_plan();
    test_seed();
    struct test_run r = test_run_cmd(REF " check");
    const bool have_ref = r.status == 0;
    test_run_free(&r);
    if (!have_ref) {
        diag("python3 with numpy and PIL (python3-numpy, python3-pil) not found: reference comparisons skipped");
        if (req_oracles())
            ok(0, "SEER_REQUIRE_ORACLES is set but the preprocessing reference cannot run");
    }
    test_sizes_hand();
    test_sizes_table(have_ref);
    test_resize(have_ref, NULL, VIS_RESIZE_PILLOW);
    /* torch and torchvision live in the pinned HF venv only (tests/reference/requirements-hf.txt) */
    const char *hf_python = getenv("SEER_HF_PYTHON");
    const bool have_tv = hf_python && *hf_python;
    if (!have_tv && req_oracles())
        ok(0, "SEER_REQUIRE_ORACLES is set but SEER_HF_PYTHON (torchvision's resize) is not");
    test_resize(have_tv, hf_python, VIS_RESIZE_TORCHVISION);
    test_patchify(have_ref);
    test_image(have_ref);
    test_refused();
    if (have_ref) {
        char *out = run_ref("selftest");
        ok(out != NULL, "preprocess_ref.py load_rgb: alpha over white, grey and palette to RGB, EXIF orientation");
        free(out);
    } else
        skip("python3 with numpy and PIL not available", "preprocess_ref.py load_rgb self-test");
    return done_testing();
}
