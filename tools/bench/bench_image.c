/* bench_image.c — `seer bench --image WxH`: how long one image takes through the vision path, by
   stage — preprocessing (spec §5.2 resize + normalise + patchify) and encoding (the tower and
   merger, spec §4) — and the tower's speed in merged tokens per second.
     seer bench --image 1024x768 [--image WxH …] (-m MMPROJ|HF_DIR | --preset 0.8b [--dtype T])
                [--device D] [-t N] [--reps N] [--exact] [--json]
   The tower runs as seer's commands run it (not exact: bf16 products where the CPU has them)
   unless --exact. The image is random noise of that size (preprocessing costs the same for any content); sizes
   that smart_resize changes are resized, as a user's photo would be. --preset writes a random
   mmproj of a released tower shape (vision/randmodel.h) to a temporary file first. Each size is
   encoded once to warm up, then --reps times; the median is reported. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/device.h"
#include "cli/gen.h"
#include "core/cpu/cpu.h"
#include "core/error.h"
#include "core/util.h"
#include "vision/preprocess.h"
#include "vision/randmodel.h"
#include "vision/vit.h"
#include "tools/bench/bench.h"
#include "vulkan/vulkan.h"

#define MAX_SIZES 16

struct img_opts {
    const char *model, *preset, *device;
    enum dtype dtype;
    int threads, reps;
    bool json, exact;
    int32_t w[MAX_SIZES], h[MAX_SIZES];
    int n_sizes;
};

struct img_result {
    int32_t w, h, rw, rh;
    int64_t patches, tokens;
    double pre_s, enc_s; /* medians */
};

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { BI_IMAGE, BI_MODEL, BI_PRESET, BI_DTYPE, BI_DEVICE, BI_THREADS, BI_REPS, BI_EXACT, BI_JSON, BI_HELP };
static const struct cli_opt image_opts[] = {
    {{"--image"}, "WxH", "an image size to time (1..65536 each; repeat for more, at most 16)", BI_IMAGE},
    {{"-m", "--mmproj"}, "MMPROJ|HF_DIR", "the vision tower: an mmproj GGUF or a Hugging Face directory", BI_MODEL},
    {{"--preset"}, "SIZE", "a random tower of a released size instead (0.8b, 2b, 4b, 9b)", BI_PRESET},
    {{"--dtype"}, "T", "its weights: f32, f16 (default), bf16 or q8_0", BI_DTYPE},
    {{"--device"}, "D", "auto (default; or $SEER_DEVICE), cpu, vulkan or vulkan:N", BI_DEVICE},
    {{"-t"}, "N", "CPU threads (default: all online CPUs)", BI_THREADS},
    {{"--reps"}, "N", "timed encodes per size, the median reported (default 3)", BI_REPS},
    {{"--exact"}, NULL, "f32 activations in every product, the reference path (default: as seer's commands)",
     BI_EXACT},
    {{"--json"}, NULL, "one JSON object instead of the table", BI_JSON},
    {{"-h", "--help"}, NULL, "this help", BI_HELP},
};
#define N_IMAGE_OPTS (sizeof image_opts / sizeof image_opts[0])

