#!/bin/bash
# The GPU check (issue 22 item 5): run from the unpacked bundle scripts/gpu-bundle.sh makes, on a machine
# with a Vulkan GPU and no network, one command, within a time budget (default 450 s, inside 8 minutes):
#   1. the machine: date, CPU, GPU and driver (nvidia-smi where there is one), `seer info --devices`
#   2. the Vulkan test programs of the bundle (t/*.t: ops, CPU-vs-Vulkan agreement of the text model and the
#      tower, batched decode, q8_0 cache, faults) on the GPU, SEER_REQUIRE_VULKAN=1 (no silent skips)
#   3. random-weight GGUFs of the released 0.8B and 9B shapes in Q4_K_M and their F16 mmproj, written there
#      by `seer bench --preset` (no model travels), then seer vs llama.cpp's Vulkan build on the same files,
#      the engines alternating, round by round: prefill 2048 and decode 128 (seer bench / llama_bench_vk,
#      bench/llama_vk.sh), and the tower at 1024x768 (seer bench --image / tower_mtmd_vk: libmtmd on the same
#      Vulkan build); seer alone (the prebuilt peer has no batched tool): four sequences decoding together
#      (seer bench --parallel 4, tokens/s of all four)
# Every step runs under its own timeout, cut to what is left of the budget, so one hang costs one step.
# The report goes to $OUT (the device tool brings back what is written there; 3 files): gpu-check.md (the
# machine and the table), gpu-check.log (every step's command and output), tests.tap (the tests' output).
#   ./gpu-check.sh [--dry-run]      --dry-run: print the steps and their commands, run nothing
# Environment: OUT (default out/ in the bundle), GPU_CHECK_QUICK=1 (tiny sizes for a CPU Vulkan driver such as
# lavapipe: 0.8B only, prefill 64, decode 4, tower 256x256, one round, budget 3600 s), GPU_CHECK_BUDGET
# (seconds, default 450), GPU_CHECK_ROUNDS (default 2), GPU_CHECK_DTYPE (the text models' dtype, default
# q4_k_m; q8_0 is generated several times faster, where the 9B model's minutes of CPU do not fit),
# GPU_CHECK_WORK (the models, several GB for 9B, on /tmp's file system: bench/random_inputs.sh hard-links;
# default /tmp/seer-gpu-check), VK_DEVICE (the Vulkan device index both engines use, default 0).
# Exit status: 0 every step ran and every test passed; 1 a step failed or timed out (gpu-check.md says
# which); 2 bad arguments, or not run from a bundle.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dry=0
case ${1:-} in
  -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --dry-run) dry=1 ;;
  "") ;;
  *) echo "gpu-check.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "gpu-check.sh: one argument at most (--help)" >&2; exit 2; }
if [ ! -x "$here/bin/seer" ] && [ "$dry" = 0 ]; then
  echo "gpu-check.sh: $here/bin/seer missing: run the copy inside a bundle (scripts/gpu-bundle.sh)" >&2
  exit 2
fi

quick=${GPU_CHECK_QUICK:-0}
out=${OUT:-$here/out}
work=${GPU_CHECK_WORK:-/tmp/seer-gpu-check}
dev=${VK_DEVICE:-0}
rounds=${GPU_CHECK_ROUNDS:-2}
dtype=${GPU_CHECK_DTYPE:-q4_k_m}
if [ "$quick" = 1 ]; then
  presets="0.8b" pp=64 tg=4 npar=4 ctx0=4 tower=256x256 rounds=${GPU_CHECK_ROUNDS:-1}
  budget=${GPU_CHECK_BUDGET:-3600}
  test_limit=300 tests_budget=1200 gen_limit=900 bench_limit=600 tower_limit=600 treps=1
else
  presets="0.8b 9b" pp=2048 tg=128 npar=4 ctx0=16 tower=1024x768 budget=${GPU_CHECK_BUDGET:-450}
  test_limit=90 tests_budget=180 gen_limit=360 bench_limit=90 tower_limit=90 treps=3
fi
deadline=$((SECONDS + budget))
seer=$here/bin/seer
# a bundle made with --no-llama: seer's side alone, the llama.cpp columns empty
llama=0
[ -x "$here/bin/llama_bench_vk" ] || [ "$dry" = 1 ] && llama=1
logs=$work/logs
status=1

