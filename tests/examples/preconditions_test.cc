//===- preconditions_test.cc - Example kernels refuse launches they cannot serve -===//
//
// The decode kernels state what a launch must satisfy (T.Require): key
// heads dividing the query heads, a group that fits the tile, Skv >= Sq,
// one token for the one-token form, at most 64 parts for the combine,
// packed weights and scales that match K. PrepareLaunch (no GPU) must
// refuse a launch that breaks one, naming the values, and accept one that
// does not.
//
//===----------------------------------------------------------------------===//

#include <string>
#include <vector>

#include "examples/flash_attention.h"
#include "examples/flash_attention_bwd.h"
#include "examples/flash_decoding.h"
#include "examples/gemm_w4a16.h"
#include "gtest/gtest.h"
#include "runtime/launch.h"

namespace tessera::examples {
namespace {

using runtime::KernelArg;
using runtime::ScalarArg;
using runtime::TensorArg;

constexpr CUdeviceptr kBase = 0x7f0000000000;

runtime::CompiledKernel CompileFor(const Kernel& kernel) {
  CompileOptions options;
  options.target = "sm_80";
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *compiled : runtime::CompiledKernel();
}

std::vector<KernelArg> DecodeArgs(int64_t b, int64_t sq, int64_t skv, int64_t h, int64_t hkv,
                                  int64_t parts) {
  const int64_t d = 128;
  return {TensorArg{kBase, runtime::DTYPE_F16, {b, sq, h, d}},
          TensorArg{kBase + (1 << 30), runtime::DTYPE_F16, {b, skv, hkv, d}},
          TensorArg{kBase + (2ll << 30), runtime::DTYPE_F16, {b, skv, hkv, d}},
          TensorArg{kBase + (3ll << 30), runtime::DTYPE_F32, {b, sq, h, parts, d}},
          TensorArg{kBase + (4ll << 30), runtime::DTYPE_F32, {b, sq, parts, h}},
          TensorArg{kBase + (5ll << 30), runtime::DTYPE_F16, {b, sq, h, d}},
          TensorArg{kBase + (6ll << 30), runtime::DTYPE_F32, {b, sq, h}},
          ScalarArg::F32(0.1f)};
}

TEST(Preconditions, FlashDecodingRefusesWhatItCannotServe) {
  FlashDecodingConfig c;
  runtime::CompiledKernel split = CompileFor(FlashDecoding(c));
  EXPECT_TRUE(runtime::PrepareLaunch(split, DecodeArgs(2, 1, 777, 8, 2, 4)).ok());
  struct Bad {
    std::vector<KernelArg> args;
    const char* names;
  };
  for (const Bad& bad : {Bad{DecodeArgs(2, 1, 777, 6, 4, 4), "H"},     // 4 does not divide 6
                         Bad{DecodeArgs(2, 1, 777, 64, 2, 4), "Hkv"},  // 32 heads a group > 16
                         Bad{DecodeArgs(2, 9, 8, 8, 2, 4), "Skv"}}) {  // fewer keys than tokens
    absl::StatusOr<runtime::PackedLaunch> packed = runtime::PrepareLaunch(split, bad.args);
    ASSERT_FALSE(packed.ok());
    EXPECT_NE(packed.status().message().find("precondition"), std::string::npos) << packed.status();
    EXPECT_NE(packed.status().message().find(bad.names), std::string::npos) << packed.status();
  }
  c.oneToken = true;
  runtime::CompiledKernel one = CompileFor(FlashDecoding(c, "flash_decoding_one"));
  EXPECT_TRUE(runtime::PrepareLaunch(one, DecodeArgs(2, 1, 777, 8, 2, 4)).ok());
  EXPECT_FALSE(runtime::PrepareLaunch(one, DecodeArgs(2, 2, 777, 8, 2, 4)).ok());
}

TEST(Preconditions, CombineTakesAtMost64Parts) {
  runtime::CompiledKernel combine = CompileFor(FlashDecodingCombine(f16, 128));
  auto args = [](int64_t parts) -> std::vector<KernelArg> {
    return {TensorArg{kBase, runtime::DTYPE_F32, {2, 1, 8, parts, 128}},
            TensorArg{kBase + (1 << 30), runtime::DTYPE_F32, {2, 1, parts, 8}},
            TensorArg{kBase + (2ll << 30), runtime::DTYPE_F16, {2, 1, 8, 128}},
            TensorArg{kBase + (3ll << 30), runtime::DTYPE_F32, {2, 1, 8}}};
  };
  EXPECT_TRUE(runtime::PrepareLaunch(combine, args(64)).ok());
  absl::StatusOr<runtime::PackedLaunch> packed = runtime::PrepareLaunch(combine, args(65));
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.status().message().find("65"), std::string::npos) << packed.status();
}

TEST(Preconditions, W4A16WeightsMatchK) {
  W4A16DecodeConfig c;
  for (const Kernel& kernel :
       {GemvW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), c, "gemv"),
        GemmW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), W4A16Config(),
                  "gemm")}) {
    runtime::CompiledKernel compiled = CompileFor(kernel);
    auto args = [](int64_t words, int64_t groups) -> std::vector<KernelArg> {
      return {TensorArg{kBase, runtime::DTYPE_F16, {1, 1064}},
              TensorArg{kBase + (1 << 30), runtime::DTYPE_I32, {words, 264}},
              TensorArg{kBase + (2ll << 30), runtime::DTYPE_F16, {groups, 264}},
              TensorArg{kBase + (3ll << 30), runtime::DTYPE_F16, {1, 264}}};
    };
    EXPECT_TRUE(runtime::PrepareLaunch(compiled, args(133, 9)).ok()) << kernel.name();
    EXPECT_FALSE(runtime::PrepareLaunch(compiled, args(132, 9)).ok()) << kernel.name();
    EXPECT_FALSE(runtime::PrepareLaunch(compiled, args(133, 8)).ok()) << kernel.name();
    EXPECT_FALSE(runtime::PrepareLaunch(compiled, args(133, 10)).ok()) << kernel.name();
  }
}

