# Sourced (not run) by bench/llama_bench.sh and bench/vulkan_vs_llama.sh, which both build
# bench/llama_bench.c against a prebuilt libllama and need the headers of the same release.
# llama_headers BUNDLE OUT: writes llama.cpp's public headers from the git bundle npm node-llama-cpp
# ships (BUNDLE) into OUT/include, using OUT/llama.git as scratch.
llama_headers() {
  rm -rf "$2/include" "$2/llama.git" && mkdir -p "$2/include"
  git clone -q --bare "$1" "$2/llama.git"
  for h in include/llama.h ggml/include/ggml.h ggml/include/ggml-cpu.h ggml/include/ggml-backend.h \
           ggml/include/ggml-alloc.h ggml/include/ggml-opt.h ggml/include/gguf.h; do
    git --git-dir "$2/llama.git" show "HEAD:$h" >"$2/include/$(basename "$h")"
  done
  rm -rf "$2/llama.git"
}
