# variants.cmake — #define builds of shaders whose buffer types change with the weight dtype
# (docs/ARCHITECTURE.md, "The Vulkan backend": variants only where buffer types change, listed here, no generator).
# Entry: "<blob name>|<file.comp>|DEF1=1,DEF2". The plain build of every .comp is made under its
# own name as well: matvec, matmul and get_rows without a define are the f32-weight kernels.
set(seer_shader_variants
  "matvec_f16|matvec.comp|W_F16"
  "matvec_bf16|matvec.comp|W_BF16"
  "matmul_f16|matmul.comp|W_F16"
  "matmul_bf16|matmul.comp|W_BF16"
  "matvec_q8_0|matvec.comp|W_Q8_0"
  "matvec_q4_0|matvec.comp|W_Q4_0"
  "matvec_q4_k|matvec.comp|W_Q4_K"
  "matvec_q5_k|matvec.comp|W_Q5_K"
  "matvec_q6_k|matvec.comp|W_Q6_K"
  # the same with subgroup reductions: a module that declares subgroup arithmetic cannot be made on
  # devices without it, so these are separate builds even though no buffer type changes
  "matvec_sg|matvec.comp|SG_REDUCE"
  "matvec_sg_f16|matvec.comp|W_F16,SG_REDUCE"
  "matvec_sg_bf16|matvec.comp|W_BF16,SG_REDUCE"
  "matvec_sg_q8_0|matvec.comp|W_Q8_0,SG_REDUCE"
  "matvec_sg_q4_0|matvec.comp|W_Q4_0,SG_REDUCE"
  "matvec_sg_q4_k|matvec.comp|W_Q4_K,SG_REDUCE"
  "matvec_sg_q5_k|matvec.comp|W_Q5_K,SG_REDUCE"
  "matvec_sg_q6_k|matvec.comp|W_Q6_K,SG_REDUCE"
  # float weights read in 16-byte pieces, where the rows are aligned (op_matmul.c wide_float_ok)
  "matvec_sg_wide|matvec.comp|SG_REDUCE,WIDE"
  "matvec_sg_f16_wide|matvec.comp|W_F16,SG_REDUCE,WIDE"
  "matvec_sg_bf16_wide|matvec.comp|W_BF16,SG_REDUCE,WIDE"
  "matmul_q8_0|matmul.comp|W_Q8_0"
  "matmul_q4_0|matmul.comp|W_Q4_0"
  "matmul_q4_k|matmul.comp|W_Q4_K"
  "matmul_q5_k|matmul.comp|W_Q5_K"
  "matmul_q6_k|matmul.comp|W_Q6_K"
  "get_rows_f16|get_rows.comp|W_F16"
  "get_rows_bf16|get_rows.comp|W_BF16"
  "get_rows_q8_0|get_rows.comp|W_Q8_0"
  "get_rows_q4_0|get_rows.comp|W_Q4_0"
  "get_rows_q4_k|get_rows.comp|W_Q4_K"
  "get_rows_q5_k|get_rows.comp|W_Q5_K"
  "get_rows_q6_k|get_rows.comp|W_Q6_K"
  # the not-exact decode matvecs (op_matmul.c): their plain builds are Q8_0's
  "matvec_dot_q8_0_wide|matvec_dot.comp|W_Q8_0,SPLIT,WIDE"
  # Q8_0 in the split layout (TL_Q8_0_SPLIT): its other two readers
  "matmul_q8_0_split|matmul.comp|W_Q8_0,SPLIT"
  "get_rows_q8_0_split|get_rows.comp|W_Q8_0,SPLIT"
  "matvec_dot_q4_0|matvec_dot.comp|W_Q4_0"
  "matvec_dot_q4_k|matvec_dot.comp|W_Q4_K"
  "matvec_dot_q4_k_wide|matvec_dot.comp|W_Q4_K,WIDE"
  "matvec_dot_q5_k|matvec_dot.comp|W_Q5_K"
  "matvec_dot_q5_k_wide|matvec_dot.comp|W_Q5_K,WIDE"
  "quantize_act_q8k|quantize_act.comp|Q8K"
  "matvec_dot_q6_k|matvec_dot.comp|W_Q6_K"
  "matvec_fp16_q4_0|matvec_fp16.comp|W_Q4_0"
  "attention_f16|attention.comp|KV_F16"
  "attention_q8_0|attention.comp|KV_Q8_0"
  "attention_tiled_f16|attention_tiled.comp|KV_F16"
  "attention_tiled_q8_0|attention_tiled.comp|KV_Q8_0"
)
