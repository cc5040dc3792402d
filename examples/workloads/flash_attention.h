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

}  // namespace tessera::workloads

#endif  // TESSERA_EXAMPLES_WORKLOADS_FLASH_ATTENTION_H_
