#!/bin/bash
# scripts/valgrind.sh [BUILD] — runs the CLI tests (BUILD/t/cli_*.t, default build/) once under
# valgrind memcheck, with the `seer` processes they start traced too: invalid reads/writes, use of
# uninitialised values and definite leaks anywhere in a run fail it (valgrind's exit code 99 makes
# the command's status wrong, so the TAP test that ran it fails, and the summary below counts the
# reports). Complements the ASan+UBSan runs: memcheck sees uninitialised reads ASan does not, and
# needs no rebuild. Slow (20-50x); not part of scripts/test.sh.
#
# Reports: BUILD/valgrind/PID.log, one per process; the script prints each log that has errors.
# Suppressions: tests/valgrind.supp (each one says why it is not seer's bug).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 2; }
ls "$build"/t/cli_*.t >/dev/null 2>&1 || { echo "valgrind.sh: no $build/t/cli_*.t (build the tests first)" >&2; exit 2; }
logs="$(cd "$build" && pwd)/valgrind" # absolute: the tests run seer from other directories
rm -rf "$logs"
mkdir -p "$logs"
supp=()
[ -f tests/valgrind.supp ] && supp=(--suppressions="$PWD/tests/valgrind.supp")
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --track-origins=yes --trace-children=yes
    "--trace-children-skip=*/node,*/python3*" --log-file="$logs/%p.log" "${supp[@]}")
# libjpeg-turbo's SIMD upsampling (4:2:0, odd widths) computes from the padding of its row buffers,
# which memcheck follows as undefined into the output pixels and reports where seer's resize first
# branches on them. The pixels are identical with its scalar code (checked on the file that showed
# it: same output hash with and without SIMD, under valgrind too), which runs clean: use that here.
export JSIMD_FORCENONE=1
status=0
for t in "$build"/t/cli_*.t; do
    # prove splits the command at spaces (no shell), so no argument above may contain one.
    prove -e "${vg[*]}" "$t" || status=1
done
# A process that only forked and then exec'd an untraced program leaves a log without a summary.
bad=$(grep -l "ERROR SUMMARY: [1-9]" "$logs"/*.log || true)
for f in $bad; do
    echo "== $f" >&2
    sed -n '/Command:/p;/Invalid\|uninitialised\|definitely lost\|ERROR SUMMARY/,+6p' "$f" | head -60 >&2
    status=1
done
echo "valgrind.sh: $(grep -l "ERROR SUMMARY" "$logs"/*.log | wc -l) processes checked, $(echo "$bad" | grep -c . || true) with errors"
exit $status
