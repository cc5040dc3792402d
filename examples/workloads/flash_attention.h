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

#include <cstdint>
#include <string>
#include <vector>

#include "examples/workloads/workloads.h"

namespace tessera::workloads {

/// A packed batch of sequences (FlashAttention's varlen form): sequence b
/// has lq[b] queries and lk[b] keys; h query heads over hkv key heads.
struct VarlenProblem {
  std::vector<int64_t> lq, lk;
  int64_t h, hkv;

  /// The cumulative lengths (size + 1 entries, from 0) of `lengths`.
  static std::vector<int32_t> Cumulative(const std::vector<int64_t>& lengths);
  /// The longest of `lengths` (0 when empty).
  static int64_t Longest(const std::vector<int64_t>& lengths);
  /// The forward's FLOPs at head dimension d: 4 h d per (query, key) pair a
  /// query sees (all, or when causal those up to its diagonal).
  double Flops(int64_t d, bool causal) const;
  /// "q77-1_k131-1_h4_hkv2", or for long batches of self-attention
  /// "n11_t16384_h16_hkv16".
  std::string Name() const;
};

/// The varlen kernels' conformance problems (lengths 0, 1, odd, past a
/// block; Sq < Skv and Sq > Skv in one batch; grouped heads) and benchmark
/// problems (16k tokens of mixed lengths).
std::vector<VarlenProblem> VarlenConformanceProblems();
std::vector<VarlenProblem> VarlenBenchmarkProblems();

/// The workloads of flash_attention_varlen_{f16,bf16}_d{64,128}[_causal]:
/// the conformance problems with every row checked, the benchmark with 8
/// sampled rows a sequence.
std::vector<Workload> FlashAttentionVarlenWorkloads();

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
