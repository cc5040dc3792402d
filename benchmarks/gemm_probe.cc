//===- gemm_probe.cc - Where a GEMM kernel reads its operands -------------===//
//
// Runs GEMM kernels named "probe_<M>x<N>x<K>[_tn]" from bundles with
// structured inputs instead of random ones, and writes each result matrix
// as CSV: with A a (row mod K) one-hot matrix, C shows which row of B each
// output element read, and so on. Used to debug an MMA lowering's shared
// memory layouts (descriptors, swizzles) on the GPU machine:
//
//   gemm_probe OUT_DIR [--only=KERNEL] BUNDLE.pb...
//
// Patterns (value of C[m][n] when the kernel is right):
//   a_onehot_b_k : A[m][k] = (k == m mod K), B[k][n] = k      -> m mod K
//   a_onehot_b_n : A[m][k] = (k == m mod K), B[k][n] = n mod 64 -> n mod 64
//   a_onehot_b_p : A[m][k] = (k == m mod K), B[k][n] = n / 64  -> n / 64
//   a_m_b_onehot : A[m][k] = m mod 64, B[k][n] = (k == n mod K) -> m mod 64
//   a_k_b_onehot : A[m][k] = k, B[k][n] = (k == n mod K)       -> n mod K
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "examples/workloads/workloads.h"
#include "runtime/buffer.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"


int main(int argc, char** argv) {
  using namespace tessera::runtime;
  using tessera::workloads::FloatToHalfBits;
  using tessera::workloads::HalfBitsToFloat;
  if (argc < 3) {
    std::fprintf(stderr, "usage: gemm_probe OUT_DIR BUNDLE.pb...\n");
    return 2;
  }
  std::string out = argv[1];
  // --only=NAME runs one kernel (a fault ends the process's context).
  std::string only;
  int first = 2;
  if (std::strncmp(argv[2], "--only=", 7) == 0) only = argv[first++] + 7;
  absl::StatusOr<Device> device = Device::Open(0);
  if (!device.ok()) {
    std::fprintf(stderr, "gemm_probe: %s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  using Formula = std::function<float(int64_t, int64_t)>;
  int failures = 0;
  for (int arg = first; arg < argc; ++arg) {
    absl::StatusOr<KernelBundle> bundle = ReadBundle(argv[arg]);
    if (!bundle.ok()) {
      std::fprintf(stderr, "gemm_probe: %s\n", std::string(bundle.status().message()).c_str());
      return 1;
    }
    for (const CompiledKernel& spec : bundle->kernels()) {
      int64_t m = 0, n = 0, k = 0;
      if (std::sscanf(spec.entry().c_str(), "probe_%ldx%ldx%ld", &m, &n, &k) != 3) continue;
      if (!only.empty() && spec.entry() != only) continue;
      bool tn = spec.entry().find("_tn") != std::string::npos;
      absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(spec);
      if (!kernel.ok()) {
        std::printf("%s: load: %s\n", spec.entry().c_str(),
                    std::string(kernel.status().message()).c_str());
        ++failures;
        continue;
      }
      struct Pattern {
        const char* name;
        Formula a, b, expected;
      };
      auto onehot = [&](int64_t i, int64_t j) { return float(j == i % k); };
      std::vector<Pattern> patterns = {
          {"a_onehot_b_k", onehot, [](int64_t kk, int64_t) { return float(kk); },
           [&](int64_t i, int64_t) { return float(i % k); }},
          {"a_onehot_b_n", onehot, [](int64_t, int64_t j) { return float(j % 64); },
           [](int64_t, int64_t j) { return float(j % 64); }},
          {"a_onehot_b_p", onehot, [](int64_t, int64_t j) { return float(j / 64); },
           [](int64_t, int64_t j) { return float(j / 64); }},
          {"a_m_b_onehot", [](int64_t i, int64_t) { return float(i % 64); },
           [&](int64_t kk, int64_t j) { return float(kk == j % k); },
           [](int64_t i, int64_t) { return float(i % 64); }},
          {"a_k_b_onehot", [](int64_t, int64_t kk) { return float(kk); },
           [&](int64_t kk, int64_t j) { return float(kk == j % k); },
           [&](int64_t, int64_t j) { return float(j % k); }},
      };
      for (const Pattern& p : patterns) {
        std::vector<uint16_t> a(m * k), b(k * n), c(m * n, 0xFFFF);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t kk = 0; kk < k; ++kk) a[i * k + kk] = FloatToHalfBits(p.a(i, kk));
        for (int64_t kk = 0; kk < k; ++kk)
          for (int64_t j = 0; j < n; ++j)
            b[tn ? j * k + kk : kk * n + j] = FloatToHalfBits(p.b(kk, j));
        auto da = DeviceBuffer::Allocate(a.size() * 2);
        auto db = DeviceBuffer::Allocate(b.size() * 2);
        auto dc = DeviceBuffer::Allocate(c.size() * 2);
        if (!da.ok() || !db.ok() || !dc.ok()) return 1;
        (void)da->CopyFromHost(a.data(), a.size() * 2);
        (void)db->CopyFromHost(b.data(), b.size() * 2);
        (void)dc->CopyFromHost(c.data(), c.size() * 2);
        std::vector<KernelArg> args = {
            TensorArg{da->ptr(), DTYPE_F16, {m, k}},
            TensorArg{db->ptr(), DTYPE_F16, tn ? std::vector<int64_t>{n, k}
                                               : std::vector<int64_t>{k, n}},
            TensorArg{dc->ptr(), DTYPE_F16, {m, n}}};
        absl::Status s = Launch(*kernel, args);
        if (s.ok()) s = Synchronize();
        if (!s.ok()) {
          std::printf("%s %s: %s\n", spec.entry().c_str(), p.name,
                      std::string(s.message()).c_str());
          return 1;
        }
        (void)dc->CopyToHost(c.data(), c.size() * 2);
        std::ofstream csv(out + "/" + spec.entry() + "." + p.name + ".csv");
        int64_t wrong = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float got = HalfBitsToFloat(c[i * n + j]);
            wrong += got != p.expected(i, j);
            csv << (j ? "," : "") << got;
          }
          csv << "\n";
        }
        std::printf("%-24s %-14s %s (%ld wrong of %ld)\n", spec.entry().c_str(), p.name,
                    wrong ? "WRONG" : "ok", long(wrong), long(m * n));
        failures += wrong != 0;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