# The bundle's libraries first (the Vulkan loader among them); then the machine's own, where the driver's
# libraries are found (NVIDIA's containers keep them in /usr/local/nvidia).
ldp=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && ldp=$ldp:$d; done
export LD_LIBRARY_PATH=$ldp
# NVIDIA's ICD manifest where its containers put it, which the loader does not search by itself
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$nv_icd" ]; then
  export VK_ADD_DRIVER_FILES=$nv_icd
fi
[ -f "$here/layers/VkLayer_khronos_validation.json" ] && export VK_LAYER_PATH=$here/layers
export GGML_VK_VISIBLE_DEVICES=$dev SEER_REQUIRE_VULKAN=1 SEER_TEST_SOURCE_DIR=$here/src

left() { echo $((deadline - SECONDS)); }
# step NAME LIMIT CMD...: runs CMD with its output in $logs/NAME.log, under LIMIT seconds or what is left
# of the budget (less 15 s for the report); a step with under 5 s left is skipped. Records
# "NAME rc seconds" in $work/steps (rc 124: timed out; skip: not run).
step() {
  local name=$1 limit=$2 t rc t0
  shift 2
  t=$(($(left) - 15))
  [ "$t" -lt "$limit" ] || t=$limit
  if [ "$dry" = 0 ] && [ "$t" -lt 5 ]; then
    echo "$name skip 0" >>"$work/steps"
    echo "skipped: out of time" >"$logs/$name.log"
    return 1
  fi
  if [ "$dry" = 1 ]; then
    printf '%-22s %4ss  %s\n' "$name" "$limit" "$*"
    return 1
  fi
  { echo "## $name (limit ${t}s, load $(cut -d' ' -f1-3 /proc/loadavg)): $*"; } >>"$logs/all.log"
  t0=$SECONDS
  # a shell function runs in a bash of its own (timeout runs programs); timeout ends its whole process group
  if declare -F "$1" >/dev/null; then set -- bash -c '"$@"' "$1" "$@"; fi
  timeout -k 5 "$t" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  echo "$name $rc $((SECONDS - t0))" >>"$work/steps"
  cat "$logs/$name.log" >>"$logs/all.log"
  return $rc
}

if [ "$dry" = 1 ]; then
  echo "# gpu-check.sh --dry-run: step, its time limit in seconds, its command (budget $budget s)"
else
  rm -rf "$logs" "$work/steps" "$work/results"
  mkdir -p "$work/models" "$logs" "$out"
  : >"$work/steps"
  : >"$work/results"
fi

# ---- 1. the machine -------------------------------------------------------------------------------------
machine() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
  fi
  sed -n 's/^\(seer_commit\|llama_commit\) /\1: /p' "$here/MANIFEST"
  # nothing outside the bundle but glibc, libstdc++, libgcc_s (and, later, the driver)
  ldd "$seer" | awk '$2 == "=>" { print "seer loads", $1, "from", $3 }' | grep -v "$here/lib/" || true
  "$seer" --version
}
export -f machine
export seer here
step machine 20 machine
step devices 60 "$seer" info --devices

# ---- 2. the models, generated in the background while the tests run (the 9B one takes minutes of CPU) ---
# the bundle's copy; in the repository (a --dry-run of scripts/gpu-check.sh) bench/'s
ri=$here/src/bench/random_inputs.sh
[ -f "$ri" ] || ri=$here/../bench/random_inputs.sh
# shellcheck source=bench/random_inputs.sh
. "$ri"
export -f random_mmproj
model() { echo "$work/models/qwen35-$1-$dtype.gguf"; }
mmproj() { echo "$work/models/mmproj-$1-f16.gguf"; }
gen_models() {
  for p in $presets; do
    [ -f "$(model "$p")" ] || step "gen_$p" "$gen_limit" "$seer" bench --preset "$p" --dtype "$dtype" \
        -o "$(model "$p")" --device cpu -p 0 -n 0
    # its tower encodes one image on the GPU, stopped once the file exists (bench/random_inputs.sh)
    [ -f "$(mmproj "$p")" ] || step "gen_mmproj_$p" "$gen_limit" random_mmproj "$seer" "$(mmproj "$p")" "$p"
  done
}
genpid=
if [ "$dry" = 1 ]; then gen_models; else gen_models & genpid=$!; fi
# wait_for FILE: until the background generation has written it (atomically renamed: complete) or ended
wait_for() {
  while [ ! -f "$1" ] && kill -0 "$genpid" 2>/dev/null && [ "$(left)" -gt 20 ]; do sleep 1; done
  [ -f "$1" ]
}

