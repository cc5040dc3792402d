//===- attention.h - The online-softmax attention workload ------*- C++ -*-===//
//
// This file declares the workloads of the conformance kernel
// attention_online_f16 (tests/conformance/cases.cc): softmax attention of
// one 64-wide head, checked against float64.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_EXAMPLES_WORKLOADS_ATTENTION_H_
#define TESSERA_EXAMPLES_WORKLOADS_ATTENTION_H_

#include <vector>

#include "examples/workloads/workloads.h"

namespace tessera::workloads {

/// attention_online_f16 at sizes that are not multiples of its blocks.
std::vector<Workload> AttentionWorkloads();

}  // namespace tessera::workloads

#endif  // TESSERA_EXAMPLES_WORKLOADS_ATTENTION_H_
