#!/bin/sh
# The vision tower, seer vs llama.cpp's libmtmd, on CPU (issue 9 item 10, issue 22 item 1): the same random
# mmproj of the released 0.8B tower shape (F16, written by `seer bench --image --preset 0.8b`,
# vision/randmodel.c), the same image sizes (random-pixel PNGs whose sides are multiples of 32, so neither
# engine resizes), the same thread counts, in one run. Per round and thread count: seer encodes every size
# once (after an untimed warm-up each), then libmtmd does the same, the order swapped every round so the
# machine's load falls on both alike; each round uses new images. Prints the median encode time per engine
# and size, and the ratio (libmtmd's time / seer's: > 1 means seer is faster), with the 1-minute load
# average at the start of each engine's turn beside every figure.
#   bench/tower_vs_mtmd.sh [SIZES] [THREADS]      e.g. bench/tower_vs_mtmd.sh "512x512 1024x768" "2 1"
# The peer is a NATIVE llama.cpp (bench/llama_native.sh: -DGGML_NATIVE=ON, every instruction set of this
# CPU, as a user builds it): its libmtmd, driven by bench/tower_mtmd.c (built here against it), one
# process per round and thread count, timing mtmd_encode_chunk (the tower and merger only: the span of
# libmtmd's own "image slice encoded in N ms" log line) after one warm-up encode per size, as seer
# does; llama-mtmd-cli would also decode every image's tokens through the text model, minutes per round
# on this machine. MTMD=node instead runs libmtmd inside npm @fugood/llama.node (bench/tower_mtmd.mjs:
# an SSE2-only prebuilt, kept for the record; its time is that log line).
# libmtmd needs a text model whose hidden size is the mmproj's projection size (1024): the random 0.8B
# text GGUF (Q4_K, the smallest; the native driver loads only its vocabulary and sizes). With MTMD=node
# MTMD_CHECK=1 bench/tower_mtmd.mjs also times each image completion minus a text completion of as many
# tokens, a cross-check from outside (printed as a second libmtmd column).
# MTMD=vulkan compares the Vulkan builds (issue 22 item 1: on lavapipe here, on a GPU where there is one): seer
# with --device vulkan against libmtmd on llama.cpp's Vulkan backend, that is libmtmd built from the bundle's
# source against the prebuilt Vulkan ggml and libllama of npm @node-llama-cpp/linux-x64-vulkan 3.22.1, the
# same release (bench/llama_vk.sh llama_vk_mtmd; this machine's glslc cannot build its shaders), driving
# bench/tower_mtmd.c with the projector on the GPU. Both see GGML_VK_VISIBLE_DEVICES=0 / the auto device; a
# CPU Vulkan device (lavapipe) counts as the GPU then.
# seer runs as its commands do (not exact: on CPUs with AVX512-BF16 the tower's products and attention in
# bf16, docs/ARCHITECTURE.md "Exact and not exact").
# Environment: SEER (default build/seer), SEER_BASE (an older seer, run in the same rounds: its own
# columns), SEER_BASE_ARGS (options for SEER_BASE's `seer bench`, e.g. --exact: the f32 path of the same
# binary in the same rounds), ROUNDS (3), BENCH_DIR (/tmp/seer-tower-bench; the two model
# files are kept there and reused), RAW (a file to append every single measurement to, with `uptime`),
# MTMD (native, the default, vulkan, or node), LLAMA_BIN (the directory holding the native libmtmd; default:
# bench/llama_native.sh's build), CC (for bench/tower_mtmd.c).
# Needs `npm install --ignore-scripts --omit=optional` in tests/oracle (the llama.cpp source bundle, or
# the addon), cmake and a C++ compiler (the native build), and python3 (the table; MTMD=node: the PNGs).
set -eu
cd "$(dirname "$0")/.."
sizes=${1:-512x512 1024x768 1280x1664}
threads=${2:-2 1}
rounds=${ROUNDS:-3}
dir=${BENCH_DIR:-/tmp/seer-tower-bench}
seer=$(realpath "${SEER:-build/seer}")
raw=${RAW:-$dir/raw.tsv}
mtmd=${MTMD:-native}
case $mtmd in
  native) bin=${LLAMA_BIN:-$(bench/llama_native.sh "llama-mtmd-cli" | tail -1)} ;;
  vulkan) ;;
  node) [ -d tests/oracle/node_modules/@fugood/llama.node ] ||
          { echo "tower_vs_mtmd.sh: npm install in tests/oracle first" >&2; exit 1; } ;;
  *) echo "tower_vs_mtmd.sh: MTMD=$mtmd: native, vulkan or node" >&2; exit 2 ;;
