//===- cases.h - The shared conformance cases -------------------*- C++ -*-===//
//
// This file declares the conformance cases every backend inherits (the way
// IREE's CTS does): each is a kernel written once with the C++ API, compiled
// for the architecture under test, assembled by ptxas for it, and on a GPU
// run against a CPU reference by its workloads (examples/workloads). A
// backend skips a case only by listing it, with a reason, in
// Backend::getConformanceSkips().
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_CONFORMANCE_CASES_H_
#define TESSERA_TESTS_CONFORMANCE_CASES_H_

#include <functional>
#include <string>
#include <vector>

#include "frontend/Tessera.h"

namespace tessera::conformance {

struct Case {
  /// The case name; also the kernel entry its workloads run.
  std::string name;
  /// Builds the case's kernel for a target (tile sizes may differ per target).
  std::function<Kernel(const std::string& target)> build;
};

/// Every shared case.
const std::vector<Case>& AllCases();

/// Appends the data-type cases (FP8, int8, TF32, f16 accumulation, f64
/// GEMMs; conversions): cases_dtypes.cc.
void AddDtypeCases(std::vector<Case>& cases);

/// Appends the cases of the language core (indices read from data):
/// cases_core.cc.
void AddCoreCases(std::vector<Case>& cases);

/// Appends the FlashAttention cases (types, head dimensions, causal):
/// cases_attention.cc.
void AddAttentionCases(std::vector<Case>& cases);

}  // namespace tessera::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_CASES_H_
