/* rope.c — CPU rotary position embeddings (core/ops.h): the text decoder's partial interleaved
   MRoPE (spec §3.3) and the vision tower's 2-D axial RoPE (spec §4.4). Both rotate "rotate-half"
   pairs (i, i + half) by an angle pos_axis(i) · inv_freq(i), so one kernel applies both; they
   differ only in the per-pair tables (which position axis, which frequency) built here. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/cpu/cpu_internal.h"
#include "core/error.h"
#include "core/util.h"


struct rope_ctx {
    tensor *out;
    const tensor *x;       /* {hd, n_head, T} */
    const int32_t *pos;    /* pos[a*T + t]: position of token t on axis a */
    const float *freq;     /* {half}: inv_freq of pair i */
    const int *axis;       /* {half}: position axis of pair i */
    int64_t half;          /* rotated pairs per head: (i, i + half), i < half */
};

static void rope_worker(void *p, int ith, int nth)
{
    const struct rope_ctx *c = p;
    const tensor *x = c->x, *out = c->out;
    int64_t hd = x->ne[0], n_head = x->ne[1], T = x->ne[2], half = c->half;
    bool in_place = out->data == x->data;
    long long lo, hi;
    threadpool_range(T, ith, nth, &lo, &hi);
    for (int64_t t = lo; t < hi; t++) {
        const char *xt = (const char *)x->data + t * x->nb[2];
        char *yt = (char *)out->data + t * out->nb[2];
        for (int64_t i = 0; i < half; i++) {
            /* the angle is an f32 product of f32 values, as HF forms it (spec §3.3, §4.4), so
               long-context positions round the same way; cos/sin of that f32 angle are then
               evaluated in double, which is exact to f32 precision at any magnitude */
            float ang = (float)c->pos[c->axis[i] * T + t] * c->freq[i];
            float cs = (float)cos((double)ang), sn = (float)sin((double)ang);
            for (int64_t h = 0; h < n_head; h++) {
                const float *xh = (const float *)(xt + h * x->nb[1]);
                float *yh = (float *)(yt + h * out->nb[1]);
                float a = xh[i], b = xh[i + half]; /* both read before writing: in-place is safe */
                yh[i] = a * cs - b * sn;
                yh[i + half] = b * cs + a * sn;
            }
        }
        if (!in_place && 2 * half < hd) /* dims past the rotated ones pass through (spec §3.3) */
            for (int64_t h = 0; h < n_head; h++)
                memcpy((float *)(yt + h * out->nb[1]) + 2 * half, (const float *)(xt + h * x->nb[1]) + 2 * half,
                       (size_t)(hd - 2 * half) * sizeof(float));
    }
}

/* Runs the kernel over tokens, on the pool when the tensor is large enough to pay for it. */
static void rope_run(backend *be, struct rope_ctx *c)
{
    cpu_run(be, rope_worker, c, cpu_parallel(be, (double)tensor_nelements(c->x), CPU_PAR_MIN_ELEMS));
}

static int alloc_tables(const char *op, int64_t half, float **freq, int **axis)
{
    *freq = seer_malloc((size_t)half * sizeof **freq);
    *axis = seer_malloc((size_t)half * sizeof **axis);
    if (!*freq || !*axis) {
        seer_freep(freq);
        seer_freep(axis);
        return seer_err(SEER_ENOMEM, "%s: no memory for %lld frequencies", op, (long long)half);
    }
    return SEER_OK;
}

int cpu_rope_text(backend *be, tensor *out, const tensor *x, const tensor *pos, const struct rope_text_params *p)
{
    int64_t half = p->n_rot / 2;
    float *freq;
    int *axis;
    int rc = alloc_tables("cpu_rope_text", half, &freq, &axis);
    if (rc)
        return rc;
    for (int64_t i = 0; i < half; i++) {
        /* spec §3.3: inv_freq = theta^(−2i/n_rot), rounded to f32 as HF keeps it */
        freq[i] = (float)pow((double)p->theta, -2.0 * (double)i / (double)p->n_rot);
        /* interleaved sections (backend.h rope_text_params, spec §3.3): T by default; H for
           i = 1, 4, … < 3·sections[1]; W for i = 2, 5, … < 3·sections[2] */
        int a = (int)(i % 3);
        axis[i] = (a == 1 || a == 2) && i < 3 * (int64_t)p->sections[a] ? a : 0;
    }
    struct rope_ctx c = {.out = out, .x = x, .pos = pos->data, .freq = freq, .axis = axis, .half = half};
    rope_run(be, &c);
    seer_freep(&freq);
    seer_freep(&axis);
    return SEER_OK;
}

int cpu_rope_vision(backend *be, tensor *out, const tensor *x, const tensor *pos, float theta)
{
    int64_t half = x->ne[0] / 2, quarter = x->ne[0] / 4; /* ops.c: dh is a multiple of 4 */
    float *freq;
    int *axis;
    int rc = alloc_tables("cpu_rope_vision", half, &freq, &axis);
    if (rc)
        return rc;
    for (int64_t i = 0; i < half; i++) {
        /* spec §4.4: inv_freq[j] = theta^(−2j/(dh/2)), j < dh/4, in f32; the first dh/4 angles
           use the patch row (axis 0 of pos), the next dh/4 the column (axis 1) */
        int64_t j = i < quarter ? i : i - quarter;
        freq[i] = (float)pow((double)theta, -2.0 * (double)j / (double)half);
        axis[i] = i < quarter ? 0 : 1;
    }
    struct rope_ctx c = {.out = out, .x = x, .pos = pos->data, .freq = freq, .axis = axis, .half = half};
    rope_run(be, &c);
    seer_freep(&freq);
    seer_freep(&axis);
    return SEER_OK;
}