static int parse(int argc, char **argv, struct img_opts *o)
{
    *o = (struct img_opts){.device = cli_default_device(), .dtype = DT_F16, .reps = 3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        const struct cli_opt *opt = cli_opt_find(image_opts, N_IMAGE_OPTS, argc, argv, &i, &v);
        char *end;
        if (!opt || (opt->arg && !v)) {
            fprintf(stderr, "seer bench --image: unknown or incomplete option '%s'\n", a);
            return CLI_USAGE;
        }
        switch (opt->key) {
        case BI_IMAGE: {
            long w = strtol(v, &end, 10), h = *end == 'x' ? strtol(end + 1, &end, 10) : 0;
            if (*end || w < 1 || h < 1 || w > 65536 || h > 65536 || o->n_sizes == MAX_SIZES) {
                fprintf(stderr, "seer bench: --image needs WxH (1..65536 each, at most %d sizes), got '%s'\n",
                        MAX_SIZES, v);
                return CLI_USAGE;
            }
            o->w[o->n_sizes] = (int32_t)w, o->h[o->n_sizes++] = (int32_t)h;
            break;
        }
        case BI_MODEL: o->model = v; break;
        case BI_PRESET: o->preset = v; break;
        case BI_DEVICE: o->device = v; break;
        case BI_DTYPE:
            o->dtype = !strcmp(v, "f32") ? DT_F32 : !strcmp(v, "f16") ? DT_F16 : !strcmp(v, "bf16") ? DT_BF16
                       : !strcmp(v, "q8_0") ? DT_Q8_0 : DT_COUNT;
            if (o->dtype == DT_COUNT) {
                fprintf(stderr, "seer bench: --dtype for a vision tower is f32, f16, bf16 or q8_0, got '%s'\n", v);
                return CLI_USAGE;
            }
            break;
        case BI_THREADS:
        case BI_REPS: {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1024) {
                fprintf(stderr, "seer bench: %s needs a number in [1, 1024], got '%s'\n", a, v);
                return CLI_USAGE;
            }
            *(opt->key == BI_THREADS ? &o->threads : &o->reps) = (int)n;
            break;
        }
        case BI_EXACT: o->exact = true; break;
        case BI_JSON: o->json = true; break;
        default:
            printf("usage: seer bench --image WxH [--image WxH ...] (-m MMPROJ|HF_DIR | --preset 0.8b|2b|4b|9b "
                   "[--dtype f32|f16|bf16|q8_0])\n"
                   "                  [--device D] [-t N] [--reps N] [--exact] [--json]\n"
                   "  preprocessing and encoding time per image size, and the tower's tokens/s\n");
            cli_opt_help(stdout, image_opts, N_IMAGE_OPTS);
            return CLI_OK;
        }
    }
    if (!o->n_sizes || !!o->model == !!o->preset) {
        fprintf(stderr, "seer bench: --image WxH needs exactly one of -m MMPROJ|HF_DIR and --preset SIZE\n");
        return CLI_USAGE;
    }
    struct randvit_shape s;
    if (o->preset && randvit_preset(o->preset, &s))
        return fprintf(stderr, "seer bench: %s\n", seer_last_error()), CLI_USAGE;
    return -1;
}

/* Times one size: preprocess + encode, reps times after one warm-up. */
static int run_size(vit_model *vm, const struct img_opts *o, int k, struct img_result *r)
{
    const struct vit_config *vc = vit_model_config(vm);
    const size_t n_px = (size_t)o->w[k] * (size_t)o->h[k] * 3;
    uint8_t *rgb = seer_malloc(n_px);
    double *pre = seer_calloc((size_t)o->reps, sizeof *pre), *enc = seer_calloc((size_t)o->reps, sizeof *enc);
    float *rows = NULL, *out = NULL;
    struct vis_grid g;
    int rc = SEER_OK;
    if (!rgb || !pre || !enc)
        rc = seer_err(SEER_ENOMEM, "no memory for a %dx%d image", o->w[k], o->h[k]);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n_px && !rc; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rgb[i] = (uint8_t)x;
    }
    for (int rep = -1; rep < o->reps && !rc; rep++) {
        const double t0 = seer_time_now();
        rc = vis_preprocess_image(rgb, o->w[k], o->h[k], VIS_IMAGE_MIN_PIXELS, VIS_IMAGE_MAX_PIXELS,
                                  VIS_RESIZE_TORCHVISION, vc->image_mean, vc->image_std, &rows, &g);
        const double t1 = seer_time_now();
        if (!rc && !out && !(out = seer_malloc((size_t)vis_grid_tokens(&g) * (size_t)vc->out_dim * sizeof *out)))
            rc = seer_err(SEER_ENOMEM, "no memory for the embeddings");
        if (!rc)
            rc = vit_encode(vm, rows, &g, 1, out);
        const double t2 = seer_time_now();
        seer_freep(&rows);
        if (rep >= 0)
            pre[rep] = t1 - t0, enc[rep] = t2 - t1;
    }
    if (!rc)
        *r = (struct img_result){o->w[k], o->h[k], (int32_t)(g.w * VIS_PATCH), (int32_t)(g.h * VIS_PATCH),
                                 vis_grid_rows(&g), vis_grid_tokens(&g), median(pre, o->reps), median(enc, o->reps)};
    free(rgb), free(pre), free(enc), free(out);
    return rc;
}