# ---- 3. the tests ---------------------------------------------------------------------------------------
[ "$dry" = 1 ] || : >"$out/tests.tap"
tests_end=$((SECONDS + tests_budget)) # the tests together, so that the benchmarks keep their time
# the quick ones first; the op table last (its CPU references take minutes on a slow machine)
first="vulkan_device vulkan_model vision_vit_vulkan vulkan_q8_split vulkan_faults lm_kvq8 lm_batch"
rest=$(cd "$here/t" 2>/dev/null && ls -- *.t | sed 's/\.t$//' | grep -vxF "$(echo "$first" | tr ' ' '\n')")
for n in $first $rest; do
  t=$here/t/$n.t
  [ -e "$t" ] || { [ "$dry" = 1 ] && step "test_$n" "$test_limit" "t/$n.t"; continue; }
  lim=$((tests_end - SECONDS))
  [ "$lim" -lt "$test_limit" ] || lim=$test_limit
  step "test_$n" "$lim" env TMPDIR="$work" "$t"
  [ "$dry" = 1 ] || { echo "# ---- $n"; cat "$logs/test_$n.log"; } >>"$out/tests.tap"
done

# ---- 4. the engines side by side -------------------------------------------------------------------------
record() { # ENGINE PRESET: "test value" lines on stdin -> $work/results
  awk -v e="$1" -v p="$2" 'NF == 2 { print e, p, $1, $2 }' >>"$work/results"
}
for p in $presets; do
  m=$(model "$p") mm=$(mmproj "$p")
  [ "$dry" = 1 ] || wait_for "$m" || { echo "$p: no model ($m)" >>"$logs/all.log"; continue; }
  for r in $(seq 1 "$rounds"); do
    step "seer_${p}_r$r" "$bench_limit" "$seer" bench -m "$m" --device "vulkan:$dev" -p "$pp" -n "$tg" --reps 1 &&
      awk '/^(pp|tg)[0-9]+ / { print $1, $2 }' "$logs/seer_${p}_r$r.log" | record seer "$p"
    [ "$llama" = 1 ] && step "llama_${p}_r$r" "$bench_limit" "$here/bin/llama_bench_vk" "$here/lib" -m "$m" \
        -p "$pp" -n "$tg" --reps 1 &&
      awk '/^(pp|tg)[0-9]+ / { print $1, $2 }' "$logs/llama_${p}_r$r.log" | record llama "$p"
    step "seer_par_${p}_r$r" "$bench_limit" "$seer" bench -m "$m" --device "vulkan:$dev" -p 0 -n "$tg" \
        -d "$ctx0" --parallel "$npar" --reps 1 &&
      awk -v k="$npar" '/^tg[0-9]+(@d[0-9]+)? / { print k "x" $1, $2 }' "$logs/seer_par_${p}_r$r.log" | record seer "$p"
  done
  # the tower: the median of $treps encodes of random pixels
  [ "$dry" = 1 ] || wait_for "$mm" || { echo "$p: no mmproj ($mm)" >>"$logs/all.log"; continue; }
  step "seer_tower_$p" "$tower_limit" "$seer" bench -m "$mm" --image "$tower" --device "vulkan:$dev" --reps "$treps" \
      --json &&
    sed -n 's/.*"encode_seconds": *\([0-9.e+-]*\).*/\1/p' "$logs/seer_tower_$p.log" | head -1 |
      awk -v s="$tower" '{ print "tower" s, $1 }' | record seer "$p"
  # libmtmd: one warm-up encode, then one timed ("WxH TOKENS SECONDS"); its text model gives the vocabulary
  [ "$llama" = 1 ] && step "llama_tower_$p" "$tower_limit" env LLAMA_BACKEND_DIR="$here/lib" \
      "$here/bin/tower_mtmd_vk" "$m" "$mm" 4 "$tower" &&
    awk -v s="$tower" '$1 == s && NF == 3 { print "tower" s, $3 }' "$logs/llama_tower_$p.log" | record llama "$p"
