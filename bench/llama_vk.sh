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

# llama_vk_mtmd ROOT OUT: after llama_vk, libmtmd built from the bundle's source (tools/mtmd, the same
# release as the prebuilt libraries: node-llama-cpp ships none) against those libraries, for a machine of
# any x86-64 CPU (no -march: the GPU check runs elsewhere), and bench/tower_mtmd.c against it with the
# projector on the GPU: OUT/tower_mtmd_vk, which loads llama.cpp's backends from $LLAMA_BACKEND_DIR (else
# its own directory and the current one). Sets llama_vk_mtmd_lib and llama_vk_tower_exe. Built once (a few
# minutes on 2 cores), again when bench/tower_mtmd.c is newer.
llama_vk_mtmd() {
  mkdir -p "$2" && _o=$(cd "$2" && pwd) # absolute: the compiler runs in the clone
  llama_vk_mtmd_lib="$_o/libmtmd.so.0"
  llama_vk_tower_exe="$_o/tower_mtmd_vk"
  _src="$_o/llama-src"
  if [ ! -f "$llama_vk_mtmd_lib" ]; then
    [ -d "$_src/tools/mtmd" ] || git clone -q "$1/tests/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$_src" ||
      { echo "llama_vk_mtmd: cloning the llama.cpp bundle failed" >&2; return 1; }
    mkdir -p "$_o/mtmd-obj"
    # the sources tools/mtmd/CMakeLists.txt lists for the library, and vendor/hash's, which it links (sha1.c
    # as C++, as vendor/hash/CMakeLists.txt compiles it)
    (cd "$_src" && ls tools/mtmd/mtmd.cpp tools/mtmd/mtmd-audio.cpp tools/mtmd/mtmd-image.cpp tools/mtmd/mtmd-helper.cpp \
        tools/mtmd/mtmd-helper-gen.cpp tools/mtmd/clip.cpp tools/mtmd/models/*.cpp vendor/hash/hash.cpp \
        vendor/hash/sha1/sha1.c vendor/hash/sha256/sha256.c vendor/hash/xxhash/xxhash.c |
      xargs -P "${JOBS:-2}" -I{} sh -c 'case {} in *.cpp) c="c++ -std=c++17" ;; */sha1.c) c="c++ -x c++ -w" ;; *) c="cc -w" ;; esac
        $c -O2 -fPIC -DLLAMA_SHARED -DLLAMA_BUILD -Itools/mtmd -Iinclude -Iggml/include -Ivendor -Ivendor/hash \
          -c {} -o "$0/$(echo {} | tr / _).o"' "$_o/mtmd-obj") ||
      { echo "llama_vk_mtmd: compiling libmtmd failed" >&2; return 1; }
    c++ -shared -o "$llama_vk_mtmd_lib" -Wl,-soname,libmtmd.so.0 "$_o"/mtmd-obj/*.o -L"$llama_vk_bins" \
      -l:libllama.vulkan.v0.5.0.so -l:libggml.vulkan.v0.5.0.so -l:libggml-base.so -lpthread -Wl,-rpath,"$llama_vk_bins" ||
      { echo "llama_vk_mtmd: linking libmtmd failed" >&2; return 1; }
  fi
  # shellcheck disable=SC3013 # -nt: as llama_vk above
  if [ ! -x "$llama_vk_tower_exe" ] || [ "$1/bench/tower_mtmd.c" -nt "$llama_vk_tower_exe" ]; then
    sed -e 's/cp\.use_gpu = false/cp.use_gpu = true/' \
        -e 's|llama_backend_init();|llama_backend_init(); ggml_backend_load_all_from_path(getenv("LLAMA_BACKEND_DIR"));|' \
        "$1/bench/tower_mtmd.c" >"$_o/tower_mtmd_vk.c"
    grep -q 'use_gpu = true' "$_o/tower_mtmd_vk.c" && grep -q ggml_backend_load_all_from_path "$_o/tower_mtmd_vk.c" ||
      { echo "llama_vk_mtmd: bench/tower_mtmd.c no longer sets use_gpu = false after llama_backend_init()" >&2; return 1; }
    cc -O2 -o "$llama_vk_tower_exe" "$_o/tower_mtmd_vk.c" -I"$_o/include" -I"$_src/tools/mtmd" -L"$_o" \
      -L"$llama_vk_bins" -l:libmtmd.so.0 -l:libllama.vulkan.v0.5.0.so -l:libggml.vulkan.v0.5.0.so -l:libggml-base.so \
      -Wl,-rpath,"$_o:$llama_vk_bins" ||
      { echo "llama_vk_mtmd: building bench/tower_mtmd.c against libmtmd failed" >&2; return 1; }
  fi
}
