#!/bin/sh
# TAP: the code's citations of the model specification resolve. Every distinct "spec §N" in a tracked
# source file or document (the sections a "spec §N, §M" or "spec §N–§M" list names too) must be a
# heading of docs/MODEL.md ("## N. Title" or "### N Title"), and no tracked file may point to notes
# that are not in the repository (the planning notes the comments once cited).
set -u
LC_ALL=C
export LC_ALL
model=docs/MODEL.md
self=tests/scripts/spec_refs.sh
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "1..0 # SKIP not a git checkout (the tracked files are what is checked)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git ls-files -- '*.c' '*.h' '*.comp' '*.glsl' '*.py' '*.sh' '*.cmake' '*.md' '*CMakeLists.txt' |
  grep -v -x -e "$model" >"$tmp/files"
# "spec §2.5", "Spec §6.1", "spec §3.2, §4.8 and §5.4", "spec §2.1–§2.2": every § number of the list.
tr '\n' '\0' <"$tmp/files" |
  xargs -0 grep -ohiE 'spec §[0-9]+(\.[0-9]+)*((, ?| and |–|-|/)§[0-9]+(\.[0-9]+)*)*' |
  grep -oE '§[0-9]+(\.[0-9]+)*' | sed 's/^§//' | sort -u >"$tmp/cited"
# Heading numbers: "## 2. Text decoder", "### 2.5 Gated DeltaNet layer", "### 10.9 Padding rows".
sed -n -E 's/^#+ ([0-9]+(\.[0-9]+)*)\.?( .*)?$/\1/p' "$model" 2>/dev/null | sort -u >"$tmp/headings"

# Strings that point outside the repository: the old planning notes and their section numbers.
cat >"$tmp/forbidden" <<'EOF'
design\.md
anchors\.md
style\.md
peers[^ ]*\.md
llamacpp-anchor
anchor §
shared/spec
\.\./shared
EOF

n_cited=$(wc -l <"$tmp/cited")
n_forbidden=$(wc -l <"$tmp/forbidden")
echo "1..$((2 + n_cited + n_forbidden))"
n=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

[ -s "$tmp/headings" ]
check $? "$model exists and has numbered section headings"
[ "$n_cited" -ge 20 ]
check $? "the sources cite the specification ($n_cited distinct sections found, at least 20 expected)"

while read -r sec; do
  grep -q -x -F -e "$sec" "$tmp/headings"
  rc=$?
  check $rc "spec §$sec has a heading in $model"
  if [ $rc != 0 ]; then
    tr '\n' '\0' <"$tmp/files" | xargs -0 grep -n -F -e "§$sec" | grep -i 'spec' | head -n 3 | sed 's/^/#   cited at /'
  fi
done <"$tmp/cited"

while read -r pat; do
  git grep -n -E -e "$pat" -- . ":(exclude)$self" >"$tmp/hits" 2>/dev/null
  [ ! -s "$tmp/hits" ]
  check $? "no tracked file refers to /$pat/ (notes outside the repository)"
  head -n 5 "$tmp/hits" | sed 's/^/#   /'
done <"$tmp/forbidden"