/// FlashAttention, forward and backward: key heads that do not divide the
/// query heads are refused by name (they once read zeros for the extra
/// heads); head dimensions the k-step cannot take are an error at build.
TEST(Preconditions, AttentionRefusesHeadsThatDoNotGroup) {
  FlashAttentionConfig c = FlashAttentionConfig::ForTarget("sm_80");
  runtime::CompiledKernel forward = CompileFor(FlashAttention(c));
  auto args = [](int64_t h, int64_t hkv) {
    std::vector<KernelArg> a = DecodeArgs(2, 100, 100, h, hkv, 1);
    // Q, K and V as decode's, then O, LSE and the scale.
    a.resize(3);
    a.push_back(TensorArg{kBase + (3ll << 30), runtime::DTYPE_F16, {2, 100, h, 128}});
    a.push_back(TensorArg{kBase + (4ll << 30), runtime::DTYPE_F32, {2, h, 100}});
    a.push_back(ScalarArg::F32(0.1f));
    return a;
  };
  EXPECT_TRUE(runtime::PrepareLaunch(forward, args(8, 2)).ok());
  absl::StatusOr<runtime::PackedLaunch> packed = runtime::PrepareLaunch(forward, args(5, 2));
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.status().message().find("H = 5, Hkv = 2"), std::string::npos) << packed.status();
  FlashAttentionBwdConfig bwd = FlashAttentionBwdConfig::ForTarget("sm_80");
  bwd.headDim = 72;
  Kernel refused = FlashAttentionBwdDq(bwd, "dq");
  EXPECT_NE(refused.status().message().find("head dimension 72 cannot be taken"), std::string::npos)
      << refused.status();
  c.headDim = 72;
  EXPECT_NE(FlashAttention(c).status().message().find("pad Q, K and V to 80"), std::string::npos);
}
}  // namespace
}  // namespace tessera::examples
