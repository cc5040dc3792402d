//===- autotune_test.cc - Tests of the tuning cache and summaries ---------===//
//
// This file tests the parts of the autotuner that need no GPU: the key of a
// choice, the family of an entry, the tuning cache's file round trip and its
// errors, and the one-line summary of a tuning run. Autotune itself is tested
// on a device in gpu_test.cc.
//
//===----------------------------------------------------------------------===//

#include "runtime/autotune.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(Autotune, KeyNamesFamilyTargetDeviceAndSizes) {
  EXPECT_EQ(TuneKey("gemm_f16", "sm_90a", "NVIDIA H200", {3000, 4000, 5000}),
            "gemm_f16|sm_90a|NVIDIA H200|3000,4000,5000");
  EXPECT_EQ(TuneKey("softmax_f16", "sm_80", "X", {}), "softmax_f16|sm_80|X|");
}

TEST(Autotune, SizesAreTheDimensionGroupsThenTheGridsSizeArguments) {
  // X [T] and Cu [B1], grid (ceil_div(max_len, 64), B1): a packed batch
  // whose longest sequence is a size argument.
  CompiledKernel kernel;
  kernel.set_entry("sized");
  kernel.set_block_threads(64);
  test_kernels::AddTensor(kernel, "X", DTYPE_F32, {-1}, 4);
  test_kernels::AddTensor(kernel, "Cu", DTYPE_I32, {-1}, 4);
  test_kernels::AddScalar(kernel, "max_len", DTYPE_I32);
  *kernel.add_grid() = test_kernels::Binary(Expr::OP_CEIL_DIV, test_kernels::ParamRef(2),
                                            test_kernels::Constant(64));
  *kernel.add_grid() = test_kernels::Symbol(1);
  auto sizes = [&](int32_t maxLen) {
    std::vector<KernelArg> args = {TensorArg{0x7f0000000000, DTYPE_F32, {1000}},
                                   TensorArg{0x7f0000100000, DTYPE_I32, {5}},
                                   ScalarArg::I32(maxLen)};
    absl::StatusOr<PackedLaunch> packed = PrepareLaunch(kernel, args);
    EXPECT_TRUE(packed.ok()) << packed.status();
    return TuneSizes(kernel, *packed, args);
  };
  // Two batches of one total length and count but other longest sequences
  // tune apart.
  EXPECT_EQ(sizes(300), (std::vector<int64_t>{1000, 5, 300}));
  EXPECT_EQ(sizes(900), (std::vector<int64_t>{1000, 5, 900}));
}

TEST(Autotune, FamilyIsTheNameBeforeTheKnobs) {
  EXPECT_EQ(TuneFamily("gemm_f16__256x128x64_s4_t512"), "gemm_f16");
  EXPECT_EQ(TuneFamily("gemm_bias_gelu_f16__grid"), "gemm_bias_gelu_f16");
  EXPECT_EQ(TuneFamily("gemm_f16"), "gemm_f16");
}

TEST(Autotune, CacheRoundTripsThroughAFile) {
  TuneCache cache;
  ASSERT_TRUE(cache.Insert("gemm_f16|H200|2048,2048,2048", "gemm_f16__grid").ok());
  ASSERT_TRUE(cache.Insert("gemm_bf16|H200|3000,5000,4000", "gemm_bf16__256x128x64_s4_t512").ok());
  ASSERT_TRUE(cache.Insert("gemm_f16|H200|2048,2048,2048", "gemm_f16").ok());  // replaces
  const std::string path = TempPath("tune_cache.txt");
  ASSERT_TRUE(cache.Save(path).ok());
  absl::StatusOr<TuneCache> read = TuneCache::Load(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 2u);
  EXPECT_EQ(read->Lookup("gemm_f16|H200|2048,2048,2048"), "gemm_f16");
  EXPECT_EQ(read->Lookup("gemm_bf16|H200|3000,5000,4000"), "gemm_bf16__256x128x64_s4_t512");
  EXPECT_EQ(read->Lookup("gemm_f16|H200|1,1,1"), std::nullopt);
}