static void report(const struct img_opts *o, const vit_model *vm, backend *be, const struct img_result *r, int n)
{
    const struct vit_config *vc = vit_model_config(vm);
    if (!o->json) {
        printf("tower: %lld blocks, width %lld, %lld heads, output %lld; %s%s\n", (long long)vc->depth,
               (long long)vc->n_embd, (long long)vc->n_head, (long long)vc->out_dim, be->description,
               o->exact ? ", exact" : "");
        printf("%-11s %-11s %8s %7s %12s %10s %12s\n", "image", "resized", "patches", "tokens", "preprocess s",
               "encode s", "tower tok/s");
        for (int k = 0; k < n; k++) {
            char a[32], b[32];
            snprintf(a, sizeof a, "%dx%d", r[k].w, r[k].h);
            snprintf(b, sizeof b, "%dx%d", r[k].rw, r[k].rh);
            printf("%-11s %-11s %8lld %7lld %12.3f %10.3f %12.1f\n", a, b, (long long)r[k].patches,
                   (long long)r[k].tokens, r[k].pre_s, r[k].enc_s, (double)r[k].tokens / r[k].enc_s);
        }
        return;
    }
    json_t *arr = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(arr, json_pack("{s:i, s:i, s:i, s:i, s:I, s:I, s:f, s:f, s:f}", "width", r[k].w,
                                             "height", r[k].h, "resized_width", r[k].rw, "resized_height", r[k].rh,
                                             "patches", (json_int_t)r[k].patches, "tokens", (json_int_t)r[k].tokens,
                                             "preprocess_seconds", r[k].pre_s, "encode_seconds", r[k].enc_s,
                                             "tower_tokens_per_s", (double)r[k].tokens / r[k].enc_s));
    json_t *j = json_pack("{s:s, s:b, s:I, s:I, s:o}", "device", be->description, "exact", o->exact, "depth",
                          (json_int_t)vc->depth, "width", (json_int_t)vc->n_embd, "images", arr);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (s)
        printf("%s\n", s);
    free(s);
    json_decref(j);
}

int cli_bench_image(int argc, char **argv)
{
    struct img_opts o;
    int status = parse(argc, argv, &o);
    if (status >= 0)
        return status;
    char dir[] = "/tmp/seer-bench-XXXXXX", path[4096];
    bool made_dir = false;
    backend *be = NULL;
    vit_model *vm = NULL;
    struct img_result res[MAX_SIZES];
    int rc = SEER_OK;
    if (o.preset) {
        struct randvit_shape s;
        randvit_preset(o.preset, &s);
        if (!mkdtemp(dir))
            rc = seer_err(SEER_EIO, "cannot make a temporary directory: %s", strerror(errno));
        made_dir = rc == SEER_OK;
        snprintf(path, sizeof path, "%s/mmproj-%s-%s.gguf", dir, o.preset, dtype_name(o.dtype));
        if (!rc) {
            fprintf(stderr, "seer bench: writing a random %s vision tower (%s) to %s\n", o.preset,
                    dtype_name(o.dtype), path);
            rc = randvit_write(path, &s, o.dtype, 42, o.threads ? o.threads : (int)MAX(1, sysconf(_SC_NPROCESSORS_ONLN)));
        }
    } else
        snprintf(path, sizeof path, "%s", o.model);
    if (!rc)
        rc = backend_open(o.device, o.threads, &be);
    if (!rc) {
        backend_cpu_set_exact(be, o.exact);
        backend_vulkan_set_exact(be, o.exact);
        rc = vit_load(path, be, &vm);
    }
    for (int k = 0; k < o.n_sizes && !rc; k++)
        rc = run_size(vm, &o, k, &res[k]);
    if (!rc)
        report(&o, vm, be, res, o.n_sizes);
    vit_free(vm);
    backend_free(be);
    if (made_dir) {
        unlink(path);
        rmdir(dir);
    }
    return rc ? cli_fail(rc) : CLI_OK;
}
