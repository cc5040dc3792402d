//===- frontend_test.cc - The C++ kernel API ------------------------------===//
//
// Builds kernels with the frontend and checks the IR, every compilation
// stage, the runtime description, and that errors name the author's line.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tessera.h"

#include <optional>
#include <regex>

#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

Kernel Add(Dim n, int64_t block) {
  KernelBuilder T("add");
  auto A = T.Tensor("A", {n}, f32), B = T.Tensor("B", {n}, f32), C = T.Tensor("C", {n}, f32);
  T.Launch({CeilDiv(n, block)}, 128, [&](Index bx) {
    auto a = T.AllocFragment({block}, f32, "a"), b = T.AllocFragment({block}, f32, "b");
    T.Copy(A.Tile(bx * block), a);
    T.Copy(B.Tile(bx * block), b);
    T.Parallel({block}, [&](Index i) { a(i) = Max(a(i), b(i)) * 2.0 - 1.0; });
    T.Copy(a, C.Tile(bx * block));
  });
  return T.Build();
}

TEST(Frontend, BuildsTileIRWithNamesSymbolsAndGrid) {
  Kernel kernel = Add(Dim::Dynamic("N"), 512);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("tile.kernel @add("), std::string::npos) << text;
  EXPECT_NE(text.find("s0 ceildiv 512"), std::string::npos) << text;
  EXPECT_NE(text.find("arg_names = [\"A\", \"B\", \"C\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("N = array<i64: 0, 1, 2>"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.maximumf"), std::string::npos) << text;
  EXPECT_NE(text.find("frontend_test.cc"), std::string::npos) << "locations: " << text;
}

TEST(Frontend, EveryStageIsPrintable) {
  Kernel kernel = Add(Dim::Dynamic("N"), 512);
  CompileOptions options;
  options.target = "sm_80";
  struct Expectation {
    Stage stage;
    const char* marker;
  };
  for (auto [stage, marker] : {Expectation{Stage::kTile, "#tile.distribution"},
                               Expectation{Stage::kGpu, "gpu.func @add"},
                               Expectation{Stage::kLowered, "llvm.func @add"},
                               Expectation{Stage::kLLVM, "define ptx_kernel void @add"},
                               Expectation{Stage::kPTX, ".target sm_80"}}) {
    absl::StatusOr<std::string> text = kernel.GetKernelSource(stage, options);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_NE(text->find(marker), std::string::npos) << marker << " missing in:\n" << *text;
  }
}

TEST(Frontend, CompileDescribesTheKernelForTheRuntime) {
  Kernel kernel = Add(Dim::Dynamic("N"), 512);
  CompileOptions options;
  options.target = "sm_90a";
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->entry(), "add");
  EXPECT_EQ(compiled->target(), "sm_90a");
  EXPECT_EQ(compiled->block_threads(), 128);
  ASSERT_EQ(compiled->params_size(), 3);
  EXPECT_EQ(compiled->params(1).name(), "B");
  EXPECT_EQ(compiled->params(1).dtype(), runtime::DTYPE_F32);
  EXPECT_EQ(compiled->params(1).shape(0), -1);
  EXPECT_EQ(compiled->params(1).alignment(), 16);
  ASSERT_EQ(compiled->grid_size(), 1);
  EXPECT_EQ(compiled->grid(0).op(), runtime::Expr::OP_CEIL_DIV);
  EXPECT_EQ(compiled->grid(0).rhs().value(), 512);
  ASSERT_EQ(compiled->dim_groups_size(), 1);
  EXPECT_EQ(compiled->dim_groups(0).name(), "N");
  EXPECT_NE(compiled->ptx().find("ld.global.v4"), std::string::npos);
  EXPECT_GT(compiled->compile_micros(), 0);
  // Compile time to PTX: well under a tenth of a second (issue target).
  EXPECT_LT(compiled->compile_micros(), 100000);
}

