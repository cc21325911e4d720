#!/bin/sh
# TAP: the command and the server are clients of the public API (docs/ARCHITECTURE.md, "Modules,
# in data-path order"). Every cli/ and server/ file includes seer.h, the front ends' own headers
# (cli/, server/), and system or third-party headers only — never a library-internal header
# (core/, lm/, api/, vision/, video/, media/, vulkan/) nor tools/ (seer bench, the one part of the
# command allowed internals, lives there).
set -u
cd "$(dirname "$0")/../.." || exit 1
files=$(ls cli/*.c cli/*.h server/*.c server/*.h 2>/dev/null)
n=0
for f in $files; do n=$((n + 1)); done
echo "1..$((n + 1))"
i=0
for f in $files; do
  i=$((i + 1))
  bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f" |
        grep -vE '#[[:space:]]*include[[:space:]]*"(seer\.h|(cli|server)/[A-Za-z0-9_]+\.h)"' |
        grep -E '#[[:space:]]*include[[:space:]]*("|<(core|lm|api|vision|video|media|vulkan|tools)/)')
  if [ -z "$bad" ]; then
    echo "ok $i - $f includes only seer.h, cli/, server/ and system headers"
  else
    echo "not ok $i - $f includes library internals:"
    echo "$bad" | sed 's/^/#   /'
  fi
done
# The check itself can fail: an internal include is caught.
tmp=$(mktemp)
printf '#include "seer.h"\n#include "core/util.h"\n' >"$tmp"
if grep -E '#[[:space:]]*include[[:space:]]*"' "$tmp" | grep -vqE '"(seer\.h|(cli|server)/[A-Za-z0-9_]+\.h)"'; then
  echo "ok $((i + 1)) - a planted \"core/util.h\" include is caught"
else
  echo "not ok $((i + 1)) - a planted \"core/util.h\" include is not caught"
fi
rm -f "$tmp"
