# variants.cmake — #define builds of shaders whose buffer types change with the weight dtype
# (style.md "Shaders": variants only where buffer types change, listed here, no generator).
# Entry: "<blob name>|<file.comp>|DEF1=1,DEF2". The plain build of every .comp is made under its
# own name as well: matvec and matmul without a define are the f32-weight kernels.
set(seer_shader_variants
  "matvec_f16|matvec.comp|W_F16"
  "matvec_bf16|matvec.comp|W_BF16"
  "matmul_f16|matmul.comp|W_F16"
  "matmul_bf16|matmul.comp|W_BF16"
)
