//===- cases.cc - The shared conformance cases ----------------------------===//
//
// The examples' kernels plus kernels that exercise what the examples do not
// yet: static shapes, 2-D tiles with tails in both dimensions, shared memory
// with barriers, and conversions between element types.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/cases.h"

#include "examples/common/example.h"
#include "examples/gemm.h"
#include "examples/norms.h"
#include "examples/softmax.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace tessera::conformance {
namespace {

/// C = A + B with a static length that is not a multiple of the tile.
Kernel VectorAddStatic() {
  constexpr int64_t kN = 1000003, kBlock = 1024;
  KernelBuilder T("vector_add_static");
  auto A = T.Tensor("A", {kN}, f32), B = T.Tensor("B", {kN}, f32), C = T.Tensor("C", {kN}, f32);
  T.Launch({CeilDiv(kN, kBlock)}, 128, [&](Index bx) {
    auto a = T.AllocFragment({kBlock}, f32, "a"), b = T.AllocFragment({kBlock}, f32, "b");
    T.Copy(A.Tile(bx * kBlock), a);
    T.Copy(B.Tile(bx * kBlock), b);
    T.Parallel({kBlock}, [&](Index i) { a(i) = a(i) + b(i); });
    T.Copy(a, C.Tile(bx * kBlock));
  });
  return T.Build();
}

/// Y = 2 X + 1 for X: f16 [M, 200], Y: f32 [M, 200], staged through a
/// shared tile of 32 x 64 (tails in both dimensions: 200 = 3 * 64 + 8).
Kernel ScaleShared2D() {
  constexpr int64_t kRows = 32, kCols = 64;
  Dim m = Dim::Dynamic("M");
  KernelBuilder T("scale_shared_2d");
  auto X = T.Tensor("X", {m, 200}, f16), Y = T.Tensor("Y", {m, 200}, f32);
  T.Launch({CeilDiv(200, kCols), CeilDiv(m, kRows)}, 128, [&](Index bx, Index by) {
    auto xs = T.AllocShared({kRows, kCols}, f16, "xs");
    auto y = T.AllocFragment({kRows, kCols}, f32, "y");
    T.Copy(X.Tile(by * kRows, bx * kCols), xs);
    T.Copy(xs, y);
    T.Parallel({kRows, kCols}, [&](Index i, Index j) { y(i, j) = y(i, j) * 2.0 + 1.0; });
    T.Copy(y, Y.Tile(by * kRows, bx * kCols));
  });
  return T.Build();
}

/// The four row reductions of X: [M, 1000] in X's own type (f32, f64, f16
/// or bf16: the warp shuffles in 32 bits, of an f64's two halves, of a
/// 16-bit value's f32 extension), four warps a row (1000 is no multiple of their 128 chunks),
/// into Ymax, Ymin, Ysum, Yabs: [M].
Kernel RowReduce(DType dtype, const std::string& name) {
  constexpr int64_t kCols = 1000;
  Dim m = Dim::Dynamic("M");
  KernelBuilder T(name);
  auto X = T.Tensor("X", {m, kCols}, dtype);
  auto Ymax = T.Tensor("Ymax", {m}, dtype), Ymin = T.Tensor("Ymin", {m}, dtype);
  auto Ysum = T.Tensor("Ysum", {m}, dtype), Yabs = T.Tensor("Yabs", {m}, dtype);
  T.Launch({m}, 128, [&](Index row) {
    auto x = T.AllocFragment({1, kCols}, dtype, "x");
    auto max = T.AllocFragment({1}, dtype, "max"), min = T.AllocFragment({1}, dtype, "min");
    auto sum = T.AllocFragment({1}, dtype, "sum"), abs = T.AllocFragment({1}, dtype, "abs");
    T.Copy(X.Tile(row, 0), x);
    T.ReduceMax(x, max);
    T.ReduceMin(x, min);
    T.ReduceSum(x, sum);
    T.ReduceAbsSum(x, abs);
    T.Copy(max, Ymax.Tile(row));
    T.Copy(min, Ymin.Tile(row));
    T.Copy(sum, Ysum.Tile(row));
    T.Copy(abs, Yabs.Tile(row));
  });
  return T.Build();
}

/// C = A B with B loaded into a fragment (staged to shared memory by the
/// compiler: no atom reads B from registers) and A into a fragment too
/// (`aInShared` false: read from registers where an atom can, mma.sync and
/// wgmma RS, staged elsewhere) or into shared memory, pipelined `stages`
/// deep (the staged B is rewritten every iteration, so no wgmma group may
/// stay in flight). Tails in M, N and K; N and K multiples of `divisibility`.
Kernel GemmFragmentOperands(bool aInShared, int stages, int64_t divisibility,
                            const std::string& name) {
  constexpr int64_t kBm = 64, kBn = 64, kBk = 32;
  KernelBuilder T(name);
  Dim M = Dim::Dynamic("M"), N = Dim::Dynamic("N", divisibility);
  Dim K = Dim::Dynamic("K", divisibility);
  auto A = T.Tensor("A", {M, K}, f16), B = T.Tensor("B", {K, N}, f16);
  auto C = T.Tensor("C", {M, N}, f16);
  T.Launch({CeilDiv(N, kBn), CeilDiv(M, kBm)}, 128, [&](Index bx, Index by) {
    auto a = aInShared ? T.AllocShared({kBm, kBk}, f16, "a") : T.AllocFragment({kBm, kBk}, f16, "a");
    auto b = T.AllocFragment({kBk, kBn}, f16, "b");
    auto acc = T.AllocFragment({kBm, kBn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, kBk), stages, [&](Index k) {
      T.Copy(A.Tile(by * kBm, k * kBk), a);
      T.Copy(B.Tile(k * kBk, bx * kBn), b);
      T.Gemm(a, b, acc);
    });
    T.Copy(acc, C.Tile(by * kBm, bx * kBn));
  });
  return T.Build();
}

/// C = A B with the accumulator written to memory through a shared tile
/// (acc -> Cs -> C), as an epilogue that rearranges or reduces a tile in
/// shared memory would: the fragment-to-shared copy (stmatrix on sm_90)
/// lands on the pipeline stages' bytes, free once the loop is done. 128 x
/// 128 tiles, 4 warps (one warpgroup on sm_90a); tails in M, N and K.
Kernel GemmViaShared() {
  constexpr int64_t kBm = 128, kBn = 128, kBk = 32;
  KernelBuilder T("gemm_f16_via_shared");
  Dim M = Dim::Dynamic("M"), N = Dim::Dynamic("N", 8), K = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {M, K}, f16), B = T.Tensor("B", {K, N}, f16);
  auto C = T.Tensor("C", {M, N}, f16);
  T.Launch({CeilDiv(N, kBn), CeilDiv(M, kBm)}, 128, [&](Index bx, Index by) {
    auto As = T.AllocShared({kBm, kBk}, f16, "As"), Bs = T.AllocShared({kBk, kBn}, f16, "Bs");
    auto acc = T.AllocFragment({kBm, kBn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, kBk), 3, [&](Index k) {
      T.Copy(A.Tile(by * kBm, k * kBk), As);
      T.Copy(B.Tile(k * kBk, bx * kBn), Bs);
      T.Gemm(As, Bs, acc);
    });
    auto Cs = T.AllocShared({kBm, kBn}, f16, "Cs");
    T.Copy(acc, Cs);
    T.Copy(Cs, C.Tile(by * kBm, bx * kBn));
  });
  return T.Build();
}

