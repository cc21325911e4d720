#!/bin/sh
# Times seer and llama.cpp on the CPU, on the same random-weight GGUF of a released Qwen3.5 shape, at
# the same thread counts, in one run: the figures of docs/PERFORMANCE.md. llama.cpp is the libllama of
# npm node-llama-cpp 3.22.1, called directly with a ggml thread pool (bench/llama_bench.sh, the fair
# comparison) and, with ENGINES="seer llama llama-node", also through node-llama-cpp
# (bench/llama_bench.mjs, which pays thread start-up on every call). Needs a built seer (build/) and
# `npm install` in tests/oracle (scripts/test.sh does both).
#   bench/cpu_vs_llama.sh [PRESET] [DTYPES] [THREADS]     defaults: 0.8b "q8_0 f16" "1 2"
# Environment: BENCH_DIR (where models are written, default /tmp/seer-bench), BENCH_ARGS (extra
# arguments for every engine, default "-p 512,2048 -n 128 --reps 3"), ENGINES (default "seer llama").
set -eu
cd "$(dirname "$0")/.."
preset=${1:-0.8b}
dtypes=${2:-q8_0 f16}
threads=${3:-1 2}
dir=${BENCH_DIR:-/tmp/seer-bench}
args=${BENCH_ARGS:--p 512,2048 -n 128 --reps 3}
engines=${ENGINES:-seer llama}
mkdir -p "$dir"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for dt in $dtypes; do
  model="$dir/qwen35-$preset-$dt.gguf"
  [ -f "$model" ] || ./build/seer bench --preset "$preset" --dtype "$dt" --seed 1 -o "$model" -p 0 -n 0 >/dev/null
  for t in $threads; do
    echo "## $preset $dt, $t thread(s)"
    for e in $engines; do
      # shellcheck disable=SC2086
      case $e in
        seer) ./build/seer bench -m "$model" --device cpu -t "$t" $args ;;
        llama) bench/llama_bench.sh -m "$model" -t "$t" $args 2>/dev/null ;;
        llama-node) node bench/llama_bench.mjs -m "$model" -t "$t" $args 2>/dev/null ;;
        *) echo "cpu_vs_llama.sh: unknown engine $e" >&2; exit 2 ;;
      esac
    done
  done
done
