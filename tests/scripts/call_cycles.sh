#!/bin/sh
# TAP: no two source files call each other, directly or around a circle (docs/ARCHITECTURE.md).
# scripts/call-cycles.sh reads the call graph from the objects of the build ($SEER_BUILD_DIR,
# default build) with nm. First it must find a cycle planted in two small objects (and none where
# calls run one way), so a checker that finds nothing cannot pass; then the library must have no
# cycle, and the command (cli/, tools/) neither.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
check="$root/scripts/call-cycles.sh"
build=${SEER_BUILD_DIR:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..5"
n=0
report() { # STATUS NAME [DIRECTIVE]: STATUS 0 is ok
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2${3:+ # $3}"; else echo "not ok $n - $2${3:+ # $3}"; fi
}

# A planted cycle: x/a.c calls b() of x/b.c, which calls a() back; y/c.c calls a() one way.
mkdir -p "$tmp/src/x" "$tmp/src/y" "$tmp/src/b/CMakeFiles/seer_obj.dir/x" "$tmp/src/b/CMakeFiles/seer_obj.dir/y"
printf 'int b(int);\nint a(int k) { return k ? b(k - 1) : 0; }\n' >"$tmp/src/x/a.c"
printf 'int a(int);\nint b(int k) { return k ? a(k - 1) : 1; }\n' >"$tmp/src/x/b.c"
printf 'int a(int);\nint c(void) { return a(3); }\n' >"$tmp/src/y/c.c"
for f in x/a x/b y/c; do cc -c "$tmp/src/$f.c" -o "$tmp/src/b/CMakeFiles/seer_obj.dir/$f.c.o"; done
out=$(SEER_SOURCE_DIR="$tmp/src" "$check" b 2>&1)
[ $? = 1 ] && [ "$(echo "$out" | grep '^cycle')" = "cycle library: x/a.c x/b.c" ]
report $? "the checker reports a planted cycle between two files, and only that one"
echo "$out" | grep -q '^  x/a.c -> x/b.c: b$' && echo "$out" | grep -q '^  x/b.c -> x/a.c: a$'
report $? "it names the functions each file takes from the other"

out=$("$check" "$build" 2>&1)
rc=$?
[ $rc != 2 ]
report $? "objects of $build found (rc $rc)"
lib=$(echo "$out" | sed -n 's/^cycle library: //p')
[ $rc != 2 ] && [ -z "$lib" ]
report $? "no call cycle between files of the library"
[ -z "$lib" ] || echo "$out" | awk '/^cycle command/ { skip = 1; next } /^cycle/ { skip = 0 } !skip { print "# " $0 }' >&2
cmd=$(echo "$out" | sed -n 's/^cycle command: //p')
[ $rc != 2 ] && [ -z "$cmd" ]
report $? "no call cycle between files of the command"
[ -z "$cmd" ] || echo "$out" | awk '/^cycle library/ { skip = 1; next } /^cycle/ { skip = 0 } !skip { print "# " $0 }' >&2
