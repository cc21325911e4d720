/* testutil.h — shared helpers for seer's TAP programs: a seeded RNG (fresh seed each run, printed
   so a failure can be replayed with SEER_TEST_SEED=N), relative L2 error, and making tensors on a
   backend from f32 data. */
#ifndef SEER_TESTS_TESTUTIL_H
#define SEER_TESTS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "seer.h"

/* Greedy decoding of at most n tokens without the presence penalty: the same tokens every run,
   the params the API tests compare runs with. */
seer_generate_params test_greedy(int64_t n);

/* Seeds the RNG from SEER_TEST_SEED or the clock, prints "# seed N", returns the seed. */
uint64_t test_seed(void);
uint64_t test_rand_u64(void);
/* Uniform in [lo, hi). */
float test_randf(float lo, float hi);
/* Standard normal. */
double test_randn(void);
void test_fill_uniform(float *x, size_t n, float lo, float hi);
void test_fill_normal(float *x, size_t n, float scale);

/* ||a − b||₂ / ||b||₂ in double (b is the reference); 0 when both are zero. */
double rel_l2(const float *a, const float *b, size_t n);
double rel_l2_d(const float *a, const double *b, size_t n);
/* CPU seconds this process has used: for tests that compare the cost of a large input with a small
   one (linear vs quadratic), which wall time on a loaded machine cannot decide. */
double test_cpu_seconds(void);
/* Largest |a − b|. */
double max_abs_diff(const float *a, const float *b, size_t n);
/* Softmax of n logits in double (as the oracles' scripts compute probabilities), into p. */
void softmax_d(const float *x, double *p, int64_t n);
/* The two largest of n probabilities: the near-tie rules (a greedy pick may differ from the
   reference's where the reference's top two are within a tolerance). */
void top2_d(const double *p, int64_t n, double *p1, double *p2);

/* Makes a contiguous tensor of `type` with shape ne0..ne3 on be (its own buffer, freed with
   test_tensor_free) and fills it from f32 data (converted/quantised), when data != NULL. */
tensor *test_tensor(backend *be, enum dtype type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                    const float *data);
/* A CPU backend of 1 thread and one of 3, for checks that the thread count changes no bit; false
   (a failed test says why) when either cannot be made. */
bool test_cpu_pair(backend **one, backend **three);
/* Reads the tensor back as f32 into a new malloc'ed array (after syncing its backend). */
float *test_tensor_read(const tensor *t);
void test_tensor_free(tensor *t);

/* Path helpers: SEER_SOURCE_DIR (or $SEER_TEST_SOURCE_DIR) / SEER_BINARY_DIR; return a static buffer. */
const char *test_src_path(const char *rel);
const char *test_tmp_dir(void); /* a fresh private directory, removed at exit */

/* Runs a shell command line with stdout and stderr captured (files in test_tmp_dir()). */
struct test_run {
    int status; /* exit status, −1 when killed by a signal */
    char *out, *err;
    size_t out_len; /* bytes on stdout: a random model may print a NUL byte, which ends `out` early */
};
struct test_run test_run_cmd(const char *cmdline);
/* Runs SEER_BINARY_DIR/seer with `args` (a shell-quoted argument string). */
struct test_run test_seer(const char *args);
void test_run_free(struct test_run *r);
/* Reads a whole file into a NUL-terminated malloc'ed string, or NULL. */
char *test_slurp(const char *path);
/* Number of lines in s (a last line without '\n' counts). */
int test_count_lines(const char *s);

#endif
