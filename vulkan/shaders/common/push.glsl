// push.glsl — push-constant layouts, mirrored field for field by vulkan/push.h (the C side
// asserts the sizes). std430: 4-byte scalars, tightly packed. Indices are in the bound array's
// element unit relative to the descriptor window, modulo 2^32: a base may "wrap negative" when
// the window starts after the tensor's element 0, and uint arithmetic wraps it back.

struct MatmulPush {
    uint M, K, N;
    uint w_base, w_stride;
    uint x_base, x_s1, x_s2, x_s3, x_ne1, x_ne2, r0;
    uint out_base, out_stride;
    uint ep, ep_act, b_base, r_base; // epilogue.glsl (matvec.comp, matmul.comp): 0 = none
};

struct NormPush {
    uint ne0, ne1, ne2, r0, n_rows;
    uint x_base, x_s1, x_s2, x_s3;
    uint o_base, o_s1, o_s2, o_s3;
    uint w_base, has_w;
    float w_shift, eps;
    uint a_base, a_s1, a_s2, a_s3;
};

struct BinaryPush {
    uint ne0, ne1, ne2, r0, n_rows;
    uint a_base, a_s1, a_s2, a_s3;
    uint b_base, b_s0, b_s1, b_s2, b_s3;
    uint o_base, o_s1, o_s2, o_s3;
};

struct GetRowsPush {
    uint H, n_ids, V, v_lo, v_hi, zero_bad;
    uint t_base, t_stride;
    uint ids_base;
    uint out_base, out_stride;
};

struct RowsPush {
    uint ne0, ne1, ne2, r0, n_rows;
    uint x_base, x_s1, x_s2, x_s3;
    uint o_base, o_s1, o_s2, o_s3;
    float s;
};

struct RopePush {
    uint nh, T, r0, n_rows;
    uint x_base, x_s1, x_s2;
    uint o_base, o_s1, o_s2;
    uint pos_base, pairs, half_copy, axes;
    float freq[16]; // VK_ROPE_PAIRS
};

struct ConvPush {
    uint C, K, T, t0, n;
    uint x_base, x_s1;
    uint w_base, s_base, o_base;
    uint write_state;
};

struct GdnPush {
    uint dk, dv, Hk, Hv, T, tiled, ratio, nl, per;
    uint q_base, q_s1, q_s2, k_base, k_s1, k_s2, v_base, v_s1, v_s2;
    uint g_base, g_s1, b_base, b_s1;
    uint scr_base, s_base, o_base;
    float scale;
};

struct AttnPush {
    uint hd, nh, nkv, Tk, t0, nt;
    uint q_base, q_s1, q_s2, k_base, k_s1, k_s2, v_base, v_s1, v_s2;
    uint o_base, seg_base, causal, q_pos0;
    uint n_split, kps, p_base;
    float scale;
};

struct AttnCombinePush {
    uint hd, n_rows, n_split, p_base, o_base;
};
