#!/bin/sh
# Times seer's Vulkan backend and llama.cpp's Vulkan build on the same random-weight GGUF of a released
# Qwen3.5 shape, in one run, the engines alternating round by round (so a change in the machine's load
# hits both), and prints each engine's mean tokens/s per test and the ratio seer / llama.cpp.
#   bench/vulkan_vs_llama.sh [PRESET] [DTYPE]            defaults: 0.8b q8_0
# llama.cpp is the libllama of npm @node-llama-cpp/linux-x64-vulkan@3.22.1 (installed on first use with
# `npm install --ignore-scripts --omit=optional` into $BUILD/llama-vk), driven by bench/llama_bench.c
# built against it with every layer offloaded (n_gpu_layers 999; the CPU build keeps 0) and flash attention
# as llama.cpp's default (auto), by bench/llama_vk.sh. Both engines
# take Vulkan device 0: GGML_VK_VISIBLE_DEVICES=0 for llama.cpp, --device vulkan:0 for seer (on a
# machine without a GPU that is lavapipe). Needs a built seer ($BUILD/seer) and `npm install` in
# tests/oracle (for llama.cpp's headers, as bench/llama_bench.sh).
# Environment: BENCH_DIR (models, default /tmp/seer-bench), BUILD (default build), ROUNDS (default 3),
# BENCH_ARGS (per engine and round, default "-p 64 -n 4": lavapipe decodes a 0.8B model at a few
# seconds per token; on a GPU use e.g. "-p 512,2048 -n 128").
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
preset=${1:-0.8b}
dtype=${2:-q8_0}
dir=${BENCH_DIR:-/tmp/seer-bench}
build=${BUILD:-build}
rounds=${ROUNDS:-3}
args=${BENCH_ARGS:--p 64 -n 4}
seer="$root/$build/seer"
out="$root/$build/llama-vk"
[ -x "$seer" ] || { echo "vulkan_vs_llama.sh: build seer into $build/ first" >&2; exit 1; }
# shellcheck source=bench/llama_vk.sh
. "$root/bench/llama_vk.sh"
llama_vk "$root" "$out"
bins=$llama_vk_bins exe=$llama_vk_exe

mkdir -p "$dir"
model="$dir/qwen35-$preset-$dtype.gguf"
[ -f "$model" ] || "$seer" bench --preset "$preset" --dtype "$dtype" --seed 1 -o "$model" -p 0 -n 0 >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $cpu"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# model $model; per engine and round: $args"
for r in $(seq 1 "$rounds"); do
  for e in seer llama; do
    # shellcheck disable=SC2086
    case $e in
      seer) "$seer" bench -m "$model" --device vulkan:0 --reps 1 $args ;;
      llama) GGML_VK_VISIBLE_DEVICES=0 "$exe" "$bins" -m "$model" --reps 1 $args 2>/dev/null ;;
    esac | awk -v e="$e" '/^device|^engine/ { print "#", e ":", $0 > "/dev/stderr" }
                          /^(pp|tg)[0-9]+ / { print e, $1, $2 }' >>"$log"
  done
  echo "# round $r done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| test | seer tokens/s (rounds) | llama.cpp tokens/s (rounds) | seer / llama.cpp |"
echo "|---|---|---|---|"
awk '{ s[$1 " " $2] += $3; n[$1 " " $2]++; if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } }
     END {
       for (i = 1; i <= k; i++) {
         t = order[i]; a = s["seer " t] / n["seer " t]; b = n["llama " t] ? s["llama " t] / n["llama " t] : 0
         ratio = b > 0 ? sprintf("%.2f", a / b) : "-"
         printf "| %s | %.3g (%d) | %.3g (%d) | %s |\n", t, a, n["seer " t], b, n["llama " t], ratio
       }
     }' "$log"
