#!/usr/bin/env bash
# Does the input distribution move the timings? paired.sh on both kinds of
# uniform [-1, 1) inputs, each in every round (a table each):
#   f32:   drawn in float32, rounded to the 16-bit type (device_runner's and
#          peers.py's default);
#   torch: torch.rand in the 16-bit type, scaled there (`--inputs=torch` on
#          both sides: the low mantissa bits of small values are zero).
#
#   KERNELS="gemm_f16@.device/bundles/sm_90a.pb" ROUNDS=3 OUT=/tmp/o bash .device/inputs.sh
INPUTS="f32 torch" exec bash "$(dirname "$0")/paired.sh"
