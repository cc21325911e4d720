#!/bin/sh
# TAP: the man page and the bash/zsh completions come from the commands' own --help (seer
# --help-man, seer --completion SHELL; built into the build directory by CMake and installed by
# `cmake --install`), so every flag that --help documents is in all three; bash completes
# subcommands and flags with them.
set -u
build=${SEER_BUILD_DIR:-build}
seer="$build/seer"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..8"
n=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

# every flag in a command's --help, in the man page (as roff, '-' is '\-') and in both completions
missing=0
for cmd in run chat ask describe ocr tokenize info bench; do
  flags=$("$seer" "$cmd" --help 2>/dev/null | sed -n 's/^  *\(-[^ ][^ ]*\).*/\1/p' | tr -d ',' | sed 's/=.*//')
  for f in $flags; do
    esc=$(printf '%s' "$f" | sed 's/-/\\\\-/g')
    grep -q -- "$esc" "$build/seer.1" || { echo "# $cmd $f: not in seer.1"; missing=1; }
    grep -q -- " $f[ \"]" "$build/seer.bash" || { echo "# $cmd $f: not in seer.bash"; missing=1; }
    grep -q -- " $f[ )]" "$build/_seer" || { echo "# $cmd $f: not in _seer"; missing=1; }
  done
done
check $missing "every flag of every command's --help is in seer.1, seer.bash and _seer"
"$seer" --help-man | cmp -s - "$build/seer.1"
check $? "the built seer.1 is what seer --help-man prints (not stale)"
man -l "$build/seer.1" >"$tmp/man.txt" 2>"$tmp/man.err" || groff -man -Tutf8 "$build/seer.1" >"$tmp/man.txt" 2>"$tmp/man.err"
grep -q "n-predict" "$tmp/man.txt" && ! grep -q "warning" "$tmp/man.err"
check $? "the man page renders without warnings and documents --n-predict"

# bash: complete a subcommand and a flag the way readline would
complete_words() { # words... (the last is the one being completed)
  bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _seer; printf "%s\n" "${COMPREPLY[@]}"' \
    "$build/seer.bash" "$@"
}
complete_words seer ch | grep -qx chat
check $? "bash: 'seer ch<TAB>' completes chat"
complete_words seer run --te | grep -qx -- --temp
check $? "bash: 'seer run --te<TAB>' completes --temp"
complete_words seer -v ocr --res | grep -qx -- --resume
check $? "bash: 'seer -v ocr --res<TAB>' completes --resume (a flag of another command's own parser)"
if command -v zsh >/dev/null 2>&1; then
  mkdir -p "$tmp/zfunc" && cp "$build/_seer" "$tmp/zfunc/" && zsh -n "$build/_seer" &&
    zsh -fc "fpath=($tmp/zfunc \$fpath); autoload -Uz compinit; compinit -u -d $tmp/zcd; [[ \${_comps[seer]} == _seer ]]"
  check $? "zsh: _seer parses and compinit binds it to seer"
else
  echo "ok $((n = n + 1)) # SKIP zsh is not installed (the script is checked for its flags above)"
fi

cmake --install "$build" --prefix "$tmp/p" >"$tmp/install.log" 2>&1 &&
  [ -f "$tmp/p/share/man/man1/seer.1" ] && [ -f "$tmp/p/share/bash-completion/completions/seer" ] &&
  [ -f "$tmp/p/share/zsh/site-functions/_seer" ]
check $? "cmake --install puts seer.1, the bash and the zsh completion in their directories"
