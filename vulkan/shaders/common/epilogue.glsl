// epilogue.glsl — op_linear's epilogue (core/backend_ops.h struct linear_epilogue) at the stores of
// matvec.comp and matmul.comp: out = act(x·wᵀ + bias) + res, the same floats as the ops apart
// (op_add of the bias, op_unary, op_add of res; vulkan/op_matmul.c vk_linear), applied while the
// product is in registers instead of three more passes over out. Included after the shader's
// push constants (p: MatmulPush). Bindings: 3 bias f32 {M}, 4 res f32 shaped as out (its rows at
// out_stride, like out); dummies when p.ep is 0.
#include "common/math.glsl"

layout(std430, binding = 3) readonly buffer EpBias { float ep_bias[]; };
layout(std430, binding = 4) readonly buffer EpRes { float ep_res[]; };

// v: the product at (weight row m, x row n) of this dispatch (out element out_base + n·out_stride + m)
float ep_apply(float v, uint m, uint n)
{
    if ((p.ep & 1u) != 0u)
        v += ep_bias[p.b_base + m];
    if ((p.ep & 2u) != 0u)
        v = m_unary(p.ep_act, v, 1.0);
    // precise: the residual add is not fused into the activation's last product, as a separate
    // op_add could not be
    precise float y = v;
    if ((p.ep & 4u) != 0u)
        y = v + ep_res[p.r_base + n * p.out_stride + m];
    return y;
}