/// O = f16(Q K^T) V over blocks of 64 rows (attention without the softmax):
/// the first gemm's accumulator, cast to f16 in registers, is the second
/// gemm's A, read from registers where the target can. Q, K, V, O: N x 64
/// with M and N any size.
Kernel GemmChain() {
  constexpr int64_t kBm = 64, kBn = 64, kD = 64;
  KernelBuilder T("gemm_chain_f16");
  Dim M = Dim::Dynamic("M"), N = Dim::Dynamic("N");
  auto Q = T.Tensor("Q", {M, kD}, f16), K = T.Tensor("K", {N, kD}, f16);
  auto V = T.Tensor("V", {N, kD}, f16), O = T.Tensor("O", {M, kD}, f16);
  T.Launch({CeilDiv(M, kBm)}, 128, [&](Index bx) {
    auto qs = T.AllocShared({kBm, kD}, f16, "qs");
    auto ks = T.AllocShared({kBn, kD}, f16, "ks");
    auto vs = T.AllocShared({kBn, kD}, f16, "vs");
    auto s = T.AllocFragment({kBm, kBn}, f32, "s");
    auto p = T.AllocFragment({kBm, kBn}, f16, "p");
    auto o = T.AllocFragment({kBm, kD}, f32, "o");
    T.Copy(Q.Tile(bx * kBm, 0), qs);
    T.Clear(o);
    T.Pipelined(CeilDiv(N, kBn), 2, [&](Index j) {
      T.Copy(K.Tile(j * kBn, 0), ks);
      T.Copy(V.Tile(j * kBn, 0), vs);
      T.Clear(s);
      T.Gemm(qs, ks, s, /*transposeA=*/false, /*transposeB=*/true);
      T.Parallel({kBm, kBn}, [&](Index i, Index jj) { p(i, jj) = Cast(s(i, jj), f16); });
      T.Gemm(p, vs, o);
    });
    T.Copy(o, O.Tile(bx * kBm, 0));
  });
  return T.Build();
}

