#!/bin/sh
# Installs seer's build and test dependencies from Debian/Ubuntu packages.
# Idempotent: packages already present are left alone, unless SEER_UPGRADE_DEPS=1 (CI sets it):
# then every package is brought to today's version, as a fresh machine would get it. A suite that
# passed on old packages and failed on a fresh machine (a Mesa update whose lavapipe leaks in the
# sanitizer runs) is what this catches.
# Usage: scripts/install-deps.sh [--no-test]   (--no-test skips what only the tests need)
set -eu

build_pkgs="build-essential cmake pkg-config
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  libturbojpeg0-dev libexif-dev libtiff-dev libpoppler-glib-dev libcairo2-dev
  libvulkan-dev glslc
  libpcre2-dev libutf8proc-dev libjansson-dev libedit-dev libcurl4-openssl-dev libssl-dev libmicrohttpd-dev"
# lavapipe (mesa-vulkan-drivers) runs every Vulkan test on the CPU; python3-numpy runs the
# reference implementation; python3-pil is the resize the image preprocessing must match;
# ffmpeg and poppler-utils make test images, videos and PDFs; the validation layers check Vulkan
# usage; clang builds the libFuzzer targets; tmux drives seer chat on a terminal and zsh checks its
# completion script. curl and nginx-light (on Debian 12 a name for nginx) are the clients and the
# load balancer that tests/scripts/openai_client.sh and nginx_balance.sh put in front of seer serve.
# libxml2-utils' xmllint checks the hOCR and validates the ALTO that seer ocr writes (tests/ocr/render.c).
# ghostscript is what OCRmyPDF writes a PDF/A with when its own pikepdf route cannot (--output-type
# pdfa requires it), and python3-venv lets Debian's python3.11 make the OCRmyPDF venv
# (tests/ocrmypdf/plugin_test.py); OCRmyPDF's tesseract-ocr is not needed, seer is its engine there.
test_pkgs="mesa-vulkan-drivers vulkan-tools vulkan-validationlayers python3 python3-numpy
  python3-pil python3-jsonschema ffmpeg poppler-utils libjpeg-turbo-progs libtiff-tools exif
  clang perl tmux zsh curl nginx-light libxml2-utils ghostscript python3-venv"

# clang's libFuzzer and sanitizer runtimes (scripts/fuzz.sh) are a package of their own on Debian 12,
# libclang-rt-N-dev for clang-N, which --no-install-recommends leaves out: a fresh machine had clang
# and no libclang_rt.fuzzer, and every fuzz target failed to link. Elsewhere (Ubuntu 22.04) clang
# carries them and there is no such package.
clang_rt=$(apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/libclang-rt-\1-dev/p' | head -n 1)
if [ -n "$clang_rt" ] && apt-cache show "$clang_rt" >/dev/null 2>&1; then
  test_pkgs="$test_pkgs $clang_rt"
fi

pkgs=$build_pkgs
[ "${1:-}" = "--no-test" ] || pkgs="$pkgs $test_pkgs"
# The llama.cpp and tokenizers oracles are npm packages; a Node.js from elsewhere (e.g. nodesource,
# which bundles npm and conflicts with Debian's npm) is kept when present.
if [ "${1:-}" != "--no-test" ] && ! command -v npm >/dev/null 2>&1; then
  pkgs="$pkgs nodejs npm"
fi

missing=""
for p in $pkgs; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    :
  else
    missing="$missing $p"
  fi
done

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
if [ "${SEER_UPGRADE_DEPS:-0}" = 1 ]; then
  # apt-get install of an installed package upgrades it (and what it needs) to the candidate
  echo "install-deps: installing or upgrading to today's versions: $(echo $pkgs)"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $pkgs
  dpkg-query -W -f='install-deps: ${Package} ${Version}\n' mesa-vulkan-drivers libvulkan1 2>/dev/null || true
  exit 0
fi
if [ -z "$missing" ]; then
  echo "install-deps: all packages already installed"
  exit 0
fi

echo "install-deps: installing:$missing"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
echo "install-deps: done"
