/* testutil.c — see testutil.h. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "support/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cpu/cpu.h"
#include "core/util.h"
#include "seer.h"
#include "tap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

bool test_cpu_pair(backend **one, backend **three)
{
    *one = *three = NULL;
    if (backend_cpu_create(1, one) == SEER_OK && backend_cpu_create(3, three) == SEER_OK)
        return true;
    ok(0, "CPU backends of 1 and 3 threads: %s", seer_last_error());
    backend_free(*one);
    return false;
}

uint64_t test_seed(void)
{
    const char *env = getenv("SEER_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 10);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
        seed %= 1000000007ull;
    }
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    tap_seed = (long long)seed;
    diag("seed %llu (replay with SEER_TEST_SEED=%llu)", (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

uint64_t test_rand_u64(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float test_randf(float lo, float hi) { return lo + (hi - lo) * (float)((test_rand_u64() >> 40) * (1.0 / 16777216.0)); }

double test_randn(void)
{
    double u1 = ((test_rand_u64() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (test_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void test_fill_uniform(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = test_randf(lo, hi);
}

void test_fill_normal(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(test_randn() * scale);
}

double rel_l2(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    if (den == 0)
        return num == 0 ? 0 : INFINITY;
    return sqrt(num / den);
}

double rel_l2_d(const float *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    if (den == 0)
        return num == 0 ? 0 : INFINITY;
    return sqrt(num / den);
}

double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || isnan(d))
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

void softmax_d(const float *x, double *p, int64_t n)
{
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, (double)x[i]);
    for (int64_t i = 0; i < n; i++)
        s += p[i] = exp((double)x[i] - m);
    for (int64_t i = 0; i < n; i++)
        p[i] /= s;
}

void top2_d(const double *p, int64_t n, double *p1, double *p2)
{
    double a = -1, b = -1;
    for (int64_t i = 0; i < n; i++) {
        if (p[i] > a)
            b = a, a = p[i];
        else if (p[i] > b)
            b = p[i];
    }
    *p1 = a, *p2 = b;
}

tensor *test_tensor(backend *be, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                    const float *data)
{
    tensor *t = calloc(1, sizeof *t);
    backend_buffer *buf;
    if (!t || !tensor_init4(t, type, ne0, ne1, ne2, ne3)) {
        fprintf(stderr, "test_tensor: bad shape\n");
        exit(2);
    }
    snprintf(t->name, sizeof t->name, "test_%s", dtype_name(type));
    if (backend_tensor_alloc(be, t, &buf) != SEER_OK) {
        fprintf(stderr, "test_tensor: %s\n", seer_last_error());
        exit(2);
    }
    if (data && backend_tensor_set_f32(t, data) != SEER_OK) {
        fprintf(stderr, "test_tensor: %s\n", seer_last_error());
        exit(2);
    }
    return t;
}

float *test_tensor_read(const tensor *t)
{
    float *x = malloc((size_t)tensor_nelements(t) * sizeof *x);
    if (!x || backend_sync(t->buf->be) != SEER_OK || backend_tensor_get_f32(t, x) != SEER_OK) {
        fprintf(stderr, "test_tensor_read: %s\n", seer_last_error());
        exit(2);
    }
    return x;
}

void test_tensor_free(tensor *t)
{
    if (!t)
        return;
    backend_buffer_free(t->buf);
    free(t);
}

const char *test_src_path(const char *rel)
{
    static char buf[4096];
    /* SEER_TEST_SOURCE_DIR: test programs copied to another machine (scripts/gpu-bundle.sh) find the
       scripts they run (tests/reference/gen_tiny.py) in the bundle, not at this build's source path */
    const char *root = getenv("SEER_TEST_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root && *root ? root : SEER_SOURCE_DIR, rel);
    return buf;
}

static char tmp_dir[256];

static void remove_tmp_dir(void)
{
    char cmd[300];
    if (tmp_dir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "# could not remove %s\n", tmp_dir);
    }
}

const char *test_tmp_dir(void)
{
    if (!tmp_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/seer-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmp_dir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(remove_tmp_dir);
    }
    return tmp_dir;
}

/* test_slurp, with the byte count in *len. */
static char *slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0', *len = (size_t)n;
    fclose(f);
    return s;
}

char *test_slurp(const char *path)
{
    size_t len;
    return slurp_len(path, &len);
}

struct test_run test_run_cmd(const char *cmdline)
{
    char cmd[8192], out[512], err[512];
    struct test_run r = {-1, NULL, NULL, 0};
    snprintf(out, sizeof out, "%s/run.stdout", test_tmp_dir());
    snprintf(err, sizeof err, "%s/run.stderr", test_tmp_dir());
    snprintf(cmd, sizeof cmd, "%s >'%s' 2>'%s'", cmdline, out, err);
    int st = system(cmd);
    r.status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp_len(out, &r.out_len);
    r.err = test_slurp(err);
    if (!r.out || !r.err) {
        fprintf(stderr, "test_run_cmd: cannot read captured output\n");
        exit(2);
    }
    return r;
}

struct test_run test_seer(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s/seer' %s", SEER_BINARY_DIR, args);
    return test_run_cmd(cmd);
}

void test_run_free(struct test_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int test_count_lines(const char *s)
{
    size_t len = strlen(s);
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n + (len && s[len - 1] != '\n');
}

double test_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

seer_generate_params test_greedy(int64_t n)
{
    seer_generate_params p = seer_generate_params_default();
    p.sampling.temperature = 0;
    p.sampling.presence_penalty = 0;
    p.max_tokens = n;
    return p;
}
