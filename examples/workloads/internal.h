//===- internal.h - What the workloads' files share -------------*- C++ -*-===//
//
// Private to examples/workloads: the random inputs, poisoned outputs,
// checks, tuning and timing every workload file uses, and each family's
// workloads that AllWorkloads lists.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_
#define TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
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
/// A kernel the runner gives a workload of `kernel` besides it
/// (RunOptions::companion: flash_decoding's combine, the attention
/// backward's D and dQ kernels) by its entry, or an error naming both when
/// the runner gives none.
absl::StatusOr<const runtime::LoadedKernel*> CompanionKernel(const std::string& kernel,
                                                             const std::string& entry,
                                                             const RunOptions& options);

/// Rounds to the nearest f16 and back (round-to-nearest-even).
float RoundToHalf(float x);
/// bf16 bits of `x` (round to nearest even), and back.
uint16_t FloatToBf16Bits(float x);
float Bf16BitsToFloat(uint16_t b);

/// A matrix in one of the GEMM element types, with its exact float values.
struct HostMatrix {
  runtime::DType dtype;
  std::vector<float> values;   // exactly representable in dtype
  std::vector<uint8_t> bytes;  // device representation

  /// Uniform in [-1, 1): drawn in float32 and rounded to `t` (f64 holds
  /// the float32 value exactly); with
  /// `torchStyle` the way `torch.rand(..., dtype=t) * 2 - 1` draws them, a
  /// uniform [0, 1) value rounded to `t` (one that rounds to 1 becomes 0, as
  /// torch's uniform kernel makes it), then scaled and rounded in `t` (the
  /// low mantissa bits of small values are zero), to time our kernels on the
  /// inputs peers.py --inputs=torch gives cuBLAS. `scale`, a power of two,
  /// multiplies each value before the rounding (exact: uniform in [-scale,
  /// scale)).
  HostMatrix(runtime::DType t, int64_t n, Random& random, bool torchStyle = false,
             float scale = 1.0f)
      : dtype(t), values(n) {
    bytes.resize(n * ElementBytes());
    for (int64_t i = 0; i < n; ++i) {
      float x = random.Uniform();
      if (torchStyle && (t == runtime::DTYPE_F16 || t == runtime::DTYPE_BF16)) {
        float u = 0.5f * (x + 1.0f);
        u = t == runtime::DTYPE_F16 ? HalfBitsToFloat(FloatToHalfBits(u))
                                    : Bf16BitsToFloat(FloatToBf16Bits(u));
        if (u == 1.0f) u = 0.0f;
        x = 2.0f * u - 1.0f;
      }
      x *= scale;
      if (t == runtime::DTYPE_F16) {
        uint16_t h = FloatToHalfBits(x);
        values[i] = HalfBitsToFloat(h);
        std::memcpy(&bytes[2 * i], &h, 2);
      } else if (t == runtime::DTYPE_BF16) {
        uint16_t b = FloatToBf16Bits(x);
        values[i] = Bf16BitsToFloat(b);
        std::memcpy(&bytes[2 * i], &b, 2);
      } else if (t == runtime::DTYPE_F64) {
        values[i] = x;
        double d = x;
        std::memcpy(&bytes[8 * i], &d, 8);
      } else {
        values[i] = x;
        std::memcpy(&bytes[4 * i], &x, 4);
      }
    }
  }
  int64_t ElementBytes() const {
    return dtype == runtime::DTYPE_F64 ? 8 : dtype == runtime::DTYPE_F32 ? 4 : 2;
  }
};


/// The value of an f64, f32, f16 or bf16 element at `p`.
double DecodeElement(runtime::DType dtype, const uint8_t* p);

/// The fused epilogue a GEMM kernel applies: C = act(A B + bias) (+ R).
enum class Act { kNone, kGeluTanh, kGeluErf, kRelu, kSilu };
struct GemmEpilogue {
  bool bias = false;
  Act act = Act::kNone;
  bool residual = false;
};

// The workloads of each family (AllWorkloads lists them).
// workloads_elementwise.cc: C = A + B (f32, exact); Y = 2 X + 1 through
// shared memory.
Workload VectorAdd(int64_t n, bool conformance, bool benchmark,
                   const std::string& kernel = "vector_add");
Workload ScaleShared2D(int64_t m);
// workloads_gemm.cc: C = A * B (B is N x K when transposed) with `epilogue`;
// the chained GEMM; an epilogue GEMM at a conformance size and, for
// `benchmark`, at 2048^3 and 8192^3.
Workload Gemm(const std::string& kernel, int64_t m, int64_t n, int64_t k, runtime::DType dtype,
              bool transposeB, bool conformance, bool benchmark, GemmEpilogue epilogue = {});
Workload GemmChain(int64_t m, int64_t n);
std::vector<Workload> GemmEpilogueWorkloads(const std::string& kernel, Act act, bool residual,
                                            bool benchmark);
// workloads_rows.cc: row reductions, softmax, RMSNorm / LayerNorm.
Workload RowReduce(runtime::DType dtype, const std::string& type, int64_t m);
Workload Norm(const std::string& kernel, int64_t m, int64_t n, runtime::DType dtype, bool layer,
              bool conformance, bool benchmark);
Workload Softmax(const std::string& kernel, int64_t m, int64_t n, runtime::DType dtype,
                 bool conformance, bool benchmark);

/// The workloads of the data-type kernels (FP8, int8, TF32, f16
/// accumulation, f64 GEMMs, conversions; examples/fp8_gemm.cc).
std::vector<Workload> DtypeWorkloads();
/// The workloads of the split-K GEMM (examples/gemm_split_k.cc), which adds
/// into C, and of the conformance case gemm_paged_b (B's k-tiles are pages
/// a table picks): workloads_gemm.cc.
std::vector<Workload> SplitKWorkloads();
/// The workloads of the variable-length softmax (examples/softmax_varlen.cc):
/// workloads_rows.cc.
std::vector<Workload> SoftmaxVarlenWorkloads();
/// The workloads of the grouped GEMMs (examples/grouped_gemm.cc):
/// grouped_gemm.cc.
std::vector<Workload> GroupedGemmWorkloads();

/// The workloads of the MoE layer (examples/moe.cc): moe.cc.
std::vector<Workload> MoeWorkloads();
/// The workloads of the paged gather (examples/paged_gather.cc) and of the
/// conformance cases control_flow and histogram: workloads_elementwise.cc.
std::vector<Workload> PagedGatherWorkloads();
/// The workloads of the quantized-weight GEMMs (examples/gemm_w4a16.cc):
/// workloads_quant.cc.
std::vector<Workload> QuantWorkloads();
/// examples/flash_decoding.cc and examples/mla_decode.cc: each split pass with its combine,
/// and the combine alone.
std::vector<Workload> FlashDecodingWorkloads();
/// A benchmark of a data-type GEMM entry at m x n x k, or nullopt.
std::optional<Workload> DtypeGemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                             int64_t k);

}  // namespace tessera::workloads::internal

#endif  // TESSERA_EXAMPLES_WORKLOADS_INTERNAL_H_
