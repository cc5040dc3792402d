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

}  // namespace

const std::vector<Case>& AllCases() {
  static const auto* cases = [] {
    auto* list = new std::vector<Case>();
    for (const examples::Example& example : examples::AllExamples())
      list->push_back({example.name, example.build});
    list->push_back({"vector_add_static", [](const std::string&) { return VectorAddStatic(); }});
    list->push_back({"scale_shared_2d", [](const std::string&) { return ScaleShared2D(); }});
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
    list->push_back({"softmax_f16_1000", [](const std::string&) {
                       return examples::Softmax(Dim::Dynamic("M"), 1000, f16, 1, 128,
                                                "softmax_f16_1000");
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
    list->push_back({"gemm_f16_any", [](const std::string&) {
                       GemmConfig c;
                       c.bm = 64, c.bn = 64;
                       return examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N"),
                                             Dim::Dynamic("K"), c, "gemm_f16_any");
                     }});
    return list;
  }();
  return *cases;
}

}  // namespace tessera::conformance