esac
mkdir -p "$dir/img"
if [ "$mtmd" = native ]; then
  # bench/tower_mtmd.c against the native build: the clone is the directory above build-seer-native/bin
  src=$(dirname "$(dirname "$bin")")
  ${CC:-cc} -O2 -o "$dir/tower_mtmd" bench/tower_mtmd.c -I"$src/include" -I"$src/ggml/include" -I"$src/tools/mtmd" \
    -L"$bin" -lmtmd -lllama -lggml -lggml-base -Wl,-rpath,"$bin" ||
    { echo "tower_vs_mtmd.sh: could not build bench/tower_mtmd.c against $bin" >&2; exit 1; }
fi
seer_dev=""
if [ "$mtmd" = vulkan ]; then
  # shellcheck source=bench/llama_vk.sh
  . bench/llama_vk.sh
  llama_vk "$PWD" "$dir/llama-vk" && llama_vk_mtmd "$PWD" "$dir/llama-vk" || exit 1
  cp "$llama_vk_tower_exe" "$dir/tower_mtmd"
  export LLAMA_BACKEND_DIR="$llama_vk_bins" GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-0}
  seer_dev="--device vulkan"
fi
text=$dir/text-0.8b-q4_k.gguf mmproj=$dir/mmproj-0.8b-f16.gguf

if [ ! -f "$text" ]; then
  "$seer" bench --preset 0.8b --dtype q4_k -o "$text" -p 8 -n 1 --reps 1 >/dev/null
fi
# the random mmproj of seer's tower bench, and png (bench/random_inputs.sh)
. bench/random_inputs.sh
[ -f "$mmproj" ] || random_mmproj "$seer" "$mmproj" || exit 1