TEST(Frontend, StaticShapesNeedNoDynamicDimensions) {
  Kernel kernel = Add(4096, 1024);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  auto compiled = kernel.Compile({"sm_70"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->grid(0).op(), runtime::Expr::OP_CONSTANT);
  EXPECT_EQ(compiled->grid(0).value(), 4);
}

/// `kernel` failed to build with an error at `line` of this file that says
/// `what`, and compiling it reports the error instead of crashing.
void ExpectErrorAt(const Kernel& kernel, int line, const std::string& what) {
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  EXPECT_NE(message.find("frontend_test.cc:" + std::to_string(line)), std::string::npos)
      << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_FALSE(kernel.Compile().ok());
}

TEST(Frontend, VerifierErrorsPointAtTheAuthorsLine) {
  KernelBuilder T("bad");
  auto A = T.Tensor("A", {Dim::Dynamic("N")}, f32);
  int line = 0;
  T.Launch({CeilDiv(Dim::Dynamic("N"), 256)}, 128, [&](Index bx) {
    auto a = T.AllocFragment({256}, f32, "a");
    auto s = T.AllocShared({128}, f32, "s");
    line = __LINE__ + 1;
    T.Copy(a, s);  // shapes differ: 256 vs 128
    T.Copy(A.Tile(bx * 256), a);
  });
  ExpectErrorAt(T.Build(), line, "different shapes");
}

TEST(Frontend, BadShapesAreErrorsAtTheAuthorsLine) {
  KernelBuilder T("bad_shapes");
  int tensorLine = __LINE__ + 1;
  auto A = T.Tensor("A", {Dim(64), Dim(0)}, f16);
  int sharedLine = 0, fragmentLine = 0;
  T.Launch({1}, 128, [&](Index) {
    sharedLine = __LINE__ + 1;
    auto s = T.AllocShared({0, 32}, f16, "s");
    fragmentLine = __LINE__ + 1;
    auto f = T.AllocFragment({65536, 65536}, f32, "f");
    T.Copy(A.Tile(0, 0), s);
    T.Clear(f);
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  for (auto [line, what] : {std::pair{tensorLine, "tensor dimensions must be positive or '?', got 0"},
                            {sharedLine, "buffer dimensions must be positive, got 0"},
                            {fragmentLine, "a tile buffer holds at most 2^31 elements"}}) {
    EXPECT_NE(message.find("frontend_test.cc:" + std::to_string(line) + ":1: error: " + what),
              std::string::npos)
        << message;
  }
  EXPECT_FALSE(kernel.Compile().ok());
}

TEST(Frontend, SharedMemoryOverflowIsACompileTimeErrorNamingBuffers) {
  KernelBuilder T("too_big");
  auto A = T.Tensor("A", {Dim::Dynamic("N")}, f32);
  T.Launch({CeilDiv(Dim::Dynamic("N"), 128)}, 128, [&](Index bx) {
    auto big = T.AllocShared({128, 128}, f32, "big");      // 64 KiB
    auto more = T.AllocShared({64, 64}, f32, "more");       // 16 KiB
    auto a = T.AllocFragment({128, 128}, f32, "a");
    T.Copy(big, a);
    T.Copy(more, T.AllocShared({64, 64}, f32, "spare"));
    T.Copy(a, A.Tile(bx * 128));
  });
  Kernel kernel = T.Build();
  // A 2-D fragment copied to a 1-D tensor tile is a rank error, so build a
  // valid kernel for the limit check instead.
  ASSERT_FALSE(kernel.status().ok());

  KernelBuilder U("too_big");
  auto B = U.Tensor("B", {Dim::Dynamic("M"), 128}, f32);
  U.Launch({CeilDiv(Dim::Dynamic("M"), 128)}, 128, [&](Index bx) {
    auto big = U.AllocShared({128, 128}, f32, "big");
    U.Copy(B.Tile(bx * 128, 0), big);
    U.Copy(big, B.Tile(bx * 128, 0));
  });
  Kernel ok = U.Build();
  ASSERT_TRUE(ok.status().ok()) << ok.status();
  auto on90 = ok.Compile({"sm_90a"});
  EXPECT_TRUE(on90.ok()) << on90.status();
  EXPECT_EQ(on90->shared_memory_bytes(), 65536);
  auto on60 = ok.Compile({"sm_60"});
  ASSERT_FALSE(on60.ok());
  std::string message(on60.status().message());
  EXPECT_NE(message.find("big"), std::string::npos) << message;
  EXPECT_NE(message.find("65536"), std::string::npos) << message;
  EXPECT_NE(message.find("49152-byte per-block limit of sm_60"), std::string::npos) << message;
}

TEST(Frontend, UnknownTargetIsAClearError) {
  Kernel kernel = Add(Dim::Dynamic("N"), 512);
  auto compiled = kernel.Compile({"sm_120"});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(std::string(compiled.status().message()).find("no backend serves target 'sm_120'"),
            std::string::npos)
      << compiled.status();
}

namespace tessera {
namespace {

Kernel SmallGemm(const std::string& atom = "", bool pingpong = false) {
  KernelBuilder T("small_gemm");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16), C = T.Tensor("C", {m, n}, f16);
  T.Launch({CeilDiv(n, 64), CeilDiv(m, 64)}, 128, [&](Index x, Index y) {
    auto block = SwizzleBlocks(x, y, CeilDiv(C.dim(1), 64), CeilDiv(C.dim(0), 64), 4);
    Index bx = block.first, by = block.second;
    if (pingpong) T.PingPong();
    auto As = T.AllocShared({64, 32}, f16, "As"), Bs = T.AllocShared({32, 64}, f16, "Bs");
    auto acc = T.AllocFragment({64, 64}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(k, 32), 3, [&](Index kk) {
      T.Copy(A.Tile(by * 64, kk * 32), As);
      T.Copy(B.Tile(kk * 32, bx * 64), Bs);
      T.Gemm(As, Bs, acc, false, false, atom);
    });
    T.Copy(acc, C.Tile(by * 64, bx * 64));
  });
  return T.Build();
}

TEST(Frontend, GemmRecordsDivisibilityAndPipelinedLoop) {
  Kernel kernel = SmallGemm();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tile.pipelined"), std::string::npos) << text;
  EXPECT_NE(text.find("tile.gemm"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.minui"), std::string::npos) << "raster order: " << text;
  auto compiled = kernel.Compile({"sm_80"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->dim_divisibility_size(), 6);
  EXPECT_NE(compiled->ptx().find("mma.sync.aligned.m16n8k16"), std::string::npos);
  EXPECT_NE(compiled->ptx().find("cp.async.cg.shared.global"), std::string::npos);
  // Three stages of 4 KiB + 4 KiB tiles.
  EXPECT_EQ(compiled->shared_memory_bytes(), 3 * (4096 + 4096));
}

TEST(Frontend, PingPongRunsTwoTilesPerBlockOnSm90a) {
  Kernel kernel = SmallGemm("", /*pingpong=*/true);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_NE(kernel.ToString().find("pingpong"), std::string::npos);
  auto compiled = kernel.Compile({"sm_90a"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // Two consumer warpgroups (one per tile) and the producer; the grid's y
  // extent halved, rounded up.
  EXPECT_EQ(compiled->block_threads(), 384);
  ASSERT_EQ(compiled->grid_size(), 2);
  EXPECT_EQ(compiled->grid(1).op(), runtime::Expr::OP_CEIL_DIV);
  EXPECT_EQ(compiled->grid(1).rhs().value(), 2);
  EXPECT_EQ(compiled->grid(1).lhs().op(), runtime::Expr::OP_CEIL_DIV);
  // Named barrier 3 over both consumer warpgroups.
  EXPECT_TRUE(std::regex_search(compiled->ptx(), std::regex(R"(bar\.sync\s+3, 256;)")));
  // Elsewhere the grid runs as written.
  for (const char* target : {"sm_60", "sm_70", "sm_80"}) {
    auto other = kernel.Compile({target});
    ASSERT_TRUE(other.ok()) << other.status();
    EXPECT_EQ(other->block_threads(), 128) << target;
    EXPECT_EQ(other->grid(1).lhs().op(), runtime::Expr::OP_SYMBOL) << target;
  }
}

/// A 64 x 64 x 32 GEMM under schedule calls (Persistent, StreamK, ...).
/// With `start`, the accumulator starts at that value instead of zero.
Kernel ScheduledGemm(const std::function<void(KernelBuilder&)>& schedule,
                     std::optional<double> start = std::nullopt) {
  KernelBuilder T("scheduled_gemm");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16), C = T.Tensor("C", {m, n}, f16);
  T.Launch({CeilDiv(n, 64), CeilDiv(m, 64)}, 128, [&](Index bx, Index by) {
    schedule(T);
    auto As = T.AllocShared({64, 32}, f16, "As"), Bs = T.AllocShared({32, 64}, f16, "Bs");
    auto acc = T.AllocFragment({64, 64}, f32, "acc");
    T.Clear(acc);
    if (start) T.Fill(acc, *start);
    T.Pipelined(CeilDiv(k, 32), 3, [&](Index kk) {
      T.Copy(A.Tile(by * 64, kk * 32), As);
      T.Copy(B.Tile(kk * 32, bx * 64), Bs);
      T.Gemm(As, Bs, acc);
    });
    T.Copy(acc, C.Tile(by * 64, bx * 64));
  });
  return T.Build();
}

TEST(Frontend, PersistentKernelsLoopOverTheGridOnEveryTarget) {
  Kernel kernel = ScheduledGemm([](KernelBuilder& T) { T.Persistent(); });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_TRUE(compiled->persistent()) << target;
    EXPECT_EQ(compiled->stream_k_slot_bytes(), 0) << target;
    // The grid as written: the runtime launches what fits and the blocks
    // loop over it (gridDim.x is read).
    ASSERT_EQ(compiled->grid_size(), 2);
    EXPECT_NE(compiled->ptx().find("%nctaid.x"), std::string::npos) << target;
  }
  EXPECT_NE(kernel.Compile({"sm_90a"})->ptx().find("cp.async.bulk.tensor"), std::string::npos);
}

TEST(Frontend, StreamKAsksTheRuntimeForAWorkspace) {
  Kernel kernel = ScheduledGemm([](KernelBuilder& T) { T.StreamK(); });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_TRUE(compiled->persistent()) << target;
    // 64 x 64 f32 accumulators over 128 threads: 32 floats a thread.
    EXPECT_EQ(compiled->stream_k_slot_bytes(), 64 * 64 * 4) << target;
  }
}

TEST(Frontend, MulticastTakesClustersOfTwoFourOrEightBlocks) {
  Kernel three = ScheduledGemm([](KernelBuilder& T) { T.Multicast(3); });
  EXPECT_FALSE(three.status().ok());
  EXPECT_NE(three.status().message().find("multicast_blocks must be 2, 4 or 8"),
            std::string::npos)
      << three.status();
  // Clusters of four with stream-K: B's one 64-column panel cannot be
  // split among four blocks, so the kernel runs without clusters (a
  // remark) on every target, stream-K still.
  Kernel four = ScheduledGemm([](KernelBuilder& T) {
    T.StreamK();
    T.Multicast(4);
  });
  ASSERT_TRUE(four.status().ok()) << four.status();
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = four.Compile({target});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_LE(compiled->cluster_x(), 1) << target;
    EXPECT_GT(compiled->stream_k_slot_bytes(), 0) << target;
  }
  // (Clusters that apply: lit's tile-warp-specialize-multicast.mlir.)
}

TEST(Frontend, StreamKSplitsAnAccumulatorThatStartsAtAValue) {
  // Cleared, then filled (as a bias row would be): still stream-K, and a
  // later piece zeroes its accumulator (its first iteration is not 0).
  Kernel kernel = ScheduledGemm([](KernelBuilder& T) { T.StreamK(); }, 1.0);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ(compiled->stream_k_slot_bytes(), 64 * 64 * 4) << target;
  }
}

TEST(Frontend, ParallelPastABufferIsAnErrorAtTheAuthorsLine) {
  KernelBuilder T("past");
  auto A = T.Tensor("A", {Dim(256)}, f32);
  int line = 0;
  T.Launch({1}, 128, [&](Index) {
    auto a = T.AllocFragment({128}, f32, "a");
    T.Clear(a);
    line = __LINE__ + 1;
    T.Parallel({256}, [&](Index i) { a(i) = 1.0; });
    T.Copy(a, A.Tile(0));
  });
  ExpectErrorAt(T.Build(), line, "which runs to 256, past buffer");
}

TEST(Frontend, PingPongOutsideLaunchIsAnError) {
  KernelBuilder T("early");
  T.PingPong();
  T.Launch({1}, 32, [&](Index) {});
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(kernel.status().message().find("PingPong is called inside Launch's body"),
            std::string::npos)
      << kernel.status();
}

TEST(Frontend, GemmFallsBackToSimtWhereTheTargetHasNoTensorCores) {
  auto compiled = SmallGemm().Compile({"sm_60"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_NE(compiled->ptx().find("fma.rn.f32"), std::string::npos);
  EXPECT_EQ(compiled->ptx().find("mma.sync"), std::string::npos);
  EXPECT_EQ(compiled->ptx().find("cp.async"), std::string::npos);
}

TEST(Frontend, GemmUsesVoltaQuadpairMmaOnSm70) {
  auto compiled = SmallGemm().Compile({"sm_70"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_NE(compiled->ptx().find("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32"),
            std::string::npos);
  EXPECT_EQ(compiled->ptx().find("cp.async"), std::string::npos);
}

TEST(Frontend, FastMathChoosesApproximateTanhAndExactMathDoesNot) {
  KernelBuilder T("gelu_rows");
  auto X = T.Tensor("X", {Dim::Dynamic("M"), 256}, f32);
  auto Y = T.Tensor("Y", {Dim::Dynamic("M"), 256}, f32);
  T.Launch({Dim::Dynamic("M")}, 128, [&](Index row) {
    auto x = T.AllocFragment({1, 256}, f32, "x");
    T.Copy(X.Tile(row, 0), x);
    T.Parallel({1, 256}, [&](Index i, Index j) { x(i, j) = Tanh(x(i, j)) * Exp(x(i, j)); });
    T.Copy(x, Y.Tile(row, 0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  CompileOptions fast{"sm_90a"};
  absl::StatusOr<std::string> ptx = kernel.GetKernelSource(Stage::kPTX, fast);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find("tanh.approx.f32"), std::string::npos);
  EXPECT_NE(ptx->find("ex2.approx.ftz.f32"), std::string::npos);
  CompileOptions exact{"sm_90a"};
  exact.fastMath = false;
  ptx = kernel.GetKernelSource(Stage::kPTX, exact);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_EQ(ptx->find("tanh.approx"), std::string::npos);
}

TEST(Frontend, ForcedIllegalAtomIsAnError) {
  auto compiled = SmallGemm("SM80_16x8x16_F32F16F16F32_TN").Compile({"sm_60"});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(std::string(compiled.status().message())
                .find("atom 'SM80_16x8x16_F32F16F16F32_TN' cannot be used on sm_60"),
            std::string::npos)
      << compiled.status();
}

TEST(Frontend, ReductionsBroadcastIntoParallelBodies) {
  KernelBuilder T("row_scale");
  auto X = T.Tensor("X", {Dim::Dynamic("M"), 512}, f32), Y = T.Tensor("Y", {Dim::Dynamic("M"), 512}, f32);
  T.Launch({Dim::Dynamic("M")}, 128, [&](Index row) {
    auto x = T.AllocFragment({1, 512}, f32, "x");
    auto total = T.AllocFragment({1}, f32, "total");
    T.Copy(X.Tile(row, 0), x);
    T.ReduceAbsSum(x, total);
    T.Parallel({1, 512}, [&](Index i, Index j) { x(i, j) = x(i, j) / total(i); });
    T.Copy(x, Y.Tile(row, 0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_NE(kernel.ToString().find("tile.reduce abssum"), std::string::npos);
  absl::StatusOr<std::string> tile = kernel.GetKernelSource(Stage::kTile, {"sm_90a"});
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_NE(tile->find("replicated"), std::string::npos) << *tile;
  EXPECT_NE(tile->find("reduce_scratch"), std::string::npos) << *tile;
  absl::StatusOr<std::string> ptx = kernel.GetKernelSource(Stage::kPTX, {"sm_90a"});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find("shfl.sync.bfly"), std::string::npos);
  EXPECT_NE(ptx->find("abs.f32"), std::string::npos);
}

}  // namespace
}  // namespace tessera

// Found by the frontend fuzzer (fuzz/frontend_fuzzer.cc): constant Index
// arithmetic divided by zero (a SIGFPE in the builder), a NaN constant was
// cast to an integer element, a negative static size became a dynamic
// dimension named "", and CeilDiv by a tile of 0 divided by zero.
TEST(Frontend, KernelNamesThatAreNotIdentifiersAreErrorsNotAborts) {
  // Each name used to pass Build() and then abort Compile() (LLVM ERROR:
  // symbol name with unsupported characters) or give PTX ptxas rejects.
  for (const std::string name :
       {"a b", "a-b", "a\"b", "a@b", "k\xc3\xa9", "1abc", "a.b", "", "$x"}) {
    KernelBuilder T(name);
    const int line = __LINE__ - 1;
    auto A = T.Tensor("A", {Dim(64)}, f32);
    T.Launch({1}, 32, [&](Index) {
      auto f = T.AllocFragment({64}, f32);
      T.Copy(A.Tile(0), f);
      T.Copy(f, A.Tile(0));
    });
    Kernel kernel = T.Build();
    ASSERT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument) << name;
    std::string message(kernel.status().message());
    EXPECT_NE(message.find("frontend_test.cc:" + std::to_string(line) +
                           ": tessera: kernel name '" + name + "' is not an identifier"),
              std::string::npos)
        << message;
    CompileOptions options;
    options.target = "sm_80";
    EXPECT_FALSE(kernel.Compile(options).ok()) << name;
  }
  for (const char *name : {"_k", "K9", "gemm_f16__128x192x64_s5_mc"}) {
    KernelBuilder T(name);
    auto A = T.Tensor("A", {Dim(64)}, f32);
    T.Launch({1}, 32, [&](Index) {
      auto f = T.AllocFragment({64}, f32);
      T.Copy(A.Tile(0), f);
      T.Copy(f, A.Tile(0));
    });
    EXPECT_TRUE(T.Build().status().ok()) << name;
  }
}

TEST(Frontend, ConstantIndexDivisionByZeroIsAnError) {
  KernelBuilder T("divide_by_zero");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  T.Launch({1}, 32, [&](Index) {
    auto f = T.AllocFragment({64}, f32);
    T.Copy(A.Tile(Index(4) / Index(int64_t(0))), f);
    T.Copy(A.Tile(Index(4) % Index(int64_t(0))), f);
    T.Copy(A.Tile(CeilDiv(Index(4), Index(int64_t(0)))), f);
    T.Copy(f, A.Tile(Index(INT64_MAX) + Index(1)));
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  for (const char *what : {"Index division by zero or overflowing of constants 4 and 0",
                           "Index remainder by zero or overflowing of constants 4 and 0",
                           "Index ceiling division by zero or overflowing of constants 4 and 0",
                           "Index addition overflows"})
    EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(Frontend, NonFiniteConstantForAnIntegerBufferIsAnError) {
  KernelBuilder T("nan_to_int");
  auto A = T.Tensor("A", {Dim(64)}, i32);
  T.Launch({1}, 32, [&](Index) {
    auto f = T.AllocFragment({64}, i32);
    T.Parallel({64}, [&](Index i) { f(i) = Scalar(0.0) / Scalar(0.0); });
    T.Copy(f, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(std::string(kernel.status().message()).find("has no value of type i32"),
            std::string::npos)
      << kernel.status();
}

TEST(Frontend, NegativeSizesAndTilesAreErrors) {
  KernelBuilder T("negative");
  auto A = T.Tensor("A", {Dim(-4)}, f32);
  T.Launch({CeilDiv(Dim(64), 0)}, 32, [&](Index) {
    auto f = T.AllocFragment({4}, f32);
    T.Copy(A.Tile(0), f);
    T.Pipelined(CeilDiv(Dim(64), -2), 2, [&](Index) {});
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  for (const char *what : {"tensor 'A' has dimension -4; sizes are positive",
                           "grid extent CeilDiv by a tile of 0; tiles must be positive",
                           "Pipelined count CeilDiv by a tile of -2; tiles must be positive"})
    EXPECT_NE(message.find(what), std::string::npos) << message;
}

/// Row maxima of a gemm's accumulator [rows x 64] and a rescale of it by
/// each row's value, stored: per-row reductions and broadcasts.
Kernel RowScaledGemm(int64_t rows) {
  KernelBuilder T("row_scaled_gemm");
  Dim M = Dim::Dynamic("M");
  auto A = T.Tensor("A", {M, 64}, f16), B = T.Tensor("B", {64, 64}, f16);
  auto C = T.Tensor("C", {M, 64}, f32);
  T.Launch({CeilDiv(M, rows)}, 128, [&](Index bx) {
    auto as = T.AllocShared({rows, 64}, f16), bs = T.AllocShared({64, 64}, f16);
    auto acc = T.AllocFragment({rows, 64}, f32, "acc");
    auto top = T.AllocFragment({rows}, f32, "top");
    T.Copy(A.Tile(bx * rows, 0), as);
    T.Copy(B.Tile(0, 0), bs);
    T.Clear(acc);
    T.Gemm(as, bs, acc);
    T.ReduceMax(acc, top);
    T.Parallel({rows}, [&](Index i) { top(i) = Exp2(-top(i)); });
    T.Parallel({rows, 64}, [&](Index i, Index j) { acc(i, j) = acc(i, j) * top(i); });
    T.Copy(acc, C.Tile(bx * rows, 0));
  });
  return T.Build();
}

TEST(Frontend, RowReductionsOfMmaAccumulatorsStayInTheirRows) {
  for (const char* target : {"sm_70", "sm_80", "sm_90a"}) {
    CompileOptions options;
    options.target = target;
    absl::StatusOr<std::string> tile = RowScaledGemm(128).GetKernelSource(Stage::kTile, options);
    ASSERT_TRUE(tile.ok()) << target << ": " << tile.status();
    EXPECT_NE(tile->find("name = \"top\", row_slice"), std::string::npos) << target << *tile;
    auto compiled = RowScaledGemm(128).Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    // Two shuffles per row among the lanes that share it, none across the warp.
    EXPECT_EQ(compiled->ptx().find(", 16, 31, -1;"), std::string::npos) << target;
  }
}

TEST(Frontend, RowReductionsOfSimtAccumulatorsAreReplicated) {
  CompileOptions options;
  options.target = "sm_60";
  absl::StatusOr<std::string> tile = RowScaledGemm(64).GetKernelSource(Stage::kTile, options);
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_NE(tile->find("name = \"top\", replicated"), std::string::npos) << *tile;
  EXPECT_EQ(tile->find("row_slice"), std::string::npos) << *tile;
}

}  // namespace
}  // namespace tessera
