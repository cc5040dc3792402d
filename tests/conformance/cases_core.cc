//===- cases_core.cc - Conformance cases of the language core -------------===//
//
// Kernels that use what goes beyond straight-line tiles (issue 41's core):
// indices read from data and block-uniform control flow. gemm_paged_b multiplies A by a B whose
// k-tiles are pages of a pool picked by a table, read inside the pipelined loop: on sm_90a the page
// becomes a TMA coordinate in the producer warp of the warp-specialized loop, elsewhere a cp.async
// or register-staged address. control_flow walks rows in chunks with Serial, branches with If/else
// on a loop index and on the block index, and unrolls a loop. (The examples paged_gather,
// gemm_split_k and gemm_w4a16 are cases through the example list; int_bits is in cases_dtypes.cc.)
// pack_varlen keeps a running row in a Var and a weight in a ScalarVar, and declares a
// precondition that the runtime checks at launch. index_math checks signed Index arithmetic on
// values read from data; int_reduce reduces i32 rows (max, min, sum, sum of absolute values, and
// a sum into i64); arg_topk finds each row's first maximum over chunks, its first minimum, and its
// top 4; atomic_add_half adds tiles into f16 and bf16 tensors; atomic_in_pipelined adds inside a
// pipelined loop.
//
//===----------------------------------------------------------------------===//

#include <cmath>

#include "tests/conformance/cases.h"

