#!/bin/sh
# Makes the GPU check's bundle (issue 22 item 5): a directory and its tarball, carried to a bare x86-64
# machine with a GPU and no network and run there with one command, ./gpu-check.sh (docs/PERFORMANCE.md,
# "GPU check"). It holds:
#   bin/     seer (Release, Vulkan; built without FFmpeg, PDF and cairo: the check needs none of them and
#            FFmpeg alone would bring a hundred more shared libraries), and the peer: llama.cpp's Vulkan
#            build of the release npm node-llama-cpp 3.22.1 ships (bench/llama_vk.sh: its prebuilt
#            libraries, every CPU variant, and bench/llama_bench.c built against them, llama_bench_vk;
#            libmtmd built here from the same release's source, and bench/tower_mtmd.c against it,
#            tower_mtmd_vk: the tower's peer)
#   lib/     every shared library those need, except glibc's own, libstdc++ and libgcc_s (every Linux
#            has them; a copy older than the machine's would shadow it): the Vulkan loader libvulkan.so.1
#            among them, since such a machine may lack it, and glvnd's libGLdispatch.so.0, which NVIDIA's
#            driver (libGLX_nvidia.so.0, its Vulkan ICD) needs; no driver
#   layers/  the Khronos validation layer, so the tests' "zero validation errors" runs on the GPU's driver
#   t/       the Vulkan test programs of the build (TAP): ops, CPU-vs-Vulkan agreement, model, tower
#   src/     what those tests and the check run: tests/reference's tiny-model generator, bench/random_inputs.sh
#   gpu-check.sh, MANIFEST (every file, each program's libraries, the commits)
# No model files: gpu-check.sh generates them there (seer bench --preset).
#   scripts/gpu-bundle.sh [--no-llama] [--no-tar] [DIR]
# DIR: the bundle (default build-gpu/seer-gpu; the tarball is DIR.tar.gz). --no-llama leaves llama.cpp out
# (no npm needed: tests/scripts/gpu_bundle.sh uses it), --no-tar makes the directory alone.
# Environment: SEER_BUILD (seer's build directory, default build-gpu: configured here Release, Vulkan on,
# FFmpeg/PDF/cairo off, and seer and the tests built), JOBS (2). Needs npm (the peer) and tests/oracle's
# npm install (llama.cpp's headers).
# Exit status: 0 done, 1 a build or a library missing, 2 bad arguments.
set -eu
cd "$(dirname "$0")/.."
root=$PWD
llama=1 tar=1 dir=
for a in "$@"; do
  case $a in
    --no-llama) llama=0 ;;
    --no-tar) tar=0 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-bundle.sh: unknown option '$a' (--help)" >&2; exit 2 ;;
    *) dir=$a ;;
  esac
done
dir=${dir:-build-gpu/seer-gpu}
build=${SEER_BUILD:-build-gpu}
jobs=${JOBS:-2}
# the Vulkan test programs the check runs on the GPU (tests/<dir>/<name>.c -> t/<dir>_<name>.t)
tests="vulkan_device vulkan_q8_split vulkan_model vulkan_faults ops_backend_ops vision_vit_vulkan lm_batch lm_kvq8"
# tests/reference/gen_tiny.py and the modules it imports
pyref="gen_tiny.py common.py gguf.py hf2gguf.py safetensors.py tiny_tokenizer.py"
die() { echo "gpu-bundle.sh: $*" >&2; exit 1; }

if [ -z "${SEER_BUILD:-}" ] && [ ! -f "$build/CMakeCache.txt" ]; then
  mkdir -p "$build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSEER_VULKAN=ON -DSEER_FFMPEG=OFF -DSEER_PDF=OFF \
    -DSEER_CAIRO=OFF >"$build/cmake.log" 2>&1 || { tail -20 "$build/cmake.log" >&2; die "configuring $build failed"; }
fi
grep -q '^SEER_VULKAN:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null || die "$build: not a build with SEER_VULKAN=ON"
grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" || die "$build: not a Release build"
targets="seer"
for t in $tests; do targets="$targets t_$t"; done
# shellcheck disable=SC2086 # one word per target
nice -n 10 cmake --build "$build" -j"$jobs" --target $targets >"$build/bundle-build.log" 2>&1 ||
  { tail -20 "$build/bundle-build.log" >&2; die "building seer in $build failed"; }
if [ "$llama" = 1 ]; then
  # shellcheck source=bench/llama_vk.sh
  . bench/llama_vk.sh
  llama_vk "$root" "$build/llama-vk" || die "llama.cpp's Vulkan build (bench/llama_vk.sh) failed"
  llama_vk_mtmd "$root" "$build/llama-vk" || die "libmtmd against llama.cpp's Vulkan build (bench/llama_vk.sh) failed"
fi

