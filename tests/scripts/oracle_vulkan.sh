#!/bin/sh
# TAP: the llama.cpp oracle test (tests/lm/oracle.c) with seer on the Vulkan backend (lavapipe in
# CI): the same tiny GGUFs and prompt ids, greedy continuations equal to llama.cpp's and the same
# next-token bounds as on the CPU. Skips, failures and SEER_REQUIRE_* behave as in that program.
build=${SEER_BUILD_DIR:-build}
SEER_TEST_DEVICE=vulkan exec "$build/t/lm_oracle.t"
