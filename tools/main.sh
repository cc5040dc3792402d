#!/usr/bin/env bash
# The main job: installs what is missing, builds everything, compiles every
# example for every backend (sm_60, sm_70, sm_80, sm_90a) and prints a table
# of kernels x targets with PTX size, registers, spills and compile time.
# Where an NVIDIA GPU is present it also runs, checks and times every
# example built by every backend.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //...
./bazel-bin/examples/all_examples "$@"
