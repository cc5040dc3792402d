#!/usr/bin/env bash
# Builds here what the GPU machine runs (it has no Bazel, no LLVM): the
# statically linked runtime-only device_runner and one kernel bundle per
# target, into .device/ (git-ignored; carried by the device tool).
#
#   benchmarks/device/prepare.sh && <device run> benchmarks/device/run.sh
#   AB=1 benchmarks/device/prepare.sh   # also the LLVM-pipeline A/B bundles
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .device && mkdir -p .device/bundles
bazel build --config=portable //benchmarks:device_runner //benchmarks:gemm_probe //benchmarks:launch_overhead \
  //benchmarks:mma_peak //benchmarks:sfu_peak //tests/runtime:runtime_gpu_test //tools:tessera-run
cp bazel-bin/benchmarks/device_runner bazel-bin/benchmarks/gemm_probe bazel-bin/benchmarks/launch_overhead \
  bazel-bin/benchmarks/mma_peak bazel-bin/benchmarks/sfu_peak bazel-bin/tools/tessera-run .device/
cp bazel-bin/tests/runtime/runtime_gpu_test .device/
bazel build //examples:all_examples //tests/conformance:write_bundles //benchmarks:variants
./bazel-bin/examples/all_examples --no-run --bundle-dir=.device/bundles | tee .device/compile_table.txt
./bazel-bin/tests/conformance/write_bundles .device/bundles
# sm_61 (the sm60 backend's dp4a atoms for i8/u8 gemms), through the JIT.
./bazel-bin/tests/conformance/write_bundles .device/bundles sm_61
# The test-only Turing backend's cases (its own atom and pipelining strategy),
# run through the driver's JIT like the other older targets.
bazel build //tests/conformance:write_bundles_sm75
./bazel-bin/tests/conformance/write_bundles_sm75 .device/bundles sm_75
./bazel-bin/benchmarks/variants --target=sm_90a .device/bundles/sm_90a.variants.pb
./bazel-bin/benchmarks/variants --target=sm_80 .device/bundles/sm_80.variants.pb
if [ "${AB:-0}" = 1 ]; then
  for target in sm_80 sm_90a; do
    ./bazel-bin/benchmarks/variants --ab --target=$target .device/bundles/$target.ab.pb
  done
fi
if [ "${CTIME:-0}" = 1 ]; then
  # compile_time.sh's inputs: the examples' GEMMs and FlashAttention as tile IR, this checkout's
  # compiler linked statically (xz: the carried tree's limit is 64 MiB) and,
  # with CTIME_OLD=<checkout>, another's to compare with.
  mkdir -p .device/ctime/bin
  for target in sm_60 sm_70 sm_80 sm_90a; do
    for example in gemm gemm_bias_gelu flash_attention; do
      ./bazel-bin/examples/$example --target=$target --emit=tile >.device/ctime/${example}_$target.mlir
    done
  done
  benchmarks/device/static_compiler.sh .device/ctime/bin/new
  if [ -n "${CTIME_OLD:-}" ]; then
    benchmarks/device/static_compiler.sh .device/ctime/bin/old "$CTIME_OLD"
  fi
  xz -T2 -6 .device/ctime/bin/*
fi
for target in sm_70 sm_80 sm_90a; do
  ./bazel-bin/benchmarks/variants --probe --target=$target .device/bundles/$target.probe.pb
done
cp benchmarks/peers.py benchmarks/device/run.sh benchmarks/device/schedules.sh \
  benchmarks/device/tune.sh benchmarks/device/tables.sh benchmarks/device/ab.sh \
  benchmarks/device/epilogue.sh benchmarks/device/ncu.sh benchmarks/device/ncu_source.sh \
  benchmarks/device/paired.sh benchmarks/device/common.sh benchmarks/device/inputs.sh \
  benchmarks/device/compile_time.sh benchmarks/device/peer_order.py benchmarks/triton_sm80.py \
  benchmarks/device/sm80_peers.sh benchmarks/device/sanitize.sh benchmarks/device/attention.sh \
  benchmarks/device/attention_paired.sh \
  benchmarks/attention_table.py .device/
ls -la .device .device/bundles
