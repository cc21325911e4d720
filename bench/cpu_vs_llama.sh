#!/bin/sh
# Times seer and llama.cpp on the CPU, on the same random-weight GGUF of a released Qwen3.5 shape, at
# the same thread counts, in one run: the figures of docs/PERFORMANCE.md. llama.cpp is the libllama of
# npm node-llama-cpp 3.22.1, called directly with a ggml thread pool (bench/llama_bench.sh, the fair
# comparison) and, with ENGINES="seer llama llama-node", also through node-llama-cpp
# (bench/llama_bench.mjs, which pays thread start-up on every call). Needs a built seer and
# `npm install` in tests/oracle (scripts/test.sh does both).
#   bench/cpu_vs_llama.sh [PRESET] [DTYPES] [THREADS]     defaults: 0.8b "q8_0 f16" "1 2"
# Environment: BENCH_DIR (where models are written, default /tmp/seer-bench), BENCH_ARGS (extra
# arguments for every engine, default "-p 512,2048 -n 128 --reps 3"), ENGINES (default "seer llama"),
# SEER_ARGS (extra arguments for seer only, e.g. --exact), SEER (the binary, default ./build/seer),
# ROUNDS (default 1: the engines run one after the other this many times, alternating, so a change in
# the machine's load hits both). Each engine's output is printed as it comes, then a table of the
# mean tokens/s over the rounds and seer / llama.cpp per test.
set -eu
cd "$(dirname "$0")/.."
preset=${1:-0.8b}
dtypes=${2:-q8_0 f16}
threads=${3:-1 2}
dir=${BENCH_DIR:-/tmp/seer-bench}
args=${BENCH_ARGS:--p 512,2048 -n 128 --reps 3}
engines=${ENGINES:-seer llama}
seer=${SEER:-./build/seer}
rounds=${ROUNDS:-1}
mkdir -p "$dir"
log=$(mktemp)
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for dt in $dtypes; do
  model="$dir/qwen35-$preset-$dt.gguf"
  [ -f "$model" ] || "$seer" bench --preset "$preset" --dtype "$dt" --seed 1 -o "$model" -p 0 -n 0 >/dev/null
  for t in $threads; do
    echo "## $preset $dt, $t thread(s)"
    r=1
    while [ "$r" -le "$rounds" ]; do
      for e in $engines; do
        echo "### round $r: $e (load average $(cut -d' ' -f1 /proc/loadavg))"
        # shellcheck disable=SC2086
        case $e in
          seer) "$seer" bench -m "$model" --device cpu -t "$t" $args ${SEER_ARGS:-} ;;
          llama) bench/llama_bench.sh -m "$model" -t "$t" $args 2>/dev/null ;;
          llama-node) node bench/llama_bench.mjs -m "$model" -t "$t" $args 2>/dev/null ;;
          *) echo "cpu_vs_llama.sh: unknown engine $e" >&2; exit 2 ;;
        esac >"$out"
        cat "$out"
        awk -v k="$dt $t $e" '/^(pp|tg)[0-9]+ /{print k, $1, $2}' "$out" >>"$log"
      done
      r=$((r + 1))
    done
  done
done
echo
echo "| dtype | threads | test | seer tokens/s | llama.cpp tokens/s | seer / llama.cpp |"
echo "|---|---|---|---|---|---|"
awk '{k = $1 " " $2 " " $4; s[k, $3] += $5; n[k, $3]++; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
     END { for (i = 1; i <= m; i++) { k = order[i]; split(k, f, " ");
             a = n[k, "seer"] ? s[k, "seer"] / n[k, "seer"] : 0; b = n[k, "llama"] ? s[k, "llama"] / n[k, "llama"] : 0;
             printf "| %s | %s | %s | %.2f | %.2f | %s |\n", f[1], f[2], f[3], a, b, (a && b) ? sprintf("%.2f", a / b) : "-" } }' "$log"