namespace tessera::conformance {
namespace {

/// C (M x N, f32) = sum over k-tiles k of A[:, 64 k : 64 k + 64] times
/// Bp[Table[k]] (Bp: [pages, 64, N] f16), the count of k-tiles Table's
/// length.
Kernel GemmPagedB(const std::string& target) {
  constexpr int64_t bk = 64;
  bool hopper = target == "sm_90a";
  int64_t bm = hopper ? 128 : 64, bn = hopper ? 128 : 64;
  int threads = target == "sm_70" ? 256 : 128, stages = hopper ? 4 : 2;
  KernelBuilder T("gemm_paged_b");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8);
  auto A = T.Tensor("A", {m, Dim::Dynamic("K", 8)}, f16);
  auto Bp = T.Tensor("Bp", {Dim::Dynamic("PAGES"), bk, n}, f16);
  auto Table = T.Tensor("Table", {Dim::Dynamic("KT")}, i32);
  auto C = T.Tensor("C", {m, n}, f32);
  T.Launch({CeilDiv(n, bn), CeilDiv(m, bm)}, threads, [&](Index bx, Index by) {
    auto As = T.AllocShared({bm, bk}, f16, "As"), Bs = T.AllocShared({bk, bn}, f16, "Bs");
    auto acc = T.AllocFragment({bm, bn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(Table.dim(0), stages, [&](Index k) {
      Index page = Table(k);
      T.Copy(A.Tile(by * bm, k * bk), As);
      T.Copy(Bp.Tile(page, 0, bx * bn).Along({1, 2}), Bs);
      T.Gemm(As, Bs, acc);
    });
    T.Copy(acc, C.Tile(by * bm, bx * bn));
  });
  return T.Build();
}

/// Block-uniform control flow: rows of X (f32, [M, L], L dynamic) walked
/// in chunks of 256 by Serial, each chunk doubled (even chunks) or negated
/// (odd ones) under If/else and written to Y, its sums added up per row;
/// an unrolled loop adds 1 on its second iteration; block 0 scales its
/// sums by 10 (an If on the block index); S gets the sums.
Kernel ControlFlow() {
  constexpr int64_t kRows = 4, kChunk = 256;
  KernelBuilder T("control_flow");
  Dim m = Dim::Dynamic("M"), l = Dim::Dynamic("L");
  auto X = T.Tensor("X", {m, l}, f32), Y = T.Tensor("Y", {m, l}, f32);
  auto S = T.Tensor("S", {m}, f32);
  T.Launch({CeilDiv(m, kRows)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({kRows, kChunk}, f32, "x");
    auto sum = T.AllocFragment({kRows}, f32, "sum");
    T.Clear(sum);
    T.Serial(CeilDiv(X.dim(1), Index(kChunk)), [&](Index c) {
      T.Copy(X.Tile(bx * kRows, c * kChunk), x);
      T.If(
          c % 2 == 0,
          [&] {
            T.Parallel({kRows, kChunk}, [&](Index i, Index j) { x(i, j) = x(i, j) * 2.0; });
          },
          [&] {
            T.Parallel({kRows, kChunk}, [&](Index i, Index j) { x(i, j) = -x(i, j); });
          });
      T.ReduceSum(x, sum, /*clear=*/false);
      T.Copy(x, Y.Tile(bx * kRows, c * kChunk));
    });
    T.Unroll(2, [&](Index u) {
      T.If(u == 1, [&] { T.Parallel({kRows}, [&](Index i) { sum(i) = sum(i) + 1.0; }); });
    });
    T.If(bx == 0, [&] { T.Parallel({kRows}, [&](Index i) { sum(i) = sum(i) * 10.0; }); });
    T.Copy(sum, S.Tile(bx * kRows));
  });
  return T.Build();
}

/// Element atomics: for X (i32, [N]) and F (f32, [N]), element e falls in
/// bin X[e] & 255; H[bin] += 1 (O[e] gets the count before, so each bin's
/// O values are its first counts in some order) and M[bin] = max(M[bin],
/// F[e]). Elements past N use bin 1000, outside H and M: nothing happens.
Kernel Histogram() {
  constexpr int64_t kChunk = 1024;
  KernelBuilder T("histogram");
  Dim n = Dim::Dynamic("N");
  auto X = T.Tensor("X", {n}, i32), F = T.Tensor("F", {n}, f32);
  auto H = T.Tensor("H", {256}, i32), M = T.Tensor("M", {256}, f32);
  auto O = T.Tensor("O", {n}, i32);
  T.Launch({CeilDiv(n, kChunk)}, 256, [&](Index bx) {
    auto x = T.AllocFragment({kChunk}, i32, "x"), f = T.AllocFragment({kChunk}, f32, "f");
    T.Copy(X.Tile(bx * kChunk), x);
    T.Copy(F.Tile(bx * kChunk), f);
    T.Parallel({kChunk}, [&](Index i) {
      Index bin = ToIndex(Select(bx * kChunk + i < X.dim(0), x(i) & 255, 1000));
      x(i) = T.AtomicAdd(H, {bin}, 1);
      T.AtomicMax(M, {bin}, f(i));
    });
    T.Copy(x, O.Tile(bx * kChunk));
  });
  return T.Build();
}

/// Block variables and a precondition: packs the first L[b] rows of each
/// batch of X ([B, S, D] f32) one after another into Y ([T, D]), batch b's
/// rows scaled by Scale^b. A Var holds the running row and a ScalarVar the
/// weight, both advanced per batch in a Serial loop; the weight is read in
/// a Parallel body. Each block takes 64 columns. D must be a multiple of 4
/// (a Require the runtime checks at launch).
Kernel PackVarlen() {
  constexpr int64_t kRows = 16, kCols = 64;
  KernelBuilder T("pack_varlen");
  Dim d = Dim::Dynamic("D");
  auto X = T.Tensor("X", {Dim::Dynamic("B"), Dim::Dynamic("S"), d}, f32);
  auto L = T.Tensor("L", {Dim::Dynamic("NB")}, i32);
  auto Y = T.Tensor("Y", {Dim::Dynamic("T"), d}, f32);
  Scalar scale = T.ScalarArg("Scale", f32);
  T.Launch({CeilDiv(d, kCols)}, 128, [&](Index bx) {
    T.Require(X.dim(2) % 4 == 0);
    auto tile = T.AllocFragment({kRows, kCols}, f32, "tile");
    auto row = T.Var(0, "row");
    auto weight = T.ScalarVar(1.0, f32, "weight");
    T.Serial(L.dim(0), [&](Index b) {
      Index length = Min(L(b), X.dim(1));
      T.Serial(CeilDiv(length, Index(kRows)), [&](Index c) {
        T.Copy(X.Tile(b, c * kRows, bx * kCols).Along({1, 2}).Until(length), tile);
        T.Parallel({kRows, kCols}, [&](Index i, Index j) { tile(i, j) = tile(i, j) * weight; });
        T.Copy(tile, Y.Tile(Index(row) + c * kRows, bx * kCols).Until(Index(row) + length));
      });
      row += length;
      weight = weight * scale;
    });
  });
  return T.Build();
}

/// Signed Index arithmetic on values read from data: block i reads a =
/// P[i, 0] and b = P[i, 1] (i32, either sign, b != 0) and writes a / b,
/// a % b (truncating, as int64_t), Min, Max, CeilDiv(a, b), Max(0, a - b)
/// and a - Min(a, b) into R[i, 0..6] (i64).
Kernel IndexMath() {
  constexpr int64_t kResults = 7;
  KernelBuilder T("index_math");
  Dim n = Dim::Dynamic("N");
  auto P = T.Tensor("P", {n, 2}, i32), R = T.Tensor("R", {n, kResults}, i64);
  T.Launch({n}, 32, [&](Index bx) {
    Index a = P(bx, 0), b = P(bx, 1);
    Index results[kResults] = {
        a / b, a % b, Min(a, b), Max(a, b), CeilDiv(a, b), Max(Index(0), a - b), a - Min(a, b)};
    auto out = T.AllocFragment({kResults}, i64, "out");
    T.Parallel({kResults}, [&](Index k) {
      Scalar value = ToScalar(results[0], i64);
      for (int64_t r = 1; r < kResults; ++r)
        value = Select(k == Index(r), ToScalar(results[r], i64), value);
      out(k) = value;
    });
    T.Copy(out, R.Tile(bx, 0).Along({1}));
  });
  return T.Build();
}

/// Integer reductions: rows of X (i32, [M, N], N dynamic) in chunks of 256
/// columns (Serial, combining into the results), the tail past N masked to
/// each reduction's identity: R[m] = {max, min, sum (i32, wrapping), sum
/// of absolute values (i32), sum into i64}.
Kernel IntReduce() {
  constexpr int64_t kRows = 4, kChunk = 256, kResults = 5;
  KernelBuilder T("int_reduce");
  Dim m = Dim::Dynamic("M");
  auto X = T.Tensor("X", {m, Dim::Dynamic("N")}, i32);
  auto R = T.Tensor("R", {m, kResults}, i64);
  T.Launch({CeilDiv(m, kRows)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({kRows, kChunk}, i32, "x");
    auto low = T.AllocFragment({kRows, kChunk}, i32, "low");
    auto wide = T.AllocFragment({kRows, kChunk}, i64, "wide");
    auto top = T.AllocFragment({kRows}, i32, "top"),
         bottom = T.AllocFragment({kRows}, i32, "bottom");
    auto sum = T.AllocFragment({kRows}, i32, "sum"), abs = T.AllocFragment({kRows}, i32, "abs");
    auto sum64 = T.AllocFragment({kRows}, i64, "sum64");
    auto out = T.AllocFragment({kRows, kResults}, i64, "out");
    T.Fill(top, -2147483648.0);
    T.Fill(bottom, 2147483647.0);
    T.Clear(sum);
    T.Clear(abs);
    T.Clear(sum64);
    T.Serial(CeilDiv(X.dim(1), Index(kChunk)), [&](Index c) {
      T.Copy(X.Tile(bx * kRows, c * kChunk), x);
      T.Parallel({kRows, kChunk}, [&](Index i, Index j) {
        Scalar inside = c * kChunk + j < X.dim(1);
        low(i, j) = Select(inside, x(i, j), 2147483647);
        wide(i, j) = Cast(x(i, j), i64);
        x(i, j) = Select(inside, x(i, j), -2147483647 - 1.0);
      });
      T.ReduceMax(x, top, /*clear=*/false);
      T.ReduceMin(low, bottom, /*clear=*/false);
      T.Parallel({kRows, kChunk}, [&](Index i, Index j) {
        x(i, j) = Select(c * kChunk + j < X.dim(1), x(i, j), 0);
      });
      T.ReduceSum(x, sum, /*clear=*/false);
      T.ReduceAbsSum(x, abs, /*clear=*/false);
      T.ReduceSum(wide, sum64, /*clear=*/false);
    });
    T.Parallel({kRows, kResults}, [&](Index i, Index k) {
      Scalar value = Select(k == Index(0), Cast(top(i), i64), Cast(bottom(i), i64));
      value = Select(k == Index(2), Cast(sum(i), i64), value);
      value = Select(k == Index(3), Cast(abs(i), i64), value);
      out(i, k) = Select(k == Index(4), sum64(i), value);
    });
    T.Copy(out, R.Tile(bx * kRows, 0));
  });
  return T.Build();
}

/// Arg-reductions and top-k: the first position of each row's maximum of X
/// (f32, [M, N], N dynamic) walked in chunks of 256 (ReduceArgMax without
/// clear, the chunk's start as offset; the tail masked to -inf) into AV and
/// AI; the first position of each row's minimum of Xi (i32, [M, 64]) into
/// AM; the top 4 of each row of Xi, largest first, into TV and TI.
Kernel ArgTopK() {
  constexpr int64_t kRows = 4, kChunk = 256, kK = 4;
  KernelBuilder T("arg_topk");
  Dim m = Dim::Dynamic("M");
  auto X = T.Tensor("X", {m, Dim::Dynamic("N")}, f32), Xi = T.Tensor("Xi", {m, 64}, i32);
  auto AV = T.Tensor("AV", {m}, f32), AI = T.Tensor("AI", {m}, i32), AM = T.Tensor("AM", {m}, i32);
  auto TV = T.Tensor("TV", {m, kK}, i32), TI = T.Tensor("TI", {m, kK}, i32);
  T.Launch({CeilDiv(m, kRows)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({kRows, kChunk}, f32, "x");
    auto xi = T.AllocFragment({kRows, 64}, i32, "xi");
    auto best = T.AllocFragment({kRows}, f32, "best"), at = T.AllocFragment({kRows}, i32, "at");
    auto low = T.AllocFragment({kRows}, i32, "low"), lowAt = T.AllocFragment({kRows}, i32, "lowAt");
    auto tv = T.AllocFragment({kRows, kK}, i32, "tv"), ti = T.AllocFragment({kRows, kK}, i32, "ti");
    T.Fill(best, -INFINITY);
    T.Fill(at, -1);
    T.Serial(CeilDiv(X.dim(1), Index(kChunk)), [&](Index c) {
      T.Copy(X.Tile(bx * kRows, c * kChunk), x);
      T.Parallel({kRows, kChunk}, [&](Index i, Index j) {
        x(i, j) = Select(c * kChunk + j < X.dim(1), x(i, j), -INFINITY);
      });
      T.ReduceArgMax(x, best, at, c * kChunk, /*clear=*/false);
    });
    T.Copy(best, AV.Tile(bx * kRows));
    T.Copy(at, AI.Tile(bx * kRows));
    T.Copy(Xi.Tile(bx * kRows, 0), xi);
    T.ReduceArgMin(xi, low, lowAt);
    T.Copy(lowAt, AM.Tile(bx * kRows));
    T.TopK(xi, tv, ti);
    T.Copy(tv, TV.Tile(bx * kRows, 0));
    T.Copy(ti, TI.Tile(bx * kRows, 0));
  });
  return T.Build();
}

/// Tile atomic adds into 16-bit floats: each of two blocks along z adds
/// X (f32, [M, N]) times (z + 1) into Y (f16) and Z (bf16), which start
/// at random values: Y += 3 X in two adds (packed f16x2/bf16x2 `red`
/// where the target has it).
Kernel AtomicAddHalf() {
  constexpr int64_t kRows = 16, kCols = 64;
  KernelBuilder T("atomic_add_half");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8);
  auto X = T.Tensor("X", {m, n}, f32), Y = T.Tensor("Y", {m, n}, f16);
  auto Z = T.Tensor("Z", {m, n}, bf16);
  T.Launch({CeilDiv(n, kCols), CeilDiv(m, kRows), 2}, 128, [&](Index bx, Index by, Index bz) {
    auto x = T.AllocFragment({kRows, kCols}, f32, "x");
    T.Copy(X.Tile(by * kRows, bx * kCols), x);
    T.Parallel({kRows, kCols}, [&](Index i, Index j) { x(i, j) = x(i, j) * ToScalar(bz + 1); });
    T.AtomicAdd(x, Y.Tile(by * kRows, bx * kCols));
    T.AtomicAdd(x, Z.Tile(by * kRows, bx * kCols));
  });
  return T.Build();
}

/// Atomic adds inside a pipelined loop: Y ([16, N], f32) gains the sum of
/// X's ([M, N]) 16-row chunks, each staged through shared memory by the
/// loop and added from registers in the same iteration.
Kernel AtomicInPipelined() {
  constexpr int64_t kRows = 16, kCols = 64;
  KernelBuilder T("atomic_in_pipelined");
  Dim n = Dim::Dynamic("N", 4);
  auto X = T.Tensor("X", {Dim::Dynamic("M"), n}, f32), Y = T.Tensor("Y", {kRows, n}, f32);
  T.Launch({CeilDiv(n, kCols)}, 128, [&](Index bx) {
    auto xs = T.AllocShared({kRows, kCols}, f32, "xs");
    auto x = T.AllocFragment({kRows, kCols}, f32, "x");
    T.Pipelined(CeilDiv(X.dim(0), Index(kRows)), 2, [&](Index c) {
      T.Copy(X.Tile(c * kRows, bx * kCols), xs);
      T.Copy(xs, x);
      T.AtomicAdd(x, Y.Tile(0, bx * kCols));
    });
  });
  return T.Build();
}

}  // namespace

void AddCoreCases(std::vector<Case>& cases) {
  cases.push_back({"histogram", [](const std::string&) { return Histogram(); }});
  cases.push_back({"gemm_paged_b", GemmPagedB});
  cases.push_back({"control_flow", [](const std::string&) { return ControlFlow(); }});
  cases.push_back({"pack_varlen", [](const std::string&) { return PackVarlen(); }});
  cases.push_back({"index_math", [](const std::string&) { return IndexMath(); }});
  cases.push_back({"int_reduce", [](const std::string&) { return IntReduce(); }});
  cases.push_back({"arg_topk", [](const std::string&) { return ArgTopK(); }});
  cases.push_back({"atomic_add_half", [](const std::string&) { return AtomicAddHalf(); }});
  cases.push_back(
      {"atomic_in_pipelined", [](const std::string&) { return AtomicInPipelined(); }});
}

}  // namespace tessera::conformance
