#!/bin/sh
# Builds bench/llama_bench.c against the libllama that npm node-llama-cpp 3.22.1 ships prebuilt
# (headers from the llama.cpp source bundle in the same package) into build/llama-bench/, then runs
# it with the given arguments:   bench/llama_bench.sh -m MODEL.gguf [-t 2] [-p 512,2048] [-n 128] [--reps 3]
# Needs `npm install --ignore-scripts --omit=optional` in tests/oracle (scripts/test.sh does it).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
pkg="$root/tests/oracle/node_modules"
bins="$pkg/@node-llama-cpp/linux-x64/bins/linux-x64"
bundle="$pkg/node-llama-cpp/llama/gitRelease.bundle"
out="$root/build/llama-bench"
# shellcheck source=bench/llama_headers.sh
. "$root/bench/llama_headers.sh"
if [ ! -x "$out/llama_bench" ] || [ "$root/bench/llama_bench.c" -nt "$out/llama_bench" ]; then
  [ -f "$bundle" ] && [ -d "$bins" ] || { echo "llama_bench.sh: npm install in tests/oracle first" >&2; exit 1; }
  rm -rf "$out"
  llama_headers "$bundle" "$out"
  cc -std=c11 -O2 -I"$out/include" -o "$out/llama_bench" "$root/bench/llama_bench.c" -L"$bins" \
     -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -lm -Wl,-rpath,"$bins"
fi
exec "$out/llama_bench" "$bins" "$@"
