// gdn_chunk.glsl — what the Gated DeltaNet kernels share (spec §2.5 steps 5–8): the value-head →
// key-head map, the decay factor, and the layout of one (chunk, value head) block of the chunked
// form's scratch, written by gdn_prep.comp and read by gdn_state.comp. op_gdn.c computes the
// block size `per` = CH·(dk + dv + CH + 2) + 4 floats with the same layout.

#define GDN_CH 64u // chunk length (spec §2.5 step 8: C = 64)

// Value head j reads key head j/ratio (HF grouped order, spec §2.5 step 5) or j mod Hk (the
// tiled order of llama.cpp's GGUF conversion).
uint key_head(uint j, uint Hk, uint tiled, uint ratio)
{
    return tiled != 0u ? j % Hk : j / ratio;
}

// e^x for a log-decay x ≤ 0, flushed to 0 below −60 as core/cpu/gdn.c does: such a factor
// (< 1e-26) is far below f32 rounding of the terms that survive, and keeping it only lets
// products drift into subnormals.
float gdn_decay(float x)
{
    return x < -60.0 ? 0.0 : exp(x);
}

// Block of (chunk, head), L ≤ CH rows i (tokens), with Γ_i the cumulative log-decay and
// Tinv = (I + A)⁻¹ (spec §2.5 step 8):
//   W  {CH×dk}  Tinv·(β e^Γ ⊙ K)
//   U  {CH×dv}  Tinv·(β ⊙ V)
//   P  {CH×CH}  (scale·Q·Kᵀ) ⊙ D, row i, columns m ≤ i (others never read)
//   fq {CH}     scale·e^{Γ_i}
//   fk {CH}     e^{Γ_L − Γ_i}
//   dec         e^{Γ_L}
uint gdn_off_u(uint dk) { return GDN_CH * dk; }
uint gdn_off_p(uint dk, uint dv) { return GDN_CH * (dk + dv); }
uint gdn_off_fq(uint dk, uint dv) { return GDN_CH * (dk + dv + GDN_CH); }
uint gdn_off_fk(uint dk, uint dv) { return gdn_off_fq(dk, dv) + GDN_CH; }
uint gdn_off_dec(uint dk, uint dv) { return gdn_off_fq(dk, dv) + 2u * GDN_CH; }