rm -rf "$dir" "$dir.tar.gz"
mkdir -p "$dir/bin" "$dir/lib" "$dir/layers" "$dir/t" "$dir/src/tests/reference" "$dir/src/bench"
cp "$build/seer" "$dir/bin/"
for t in $tests; do cp "$build/t/$t.t" "$dir/t/"; done
for f in $pyref; do cp "tests/reference/$f" "$dir/src/tests/reference/"; done
cp bench/random_inputs.sh "$dir/src/bench/"
cp scripts/gpu-check.sh "$dir/"
if [ "$llama" = 1 ]; then
  cp "$llama_vk_exe" "$llama_vk_tower_exe" "$dir/bin/"
  cp "$llama_vk_mtmd_lib" "$dir/lib/"
  # its libraries first, so that lib/ resolves them for ldd below; the Vulkan and CPU backends are loaded
  # by name from the directory llama_bench_vk is given (lib/), so ldd of the program does not list them
  cp "$llama_vk_bins"/libggml*.so "$llama_vk_bins"/libllama.vulkan.*.so "$dir/lib/"
fi

# Every library the programs load, by ldd (transitively), except the ones every Linux has.
system_lib() {
  case $1 in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|ld-linux*|linux-vdso*) return 0 ;;
    libstdc++.so.*|libgcc_s.so.*) return 0 ;;
  esac
  return 1
}
copy_deps() { # ELF...: copies what they need into lib/ under the name they ask for (the soname)
  for elf in "$@"; do
    [ -e "$elf" ] || continue # an unmatched pattern (no libggml*.so with --no-llama)
    LD_LIBRARY_PATH="$root/$dir/lib" ldd "$elf" | awk '$2 == "=>" { print $1, $3 }' | while read -r name path; do
      system_lib "$name" && continue
      [ "$path" = "not" ] && die "$elf needs $name, which is not installed here"
      [ -e "$dir/lib/$name" ] || cp -L "$path" "$dir/lib/$name"
    done
  done
}
copy_deps "$dir"/bin/* "$dir"/t/*.t "$dir"/lib/libggml*.so
[ -e "$dir/lib/libvulkan.so.1" ] || die "seer does not load libvulkan.so.1 (a build without Vulkan?)"
# NVIDIA's Vulkan driver is a glvnd vendor library: it needs libGLdispatch.so.0, which a machine with no
# OpenGL packages lacks (device README: libglvnd0 among the loaders to bring)
gld=$(ldconfig -p | awk '$1 == "libGLdispatch.so.0" { print $NF; exit }')
[ -n "$gld" ] || die "libGLdispatch.so.0 missing (apt-get install libglvnd0)"
cp -L "$gld" "$dir/lib/"
# the validation layer: its manifest, pointing at the library beside it
vl=$(ldconfig -p | awk '$1 == "libVkLayer_khronos_validation.so" { print $NF; exit }')
vj=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
if [ -n "$vl" ] && [ -f "$vj" ]; then
  cp -L "$vl" "$dir/layers/"
  sed 's|"library_path": *"[^"]*"|"library_path": "./libVkLayer_khronos_validation.so"|' "$vj" \
    >"$dir/layers/VkLayer_khronos_validation.json"
  copy_deps "$dir/layers/libVkLayer_khronos_validation.so"
else
  echo "gpu-bundle.sh: no Vulkan validation layer here (vulkan-validationlayers): the bundle goes without" >&2
fi

# MANIFEST: what was built from what, and each program's libraries as the bundle resolves them
{
  echo "# seer GPU-check bundle, made $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -m) by scripts/gpu-bundle.sh"
  echo "seer_commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ' (with local changes)')"
  [ "$llama" = 1 ] && echo "llama_build $(tr -d '\n' <"$llama_vk_bins/_nlcBuildMetadata.json")"
  echo "glibc_built_with $(ldd --version | head -1 | awk '{ print $NF }')"
  for elf in "$dir"/bin/* "$dir"/t/*.t; do
    printf 'needs %s:' "${elf#"$dir"/}"
    LD_LIBRARY_PATH="$root/$dir/lib" ldd "$elf" | awk '$2 == "=>" { printf " %s", $1 }'
    echo
  done
  (cd "$dir" && find . -type f ! -name MANIFEST | sort | while read -r f; do echo "file $(wc -c <"$f") ${f#./}"; done)
} >"$dir/MANIFEST"

size=$(du -sm "$dir" | cut -f1)
echo "gpu-bundle.sh: $dir: ${size} MiB unpacked" >&2
if [ "$tar" = 1 ]; then
  tar -C "$(dirname "$dir")" -czf "$dir.tar.gz" "$(basename "$dir")"
  echo "gpu-bundle.sh: $dir.tar.gz: $(du -m "$dir.tar.gz" | cut -f1) MiB" >&2
  echo "$dir.tar.gz"
else
  echo "$dir"
fi
