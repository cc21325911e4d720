# Sourced (not run) by the benchmarks that need a random vision projector of a released shape or
# random images (bench/tower_vs_mtmd.sh, bench/serve_vs_llama.sh, bench/ocr_vs_mtmd.sh,
# bench/video_vs_mtmd.sh).
# random_mmproj SEER OUT [PRESET]: writes the random F16 mmproj of the PRESET tower shape (default 0.8b) to OUT.
# `seer bench --image --preset` writes its random mmproj (seed 42, so always the same bytes) to a new
# /tmp/seer-bench-* directory and deletes it on exit; it has no -o. The finished file appears there by an
# atomic rename, so it is hard-linked to OUT the moment it exists (same file system: /tmp).
random_mmproj() {
  _before=$(ls -d /tmp/seer-bench-* 2>/dev/null || true)
  _preset=${3:-0.8b}
  "$1" bench --image 1280x1280 --preset "$_preset" --dtype f16 --reps 1 >/dev/null 2>&1 &
  _pid=$!
  while kill -0 $_pid 2>/dev/null && [ ! -f "$2" ]; do
    for _d in /tmp/seer-bench-*; do
      case "$_before" in *"$_d"*) continue ;; esac
      [ -f "$_d/mmproj-$_preset-f16.gguf" ] && ln "$_d/mmproj-$_preset-f16.gguf" "$2" 2>/dev/null && break
    done
    sleep 0.05
  done
  kill $_pid 2>/dev/null || true
  wait $_pid 2>/dev/null || true
  [ -f "$2" ] || { echo "random_mmproj: could not keep seer's random mmproj" >&2; return 1; }
}

# png PATH W H SEED: a W×H PNG of random pixels (python3; the same SEED gives the same bytes).
png() { python3 - "$@" <<'PY'
import random, struct, sys, zlib
path, w, h, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
raw = b"".join(b"\0" + rnd.randbytes(w * 3) for _ in range(h))
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                       + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))
PY
}

# mtmd_models SEER DIR BIN: sets model (the random 0.8B-shape Q8_0 GGUF), mmproj (its F16 projector),
# both in DIR and made when missing, and template (the Qwen3.5 chat template llama.cpp ships, which
# llama-mtmd-cli in BIN needs: the random GGUF has none), for the benchmarks against llama-mtmd-cli.
mtmd_models() {
  template=$3/../../models/templates/Qwen3.5-4B.jinja
  [ -f "$template" ] || { echo "mtmd_models: $template missing" >&2; return 1; }
  mkdir -p "$2"
  model=$2/text-0.8b-q8_0.gguf
  mmproj=$2/mmproj-0.8b-f16.gguf
  [ -f "$model" ] || "$1" bench --preset 0.8b --dtype q8_0 --seed 1 -o "$model" -p 0 -n 0 >/dev/null
  [ -f "$mmproj" ] || random_mmproj "$1" "$mmproj"
}
