#!/bin/sh
# TAP: the GPU check's bundle (scripts/gpu-bundle.sh, scripts/gpu-check.sh; docs/PERFORMANCE.md "GPU
# check") without llama.cpp (--no-llama: its Vulkan build takes an hour here) from the suite's build:
# it carries every shared library the programs need, so that nothing but glibc, libstdc++ and libgcc_s
# resolves outside it, its seer runs with no environment, and gpu-check.sh answers --help, refuses a
# bad argument and lists its steps with --dry-run. Skipped for a build that is not Release with Vulkan
# (the sanitizer build), which the bundle refuses.
set -u
build=${SEER_BUILD_DIR:-build}
cache=$build/CMakeCache.txt
if ! grep -q '^SEER_VULKAN:BOOL=ON' "$cache" 2>/dev/null || ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$cache"; then
  echo "1..0 # SKIP $build is not a Release build with Vulkan"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..8"
n=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

scripts/gpu-check.sh --help >"$tmp/help" 2>&1 && grep -q 'GPU_CHECK_QUICK' "$tmp/help"
check $? "gpu-check.sh --help exits 0 and names its settings"
scripts/gpu-check.sh --bogus >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "unknown argument '--bogus'" "$tmp/err"
check $? "gpu-check.sh refuses an unknown argument with exit 2 and one line"

SEER_BUILD=$build scripts/gpu-bundle.sh --no-llama --no-tar "$tmp/b" >"$tmp/bundle.log" 2>&1
check $? "gpu-bundle.sh --no-llama --no-tar makes a bundle from $build"
b=$tmp/b
# every library seer and the tests need (outside the system's own), present in lib/ and in the MANIFEST
system='^(libc|libm|libpthread|libdl|librt|libresolv|libstdc\+\+|libgcc_s)\.so|^ld-linux|^linux-vdso'
missing=
for elf in "$build/seer" "$build"/t/vulkan_model.t; do
  for lib in $(ldd "$elf" | awk '$2 == "=>" { print $1 }' | grep -Ev "$system"); do
    [ -f "$b/lib/$lib" ] && grep -q "^file [0-9]* lib/$lib\$" "$b/MANIFEST" || missing="$missing $lib"
  done
done
[ -z "$missing" ]
check $? "lib/ and the MANIFEST hold every library seer and the tests need (missing:${missing:- none})"
outside=$(for elf in "$b"/bin/* "$b"/t/*.t; do LD_LIBRARY_PATH=$b/lib ldd "$elf"; done |
  awk '$2 == "=>" { print $1, $3 }' | grep -Ev "$system" | grep -v " $b/lib/" | sort -u | tr '\n' ' ')
[ -z "$outside" ]
check $? "with LD_LIBRARY_PATH=lib/ only glibc, libstdc++ and libgcc_s resolve outside the bundle (${outside:-none})"
grep -q '^seer_commit [0-9a-f]\{40\}' "$b/MANIFEST" && grep -q '^needs bin/seer: .*libvulkan.so.1' "$b/MANIFEST"
check $? "the MANIFEST names seer's commit and what bin/seer loads, the Vulkan loader among it"
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$b/lib" "$b/bin/seer" --version >"$tmp/version" 2>&1 &&
  grep -q '^seer ' "$tmp/version"
check $? "the bundle's seer runs in an empty environment"
env -i PATH=/usr/bin:/bin HOME="$tmp" bash "$b/gpu-check.sh" --dry-run >"$tmp/dry" 2>&1 &&
  grep -q '^test_vulkan_model ' "$tmp/dry" && grep -q '^seer_9b_r1 ' "$tmp/dry" &&
  grep -q '^seer_tower_0.8b ' "$tmp/dry"
check $? "the bundle's gpu-check.sh --dry-run lists its tests, the 9B bench and the tower"
