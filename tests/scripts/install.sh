#!/bin/sh
# TAP: `cmake --install` puts the binary, both libraries, seer.h and seer.pc under a prefix, and a
# program built with `pkg-config --cflags --libs seer` against that prefix links and runs.
set -u
build=${SEER_BUILD_DIR:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
echo "1..5"
n=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

cmake --install "$build" --prefix "$prefix" >"$prefix/install.log" 2>&1
check $? "cmake --install succeeds"
libdir=$(ls -d "$prefix"/lib* | head -n 1)
[ -x "$prefix/bin/seer" ] && [ -f "$prefix/include/seer.h" ] && [ -f "$libdir/libseer.a" ] && [ -e "$libdir/libseer.so" ]
check $? "binary, header, static and shared library installed"
[ -f "$libdir/pkgconfig/seer.pc" ]
check $? "seer.pc installed"
cat >"$prefix/use.c" <<'C'
#include <seer.h>
#include <stdio.h>
#include <string.h>
int main(void) { printf("%s\n", seer_version()); return strcmp(seer_strerror(SEER_OK), "success") != 0; }
C
PKG_CONFIG_PATH="$libdir/pkgconfig" cc "$prefix/use.c" -o "$prefix/use" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs seer) >"$prefix/cc.log" 2>&1
check $? "a program builds with pkg-config --cflags --libs seer"
LD_LIBRARY_PATH="$libdir" "$prefix/use" >/dev/null
check $? "it runs against the installed shared library"
