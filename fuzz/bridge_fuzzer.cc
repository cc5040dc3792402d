//===- bridge_fuzzer.cc - Fuzzes the Python bridge's C ABI -----------------===//
//
// This file implements a libFuzzer target for python/bridge/tessera_bridge.h,
// which takes whatever a Python caller passes: argument records of any kind,
// dtype number, rank, shape values (negative, huge), addresses and scalars,
// kernel indices in or out of range. A few kernels with dynamic dimensions,
// dimension groups, divisibility, scalars and preconditions are built once
// with the frontend and opened as a kernel file; each input is decoded into
// an argument list and given to tessera_check (PrepareLaunch) and
// tessera_launch (which, without a GPU, stops at the driver). Every call
// must return a status, never crash, and a refusal must say something.
//
//===----------------------------------------------------------------------===//

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/Tessera.h"
#include "python/bridge/tessera_bridge.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"

namespace {

using namespace tessera;

/// A GEMM-shaped kernel: three tensors of dynamic dimensions with a group
/// and divisibility, a float and an integer scalar, and a precondition.
Kernel Shaped() {
  KernelBuilder T("shaped");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16);
  auto C = T.Tensor("C", {m, n}, f32);
  Scalar alpha = T.ScalarArg("alpha", f32), count = T.ScalarArg("count", i32);
  T.Launch({CeilDiv(n, 64), CeilDiv(m, 32)}, 128, [&](Index bx, Index by) {
    T.Require(A.dim(0) % Index(2) == Index(0));
    T.Require(ToIndex(count) <= A.dim(1));
    auto c = T.AllocFragment({32, 64}, f32, "c");
    T.Copy(C.Tile(by * 32, bx * 64), c);
    T.Parallel({32, 64}, [&](Index i, Index j) { c(i, j) = c(i, j) * alpha; });
    T.Copy(c, C.Tile(by * 32, bx * 64));
  });
  return T.Build();
}

/// A rank-4 tensor and a 1-D table of i32 read as indices.
Kernel Gathered() {
  KernelBuilder T("gathered");
  Dim b = Dim::Dynamic("B"), s = Dim::Dynamic("S"), h = Dim::Dynamic("H");
  auto X = T.Tensor("X", {b, s, h, 64}, bf16), Y = T.Tensor("Y", {b, s, h, 64}, bf16);
  auto Table = T.Tensor("Table", {b}, i32);
  T.Launch({CeilDiv(s, 16), h, b}, 64, [&](Index bx, Index hh, Index bb) {
    auto x = T.AllocFragment({16, 64}, bf16, "x");
    Index row = Table(bb);
    T.Copy(X.Tile(bb, row + bx * 16, hh, 0).Along({1, 3}), x);
    T.Copy(x, Y.Tile(bb, bx * 16, hh, 0).Along({1, 3}));
  });
  return T.Build();
}

/// The bridge's bundle of the kernels above, opened once.
TesseraBundle* OpenBundle() {
  runtime::KernelBundle bundle;
  CompileOptions options;
  options.target = "sm_80";
  for (const Kernel& kernel : {Shaped(), Gathered()}) {
    absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
    if (!compiled.ok()) {
      std::fprintf(stderr, "bridge_fuzzer: %s\n", std::string(compiled.status().message()).c_str());
      std::abort();
    }
    *bundle.add_kernels() = *compiled;
  }
  char path[] = "/tmp/tessera-bridge-fuzz-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) std::abort();
  ::close(fd);
  if (!runtime::WriteBundle(bundle, path).ok()) std::abort();
  TesseraBundle* opened = nullptr;
  if (tessera_bundle_open(path, &opened) != 0) std::abort();
  ::unlink(path);
  return opened;
}

/// Reads fuzz bytes in order; zeros once they run out.
struct Reader {
  const uint8_t* data;
  size_t size;
  template <typename T>
  T Take() {
    T value{};
    size_t n = std::min(sizeof(T), size);
    std::memcpy(&value, data, n);
    data += n, size -= n;
    return value;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static TesseraBundle* bundle = OpenBundle();
  Reader in{data, size};
  const int index = static_cast<int>(in.Take<uint8_t>() % 4) - 1;  // -1 and 2 are out of range
  const int count = in.Take<uint8_t>() % 10;
  std::vector<std::vector<int64_t>> shapes(count);
  std::vector<TesseraArg> args(count);
  for (int i = 0; i < count; ++i) {
    TesseraArg& arg = args[i];
    arg.kind = in.Take<uint8_t>() % 4;
    arg.dtype = static_cast<int8_t>(in.Take<uint8_t>());
    arg.rank = static_cast<int8_t>(in.Take<uint8_t>()) % 20;
    int stored = arg.rank < 0 ? 0 : arg.rank;
    // Shapes mostly small, sometimes any 64-bit value.
    for (int d = 0; d < stored; ++d) {
      uint8_t how = in.Take<uint8_t>();
      shapes[i].push_back(how < 200 ? int64_t(how) : in.Take<int64_t>());
    }
    // A rank with no shape array is the caller's mistake the bridge refuses.
    arg.shape = stored > 0 && (in.Take<uint8_t>() & 1) ? shapes[i].data() : nullptr;
    if (arg.shape == nullptr && stored > 0 && (in.Take<uint8_t>() & 1)) arg.rank = 0;
    arg.address = in.Take<uint64_t>();
    arg.is_float = in.Take<uint8_t>() & 1;
    arg.int_value = in.Take<int64_t>();
    arg.float_value = in.Take<double>();
  }
  const TesseraArg* list = count > 0 || (in.Take<uint8_t>() & 1) ? args.data() : nullptr;
  for (int code : {tessera_check(bundle, index, list, count),
                   tessera_launch(bundle, index, list, count, in.Take<uint64_t>())}) {
    if (code != 0 && std::strlen(tessera_last_error()) == 0) {
      std::fprintf(stderr, "bridge_fuzzer: status %d without a message\n", code);
      std::abort();
    }
  }
  if (tessera_bundle_describe(bundle)[0] != '[') std::abort();
  return 0;
}
