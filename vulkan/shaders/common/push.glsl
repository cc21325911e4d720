// push.glsl — push-constant layouts, mirrored field for field by vulkan/push.h (the C side
// asserts the sizes). std430: 4-byte scalars, tightly packed. Indices are in the bound array's
// element unit relative to the descriptor window, modulo 2^32: a base may "wrap negative" when
// the window starts after the tensor's element 0, and uint arithmetic wraps it back.

struct MatvecPush {
    uint M, K;
    uint w_base, w_stride;
    uint x_base;
    uint out_base;
};

struct MatmulPush {
    uint M, K, N;
    uint w_base, w_stride;
    uint x_base, x_s1, x_s2, x_s3, x_ne1, x_ne2, r0;
    uint out_base, out_stride;
};

struct NormPush {
    uint ne0, ne1, ne2, r0, n_rows;
    uint x_base, x_s1, x_s2, x_s3;
    uint o_base, o_s1, o_s2, o_s3;
    uint w_base, has_w;
    float w_shift, eps;
};

struct BinaryPush {
    uint ne0, ne1, ne2, r0, n_rows;
    uint a_base, a_s1, a_s2, a_s3;
    uint b_base, b_s0, b_s1, b_s2, b_s3;
    uint o_base, o_s1, o_s2, o_s3;
};
