/* ops_bench.c — the vision tower's CPU kernels alone (docs/PERFORMANCE.md, "Vision tower"): op_linear
   at the four product shapes of a tower block (qkv, proj, fc1, fc2 of the 0.8B shape: width 768, MLP
   3072) with F16 weights, and op_attention over one image's patches (12 heads of 64), for N patches
   (default 3072: a 1024x768 image), in GFLOP/s, the best of --reps after one warm-up. A change to
   core/cpu/ is measured by building this before and after and running the two alternately (the
   shared machine's load moves every figure by 10-30 %). The backend is not exact, as seer's commands
   run it, unless --exact. --vulkan runs the same ops on the Vulkan backend (the auto device; each
   timed op ends with backend_sync), to see where a device's tower time goes; --plain is --vulkan
   with vk_backend_params.plain_kernels (the tiled product where a CPU device takes the
   matrix-vector kernel). --decode times instead the text model's decode product alone: one
   activation row against a 1024-wide matrix of each quantised type, of -n MiB (default 256: far
   beyond the caches, as a decode step's weights are; 1 fits in L2 and gives the kernel's own
   rate), in GB/s of weights read, the best of --reps, and as a share of the read loop `seer bench`
   takes as its ceiling (tools/bench/bench_membw.c, the same threads, measured just before each
   type, as the machine's rate moves from minute to minute); the CPU backend lays the matrices out
   as it does a model's (cpu.c cpu_weight_prepare). Built on request:
   cmake --build build --target ops_bench.
     ops_bench [-t THREADS] [-n PATCHES] [--reps R] [--exact] [--vulkan | --plain]
     ops_bench --decode [-t THREADS] [-n MIB] [--reps R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_ops.h"
#include "core/cpu/cpu.h"
#include "core/fp16.h"
#include "core/quant.h"
#include "core/ops.h"
#include "core/tensor.h"
#include "core/util.h"
#include "seer.h"
#include "tools/bench/bench.h"
#if SEER_HAVE_VULKAN
#include "vulkan/vulkan.h"
#endif

/* xorshift: fixed inputs, so runs compare */
static uint32_t rng = 2463534242u;
static float frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    return (float)(rng >> 8) / 16777216.0f - 0.5f;
}

static int alloc(backend *be, tensor *t, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2,
                 backend_buffer **buf)
{
    tensor_init4(t, type, ne0, ne1, ne2, 1);
    return backend_tensor_alloc(be, t, buf);
}

/* random values, through backend_tensor_set (a device's memory may not be mapped) */
static int fill(tensor *t)
{
    const int64_t n = tensor_nelements(t);
    const size_t bytes = tensor_nbytes(t);
    void *h = malloc(bytes);
    if (!h)
        return SEER_ENOMEM;
    if (t->type == DT_F16)
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)h)[i] = f32_to_f16(0.1f * frand());
    else if (t->type == DT_I32)
        memset(h, 0, bytes); /* segment ids: one image, every patch sees every patch */
    else
        for (int64_t i = 0; i < n; i++)
            ((float *)h)[i] = frand();
    const int rc = backend_tensor_set(t, h, 0, bytes);
    free(h);
    return rc;
}

/* best: the least seconds of `reps` runs of `call`, each ended by backend_sync, after one untimed
   warm-up run */
#define TIME_BEST(be, reps, best, call)                                                                              \
    do {                                                                                                           \
        (best) = 1e30;                                                                                             \
        for (int r_ = 0; r_ <= (reps); r_++) {                                                                     \
            const double t0_ = seer_time_now();                                                                    \
            call;                                                                                                  \
            backend_sync(be);                                                                                      \
            if (r_ > 0)                                                                                            \
                (best) = MIN((best), seer_time_now() - t0_);                                                       \
        }                                                                                                          \
    } while (0)

/* --decode: y = W·x for one x, W {1024, M} of type t, M rows to make mib MiB or more. The rows are
   256 distinct quantised rows repeated: the bytes read are the point, not their values. */
