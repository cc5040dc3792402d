//===- ops_bundles.cc - The kernels tessera.ops launches -------------------===//
//
// Writes DIR/<target>.pb for every target: the GEMMs and FlashAttention
// forwards behind tessera.ops (python/tessera/ops.py), each on its target's
// tuned defaults. tessera.ops picks a kernel by name:
//   gemm_f16, gemm_bf16                 C[M, N] = A[M, K] B[K, N]
//   flash_attention_<dtype>_d<D>[_causal]  for D in 64, 128, 256
//   flash_attention_bwd_<dtype>_d<D>[_causal][_pre|_dq]  the backward, D 64, 128
//   flash_attention_varlen_<dtype>_d<D>[_causal], flash_attention_bwd_varlen_...
//                                       packed batches, D 64, 128
//
//   ops_bundles DIR        (DIR is created if missing)
//
//===----------------------------------------------------------------------===//

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "examples/common/example.h"
#include "examples/flash_attention.h"
#include "examples/flash_attention_bwd.h"
#include "examples/gemm.h"
#include "frontend/Tessera.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"

namespace {

using namespace tessera;

bool Add(runtime::KernelBundle& bundle, const Kernel& kernel, const std::string& target) {
  CompileOptions options;
  options.target = target;
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "ops_bundles: %s for %s: %s\n", kernel.name().c_str(), target.c_str(),
                 std::string(compiled.status().message()).c_str());
    return false;
  }
  *bundle.add_kernels() = std::move(*compiled);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ops_bundles DIR\n");
    return 2;
  }
  if (::mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "ops_bundles: cannot create %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  bool ok = true;
  for (const std::string& target : examples::AllTargets()) {
    runtime::KernelBundle bundle;
    for (DType dtype : {f16, bf16}) {
      examples::GemmConfig gemm = examples::GemmConfig::ForTarget(target);
      gemm.dtype = dtype;
      ok &=
          Add(bundle, examples::GemmDynamic(gemm, dtype == f16 ? "gemm_f16" : "gemm_bf16"), target);
      for (int64_t headDim : {64, 128, 256}) {
        for (bool causal : {false, true}) {
          auto config = examples::FlashAttentionConfig::ForTarget(target, dtype, headDim, causal);
          ok &= Add(bundle, examples::FlashAttention(config), target);
          if (headDim > 128) continue;  // The backward's register budget stops at 128.
          auto bwd = examples::FlashAttentionBwdConfig::ForTarget(target, dtype, headDim, causal);
          std::string base = examples::FlashAttentionBwdName(bwd);
          ok &= Add(bundle, examples::FlashAttentionBwdPre(bwd, base + "_pre"), target);
          ok &= Add(bundle, examples::FlashAttentionBwdDq(bwd, base + "_dq"), target);
          ok &= Add(bundle, examples::FlashAttentionBwdDkDv(bwd, base), target);
          // The packed-batch (varlen) forms of both.
          config.varlen = bwd.varlen = true;
          ok &= Add(bundle, examples::FlashAttention(config), target);
          base = examples::FlashAttentionBwdName(bwd);
          ok &= Add(bundle, examples::FlashAttentionBwdPre(bwd, base + "_pre"), target);
          ok &= Add(bundle, examples::FlashAttentionBwdDq(bwd, base + "_dq"), target);
          ok &= Add(bundle, examples::FlashAttentionBwdDkDv(bwd, base), target);
        }
      }
    }
    std::string path = absl::StrCat(argv[1], "/", target, ".pb");
    if (absl::Status status = runtime::WriteBundle(bundle, path); !status.ok()) {
      std::fprintf(stderr, "ops_bundles: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  return ok ? 0 : 1;
}
