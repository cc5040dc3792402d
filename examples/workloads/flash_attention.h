//===- flash_attention.h - The FlashAttention workloads ---------*- C++ -*-===//
//
// This file declares the workloads of the FlashAttention kernels
// (examples/flash_attention.cc and its conformance cases): multi-head
// attention with grouped-query heads, causal or not, O and the log-sum-exp
// checked against float64.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_EXAMPLES_WORKLOADS_FLASH_ATTENTION_H_
#define TESSERA_EXAMPLES_WORKLOADS_FLASH_ATTENTION_H_

#include <vector>

#include "examples/workloads/workloads.h"

namespace tessera::workloads {

/// The workloads of `flash_attention` (the example: f16, d128) and of the
/// conformance entries flash_attention_{f16,bf16}_d{64,128,256}[_causal]:
/// small problems with odd lengths for conformance, and for d64 and d128
/// batch 8, 16 heads, sequence 1k to 16k as benchmarks (sampled rows
/// checked).
std::vector<Workload> FlashAttentionWorkloads();

/// The workloads of `flash_attention_bwd` (the backward's dK/dV kernel; its
/// _pre and _dq kernels are companions): odd lengths, grouped heads and a
/// determinism check for conformance, one modest benchmark (every element
/// checked against float64 gradients).
std::vector<Workload> FlashAttentionBwdWorkloads();

}  // namespace tessera::workloads

#endif  // TESSERA_EXAMPLES_WORKLOADS_FLASH_ATTENTION_H_