done
[ "$dry" = 1 ] && exit 0
wait "$genpid" # its steps end within the budget

# ---- the report ------------------------------------------------------------------------------------------
failed=$(awk '$2 != 0 { why = $2 == 124 || $2 == 137 ? "timed out" : $2 == "skip" ? "skipped" : "rc " $2
                         printf " %s(%s)", $1, why }' "$work/steps")
{
  echo "# seer GPU check"
  echo
  sed 's/^/    /' "$logs/machine.log"
  echo
  echo "Vulkan devices (\`seer info --devices\`):"
  echo
  sed 's/^/    /' "$logs/devices.log"
  echo
  echo "Tests (t/*.t on vulkan:$dev, SEER_REQUIRE_VULKAN=1): $(grep -c '^ok' "$out/tests.tap") ok," \
       "$(grep -c '^not ok' "$out/tests.tap") not ok, $(grep -ci '^ok.*# skip' "$out/tests.tap") skipped."
  echo
  echo "Engines: seer (\`seer bench\`, --device vulkan:$dev) and llama.cpp's Vulkan build (npm" \
       "node-llama-cpp 3.22.1's prebuilt libllama, every layer offloaded, through bench/llama_bench.c)," \
       "the same random $dtype GGUF, $rounds round(s), engines alternating; prefill pp$pp, decode tg$tg;" \
       "the tower's encode seconds for one $tower image (F16 mmproj; seer the median of $treps, libmtmd" \
       "of the same release on that build one after a warm-up); seer alone: ${npar}x, $npar sequences" \
       "decoding together after $ctx0 prompt tokens each (tokens/s of all)."
  echo
  echo "| shape | test | seer | llama.cpp | seer vs llama.cpp | seer decode weights GB/s |"
  echo "|---|---|---|---|---|---|"
  awk -v dir="$work/models" -v dt="$dtype" '
    { k = $2 " " $3; s[$1 " " k] += $4; n[$1 " " k]++; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
    END {
      for (i = 1; i <= m; i++) {
        split(order[i], a, " "); p = a[1]; t = a[2]
        sa = n["seer " order[i]] ? s["seer " order[i]] / n["seer " order[i]] : 0
        la = n["llama " order[i]] ? s["llama " order[i]] / n["llama " order[i]] : 0
        tower = t ~ /^tower/
        unit = tower ? " s" : " tok/s"
        # tokens/s: seer / llama.cpp; seconds: llama.cpp / seer (> 1: seer faster either way)
        ratio = sa > 0 && la > 0 ? sprintf("%.2fx", tower ? la / sa : sa / la) : "-"
        gbs = "-"
        if (t ~ /^tg[0-9]+$/ && sa > 0) {
          cmd = "stat -c %s " dir "/qwen35-" p "-" dt ".gguf"; cmd | getline bytes; close(cmd)
          gbs = sprintf("%.3g", bytes * sa / 1e9)
        }
        printf "| %s %s | %s | %s | %s | %s | %s |\n", p, toupper(dt), t, sa ? sprintf("%.4g%s", sa, unit) : "-",
               la ? sprintf("%.4g%s", la, unit) : "-", ratio, gbs
      }
    }' "$work/results"
  echo
  echo "Decode weights GB/s: the model file's bytes times seer's single-sequence decode tokens/s (every weight"
  echo "is read once per token), to set beside the GPU's memory bandwidth."
  echo
  [ "$llama" = 1 ] || echo "This bundle holds no llama.cpp (gpu-bundle.sh --no-llama): seer's side alone."
  if [ -n "$failed" ]; then echo "Steps that failed:$failed (gpu-check.log)."; else echo "Every step ran."; fi
  echo "Budget: $SECONDS s of $budget s."
} >"$out/gpu-check.md"
cp "$logs/all.log" "$out/gpu-check.log"
cat "$out/gpu-check.md"
[ -z "$failed" ] && status=0
exit $status
