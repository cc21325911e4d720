/* bench_membw.c — this machine's memory read bandwidth, and the decode ceiling it sets (issue 22
   item 4, docs/PERFORMANCE.md). Decoding one token reads every weight the step uses once (the
   token embedding only for one row) and the Gated DeltaNet layers' recurrent state twice (read,
   then written back): a step cannot be faster than those bytes over the bandwidth, so the ratio of a
   measured tg rate to that ceiling says how far decode is from the memory roofline. */
#include <errno.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/tensor.h"
#include "lm/qwen35.h"
#include "core/util.h"
#include "tools/bench/bench.h"

struct reader {
    const uint8_t *p;
    size_t n;
    uint64_t sum; /* kept, so the loads are not optimised away */
};

/* 4 independent 256-bit accumulators: enough loads in flight to reach DRAM's rate from one core */
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint8_t *p, size_t n)
{
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (size_t i = 0; i + 128 <= n; i += 128) {
        a = _mm256_xor_si256(a, _mm256_load_si256((const __m256i *)(p + i)));
        b = _mm256_xor_si256(b, _mm256_load_si256((const __m256i *)(p + i + 32)));
        c = _mm256_xor_si256(c, _mm256_load_si256((const __m256i *)(p + i + 64)));
        d = _mm256_xor_si256(d, _mm256_load_si256((const __m256i *)(p + i + 96)));
    }
    a = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
    return (uint64_t)_mm256_extract_epi64(a, 0) ^ (uint64_t)_mm256_extract_epi64(a, 3);
}

static uint64_t read_sse2(const uint8_t *p, size_t n)
{
    __m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        a = _mm_xor_si128(a, _mm_load_si128((const __m128i *)(p + i)));
        b = _mm_xor_si128(b, _mm_load_si128((const __m128i *)(p + i + 16)));
        c = _mm_xor_si128(c, _mm_load_si128((const __m128i *)(p + i + 32)));
        d = _mm_xor_si128(d, _mm_load_si128((const __m128i *)(p + i + 48)));
    }
    a = _mm_xor_si128(_mm_xor_si128(a, b), _mm_xor_si128(c, d));
    return (uint64_t)_mm_cvtsi128_si64(a);
}

static void *reader_run(void *arg)
{
    struct reader *r = arg;
    r->sum = __builtin_cpu_supports("avx2") ? read_avx2(r->p, r->n) : read_sse2(r->p, r->n);
    return NULL;
}

/* bench_read_bandwidth's reads, in this process */
static double read_bandwidth_here(int threads, size_t bytes, int reps)
{
    enum { MAX_READERS = 256 };
    threads = threads < 1 ? 1 : threads > MAX_READERS ? MAX_READERS : threads;
    /* in 2 MiB pages where the system gives them, as the CPU backend holds the weights (seer_large_alloc):
       in 4 KiB pages one thread read 27 GB/s where it read 31.6 in large ones, and decode, reading the
       weights, then beat its "ceiling" (docs/PERFORMANCE.md, "Decode products: one stream per thread") */
    uint8_t *buf = seer_large_alloc(bytes);
    if (!buf)
        return 0;
    memset(buf, 1, bytes); /* backed by real pages, not the shared zero page */
    const size_t chunk = bytes / (size_t)threads / 128 * 128;
    struct reader rd[MAX_READERS];
    pthread_t th[MAX_READERS];
    double best = 0;
    for (int rep = 0; rep < reps; rep++) {
        const double t0 = seer_time_now();
        /* threads 1..started-1 run: creation stops at the first failure, so only those are joined */
        int started = 1;
        for (int t = 0; t < threads; t++)
            rd[t] = (struct reader){.p = buf + (size_t)t * chunk, .n = chunk};
        while (started < threads && pthread_create(&th[started], NULL, reader_run, &rd[started]) == 0)
            started++;
        reader_run(&rd[0]);
        for (int t = 1; t < started; t++)
            pthread_join(th[t], NULL);
        const double dt = seer_time_now() - t0, rate = (double)chunk * started / dt;
        best = rate > best ? rate : best; /* the best of several: the machine is shared */
    }
    seer_large_free(buf, bytes);
    return best;
}

double bench_read_bandwidth(int threads, size_t bytes, int reps)
{
    /* In a child process, so that the buffer never counts in the caller's peak resident memory,
       which seer bench prints as the model's: read here, a decode test's figure had 256 MiB more
       than a prefill's on the same model. The child shares the parent's pages until it writes. */
    int fd[2];
    if (pipe(fd))
        return 0;
    const pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        close(fd[0]);
        const double rate = read_bandwidth_here(threads, bytes, reps);
        _exit(write(fd[1], &rate, sizeof rate) == (ssize_t)sizeof rate ? 0 : 1);
    }
    close(fd[1]);
    double rate = 0;
    if (read(fd[0], &rate, sizeof rate) != (ssize_t)sizeof rate)
        rate = 0; /* the child failed: no figure rather than a wrong one */
    close(fd[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return rate;
}

uint64_t bench_decode_bytes(const qwen35_model *m, const qwen35_state *st, uint64_t file_bytes, int64_t kv_tokens)
{
    uint64_t bytes = file_bytes;
    if (m->output != &m->tok_embd) /* untied: the embedding is read one row per token */
        bytes -= MIN(bytes, (uint64_t)tensor_nbytes(&m->tok_embd));
    for (int64_t l = 0; l < m->cfg.n_layer; l++)
        if (!m->layers[l].is_attn)
            bytes += 2 * ((uint64_t)tensor_nbytes(&st->ssm_state[l]) + (uint64_t)tensor_nbytes(&st->conv_state[l]));
        else /* nb[2]: one token's row of every kv head */
            bytes += (uint64_t)kv_tokens * (uint64_t)(st->k_cache[l].nb[2] + st->v_cache[l].nb[2]);
    return bytes;
}