/// Softmax attention of one 64-wide head with the online softmax over key
/// blocks of 64 (FlashAttention's forward pass): S = Q K^T scaled into log2
/// units plus an additive key mask (0, or -infinity past the keys), the
/// running row maximum m and sum l, P = exp2(S - m), O = O alpha + P V,
/// O / l at the end. On targets with MMA atoms the row values take the
/// row slice of the accumulator layout (each thread holds its own rows);
/// SIMT FMA replicates them, which holds 32 rows per block in registers.
Kernel AttentionOnline(const std::string& target) {
  constexpr int64_t kBn = 64, kD = 64;
  // 1 / sqrt(64) and log2(e): exp(x / 8) = exp2(x log2(e) / 8).
  constexpr double kScaleLog2 = 0.125 * 1.4426950408889634;
  // The query block, a tuning knob per target (as GemmConfig::ForTarget):
  // 128 rows where the gemms have tensor-core atoms, 32 elsewhere.
  static const char* const kMmaTargets[] = {"sm_70", "sm_72", "sm_80", "sm_86", "sm_87",
                                            "sm_89", "sm_90", "sm_90a"};
  int64_t bm = std::find(std::begin(kMmaTargets), std::end(kMmaTargets), target) !=
                       std::end(kMmaTargets)
                   ? 128
                   : 32;
  KernelBuilder T("attention_online_f16");
  Dim M = Dim::Dynamic("M"), N = Dim::Dynamic("N"), NB = Dim::Dynamic("NB");
  auto Q = T.Tensor("Q", {M, kD}, f16), K = T.Tensor("K", {N, kD}, f16);
  auto V = T.Tensor("V", {N, kD}, f16), Mask = T.Tensor("Mask", {NB}, f32);
  auto O = T.Tensor("O", {M, kD}, f16);
  T.Launch({CeilDiv(M, bm)}, 128, [&](Index bx) {
    auto qs = T.AllocShared({bm, kD}, f16, "qs");
    auto ks = T.AllocShared({kBn, kD}, f16, "ks");
    auto vs = T.AllocShared({kBn, kD}, f16, "vs");
    auto mask = T.AllocShared({kBn}, f32, "mask");
    auto s = T.AllocFragment({bm, kBn}, f32, "s");
    auto p = T.AllocFragment({bm, kBn}, f16, "p");
    auto o = T.AllocFragment({bm, kD}, f32, "o");
    auto m = T.AllocFragment({bm}, f32, "m");          // running row maximum
    auto mx = T.AllocFragment({bm}, f32, "mx");        // block maximum, then alpha
    auto l = T.AllocFragment({bm}, f32, "l");          // running row sum
    T.Copy(Q.Tile(bx * bm, 0), qs);
    T.Clear(o);
    T.Clear(l);
    T.Fill(m, -std::numeric_limits<double>::infinity());
    T.Pipelined(CeilDiv(N, kBn), 2, [&](Index j) {
      T.Copy(K.Tile(j * kBn, 0), ks);
      T.Copy(V.Tile(j * kBn, 0), vs);
      T.Copy(Mask.Tile(j * kBn), mask);
      T.Clear(s);
      T.Gemm(qs, ks, s, /*transposeA=*/false, /*transposeB=*/true);
      T.Parallel({bm, kBn}, [&](Index i, Index c) { s(i, c) = s(i, c) * kScaleLog2 + mask(c); });
      T.ReduceMax(s, mx);
      T.Parallel({bm}, [&](Index i) {
        Scalar top = Max(m(i), mx(i));
        Scalar alpha = Exp2(m(i) - top);
        l(i) = l(i) * alpha;
        mx(i) = alpha;
        m(i) = top;
      });
      T.Parallel({bm, kD}, [&](Index i, Index c) { o(i, c) = o(i, c) * mx(i); });
      T.Parallel({bm, kBn}, [&](Index i, Index c) {
        Scalar e = Exp2(s(i, c) - m(i));
        s(i, c) = e;
        p(i, c) = Cast(e, f16);
      });
      T.ReduceSum(s, l, /*clear=*/false);
      T.Gemm(p, vs, o);
    });
    T.Parallel({bm, kD}, [&](Index i, Index c) { o(i, c) = o(i, c) / l(i); });
    T.Copy(o, O.Tile(bx * bm, 0));
  });
  return T.Build();
}

}  // namespace

