#!/bin/sh
# Builds seer and runs every test with prove: the C TAP programs (build/t/*.t), the script tests
# (tests/scripts/*.sh, tests/reference/*_test.py), and the file-parser tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-san/). Installs what it needs first.
# Environment: JOBS (default: nproc), SEER_SKIP_DEPS=1 to skip apt/npm.
set -eu
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

if [ "${SEER_SKIP_DEPS:-0}" != 1 ]; then
  scripts/install-deps.sh
  if [ -f tests/oracle/package.json ]; then
    echo "test.sh: npm install in tests/oracle (llama.cpp and tokenizers oracles)"
    (cd tests/oracle && npm install --ignore-scripts --omit=optional --no-audit --no-fund --loglevel=error)
  fi
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"

# Parsers see hostile files: build their tests with ASan+UBSan as well.
san_tests=""
for t in core_gguf core_safetensors lm_config lm_tokenizer; do
  [ -n "$(find tests -path "*/$(echo $t | sed 's/_/\//').c" 2>/dev/null)" ] && san_tests="$san_tests t_$t"
done
if [ -n "$san_tests" ]; then
  cmake -S . -B build-san -DSEER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build-san -j "$jobs" --target $san_tests
fi

set -- build/t/*.t
for f in tests/scripts/*.sh tests/reference/*_test.py; do [ -x "$f" ] && set -- "$@" "$f"; done
for t in $san_tests; do set -- "$@" "build-san/t/${t#t_}.t"; done
export SEER_BUILD_DIR=build
exec prove -j "$jobs" -e '' "$@"
