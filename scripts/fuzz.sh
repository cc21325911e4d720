#!/bin/bash
# scripts/fuzz.sh TARGET SECONDS — runs a libFuzzer campaign on one fuzz target (tests/fuzz/TARGET.c,
# e.g. fuzz_gguf) for SECONDS, or on every target for SECONDS each with TARGET "all" (what .ci/run
# does after the test suite). Builds build-fuzz/ first (clang, -DSEER_FUZZ=ON: the library with
# ASan+UBSan and coverage instrumentation), makes the seed corpora from a tiny generated
# checkpoint (tests/fuzz/make_seeds.py), and keeps each target's corpus in
# build-fuzz/corpus/TARGET, so later campaigns start where earlier ones stopped.
#
# Exit status: 0 when no target found anything; 1 when one crashed, leaked, hit UB, ran out of
# memory (-rss_limit_mb) or hung (-timeout); the input is in build-fuzz/findings/TARGET/ and
# becomes a regression test in the normal suite. Per-target statistics (executions, CPU seconds,
# corpus size) go to build-fuzz/findings/TARGET.stats and stdout.
#
# Environment: FUZZ_BUILD (build directory, default build-fuzz), FUZZ_CMAKE_ARGS (extra configure
# arguments, e.g. -DSEER_FFMPEG=OFF), FUZZ_NICE (nice level, default 0; campaigns beside other
# work use 19), FUZZ_NO_BUILD=1 (run the binaries already built, e.g. while the tree is mid-edit).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh TARGET|all SECONDS" >&2; exit 2; }
target=$1 secs=$2
build=${FUZZ_BUILD:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang is required (scripts/install-deps.sh installs it)" >&2; exit 2; }

if [ "$target" = all ]; then
    targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
else
    [ -f "tests/fuzz/$target.c" ] || { echo "fuzz.sh: no tests/fuzz/$target.c" >&2; exit 2; }
    targets=$target
fi
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
    # shellcheck disable=SC2086
    cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEER_FUZZ=ON \
          -DSEER_VULKAN=OFF -DSEER_TESTS=OFF ${FUZZ_CMAKE_ARGS:-} >/dev/null
    # shellcheck disable=SC2086
    cmake --build "$build" -j"${JOBS:-2}" --target $targets >/dev/null
fi
seeds="$build/seeds"
# made again when make_seeds.py changed since (a stale directory left later targets without seeds)
if [ ! -d "$seeds" ] || [ tests/fuzz/make_seeds.py -nt "$seeds" ]; then
    rm -rf "$seeds"
    python3 tests/fuzz/make_seeds.py "$seeds"
fi

dict_for() { # each target's dictionary: tests/fuzz/<name>.dict, else the shared JSON one
    local name=${1#fuzz_}
    for d in "tests/fuzz/$name.dict" "tests/fuzz/${name%%_*}.dict"; do
        [ -f "$d" ] && { echo "-dict=$d"; return; }
    done
    case $1 in fuzz_config | fuzz_tokenizer | fuzz_safetensors*) echo "-dict=tests/fuzz/json.dict" ;; esac
}

status=0
for t in $targets; do
    corpus="$build/corpus/$t" findings="$build/findings/$t"
    mkdir -p "$corpus" "$findings"
    # Seeds: generated ones, and any small ones checked in beside a target (tests/fuzz/corpus/TARGET/).
    for d in "$seeds/$t" "tests/fuzz/corpus/$t"; do
        [ -d "$d" ] && cp -n "$d"/* "$corpus/" 2>/dev/null || true
    done
    log="$build/findings/$t.log"
    # -timeout: one input taking 10 s is a hang (the readers are linear; the largest seed runs in ms).
    # -rss_limit_mb: a file that makes us allocate 2 GiB is a finding (limits are checked first).
    # -detect_leaks=1: every error path must free what it allocated.
    rc=0
    # CPU seconds of the campaign (what docs/TESTING.md records): bash's `time`, user + system.
    TIMEFORMAT='%U %S'
    # shellcheck disable=SC2046
    { time nice -n "${FUZZ_NICE:-0}" "$build/fuzz/$t" "$corpus" $(dict_for "$t") -max_total_time="$secs" \
        -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -detect_leaks=1 -print_final_stats=1 \
        -artifact_prefix="$findings/" >"$log" 2>&1; } 2>"$findings.cpu" || rc=$?
    cpu=$(awk '{ printf "%d", $1 + $2 }' "$findings.cpu")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    n_corpus=$(find "$corpus" -type f | wc -l)
    n_find=$(find "$findings" -type f | wc -l)
    line="$t: ${execs:-0} executions, ${cpu} CPU-s over ${secs} s, corpus $n_corpus inputs, findings $n_find (exit $rc)"
    echo "$line" | tee -a "$build/findings/$t.stats"
    if [ "$rc" -ne 0 ] || [ "$n_find" -ne 0 ]; then
        status=1
        grep -m3 -E "ERROR|runtime error|Test unit written" "$log" >&2 || true
    fi
done
exit $status