static int decode_products(backend *be, int threads, int64_t mib, int reps)
{
    static const enum dtype types[] = {DT_Q8_0, DT_Q4_K, DT_Q5_K, DT_Q6_K};
    const int64_t K = 1024, distinct = 256;
    printf("type\trows\tMiB\tseconds (best of %d)\tGB/s\tread loop GB/s\tshare\n", reps);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum dtype t = types[ti];
        size_t rb;
        dtype_row_bytes(t, K, &rb);
        const int64_t M = ((mib << 20) / (int64_t)rb + 255) / 256 * 256;
        tensor w, x, o;
        backend_buffer *b[3];
        char *rows = malloc(rb * (size_t)distinct), *all = malloc(rb * (size_t)M);
        float *f = malloc(sizeof(float) * (size_t)K);
        if (!rows || !all || !f || alloc(be, &w, t, K, M, 1, &b[0]) || alloc(be, &x, DT_F32, K, 1, 1, &b[1]) ||
            alloc(be, &o, DT_F32, M, 1, 1, &b[2]) || fill(&x)) {
            fprintf(stderr, "ops_bench: %s\n", seer_last_error());
            return 1;
        }
        for (int64_t r = 0; r < distinct; r++) {
            for (int64_t k = 0; k < K; k++)
                f[k] = frand();
            quantize_row(t, f, rows + (size_t)r * rb, K);
        }
        for (int64_t r = 0; r < M; r++)
            memcpy(all + (size_t)r * rb, rows + (size_t)(r % distinct) * rb, rb);
        if (backend_tensor_set(&w, all, 0, rb * (size_t)M) || backend_weight_prepare(&w)) {
            fprintf(stderr, "ops_bench: %s\n", seer_last_error());
            return 1;
        }
        double best;
        const double read = bench_read_bandwidth(threads, (size_t)256 << 20, 5);
        TIME_BEST(be, reps, best, op_matmul(be, &o, &w, &x));
        const double bytes = (double)rb * (double)M;
        printf("%s\t%lld\t%.0f\t%.5f\t%.1f\t%.1f\t%.0f %%\n", dtype_name(t), (long long)M, bytes / 1048576.0, best,
               bytes / best / 1e9, read / 1e9, read > 0 ? 100.0 * bytes / best / read : 0.0);
        free(rows), free(all), free(f);
        for (int i = 0; i < 3; i++)
            backend_buffer_free(b[i]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 2, reps = 3;
    bool exact = false, vulkan = false, plain = false, decode = false, bad = false;
    int64_t N = 3072;
    bool n_given = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--exact"))
            exact = true;
        else if (!strcmp(argv[i], "--vulkan"))
            vulkan = true;
        else if (!strcmp(argv[i], "--decode"))
            decode = true;
        else if (!strcmp(argv[i], "--plain"))
            vulkan = plain = true;
        else if (i + 1 < argc && !strcmp(argv[i], "-t"))
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-n"))
            N = atoll(argv[++i]), n_given = true;
        else if (i + 1 < argc && !strcmp(argv[i], "--reps"))
            reps = atoi(argv[++i]);
        else
            bad = true;
    }
    if (bad || threads < 1 || reps < 1 || N < 1 || (decode && vulkan)) {
        fprintf(stderr,
                "usage: ops_bench [-t THREADS] [-n PATCHES] [--reps R] [--exact] [--vulkan | --plain]\n"
                "       ops_bench --decode [-t THREADS] [-n MIB] [--reps R]\n");
        return 2;
    }
    backend *be;
#if SEER_HAVE_VULKAN
    struct vk_backend_params vp = vk_backend_params_default();
    vp.plain_kernels = plain;
    const int made = vulkan ? backend_vulkan_create(&vp, &be) : backend_cpu_create(threads, &be);
#else
    const int made = vulkan ? seer_err(SEER_EUNSUPPORTED, "built without Vulkan") : backend_cpu_create(threads, &be);
#endif
    if (made != SEER_OK) {
        fprintf(stderr, "ops_bench: %s\n", seer_last_error());
        return 1;
    }
    backend_cpu_set_exact(be, exact);
    backend_vulkan_set_exact(be, exact);
    if (decode) {
        const int rc = decode_products(be, threads, n_given ? N : 256, reps);
        backend_free(be);
        return rc;
    }
    static const struct { const char *name; int64_t K, M; } mm[] = {
        {"qkv", 768, 2304}, {"proj", 768, 768}, {"fc1", 768, 3072}, {"fc2", 3072, 768},
    };
    printf("op\tshape\t%s %d%s\tseconds (best of %d)\tGFLOP/s\n", vulkan ? backend_name(be) : "threads", threads,
           exact ? " exact" : "", reps);
    double all_s = 0, all_gf = 0;
    for (size_t s = 0; s < sizeof mm / sizeof mm[0]; s++) {
        tensor w, x, o;
        backend_buffer *b[3];
        if (alloc(be, &w, DT_F16, mm[s].K, mm[s].M, 1, &b[0]) || alloc(be, &x, DT_F32, mm[s].K, N, 1, &b[1]) ||
            alloc(be, &o, DT_F32, mm[s].M, N, 1, &b[2]) || fill(&w) || fill(&x)) {
            fprintf(stderr, "ops_bench: %s\n", seer_last_error());
            return 1;
        }
        double best; /* op_linear as vision/vit.c calls it */
        TIME_BEST(be, reps, best, op_linear(be, &o, &w, &x, &(struct linear_epilogue){.bf16 = true}));
        const double gf = 2.0 * (double)mm[s].K * (double)mm[s].M * (double)N / 1e9;
        all_s += best, all_gf += gf;
        printf("matmul %s\tK %lld M %lld N %lld\t\t%.4f\t%.1f\n", mm[s].name, (long long)mm[s].K, (long long)mm[s].M,
               (long long)N, best, gf / best);
        for (int i = 0; i < 3; i++)
            backend_buffer_free(b[i]);
    }
    printf("matmul all\t\t\t%.4f\t%.1f\n", all_s, all_gf / all_s);

    const int64_t hd = 64, nh = 12;
    tensor q, k, v, o, seg;
    backend_buffer *b[5];
    if (alloc(be, &q, DT_F32, hd, nh, N, &b[0]) || alloc(be, &k, DT_F32, hd, nh, N, &b[1]) ||
        alloc(be, &v, DT_F32, hd, nh, N, &b[2]) || alloc(be, &o, DT_F32, hd, nh, N, &b[3]) ||
        alloc(be, &seg, DT_I32, N, 1, 1, &b[4]) || fill(&q) || fill(&k) || fill(&v) || fill(&seg)) {
        fprintf(stderr, "ops_bench: %s\n", seer_last_error());
        return 1;
    }
    const struct attn_mask mask = {.kind = ATTN_SEGMENTS, .seg = &seg, .bf16 = true};
    double best;
    TIME_BEST(be, reps, best, op_attention(be, &o, &q, &k, &v, 0.125f, &mask));
    const double gf = 4.0 * (double)N * (double)N * (double)(hd * nh) / 1e9;
    printf("attention\thd %lld heads %lld N %lld\t%.4f\t%.1f\n", (long long)hd, (long long)nh, (long long)N, best,
           gf / best);
    for (int i = 0; i < 5; i++)
        backend_buffer_free(b[i]);
    backend_free(be);
    return 0;
}
