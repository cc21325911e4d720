#!/bin/sh
# Builds llama.cpp natively (-DGGML_NATIVE=ON: every instruction set this CPU has, like a user's own
# build) from the source npm node-llama-cpp 3.22.1 ships (its git bundle), for the benchmarks that run
# llama.cpp's own programs (bench/serve_vs_llama.sh: llama-server). Nothing of llama.cpp enters this
# repository: the clone and the build live in a cache directory, reused on the next run (a build that
# is already complete is skipped, so the script is cheap to call first thing).
#   bench/llama_native.sh [TARGETS]      default "llama-server"; e.g. "llama-server llama-mtmd-cli llama-bench"
# Prints the directory holding the binaries (its last line). Environment: LLAMA_SRC (the clone, default
# /tmp/seer-llama-native; /tmp/h3llama is reused when it is a clone of the same bundle commit and
# LLAMA_SRC is unset), JOBS (default 2). Needs tests/oracle's npm install (the bundle), cmake, a C++
# compiler.
set -eu
cd "$(dirname "$0")/.."
bundle=$PWD/tests/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle
targets=${1:-llama-server}
[ -f "$bundle" ] || { echo "llama_native.sh: $bundle missing (npm install in tests/oracle first)" >&2; exit 1; }
want=$(git ls-remote "$bundle" HEAD | cut -f1)
at() { git -C "$1" rev-parse HEAD 2>/dev/null || true; }
src=${LLAMA_SRC:-}
if [ -z "$src" ]; then
  src=/tmp/seer-llama-native
  [ ! -d "$src" ] && [ "$(at /tmp/h3llama)" = "$want" ] && src=/tmp/h3llama
fi
if [ ! -d "$src/.git" ]; then
  git clone -q "$bundle" "$src"
fi
[ "$(at "$src")" = "$want" ] || { echo "llama_native.sh: $src is not at the bundle's commit $want" >&2; exit 1; }
# A directory of its own, so that another build in the same clone (other flags) is left alone.
build=$src/build-seer-native
stamp=$build/.built-$(echo "$targets" | tr ' ' '+')
if [ ! -f "$stamp" ]; then
  cmake -S "$src" -B "$build" -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$build.cmake.log" 2>&1 || { tail -20 "$build.cmake.log" >&2; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$build" -j"${JOBS:-2}" --target $targets >"$build.log" 2>&1 || { tail -20 "$build.log" >&2; exit 1; }
  touch "$stamp"
fi
echo "$build/bin"
