#!/bin/sh
# A video described end to end against native llama.cpp (issue 22 item 1): one clip (default 120 s of
# 640x360 testsrc2 at 30 fps, H.264 with a keyframe every 2 s, made here with Debian's ffmpeg) described
# by `seer describe` and by llama-mtmd-cli's video path (bench/llama_native.sh; it runs the ffmpeg and
# ffprobe binaries itself), both at 2 frames a second (Qwen's sampling rate; llama-mtmd-cli's default is
# 4), greedy, the same prompt, the same random 0.8B-shape Q8_0 GGUF and F16 mmproj, the same threads and
# token limit. Prints, per engine and round, the wall time from process start to exit, the prompt
# tokens, and the time by stage each engine reports (seer: --json timings; llama.cpp: the sum of its
# "mtmd batch encoding done" lines, its prompt and generation lines), with the load average before it.
#   bench/video_vs_mtmd.sh [SECONDS]
# Environment: SEER (default build/seer), BENCH_DIR (default /tmp/seer-serve-bench, as
# bench/ocr_vs_mtmd.sh), THREADS (2), N_PREDICT (32), ROUNDS (1; even rounds run llama.cpp first),
# LLAMA_IMAGE_MAX_TOKENS (unset: llama-mtmd-cli's own frame size; a number caps its tokens per frame
# pair, e.g. to seer's count for the same clip), ENGINES ("seer llama").
set -eu
cd "$(dirname "$0")/.."
secs=${1:-120}
seer=$(realpath "${SEER:-build/seer}")
dir=${BENCH_DIR:-/tmp/seer-serve-bench}
threads=${THREADS:-2}
n_predict=${N_PREDICT:-32}
rounds=${ROUNDS:-1}
engines=${ENGINES:-seer llama}
. bench/random_inputs.sh
bin=$(bench/llama_native.sh "llama-mtmd-cli" | tail -1)
mtmd_models "$seer" "$dir" "$bin"
clip=$dir/clip-${secs}s.mp4
[ -f "$clip" ] || ffmpeg -v error -f lavfi -i "testsrc2=size=640x360:rate=30:duration=$secs" -c:v libx264 \
  -preset ultrafast -g 60 "$clip"
prompt="Describe what happens in this video, in order, with times."

run_seer() {
  t0=$(date +%s.%N)
  "$seer" describe -m "$model" --mmproj "$mmproj" -t "$threads" -n "$n_predict" --temp 0 -c 32768 \
    -p "$prompt" --json "$clip" >"$dir/video-seer.json" 2>"$dir/video-seer.log"
  t1=$(date +%s.%N)
  python3 - "$dir/video-seer.json" "$t0" "$t1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["chunks"][0]
t = c["timings"]
print("%.1f s\tprompt %d tokens\ttower %.1f s, prefill %.1f s (overlapping), generate %.1f s" % (
    float(sys.argv[3]) - float(sys.argv[2]), c["prompt_tokens"], t["vision_seconds"], t["prefill_seconds"],
    t["decode_seconds"]))
EOF
}

run_llama() {
  cap=""
  [ -n "${LLAMA_IMAGE_MAX_TOKENS:-}" ] && cap="--image-max-tokens $LLAMA_IMAGE_MAX_TOKENS"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$bin "$bin/llama-mtmd-cli" -m "$model" --mmproj "$mmproj" --video "$clip" --video-fps 2 $cap \
    -p "$prompt" -n "$n_predict" -t "$threads" --temp 0 --no-warmup -c 65536 --video-ffmpeg-dir /usr/bin \
    --jinja --chat-template "$(cat "$template")" >"$dir/video-llama.txt" 2>"$dir/video-llama.log"
  t1=$(date +%s.%N)
  python3 - "$dir/video-llama.log" "$t0" "$t1" <<'EOF'
import re, sys
log = open(sys.argv[1], errors="replace").read()
enc = [float(x) for x in re.findall(r"mtmd batch encoding done in (\d+) ms", log)]
pe = re.search(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", log)
ev = re.search(r"\beval time =\s*([\d.]+) ms /\s*(\d+) runs", log)
# The prompt's tokens: every batch after the first logs its size once per sequence slot, with its
# M-RoPE position (which advances by less than the tokens of a frame pair), so the sizes of the
# distinct batches are summed; the first text chunk is not logged (hence "at least").
batches = set(re.findall(r"token position (\d+) after (\d+) for sequence 0 with (\d+) new", log))
print("%.1f s\tprompt >= %d tokens\ttower %.1f s in %d chunks, prompt eval %s, generate %s" % (
    float(sys.argv[3]) - float(sys.argv[2]), sum(int(n) for _, _, n in batches), sum(enc) / 1000, len(enc),
    "%.1f s" % (float(pe.group(1)) / 1000) if pe else "?", "%.1f s" % (float(ev.group(1)) / 1000) if ev else "?"))
EOF
}

echo "clip: $secs s of 640x360 at 30 fps; 2 frames/s; threads $threads; -n $n_predict; $(nproc) CPUs"
r=1
while [ "$r" -le "$rounds" ]; do
  order=$engines
  [ $((r % 2)) -eq 0 ] && order=$(echo "$engines" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, i > 1 ? " " : "" }')
  for e in $order; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf 'round %d\t%s\tload %s\t%s\n' "$r" "$e" "$load" "$(run_$e)"
  done
  r=$((r + 1))
done
