#!/bin/sh
# A large `seer ocr` batch, made at run time, and its outcome checked: N inputs (default 1,000) of which
# 5 % are broken — truncated JPEGs, PNGs with a bit-flipped header (width 0), zero-length files, text
# with an image extension, and unreadable files (chmod 000; as root, which reads those anyway, dangling
# symbolic links instead) — and every 20th good input a 3-page TIFF. It checks what issue 12 asks of
# such a batch (exit status 3, every good page in the jsonl output, every bad input on stderr and as an
# error object, no temporary file left) and prints the throughput in pages per minute.
#   bench/ocr_batch.sh [N] [MODEL]
# MODEL: a model with a vision tower (HF directory, or GGUF text model with its mmproj beside it); by
# default a tiny random one from tests/reference/gen_tiny.py, which measures the batch machinery
# (decoding, prefetch, output), not a real model's speed.
# Environment: BENCH_DIR (default /tmp/seer-ocr-bench, emptied first), SEER (default build/seer),
# PAGE_SIZE (default 850x1100: a letter page at 100 dpi), OCR_ARGS (default "-n 64 -t $(nproc)").
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000}
model=${2:-}
dir=${BENCH_DIR:-/tmp/seer-ocr-bench}
seer=$(realpath "${SEER:-build/seer}")
size=${PAGE_SIZE:-850x1100}
args=${OCR_ARGS:--n 64 -t $(nproc)}
n_bad=$((n / 20))
rm -rf "$dir" && mkdir -p "$dir/in" "$dir/src"
if [ -z "$model" ]; then
  python3 tests/reference/gen_tiny.py --out "$dir/model" >/dev/null
  model="$dir/model/model-f32.gguf"
fi

# ---- the inputs: 8 source pages, copied (not linked: seer ocr does a file named twice once) ----
for k in 0 1 2 3 4 5 6 7; do
  ffmpeg -y -v error -f lavfi -i "testsrc2=size=$size:r=1" -vf "hue=h=$((k * 45))" -frames:v 1 "$dir/src/p$k.png"
  ffmpeg -y -v error -i "$dir/src/p$k.png" -q:v 4 "$dir/src/p$k.jpg"
  ffmpeg -y -v error -i "$dir/src/p$k.png" -pix_fmt gray "$dir/src/g$k.tif"
done
tiffcp "$dir/src/g0.tif" "$dir/src/g1.tif" "$dir/src/g2.tif" "$dir/src/multi.tif"
good_pages=0
i=0
while [ $i -lt $((n - n_bad)) ]; do
  name=$(printf 'doc%05d' $i)
  if [ $((i % 20)) -eq 19 ]; then
    cp "$dir/src/multi.tif" "$dir/in/$name.tif"; good_pages=$((good_pages + 3))
  elif [ $((i % 2)) -eq 0 ]; then
    cp "$dir/src/p$((i % 8)).jpg" "$dir/in/$name.jpg"; good_pages=$((good_pages + 1))
  else
    cp "$dir/src/p$((i % 8)).png" "$dir/in/$name.png"; good_pages=$((good_pages + 1))
  fi
  i=$((i + 1))
done
j=0
jpg_size=$(stat -c %s "$dir/src/p0.jpg")
while [ $j -lt "$n_bad" ]; do
  name=$(printf 'bad%05d' $j)
  case $((j % 5)) in
    0) head -c $((jpg_size / 3)) "$dir/src/p0.jpg" > "$dir/in/$name.jpg" ;;
    1) cp "$dir/src/p1.png" "$dir/in/$name.png"
       printf '\000\000\000\000' | dd of="$dir/in/$name.png" bs=1 seek=16 conv=notrunc 2>/dev/null ;;
    2) : > "$dir/in/$name.png" ;;
    3) echo "not an image" > "$dir/in/$name.jpg" ;;
    4) if [ "$(id -u)" -ne 0 ]; then cp "$dir/src/p2.png" "$dir/in/$name.png"; chmod 000 "$dir/in/$name.png"
       else ln -s "$dir/nowhere/$name.png" "$dir/in/$name.png"; fi ;;
  esac
  j=$((j + 1))
done
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $n inputs ($n_bad broken, $good_pages good pages at $size), model $model, $args"

# ---- the batch ----
t0=$(date +%s.%N)
status=0
# shellcheck disable=SC2086
"$seer" ocr -m "$model" $args --format jsonl --out "$dir/out" "$dir/in" 2> "$dir/stderr" || status=$?
t1=$(date +%s.%N)

# ---- the outcome ----
fail=0
check() { if [ "$1" = "$2" ]; then echo "ok: $3"; else echo "FAILED: $3 (got $1, expected $2)"; fail=1; fi; }
check "$status" 3 "exit status 3 (some inputs failed, the rest done)"
check "$(find "$dir/out" -type f -name '*.jsonl' ! -name '.*' | wc -l)" "$n" "one output file per input"
check "$(find "$dir/out" -name '.*' | wc -l)" 0 "no temporary files left"
check "$(cat "$dir"/out/*.jsonl | grep -c '"text":')" "$good_pages" "every good page has its text"
check "$(cat "$dir"/out/doc*.jsonl | grep -c '"error":' || true)" 0 "no good input failed"
check "$(cat "$dir"/out/bad*.jsonl | grep -c '"error":')" "$n_bad" "every broken input has an error object"
named=0
for f in "$dir"/in/bad*; do grep -q "$f" "$dir/stderr" && named=$((named + 1)); done
check "$named" "$n_bad" "every broken input is named on stderr"
tail -n 1 "$dir/stderr"
awk -v p="$good_pages" -v a="$t0" -v b="$t1" \
  'BEGIN { s = b - a; printf "%d pages in %.1f s: %.1f pages/minute (model load and listing included)\n", p, s, 60 * p / s }'
exit $fail
