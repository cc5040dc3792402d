//===- workloads_test.cc - The workload registry --------------------------===//
//
// CPU-side checks of the workloads every GPU run relies on: unique names,
// variants sharing their kernel's workloads, and every example and every
// conformance case covered by at least one conformance workload.
//
//===----------------------------------------------------------------------===//

#include <set>
#include <string>

#include "examples/common/example.h"
#include "examples/workloads/workloads.h"
#include "gtest/gtest.h"
#include "tests/conformance/cases.h"

namespace tessera::workloads {
namespace {

TEST(Workloads, NamesAreUnique) {
  std::set<std::string> names;
  for (const Workload& w : AllWorkloads())
    EXPECT_TRUE(names.insert(w.name).second) << "duplicate workload " << w.name;
}

TEST(Workloads, TuningVariantsRunTheirKernelsWorkloads) {
  EXPECT_EQ(WorkloadsForKernel("vector_add__b512_t128"), WorkloadsForKernel("vector_add"));
  EXPECT_FALSE(WorkloadsForKernel("gemm_f16__128x128x32_s3_t128").empty());
  EXPECT_TRUE(WorkloadsForKernel("no_such_kernel").empty());
}

TEST(Workloads, EveryConformanceCaseHasAConformanceWorkload) {
  for (const conformance::Case& c : conformance::AllCases()) {
    bool found = false;
    for (const Workload* w : WorkloadsForKernel(c.name)) found |= w->conformance;
    EXPECT_TRUE(found) << c.name << " has no conformance workload";
  }
}

TEST(Workloads, EveryExampleIsBenchmarked) {
  for (const examples::Example& example : examples::AllExamples()) {
    bool found = false;
    for (const Workload* w : WorkloadsForKernel(example.name)) found |= w->benchmark;
    EXPECT_TRUE(found) << example.name << " has no benchmark workload";
  }
}

}  // namespace
}  // namespace tessera::workloads