TEST(Autotune, CacheRejectsWhatItCouldNotReadBack) {
  TuneCache cache;
  EXPECT_EQ(cache.Insert("a\tb", "gemm_f16").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Insert("key", "gemm\nf16").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Insert("", "gemm_f16").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Autotune, CacheReadsWindowsLineEnds) {
  const std::string path = TempPath("crlf_cache.txt");
  std::ofstream(path) << "# comment\r\nkey\tgemm_f16__grid\r\n";
  absl::StatusOr<TuneCache> cache = TuneCache::Load(path);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->Lookup("key"), "gemm_f16__grid");
}

TEST(Autotune, MissingCacheFileIsEmpty) {
  absl::StatusOr<TuneCache> cache = TuneCache::Load(TempPath("no_such_cache.txt"));
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->size(), 0u);
}

TEST(Autotune, MalformedCacheLineNamesFileAndLine) {
  const std::string path = TempPath("bad_cache.txt");
  std::ofstream(path) << "# comment\nkey\tentry\njust-a-key\n";
  absl::StatusOr<TuneCache> cache = TuneCache::Load(path);
  ASSERT_EQ(cache.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cache.status().message()),
              HasSubstr("bad_cache.txt line 3: expected 'key<TAB>entry', got 'just-a-key'"));
}

TEST(Autotune, UnwritableCacheIsAnError) {
  TuneCache cache;
  absl::Status saved = cache.Save("/no/such/dir/cache.txt");
  EXPECT_FALSE(saved.ok());
  EXPECT_THAT(std::string(saved.message()), HasSubstr("cannot write tuning cache"));
}

TEST(Autotune, NoCandidatesIsInvalid) {
  absl::StatusOr<TuneResult> result = Autotune({}, {});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Autotune, RoundsAreSummarizedByTheirMedian) {
  // What Autotune ranks candidates by: all rounds' runs together.
  TimingResult odd = SummarizeTimes({0.5, 0.2, 0.9});
  EXPECT_DOUBLE_EQ(odd.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(odd.min_ms, 0.2);
  EXPECT_DOUBLE_EQ(odd.max_ms, 0.9);
  EXPECT_EQ(odd.samples_ms, (std::vector<double>{0.5, 0.2, 0.9}));  // run order kept
  EXPECT_DOUBLE_EQ(SummarizeTimes({0.4, 0.1, 0.3, 0.2}).median_ms, 0.25);
  EXPECT_DOUBLE_EQ(SummarizeTimes({}).median_ms, 0.0);
}

TEST(Autotune, NoRoundsIsInvalid) {
  absl::StatusOr<TuneResult> result = Autotune({}, {}, DefaultTuneTiming(), /*rounds=*/0);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("rounds must be at least 1"));
}

TEST(Autotune, SummaryListsFastestFirstThenFailures) {
  TuneResult result;
  auto timed = [](const char* entry, double ms) {
    TuneTrial t;
    t.entry = entry;
    t.timing = TimingResult{ms, ms, ms, {ms}};
    return t;
  };
  result.trials.push_back(timed("gemm_f16", 0.55));
  TuneTrial failed;
  failed.entry = "gemm_f16__big";
  failed.status = absl::InvalidArgumentError("too much shared memory");
  result.trials.push_back(failed);
  result.trials.push_back(timed("gemm_f16__grid", 0.5));
  result.best = 2;
  EXPECT_EQ(result.Summary(),
            "gemm_f16__grid 0.5000 ms, gemm_f16 0.5500 ms (+10.0%), gemm_f16__big: "
            "INVALID_ARGUMENT: too much shared memory");
}

TEST(Autotune, SummaryListsTheFinalFirst) {
  // The final's candidates (timed again among themselves), a bar, then the
  // others by their first-pass times.
  TuneResult result;
  auto timed = [](const char* entry, double ms, bool final) {
    TuneTrial t;
    t.entry = entry;
    t.timing = TimingResult{ms, ms, ms, {ms}};
    t.final_round = final;
    return t;
  };
  result.trials.push_back(timed("gemm_f16", 0.40, true));
  result.trials.push_back(timed("gemm_f16__mc", 0.39, false));
  result.trials.push_back(timed("gemm_f16__128x192", 0.42, true));
  result.best = 0;
  EXPECT_EQ(result.Summary(),
            "gemm_f16 0.4000 ms, gemm_f16__128x192 0.4200 ms (+5.0%) | gemm_f16__mc 0.3900 ms "
            "(-2.5%)");
}

}  // namespace
}  // namespace tessera::runtime
