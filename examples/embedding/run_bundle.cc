//===- run_bundle.cc - Load a bundle with the runtime alone ---------------===//
//
// Usage: run_bundle BUNDLE
// Lists the bundle's kernels. Where a GPU is, it loads the kernel built for
// the device's architecture (or the newest one the device can JIT), runs it
// on random inputs of a length that is no multiple of the block, and checks
// every element against a double-precision reference. Links only Tessera's
// runtime: no LLVM, no MLIR.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"

namespace {

using namespace tessera::runtime;

/// Prints `status` as one line and returns 1.
int Fail(const absl::Status& status) {
  std::fprintf(stderr, "run_bundle: %s\n", status.ToString().c_str());
  return 1;
}

/// The compute capability a target such as "sm_90a" needs, as 10*major+minor.
int TargetCapability(const std::string& target) {
  int capability = 0;
  for (char c : target)
    if (c >= '0' && c <= '9') capability = capability * 10 + (c - '0');
  return capability;
}

/// The kernel for `device`: its own architecture (the "a" variant too), else
/// the newest older one, which the driver JIT-compiles from PTX.
const CompiledKernel* Choose(const KernelBundle& bundle, const Device& device) {
  const int own = device.compute_capability_major() * 10 + device.compute_capability_minor();
  const CompiledKernel* best = nullptr;
  for (const CompiledKernel& kernel : bundle.kernels()) {
    const int needs = TargetCapability(kernel.target());
    const bool archSpecific = !kernel.target().empty() && kernel.target().back() == 'a';
    if (needs > own || (archSpecific && needs != own)) continue;
    if (!best || needs > TargetCapability(best->target())) best = &kernel;
  }
  return best;
}

/// Runs `kernel` on n elements and compares with the reference.
int RunAndCheck(const CompiledKernel& kernel) {
  const int64_t n = 1000003;
  const float alpha = 1.75f;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), out(n);
  for (int64_t i = 0; i < n; ++i) x[i] = uniform(random), y[i] = uniform(random);
  const size_t bytes = n * sizeof(float);
  absl::StatusOr<DeviceBuffer> dx = DeviceBuffer::Allocate(bytes);
  absl::StatusOr<DeviceBuffer> dy = DeviceBuffer::Allocate(bytes);
  absl::StatusOr<DeviceBuffer> dout = DeviceBuffer::Allocate(bytes);
  for (const auto* buffer : {&dx, &dy, &dout})
    if (!buffer->ok()) return Fail(buffer->status());
  absl::Status status = dx->CopyFromHost(x.data(), bytes);
  if (status.ok()) status = dy->CopyFromHost(y.data(), bytes);
  if (status.ok()) status = dout->Fill(0xff);  // NaN everywhere: unwritten shows
  if (!status.ok()) return Fail(status);
  absl::StatusOr<LoadedKernel> loaded = LoadedKernel::Load(kernel);
  if (!loaded.ok()) return Fail(loaded.status());
  std::vector<KernelArg> args = {TensorArg{dx->ptr(), DTYPE_F32, {n}},
                                 TensorArg{dy->ptr(), DTYPE_F32, {n}},
                                 TensorArg{dout->ptr(), DTYPE_F32, {n}}, ScalarArg::F32(alpha)};
  status = Launch(*loaded, args);
  if (status.ok()) status = Synchronize();
  if (status.ok()) status = dout->CopyToHost(out.data(), bytes);
  if (!status.ok()) return Fail(status);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double expected = double(alpha) * x[i] + y[i];
    if (!(std::fabs(out[i] - expected) <= 1e-6 * (1 + std::fabs(expected)))) ++wrong;
  }
  std::printf("%s (%s): %lld of %lld elements wrong\n", kernel.entry().c_str(),
              kernel.target().c_str(), static_cast<long long>(wrong),
              static_cast<long long>(n));
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run_bundle BUNDLE\n");
    return 2;
  }
  absl::StatusOr<KernelBundle> bundle = ReadBundle(argv[1]);
  if (!bundle.ok()) return Fail(bundle.status());
  for (const CompiledKernel& kernel : bundle->kernels())
    std::printf("%s: %s\n", kernel.target().c_str(), FormatSignature(kernel).c_str());
  absl::StatusOr<int> devices = DeviceCount();
  if (!devices.ok() || *devices == 0) {
    std::printf("no GPU here: loaded %d kernels, ran none\n", bundle->kernels_size());
    return 0;
  }
  absl::StatusOr<Device> device = Device::Open(0);
  if (!device.ok()) return Fail(device.status());
  if (absl::Status current = device->MakeCurrent(); !current.ok()) return Fail(current);
  const CompiledKernel* kernel = Choose(*bundle, *device);
  if (!kernel) {
    return Fail(absl::NotFoundError("no kernel in the bundle runs on " + device->arch()));
  }
  return RunAndCheck(*kernel);
}
