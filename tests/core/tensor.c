/* Tests core/tensor.c: dtype table against GGUF's block sizes, shape/stride computation, overflow
   and block-multiple rejection, views, contiguity. */
#include <stdint.h>

#include "core/tensor.h"
#include "tap.h"

int main(void)
{
    plan_no_plan();
    /* GGUF block sizes (elements, bytes), from the format's definition. */
    static const struct { enum dtype t; int e, b; } blocks[] = {
        {DT_F32, 1, 4}, {DT_F16, 1, 2}, {DT_BF16, 1, 2}, {DT_Q8_0, 32, 34}, {DT_Q4_0, 32, 18},
        {DT_Q4_K, 256, 144}, {DT_Q5_K, 256, 176}, {DT_Q6_K, 256, 210}, {DT_I32, 1, 4},
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        const struct dtype_info *di = dtype_info(blocks[i].t);
        ok(di->block_elems == blocks[i].e && di->block_bytes == blocks[i].b, "%s block is %d elems / %d bytes",
           di->name, blocks[i].e, blocks[i].b);
    }
    tensor t;
    ok(tensor_init4(&t, DT_Q4_K, 512, 3, 2, 1) && t.nb[1] == 288 && t.nb[2] == 864 && t.nb[3] == 1728,
       "q4_K {512,3,2} strides are 288/864/1728 bytes");
    ok(tensor_nbytes(&t) == 1728 && tensor_nelements(&t) == 3072 && tensor_nrows(&t) == 6, "sizes of q4_K tensor");
    ok(!tensor_init4(&t, DT_Q8_0, 33, 1, 1, 1), "q8_0 row of 33 elements is rejected (not whole blocks)");
    ok(!tensor_init4(&t, DT_F32, 0, 1, 1, 1), "zero dimension is rejected");
    ok(!tensor_init4(&t, DT_F32, INT64_MAX / 2, 4, 1, 1), "overflowing byte size is rejected");
    ok(tensor_init4(&t, DT_F32, 8, 4, 1, 1) && tensor_is_contiguous(&t), "f32 {8,4} is contiguous");
    /* the q half of a [q|gate] interleaved projection (spec §2.6): rows of 4 with stride 8 */
    int64_t ne[2] = {4, 4};
    size_t nb[2] = {4, 32};
    tensor v = tensor_view(&t, 2, ne, nb, 16);
    ok(!tensor_is_contiguous(&v) && v.offset == 16 && tensor_nbytes(&v) == 3 * 32 + 16,
       "strided view: not contiguous, offset and span right");
    ok(tensor_same_shape(&v, &v) && !tensor_same_shape(&v, &t), "same_shape compares all dims");
    return done_testing();
}
