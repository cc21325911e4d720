#!/bin/sh
# Batch OCR against native llama.cpp (issue 22 item 1): N scanned-looking pages (default 20, 1024x1280,
# made here with Pillow) read by `seer ocr` in one run, and by llama-mtmd-cli one page per process, as a
# script driving it has to (it takes one prompt, not a batch), both greedy with the same prompt, the
# same random 0.8B-shape Q8_0 GGUF and F16 mmproj, the same threads and the same token limit. Prints
# pages per minute of wall time, process start to exit, with the load average before each engine.
#   bench/ocr_vs_mtmd.sh [N]
# Environment: SEER (default build/seer), BENCH_DIR (default /tmp/seer-serve-bench: the models of
# bench/serve_vs_llama.sh, made the same way when missing), THREADS (2), N_PREDICT (64), ROUNDS (1;
# even rounds run the engines in reverse order), PAGE (1024x1280), PARALLEL (seer ocr --parallel,
# default its own), ENGINES (default "seer llama"; "seer1" is seer ocr --parallel 1, one page at a time,
# so ENGINES="seer seer1" measures what --parallel gains, issue 22 item 1),
# MTMD=vulkan: both on Vulkan (issue 22 item 1; lavapipe here: try PAGE=512x640 N_PREDICT=16 and few
# pages, lavapipe takes minutes a page): seer with --device vulkan, and the native llama-mtmd-cli with
# every layer and the projector offloaded, its libllama and libggml resolved to llama.cpp's Vulkan build of
# the same release (bench/llama_vk.sh) through links named as the native program asks for them (it also
# needs the native build's libllama-common, so the portable libmtmd of llama_vk_mtmd does not suffice);
# llama.cpp loads its backends from the current directory.
set -eu
cd "$(dirname "$0")/.."
n=${1:-20}
seer=$(realpath "${SEER:-build/seer}")
dir=${BENCH_DIR:-/tmp/seer-serve-bench}
threads=${THREADS:-2}
n_predict=${N_PREDICT:-64}
rounds=${ROUNDS:-1}
page=${PAGE:-1024x1280}
. bench/random_inputs.sh
bin=$(bench/llama_native.sh | tail -1)
mtmd_models "$seer" "$dir" "$bin"
template=$(realpath "$template")
seer_dev="" llama_env="LD_LIBRARY_PATH=$bin" llama_dev="" llama_cwd=$PWD
if [ "${MTMD:-native}" = vulkan ]; then
  # shellcheck source=bench/llama_vk.sh
  . bench/llama_vk.sh
  llama_vk "$PWD" "$dir/llama-vk" || exit 1
  libs=$dir/llama-vk/mtmd-libs
  mkdir -p "$libs"
  ln -sf "$llama_vk_bins/libggml.vulkan.v0.5.0.so" "$libs/libggml.so.0"
  ln -sf "$llama_vk_bins/libggml-base.so" "$libs/libggml-base.so.0"
  ln -sf "$llama_vk_bins/libllama.vulkan.v0.5.0.so" "$libs/libllama.so.0"
  seer_dev="--device vulkan"
  llama_env="LD_LIBRARY_PATH=$libs:$bin GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-0}"
  # -c 4096: with the model's own context (262,144) this build aborts on lavapipe as it sets up the
  # cache ("pre-allocated tensor (cache_k_l3) in a buffer (Vulkan0) that cannot run the operation")
  llama_dev="-ngl 999 -c 4096" llama_cwd=$llama_vk_bins
fi

# The seer ocr default prompt (cli/ocr.c prompt_text), given to both
prompt="Read all the text on this page in natural reading order. Write it exactly as printed, keeping the line and paragraph breaks. Output only the text, with no description or commentary."
pages=$dir/ocr-pages
rm -rf "$pages" && mkdir -p "$pages"
python3 - "$pages" "$n" "$page" <<'EOF'
import random, sys
from PIL import Image, ImageDraw
out, n, (w, h) = sys.argv[1], int(sys.argv[2]), map(int, sys.argv[3].split("x"))
rnd = random.Random(7)
words = "invoice total amount due paid date customer order number item quantity price tax net".split()
for k in range(n):
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    for y in range(40, h - 40, 22):
        d.text((40, y), " ".join(rnd.choice(words) for _ in range(rnd.randrange(4, 14))), fill="black")
    im.save("%s/page-%03d.png" % (out, k))
EOF

run_seer() {
  par=""
  [ -n "${PARALLEL:-}" ] && par="--parallel $PARALLEL"
  [ "${1:-}" = one ] && par="--parallel 1"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$seer" ocr -m "$model" --mmproj "$mmproj" -t "$threads" -n "$n_predict" $par $seer_dev -p "$prompt" "$pages"/*.png \
    >"$dir/ocr-seer.txt" 2>"$dir/ocr-seer.log"
  t1=$(date +%s.%N)
  echo "$t0 $t1"
}

run_seer1() { run_seer one; }

run_llama() {
  t0=$(date +%s.%N)
  for f in "$pages"/*.png; do
    # shellcheck disable=SC2086 # llama_env: assignments; llama_dev: options
    (cd "$llama_cwd" && env $llama_env "$bin/llama-mtmd-cli" -m "$model" --mmproj "$mmproj" --image "$f" -p "$prompt" \
      -n "$n_predict" -t "$threads" $llama_dev --temp 0 --no-warmup --jinja --chat-template "$(cat "$template")") \
      >>"$dir/ocr-llama.txt" 2>>"$dir/ocr-llama.log"
  done
  t1=$(date +%s.%N)
  echo "$t0 $t1"
}

: >"$dir/ocr-llama.txt"
: >"$dir/ocr-llama.log"
echo "pages: $n of $page; threads $threads; -n $n_predict; $(nproc) CPUs"
r=1
while [ "$r" -le "$rounds" ]; do
  order=${ENGINES:-seer llama}
  [ $((r % 2)) -eq 0 ] && order=$(echo "$order" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
  for e in $order; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    set -- $(run_$e)
    awk -v e="$e" -v r="$r" -v n="$n" -v a="$1" -v b="$2" -v l="$load" \
      'BEGIN { printf "round %d\t%s\t%.1f s\t%.2f pages/min\tload %s\n", r, e, b - a, n * 60 / (b - a), l }'
  done
  r=$((r + 1))
done