for s in $sizes; do
  w=${s%x*} h=${s#*x}
  [ $((w % 32)) -eq 0 ] && [ $((h % 32)) -eq 0 ] || { echo "tower_vs_mtmd.sh: $s: sides must be multiples of 32" >&2; exit 2; }
  [ "$mtmd" = node ] || continue # the native driver makes its own random pixels
  r=0
  while [ $r -le "$rounds" ]; do
    [ -f "$dir/img/$s-$r.png" ] || png "$dir/img/$s-$r.png" "$w" "$h" "$((r * 7919 + w + h))"
    r=$((r + 1))
  done
done

load() { uptime | sed 's/.*load average: //; s/,.*//'; }
seer_round() { # threads round [binary engine-name extra-args]
  args="${5:-} $seer_dev"; for s in $sizes; do args="$args --image $s"; done
  l=$(load)
  # shellcheck disable=SC2086
  "${3:-$seer}" bench -m "$mmproj" $args -t "$1" --reps 1 --json 2>/dev/null | python3 -c '
import json, sys
for im in json.load(sys.stdin)["images"]:
    print("%s\t%s\t%dx%d\t%s\t%d\t%.3f\t%s" % (sys.argv[4], sys.argv[1], im["width"], im["height"], sys.argv[2],
          im["tokens"], im["encode_seconds"], sys.argv[3]))' "$1" "$2" "$l" "${4:-seer}" >>"$raw"
}
mtmd_round() { # threads round
  l=$(load)
  if [ "$mtmd" != node ]; then
    # shellcheck disable=SC2086
    "$dir/tower_mtmd" "$text" "$mmproj" "$1" $sizes >"$dir/mtmd.log" 2>&1 || { tail -5 "$dir/mtmd.log" >&2; exit 1; }
    awk -v t="$1" -v r="$2" -v l="$l" '{ printf "libmtmd\t%s\t%s\t%s\t%s\t%s\t%s\n", t, $1, r, $2, $3, l }' \
      "$dir/mtmd.log" >>"$raw"
    return
  fi
  args=""; for s in $sizes; do args="$args --warmup $dir/img/$s-0.png --image $dir/img/$s-$2.png"; done
  [ "${MTMD_CHECK:-0}" = 1 ] && args="$args --text-check 1"
  # shellcheck disable=SC2086
  node bench/tower_mtmd.mjs --model "$text" --mmproj "$mmproj" --threads "$1" --out "$dir/mtmd.json" $args \
    >"$dir/mtmd.log" 2>&1 || { tail -5 "$dir/mtmd.log" >&2; exit 1; }
  # one "image slice encoded in N ms" line per image, in the order run: the warm-ups first
  python3 -c '
import json, os, re, sys
log = [int(m) for m in re.findall(r"image slice encoded in (\d+) ms", open(sys.argv[2]).read())]
res = json.load(open(sys.argv[1]))
if len(log) != 2 * len(res):
    sys.exit("tower_vs_mtmd.sh: %d encode lines in libmtmd\x27s log for %d images" % (len(log), 2 * len(res)))
for k, r in enumerate(res):
    size = os.path.basename(r["image"]).split("-")[0]
    print("libmtmd\t%s\t%s\t%s\t%d\t%.3f\t%s" % (sys.argv[3], size, sys.argv[4], r["tokens"] - 2,
          log[len(res) + k] / 1e3, sys.argv[5]))
    if "encode_ms" in r:
        print("libmtmd-check\t%s\t%s\t%s\t%d\t%.3f\t%s" % (sys.argv[3], size, sys.argv[4], r["tokens"] - 2,
              r["encode_ms"] / 1e3, sys.argv[5]))' "$dir/mtmd.json" "$dir/mtmd.log" "$1" "$2" "$l" >>"$raw"
}

# SEER_BASE: an older seer binary, run in the same rounds (before/after a change under the same load)
base_round() { [ -z "${SEER_BASE:-}" ] || seer_round "$1" "$2" "$(realpath "$SEER_BASE")" seer-base "${SEER_BASE_ARGS:-}"; }

: >"$raw"
echo "uptime at start: $(uptime)" >&2
for t in $threads; do
  r=1
  while [ $r -le "$rounds" ]; do
    echo "threads $t, round $r/$rounds: $(uptime)" >&2
    if [ $((r % 2)) -eq 1 ]; then seer_round "$t" "$r"; mtmd_round "$t" "$r"; base_round "$t" "$r"
    else base_round "$t" "$r"; mtmd_round "$t" "$r"; seer_round "$t" "$r"; fi
    r=$((r + 1))
  done
done
echo "uptime at end: $(uptime)" >&2

# engine threads size round tokens seconds load1  ->  the table
python3 - "$raw" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys = []
for r in rows:
    if (r[1], r[2]) not in keys:
        keys.append((r[1], r[2]))
check = any(r[0] == "libmtmd-check" for r in rows)
base = any(r[0] == "seer-base" for r in rows)
print("| threads | image | tokens | seer s (median, min-max) | libmtmd s (median, min-max) | libmtmd / seer | load 1-min |"
      + (" libmtmd, image - text run |" if check else "")
      + (" SEER_BASE s (median, min-max) | libmtmd / SEER_BASE |" if base else ""))
print("|---|---|---|---|---|---|---|" + ("---|" if check else "") + ("---|---|" if base else ""))
for t, s in keys:
    def col(e):
        v = [float(r[5]) for r in rows if r[0] == e and r[1] == t and r[2] == s]
        return (statistics.median(v), min(v), max(v), len(v)) if v else None
    a, b = col("seer"), col("libmtmd")
    tok = next(r[4] for r in rows if r[1] == t and r[2] == s)
    loads = [float(r[6]) for r in rows if r[1] == t and r[2] == s]
    f = lambda c: "%.2f (%.2f-%.2f, n=%d)" % c if c else "-"
    ratio = "%.2f" % (b[0] / a[0]) if a and b else "-"
    z = col("seer-base")
    print("| %s | %s | %s | %s | %s | %s | %.1f-%.1f |" % (t, s, tok, f(a), f(b), ratio, min(loads), max(loads))
          + (" %s |" % f(col("libmtmd-check")) if check else "")
          + (" %s | %s |" % (f(z), "%.2f" % (b[0] / z[0]) if z and b else "-") if base else ""))
PY
