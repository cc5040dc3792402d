//===- knobs_test.cc - Any GEMM knobs: a kernel or an error ---------------===//
//
// The example GEMMs take their tile sizes, stages, threads and schedule from
// the author. Whatever those are, compiling must give PTX or an error that
// says what is wrong, on every target: never a crash, an abort or a hang.
// A fixed-seed draw over legal and illegal values of every knob.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "examples/common/example.h"
#include "examples/gemm.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera::examples {
namespace {

template <typename T, size_t N>
T Pick(std::mt19937& rng, const T (&values)[N]) {
  return values[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

TEST(Knobs, AnyGemmKnobsGiveAKernelOrAnError) {
  const int64_t tiles[] = {0, 1, 8, 16, 24, 32, 48, 64, 96, 100, 128, 192, 256, 512, 4096};
  const int stages[] = {0, 1, 2, 3, 4, 7, 64, 1 << 30};
  const int threads[] = {0, 1, 31, 32, 64, 96, 128, 160, 256, 384, 512, 1024, 2048};
  const DType types[] = {f16, bf16, f32};
  const char* targets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};
  std::mt19937 rng(20261130);
  int compiled = 0, rejected = 0;
  // First the draws that once broke the compiler: a staged copy whose last
  // chunk overhangs the tile on sm_60 and sm_70 (IR that did not verify), a
  // stage count that took planning minutes, and a 48 x 256 tile on one
  // thread that took minutes to unroll (now an error).
  std::vector<GemmConfig> configs(3);
  configs[0].dtype = f32, configs[0].bm = 24, configs[0].bn = 8, configs[0].bk = 64;
  configs[0].stages = 2, configs[0].threads = 256, configs[0].transposeB = true;
  configs[1].stages = 1 << 30;
  configs[2].bm = 1, configs[2].bn = 48, configs[2].bk = 256, configs[2].stages = 2;
  configs[2].threads = 1, configs[2].transposeB = true;
  for (int i = 0; i < 96; ++i) {
    GemmConfig& c = configs.emplace_back();
    c.dtype = Pick(rng, types);
    c.bm = Pick(rng, tiles), c.bn = Pick(rng, tiles), c.bk = Pick(rng, tiles);
    c.stages = Pick(rng, stages), c.threads = Pick(rng, threads);
    c.transposeB = rng() % 2;
    c.group = rng() % 2 ? 8 : 0;
    c.pingpong = rng() % 4 == 0;
    c.persistent = rng() % 3 == 0;
    c.streamK = c.persistent && rng() % 2;
    c.multicast = rng() % 4 == 0;
    c.multicastBlocks = int64_t{1} << (rng() % 4);  // 1 (an error), 2, 4 or 8
    c.edgeLoop = rng() % 3 == 0;
  }
  for (const GemmConfig& c : configs) {
    std::string knobs = "dtype " + std::to_string(int(c.dtype)) + ", bm " + std::to_string(c.bm) +
                        ", bn " + std::to_string(c.bn) + ", bk " + std::to_string(c.bk) +
                        ", stages " + std::to_string(c.stages) + ", threads " +
                        std::to_string(c.threads) + ", transposeB " +
                        std::to_string(c.transposeB) + ", group " + std::to_string(c.group) +
                        ", pingpong " + std::to_string(c.pingpong) + ", persistent " +
                        std::to_string(c.persistent) + ", streamK " + std::to_string(c.streamK) +
                        ", multicast " + std::to_string(c.multicast) + " of " +
                        std::to_string(c.multicastBlocks) + ", edgeLoop " +
                        std::to_string(c.edgeLoop);
    for (const char* target : targets) {
      SCOPED_TRACE(std::string(target) + ": " + knobs);
      Kernel kernel = GemmDynamic(c, "gemm_knobs");
      if (!kernel.status().ok()) {
        EXPECT_FALSE(kernel.status().message().empty());
        ++rejected;
        continue;
      }
      CompileOptions options;
      options.target = target;
      absl::StatusOr<runtime::CompiledKernel> result = kernel.Compile(options);
      if (result.ok()) {
        EXPECT_FALSE(result->ptx().empty());
        ++compiled;
      } else {
        // A user's error, not the compiler's: Build verified the kernel,
        // so the verifier's own complaints (or a failed conversion) can
        // only mean a pass broke the IR (one did for a copy whose last
        // chunk overhangs the tile on sm_60 and sm_70).
        std::string message(result.status().message());
        EXPECT_FALSE(message.empty());
        for (const char* internal : {"internal error", "does not dominate", "null operand",
                                     "failed to legalize"})
          EXPECT_EQ(message.find(internal), std::string::npos) << message;
        ++rejected;
      }
    }
  }
  std::printf("%d compiled, %d rejected\n", compiled, rejected);
  // The draw reaches both sides.
  EXPECT_GT(compiled, 0);
  EXPECT_GT(rejected, 0);
}

/// The example binaries' command-line knobs: typed values, the first
/// malformed one reported, and a knob that changes the interface renames
/// the kernel to the family member whose workloads fit.
TEST(Knobs, ExampleKnobsConfigureTheKernelAndNameIt) {
  const Example* gemm = nullptr;
  const Example* attention = nullptr;
  for (const Example& example : AllExamples()) {
    if (example.name == "gemm_f16") gemm = &example;
    if (example.name == "flash_attention") attention = &example;
  }
  ASSERT_NE(gemm, nullptr);
  ASSERT_NE(attention, nullptr);
  ASSERT_TRUE(gemm->configure && attention->configure);

  KnobValues gemmKnobs;
  gemmKnobs.Set("dtype", "bf16");
  gemmKnobs.Set("stages", "3");
  Kernel kernel = gemm->configure("sm_80", gemmKnobs);
  EXPECT_EQ(gemmKnobs.error(), "");
  EXPECT_TRUE(kernel.status().ok()) << kernel.status().message();
  EXPECT_EQ(kernel.name(), "gemm_bf16");

  KnobValues attentionKnobs;
  attentionKnobs.Set("dtype", "bf16");
  attentionKnobs.Set("head-dim", "64");
  attentionKnobs.Set("causal", "true");
  EXPECT_EQ(attention->configure("sm_90a", attentionKnobs).name(),
            "flash_attention_bf16_d64_causal");
  EXPECT_EQ(attentionKnobs.error(), "");

  // The backward's companions follow the knobs (their workloads are the
  // family member's).
  for (const Example& example : AllExamples()) {
    if (example.name != "flash_attention_bwd") continue;
    KnobValues bwdKnobs;
    bwdKnobs.Set("dtype", "bf16");
    bwdKnobs.Set("head-dim", "64");
    EXPECT_EQ(example.configure("sm_80", bwdKnobs).name(), "flash_attention_bwd_bf16_d64");
    ASSERT_EQ(example.companions.size(), 2u);
    EXPECT_EQ(example.companions[0].configure("sm_80", bwdKnobs).name(),
              "flash_attention_bwd_bf16_d64_pre");
    EXPECT_EQ(example.companions[1].configure("sm_80", bwdKnobs).name(),
              "flash_attention_bwd_bf16_d64_dq");
  }

  KnobValues bad;
  bad.Set("bm", "abc");
  gemm->configure("sm_80", bad);
  EXPECT_EQ(bad.error(), "--bm=abc: expects a positive integer");
  KnobValues badType;
  badType.Set("dtype", "f32");
  gemm->configure("sm_80", badType);
  EXPECT_EQ(badType.error(), "--dtype=f32: expects f16 or bf16");
  KnobValues badBool;
  badBool.Set("causal", "maybe");
  attention->configure("sm_80", badBool);
  EXPECT_EQ(badBool.error(), "--causal=maybe: expects true or false");
}
}  // namespace
}  // namespace tessera::examples
