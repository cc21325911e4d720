# Sourced (not run) by bench/vulkan_vs_llama.sh and scripts/gpu-bundle.sh: llama.cpp's Vulkan build as
# the peer, that is the prebuilt libllama of npm @node-llama-cpp/linux-x64-vulkan@3.22.1 (the release whose
# source node-llama-cpp's git bundle holds; built with a glslc that knows the cooperative-matrix
# extensions, which Debian 12's lacks: this source's shaders do not compile with it), driven by
# bench/llama_bench.c with every layer offloaded (n_gpu_layers 999; the CPU build keeps 0) and llama.cpp's
# own default for flash attention (auto, as llama-bench: on where the device has it; the CPU build keeps it off).
# llama_vk ROOT OUT: installs the package into OUT (once; npm) and builds OUT/llama_bench_vk against it
# (again when bench/llama_bench.c is newer); sets llama_vk_bins (the libraries' directory) and llama_vk_exe.
# Needs `npm install` in ROOT/tests/oracle (llama.cpp's headers come from its git bundle).
llama_vk() {
  llama_vk_bins="$2/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan"
  llama_vk_exe="$2/llama_bench_vk"
  _bundle="$1/tests/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle"
  if [ ! -d "$llama_vk_bins" ]; then
    mkdir -p "$2"
    npm install --prefix "$2" --no-save --ignore-scripts --omit=optional @node-llama-cpp/linux-x64-vulkan@3.22.1 >&2
  fi
  # shellcheck disable=SC3013 # -nt: dash and bash have it (as bench/llama_bench.sh relies on)
  if [ ! -x "$llama_vk_exe" ] || [ "$1/bench/llama_bench.c" -nt "$llama_vk_exe" ]; then
    [ -f "$_bundle" ] || { echo "llama_vk: npm install in tests/oracle first" >&2; return 1; }
    # shellcheck source=bench/llama_headers.sh
    . "$1/bench/llama_headers.sh"
    llama_headers "$_bundle" "$2"
    # the CPU driver with every layer offloaded to the GPU backend the bins directory holds
    sed -e 's/mp\.n_gpu_layers = 0;/mp.n_gpu_layers = 999;/' \
        -e 's/= LLAMA_FLASH_ATTN_TYPE_DISABLED;/= LLAMA_FLASH_ATTN_TYPE_AUTO;/' \
        -e 's/ggml thread pool), %d threads/Vulkan build, all layers offloaded), %d threads/' \
        "$1/bench/llama_bench.c" >"$2/llama_bench_vk.c"
    grep -q 'n_gpu_layers = 999' "$2/llama_bench_vk.c" && grep -q 'FLASH_ATTN_TYPE_AUTO' "$2/llama_bench_vk.c" ||
      { echo "llama_vk: bench/llama_bench.c no longer sets n_gpu_layers = 0 and flash attention off" >&2; return 1; }
    cc -std=c11 -O2 -I"$2/include" -o "$llama_vk_exe" "$2/llama_bench_vk.c" -L"$llama_vk_bins" \
       -l:libllama.vulkan.v0.5.0.so -l:libggml.vulkan.v0.5.0.so -l:libggml-base.so -lm -Wl,-rpath,"$llama_vk_bins"
  fi
}
