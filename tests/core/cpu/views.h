/* views.h — helpers shared by the CPU op tests (elementwise, norm, rope, conv): strided f32 views
   whose rows are padded and whose dims 1 and 2 are stored swapped, so an op that assumes
   contiguous rows or a particular dim order reads the wrong values; plus a check that nothing
   outside a view was written. Works on host-visible (CPU backend) tensors only. */
#ifndef SEER_TESTS_CPU_VIEWS_H
#define SEER_TESTS_CPU_VIEWS_H

#include <stdint.h>
#include <string.h>

#include "core/backend.h"
#include "support/testutil.h"

#define VIEW_SENTINEL (-7777.0f)

struct sview {
    tensor *base; /* {ne0 + 3, ne2, ne1, ne3} contiguous, filled with VIEW_SENTINEL */
    tensor v;     /* the view: shape ne, starting 2 floats into the base */
};

static inline void sview_make(struct sview *s, backend *be, const int64_t ne[4])
{
    s->base = test_tensor(be, DT_F32, ne[0] + 3, ne[2], ne[1], ne[3], NULL);
    float *b = s->base->data;
    for (int64_t i = 0; i < tensor_nelements(s->base); i++)
        b[i] = VIEW_SENTINEL;
    size_t nb[4] = {sizeof(float), s->base->nb[2], s->base->nb[1], s->base->nb[3]};
    s->v = tensor_view(s->base, 4, ne, nb, 2 * sizeof(float));
}

static inline float *view_elem(const tensor *v, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (float *)((char *)v->data + i1 * v->nb[1] + i2 * v->nb[2] + i3 * v->nb[3]) + i0;
}

/* Copies contiguous ne-ordered data into / out of any f32 view. */
static inline void view_set(tensor *v, const float *src)
{
    size_t n = 0;
    for (int64_t i3 = 0; i3 < v->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < v->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < v->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < v->ne[0]; i0++)
                    *view_elem(v, i0, i1, i2, i3) = src[n++];
}

static inline void view_get(const tensor *v, float *dst)
{
    size_t n = 0;
    for (int64_t i3 = 0; i3 < v->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < v->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < v->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < v->ne[0]; i0++)
                    dst[n++] = *view_elem(v, i0, i1, i2, i3);
}

/* True when every base element outside the view still holds the sentinel. Overwrites the view's
   elements with the sentinel to check, so read the view first. */
static inline int sview_outside_untouched(struct sview *s)
{
    for (int64_t i3 = 0; i3 < s->v.ne[3]; i3++)
        for (int64_t i2 = 0; i2 < s->v.ne[2]; i2++)
            for (int64_t i1 = 0; i1 < s->v.ne[1]; i1++)
                for (int64_t i0 = 0; i0 < s->v.ne[0]; i0++)
                    *view_elem(&s->v, i0, i1, i2, i3) = VIEW_SENTINEL;
    const float *b = s->base->data;
    for (int64_t i = 0; i < tensor_nelements(s->base); i++)
        if (b[i] != VIEW_SENTINEL)
            return 0;
    return 1;
}

static inline void sview_free(struct sview *s) { test_tensor_free(s->base); }

#endif
