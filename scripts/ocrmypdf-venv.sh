#!/bin/sh
# Makes (once) the Python virtual environment the OCRmyPDF plugin (python/ocrmypdf_seer) is tested in:
# OCRmyPDF and what it needs at the versions python/ocrmypdf_seer/requirements-ocrmypdf.txt locks (==
# pins with hashes, installed with --no-deps: nothing is resolved). The plugin itself is not installed
# here: the tests pip-install it from the work tree into a folder of their own, so this cached venv
# never holds a stale copy.
#
# The environment lives outside the clone, in ${SEER_CACHE_DIR:-$HOME/.cache/seer}/venv-ocrmypdf-<first
# 12 hex of the lock's sha256>, so a fresh CI clone reuses it and a changed lock gets a new one;
# build/venv-ocrmypdf points at it. The lock's wheels are CPython 3.11's: SEER_OCRMYPDF_BASE_PYTHON,
# else the first python3.11 found that has venv and ensurepip. OCRmyPDF also runs Ghostscript (gs,
# Debian's ghostscript, scripts/install-deps.sh) to write PDF/A; tesseract is not needed (the plugin
# blocks OCRmyPDF's Tesseract plugin).
# Prints the venv's python on the last line of stdout. Exit: 0 ready; 1 no usable Python 3.11 or the
# install failed (the half-made venv is removed).
set -eu
cd "$(dirname "$0")/.."
lock=python/ocrmypdf_seer/requirements-ocrmypdf.txt
cache=${SEER_CACHE_DIR:-$HOME/.cache/seer}
venv=$cache/venv-ocrmypdf-$(sha256sum "$lock" | cut -c1-12)

pick_python() {
  for p in ${SEER_OCRMYPDF_BASE_PYTHON:-} python3.11 /usr/bin/python3.11 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
    command -v "$p" >/dev/null 2>&1 || continue
    # Debian's python3.11 has no ensurepip without python3-venv, and the wheels are cp311
    "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null && { command -v "$p"; return 0; }
  done
  echo "ocrmypdf-venv.sh: no CPython 3.11 with venv and ensurepip; set SEER_OCRMYPDF_BASE_PYTHON" >&2
  return 1
}

mkdir -p "$cache" build
# one maker at a time (parallel test runs share the cache); flock is in util-linux
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/venv-ocrmypdf.lock"
  flock 9
fi
if [ ! -f "$venv/.seer-ready" ]; then # written last: a venv without it was interrupted
  py=$(pick_python)
  echo "ocrmypdf-venv.sh: creating $venv with $py" >&2
  rm -rf "$venv"
  if ! "$py" -m venv "$venv" >&2 ||
     ! "$venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$lock" >&2 ||
     ! "$venv/bin/python" -c 'import ocrmypdf, pikepdf, PIL, setuptools' >&2; then
    echo "ocrmypdf-venv.sh: creating $venv failed (lock $lock)" >&2
    rm -rf "$venv"
    exit 1
  fi
  touch "$venv/.seer-ready"
fi
ln -sfn "$venv" build/venv-ocrmypdf
echo "$PWD/build/venv-ocrmypdf/bin/python"