const std::vector<Case>& AllCases() {
  static const auto* cases = [] {
    auto* list = new std::vector<Case>();
    for (const examples::Example& example : examples::AllExamples())
      list->push_back({example.name, example.build});
    list->push_back({"vector_add_static", [](const std::string&) { return VectorAddStatic(); }});
    list->push_back({"scale_shared_2d", [](const std::string&) { return ScaleShared2D(); }});
    list->push_back({"row_reduce_f32", [](const std::string&) { return RowReduce(f32, "row_reduce_f32"); }});
    list->push_back({"row_reduce_f16", [](const std::string&) { return RowReduce(f16, "row_reduce_f16"); }});
    list->push_back({"row_reduce_bf16", [](const std::string&) { return RowReduce(bf16, "row_reduce_bf16"); }});
    list->push_back({"row_reduce_f64", [](const std::string&) { return RowReduce(f64, "row_reduce_f64"); }});
    using examples::GemmConfig;
    list->push_back({"gemm_bf16", [](const std::string& target) {
                       GemmConfig c = GemmConfig::ForTarget(target);
                       c.dtype = bf16;
                       return examples::GemmDynamic(c, "gemm_bf16");
                     }});
    list->push_back({"gemm_f32", [](const std::string&) {
                       GemmConfig c;
                       c.dtype = f32;
                       c.bm = 64, c.bn = 64, c.bk = 16;
                       return examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 4),
                                             Dim::Dynamic("K", 4), c, "gemm_f32");
                     }});
    list->push_back({"gemm_f16_tn", [](const std::string& target) {
                       GemmConfig c = GemmConfig::ForTarget(target);
                       c.transposeB = true;
                       return examples::GemmDynamic(c, "gemm_f16_tn");
                     }});
    // One k-step of 16 per pipelined iteration: on sm_80 the step that
    // starts an iteration on prefetched fragments is also its last.
    list->push_back({"gemm_f16_k16", [](const std::string&) {
                       GemmConfig c;
                       c.bk = 16, c.stages = 3;
                       return examples::GemmDynamic(c, "gemm_f16_k16");
                     }});
    // Rows of 1000 on two warps (the benchmark's kernel, RESULTS.md run
    // 125): 125 vectors over 64 threads, a tail in every row.
    list->push_back({"softmax_f16_1000", [](const std::string&) {
                       return examples::Softmax(Dim::Dynamic("M"), 1000, f16, 1, 64,
                                                "softmax_f16_1000");
                     }});
    // The online softmax: rows of three chunks of 1000 (256 threads: a
    // chunk's tail in every thread's last slot).
    list->push_back({"softmax_f16_online", [](const std::string&) {
                       return examples::SoftmaxOnline(Dim::Dynamic("M"), 3000, f16, 1000, 256,
                                                      "softmax_f16_online");
                     }});
    // A prime row length: no chunking divides it, so one chunk of the whole
    // row (rows 6,002 bytes apart: no 16-byte accesses).
    list->push_back({"softmax_f16_online_prime", [](const std::string&) {
                       return examples::SoftmaxOnline(Dim::Dynamic("M"), 3001, f16, 1000, 256,
                                                      "softmax_f16_online_prime");
                     }});
    list->push_back({"softmax_f32_rows4", [](const std::string&) {
                       return examples::Softmax(Dim::Dynamic("M"), 1000, f32, 4, 256,
                                                "softmax_f32_rows4");
                     }});
    list->push_back({"rmsnorm_f32_1000", [](const std::string&) {
                       return examples::RmsNorm(Dim::Dynamic("M"), 1000, f32, 128,
                                                "rmsnorm_f32_1000");
                     }});
    // The fused epilogues beside examples/gemm_bias_gelu (tanh GELU).
    for (auto [name, epilogue] :
         {std::pair<const char*, examples::Epilogue>{
              "gemm_bias_gelu_erf_f16", {examples::Activation::kGeluErf, false}},
          {"gemm_bias_relu_f16", {examples::Activation::kRelu, false}},
          {"gemm_bias_silu_f16", {examples::Activation::kSilu, false}},
          {"gemm_bias_residual_f16", {examples::Activation::kNone, true}}}) {
      list->push_back({name, [name = std::string(name), epilogue = epilogue](
                                 const std::string& target) {
                         return examples::GemmEpilogue(Dim::Dynamic("M"), Dim::Dynamic("N", 8),
                                                       Dim::Dynamic("K", 8),
                                                       GemmConfig::ForTarget(target), epilogue,
                                                       name);
                       }});
    }
    // A schedule's GEMM and fused GEMM, "gemm_f16_<suffix>" and
    // "gemm_bias_gelu_f16_<suffix>", with the target's configuration.
    auto addSchedule = [list](const std::string& suffix,
                              std::function<GemmConfig(const std::string&)> config) {
      list->push_back({"gemm_f16_" + suffix, [suffix, config](const std::string& target) {
                         return examples::GemmDynamic(config(target), "gemm_f16_" + suffix);
                       }});
      list->push_back({"gemm_bias_gelu_f16_" + suffix,
                       [suffix, config](const std::string& target) {
                         return examples::GemmBiasGelu(
                             Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                             config(target), /*tanhForm=*/true, "gemm_bias_gelu_f16_" + suffix);
                       }});
    };
    // The ping-pong schedule (two tiles per block on sm_90a; the grid as
    // written elsewhere), plain and with the fused epilogue's shared bias.
    addSchedule("pingpong", GemmConfig::PingPongForTarget);
    // The target's configuration with `set` applied to it.
    auto tunedWith = [](auto set) {
      return [set](const std::string& target) {
        GemmConfig c = GemmConfig::ForTarget(target);
        set(c);
        return c;
      };
    };
    // Persistent kernels: the tuned tile, blocks looping over the grid.
    addSchedule("persistent", tunedWith([](GemmConfig& c) { c.persistent = true; }));
    // One tile per block, as the grid is written (sm_90a's default is
    // persistent; its grid launch wins 2048^3 in tuning).
    addSchedule("grid", tunedWith([](GemmConfig& c) { c.persistent = false; }));
    // The target's configuration in clusters of `blocks`, B multicast where
    // the blocks of a cluster share its tiles (on sm_90a; a remark
    // elsewhere): a grid launch, persistent (tiles t ^ j grouped) or
    // stream-K (whole tiles multicast, split tiles' pieces load alone).
    enum ClusterLaunch { kGrid, kPersistent, kStreamK };
    auto clustered = [&](int64_t blocks, ClusterLaunch launch) {
      return tunedWith([=](GemmConfig& c) {
        c.persistent = launch != kGrid;
        c.streamK = launch == kStreamK;
        c.multicast = true;
        c.multicastBlocks = blocks;
      });
    };
    addSchedule("grid_mc", clustered(2, kGrid));
    addSchedule("persistent_mc", clustered(2, kPersistent));
    addSchedule("persistent_mc4", clustered(4, kPersistent));
    addSchedule("grid_mc4", clustered(4, kGrid));
    addSchedule("streamk_mc", clustered(2, kStreamK));
    // (30 clusters of four fit the H200: 120 blocks.)
    addSchedule("streamk_mc4", clustered(4, kStreamK));
    // Clusters of two sharing a B tile of three panels on sm_90a (128 x 192
    // tiles: one block loads one panel, the other two).
    addSchedule("persistent_mc_n192", [](const std::string& target) {
      GemmConfig c = GemmConfig::ForTarget(target);
      c.persistent = c.multicast = true;
      if (target == "sm_90a") c.bn = 192, c.stages = 5;
      return c;
    });
    // Stream-K: persistent, the last partial wave split along K.
    addSchedule("streamk", tunedWith([](GemmConfig& c) { c.streamK = true; }));
    // Tiles on the M and N edges in their own loop body (edge_loop), in the
    // target's default schedule (a grid launch on sm_80) and with stream-K.
    addSchedule("edge", tunedWith([](GemmConfig& c) { c.edgeLoop = true; }));
    addSchedule("streamk_edge", tunedWith([](GemmConfig& c) { c.streamK = c.edgeLoop = true; }));
    list->push_back({"gemm_f16_fragments", [](const std::string&) {
                       return GemmFragmentOperands(false, 1, 1, "gemm_f16_fragments");
                     }});
    list->push_back({"gemm_chain_f16", [](const std::string&) { return GemmChain(); }});
    list->push_back({"attention_online_f16", AttentionOnline});
    list->push_back({"gemm_f16_via_shared", [](const std::string&) { return GemmViaShared(); }});
    list->push_back({"gemm_f16_staged_b", [](const std::string&) {
                       return GemmFragmentOperands(true, 3, 8, "gemm_f16_staged_b");
                     }});
    // A's 96 x 32 tile is one and a half rounds of 256 threads' 8-element
    // chunks: the last chunk's copy is guarded (on sm_60 and sm_70 its
    // registers are carried from the global load to the shared store).
    list->push_back({"gemm_f16_overhang", [](const std::string&) {
                       GemmConfig c;
                       c.bm = 96, c.bn = 64, c.bk = 32, c.threads = 256, c.stages = 3;
                       return examples::GemmDynamic(c, "gemm_f16_overhang");
                     }});
    // M promised a multiple of 256 and tiles in plain raster order: on
    // sm_100a the blocks along M pair up (tcgen05.mma.cta_group::2,
    // backends/sm100/CtaPair.h); N and K have tails.
    list->push_back({"gemm_f16_pairs", [](const std::string&) {
                       GemmConfig c;
                       c.bk = 64, c.group = 0;
                       return examples::Gemm(Dim::Dynamic("M", 256), Dim::Dynamic("N", 8),
                                             Dim::Dynamic("K", 8), c, "gemm_f16_pairs");
                     }});
    list->push_back({"gemm_f16_any", [](const std::string&) {
                       GemmConfig c;
                       c.bm = 64, c.bn = 64;
                       return examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N"),
                                             Dim::Dynamic("K"), c, "gemm_f16_any");
                     }});
    AddDtypeCases(*list);
    AddAttentionCases(*list);
    AddCoreCases(*list);
    return list;
  }();
  return *cases;
}

}  // namespace tessera::conformance
