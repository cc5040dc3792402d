//===- internal.h - What the workloads' files share -------------*- C++ -*-===//
//
// Private to examples/workloads: the random inputs, poisoned outputs,
// checks, tuning and timing every workload file uses, and the data-type
// workloads (workloads_dtypes.cc) that AllWorkloads lists.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_
#define TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "examples/workloads/workloads.h"
#include "runtime/buffer.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads::internal {

/// A small, fast generator (xorshift64*) for large random inputs.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  /// Uniform in [-1, 1).
  float Uniform() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    uint64_t x = state_ * 0x2545F4914F6CDD1Dull;
    return static_cast<float>((x >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
  }
  /// Uniform in [0, extent): which element or row a sampled check visits.
  int64_t Index(int64_t extent) {
    return std::min<int64_t>(extent - 1, int64_t((Uniform() + 1.0f) * 0.5f * extent));
  }

 private:
  uint64_t state_;
};

/// The byte pattern outputs are poisoned with: 0xFF.. is a NaN in every
/// float type, so an unwritten element never passes a check.
inline constexpr uint8_t kPoisonByte = 0xFF;

/// A device copy of `host` (floats, 16-bit words or raw bytes).
template <typename T>
absl::StatusOr<runtime::DeviceBuffer> Upload(const std::vector<T>& host) {
  TESSERA_ASSIGN_OR_RETURN(runtime::DeviceBuffer buffer,
                           runtime::DeviceBuffer::Allocate(host.size() * sizeof(T)));
  TESSERA_RETURN_IF_ERROR(buffer.CopyFromHost(host.data(), host.size() * sizeof(T)));
  return buffer;
}

Workload MakeWorkload(std::string name, std::string kernel, bool conformance, bool benchmark,
                      std::function<absl::StatusOr<Report>(const runtime::LoadedKernel&,
                                                           const RunOptions&)> run);
double CheckElement(Report& report, int64_t i, int64_t j, double got, double ref, double bound);
absl::StatusOr<const runtime::LoadedKernel*> TuneAndLaunch(
    const runtime::LoadedKernel& kernel, const std::vector<runtime::KernelArg>& args,
    const RunOptions& options, runtime::DeviceBuffer& output, Report& report);
absl::Status TimeIfAsked(const runtime::LoadedKernel& kernel,
                         const std::vector<runtime::KernelArg>& args, const RunOptions& options,
                         Report& report);

/// The workloads of the data-type kernels (FP8, int8, TF32, f16
/// accumulation, f64 GEMMs, conversions; examples/fp8_gemm.cc).
std::vector<Workload> DtypeWorkloads();
/// A benchmark of a data-type GEMM entry at m x n x k, or nullopt.
std::optional<Workload> DtypeGemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                             int64_t k);

}  // namespace tessera::workloads::internal

#endif  // TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_
