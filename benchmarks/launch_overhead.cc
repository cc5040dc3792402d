//===- launch_overhead.cc - Host time of one kernel launch ----------------===//
//
// Measures what a launch costs the host, apart from the GPU's work, for
// three kernels of a bundle: vector_add on one element (a no-op), the f16
// GEMM at 256^3 (on sm_90a with TMA tensor maps) and FlashAttention on one
// tiny head. Three paths:
//
//   full      runtime::Launch(kernel, args): checks, packs, encodes tensor
//             maps and launches, every time;
//   prepared  runtime::Launch(kernel, packed): the packed launch reused;
//   rebound   RebindPointers to another set of buffers, then Launch (tensor
//             maps encoded again where a pointer moved);
//   driver    cuLaunchKernel itself on the prepared launch's parameters: the
//             floor under any library's launch (kernels without clusters).
//
// Each path enqueues `kBatch` launches and takes the host time until the
// last returns (before the queue could fill), then waits for the GPU; the
// median over rounds, in microseconds a launch:
//
//   launch_overhead BUNDLE.pb
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/buffer.h"
#include "runtime/bundle.h"
#include "runtime/cuda_driver.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"

namespace tessera {
namespace {

using runtime::CompiledKernel;
using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

constexpr int kBatch = 200, kRounds = 15;

/// Median host microseconds a launch over kRounds batches of `launch`.
absl::StatusOr<double> HostMicros(const std::function<absl::Status()>& launch) {
  std::vector<double> samples;
  for (int round = 0; round < kRounds + 1; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i)
      if (absl::Status s = launch(); !s.ok()) return s;
    auto end = std::chrono::steady_clock::now();
    if (absl::Status s = runtime::Synchronize(); !s.ok()) return s;
    if (round > 0)  // the first round warms up
      samples.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kBatch);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

/// A kernel's two sets of arguments (the same shapes over two sets of
/// buffers) and the tensor pointers of the second.
struct Problem {
  std::vector<DeviceBuffer> buffers;
  std::vector<KernelArg> args;
  std::vector<CUdeviceptr> otherPointers;
};

/// Buffers for `tensors` (f16 or f32), twice, zeroed.
absl::StatusOr<Problem> MakeProblem(
    const std::vector<std::pair<runtime::DType, std::vector<int64_t>>>& tensors,
    const std::vector<ScalarArg>& scalars) {
  Problem p;
  for (int set = 0; set < 2; ++set)
    for (const auto& [dtype, shape] : tensors) {
      int64_t bytes = dtype == runtime::DTYPE_F16 ? 2 : 4;
      for (int64_t d : shape) bytes *= d;
      absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(std::max<int64_t>(bytes, 256));
      if (!buffer.ok()) return buffer.status();
      if (absl::Status s = buffer->Fill(0); !s.ok()) return s;
      if (set == 0)
        p.args.push_back(TensorArg{buffer->ptr(), dtype, shape});
      else
        p.otherPointers.push_back(buffer->ptr());
      p.buffers.push_back(*std::move(buffer));
    }
  for (const ScalarArg& scalar : scalars) p.args.push_back(scalar);
  return p;
}

int Run(const char* bundlePath) {
  absl::StatusOr<runtime::Device> device = runtime::Device::Open(0);
  if (!device.ok()) {
    std::fprintf(stderr, "launch_overhead: %s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<runtime::KernelBundle> bundle = runtime::ReadBundle(bundlePath);
  if (!bundle.ok()) {
    std::fprintf(stderr, "launch_overhead: %s\n", std::string(bundle.status().message()).c_str());
    return 1;
  }
  const runtime::DType f16 = runtime::DTYPE_F16, f32 = runtime::DTYPE_F32;
  struct Case {
    std::string entry, shape;
    std::vector<std::pair<runtime::DType, std::vector<int64_t>>> tensors;
    std::vector<ScalarArg> scalars;
  };
  const Case cases[] = {
      {"vector_add", "n=1", {{f32, {1}}, {f32, {1}}, {f32, {1}}}, {}},
      {"gemm_f16", "256^3", {{f16, {256, 256}}, {f16, {256, 256}}, {f16, {256, 256}}}, {}},
      {"flash_attention",
       "b1 s64 h1 d128",
       {{f16, {1, 64, 1, 128}},
        {f16, {1, 64, 1, 128}},
        {f16, {1, 64, 1, 128}},
        {f16, {1, 64, 1, 128}},
        {f32, {1, 1, 64}}},
       {ScalarArg::F32(0.088f)}}};
  std::printf("device: %s\n", device->Describe().c_str());
  std::printf("%-16s %-16s %5s %10s %10s %10s %10s  (host us a launch, median of %d x %d)\n",
              "kernel", "shape", "maps", "full", "prepared", "rebound", "driver", kRounds, kBatch);
  int failures = 0;
  for (const Case& c : cases) {
    const CompiledKernel* spec = nullptr;
    for (const CompiledKernel& k : bundle->kernels())
      if (k.entry() == c.entry) spec = &k;
    if (spec == nullptr) {
      std::printf("%-16s not in the bundle\n", c.entry.c_str());
      ++failures;
      continue;
    }
    absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(*spec);
    absl::StatusOr<Problem> problem = MakeProblem(c.tensors, c.scalars);
    absl::StatusOr<runtime::PackedLaunch> packed =
        problem.ok() ? runtime::PrepareLaunch(*spec, problem->args)
                     : absl::StatusOr<runtime::PackedLaunch>(problem.status());
    if (!kernel.ok() || !packed.ok()) {
      std::printf("%-16s FAIL %s\n", c.entry.c_str(),
                  std::string((kernel.ok() ? packed.status() : kernel.status()).message()).c_str());
      ++failures;
      continue;
    }
    std::vector<CUdeviceptr> first;
    for (const KernelArg& arg : problem->args)
      if (const auto* t = std::get_if<TensorArg>(&arg)) first.push_back(t->ptr);
    bool flip = false;
    absl::StatusOr<double> full =
        HostMicros([&] { return runtime::Launch(*kernel, problem->args); });
    absl::StatusOr<double> prepared = HostMicros([&] { return runtime::Launch(*kernel, *packed); });
    absl::StatusOr<double> rebound = HostMicros([&]() -> absl::Status {
      flip = !flip;
      if (absl::Status s = runtime::RebindPointers(*packed, flip ? problem->otherPointers : first);
          !s.ok())
        return s;
      return runtime::Launch(*kernel, *packed);
    });
    // The driver's own call on the same parameters (as Launch makes it for
    // a kernel without clusters; a persistent kernel's grid capped alike).
    const bool clustered = spec->cluster_x() > 1 || spec->cluster_y() > 1;
    absl::StatusOr<double> driver = -1.0;
    if (!clustered) {
      int64_t blocks = packed->grid[0] * packed->grid[1] * packed->grid[2];
      unsigned grid[3] = {unsigned(packed->grid[0]), unsigned(packed->grid[1]),
                          unsigned(packed->grid[2])};
      if (kernel->persistent_blocks() > 0) {
        grid[0] = unsigned(std::min(blocks, kernel->persistent_blocks()));
        grid[1] = grid[2] = 1;
      }
      driver = HostMicros([&]() -> absl::Status {
        CUresult r = kernel->driver().cuLaunchKernel(
            kernel->function(), grid[0], grid[1], grid[2], unsigned(packed->block_threads), 1, 1,
            unsigned(packed->shared_memory_bytes), nullptr, packed->kernel_params.data(), nullptr);
        return r == CUDA_SUCCESS ? absl::OkStatus() : absl::InternalError("cuLaunchKernel failed");
      });
    }
    if (!full.ok() || !prepared.ok() || !rebound.ok() || !driver.ok()) {
      absl::Status s = !full.ok()       ? full.status()
                       : !prepared.ok() ? prepared.status()
                       : !rebound.ok()  ? rebound.status()
                                        : driver.status();
      std::printf("%-16s FAIL %s\n", c.entry.c_str(), std::string(s.message()).c_str());
      ++failures;
      continue;
    }
    std::string floor = clustered ? "-" : absl::StrFormat("%.2f", *driver);
    std::printf("%-16s %-16s %5d %10.2f %10.2f %10.2f %10s\n", c.entry.c_str(), c.shape.c_str(),
                spec->tensor_maps_size(), *full, *prepared, *rebound, floor.c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: launch_overhead BUNDLE.pb\n");
    return 2;
  }
  return tessera::Run(argv[1]);
}
