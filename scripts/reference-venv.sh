#!/bin/sh
# Makes (once) the Python virtual environment of the Hugging Face reference: transformers, torch,
# torchvision and what they need at the versions tests/reference/requirements-hf.txt locks (== pins
# with hashes, installed with --no-deps: nothing is resolved, so an unpinned torch — a multi-GB CUDA
# download — can never come in).
#
# The environment lives outside the clone, in ${SEER_CACHE_DIR:-$HOME/.cache/seer}/venv-hf-<first 12 hex
# of the lock's sha256>, so a fresh CI clone reuses it and a changed lock gets a new one; build/venv-hf
# points at it. Its python must be a CPython 3.11 (pip takes torch 2.14.1 and torchvision 0.29.1 for
# Python 3.11 from this machine's disk): SEER_HF_BASE_PYTHON, else `python3.11` on PATH, else pyenv's
# 3.11. Tests run it with HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 (no hub at test time).
# Prints the venv's python on the last line of stdout. Exit: 0 ready; 1 no usable Python 3.11 or the
# install failed (the half-made venv is removed).
set -eu
cd "$(dirname "$0")/.."
lock=tests/reference/requirements-hf.txt
hash=$(sha256sum "$lock" | cut -c1-12)
cache=${SEER_CACHE_DIR:-$HOME/.cache/seer}
venv=$cache/venv-hf-$hash
done_mark=$venv/.seer-ready # written last: a venv without it was interrupted and is made again

base_python() {
  tried=""
  for p in ${SEER_HF_BASE_PYTHON:-} "$(command -v python3.11 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11 /root/.pyenv/versions/3.11*/bin/python3.11; do
    [ -n "$p" ] || continue
    tried="$tried $p"
    # venv and ensurepip: Debian's python3.11 lacks ensurepip without python3-venv
    if [ -x "$p" ] && "$p" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  echo "reference-venv.sh: no CPython 3.11 with venv and ensurepip (tried:${tried:- nothing}); install pyenv's 3.11 or set SEER_HF_BASE_PYTHON" >&2
  return 1
}

make_venv() {
  [ -f "$done_mark" ] && return 0
  py=$(base_python) || return 1
  start=$(date +%s)
  echo "reference-venv.sh: creating $venv with $py (torch from this machine's disk, the rest from PyPI)" >&2
  rm -rf "$venv"
  if ! "$py" -m venv "$venv" >&2 ||
     ! "$venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$lock" >&2 ||
     ! HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$venv/bin/python" -c \
       'import torch, torchvision, torchcodec, transformers, PIL, numpy, safetensors, tokenizers, jinja2' >&2; then
    echo "reference-venv.sh: creating $venv failed (lock $lock)" >&2
    rm -rf "$venv"
    return 1
  fi
  echo "$hash" >"$done_mark"
  echo "reference-venv.sh: created in $(($(date +%s) - start)) s, $(du -sh "$venv" | cut -f1)" >&2
}

mkdir -p "$cache" build
# one maker at a time (parallel test runs share the cache); flock is in util-linux
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/venv-hf.lock"
  flock 9
fi
make_venv
ln -sfn "$venv" build/venv-hf
echo "$PWD/build/venv-hf/bin/python"
