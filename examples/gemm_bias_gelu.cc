//===- gemm_bias_gelu.cc - C = GELU(A * B + bias), fused ------------------===//
//
// The GEMM of examples/gemm.cc with its epilogue fused: the bias row is
// staged in shared memory and added to the f32 accumulator in registers,
// the activation (GELU in tanh or erf form, ReLU, SiLU) is applied there,
// optionally a residual tile is added, and C is written once in f16.
// Unfused, the product would go to memory and come back for each step.
//
//   bazel run //examples:gemm_bias_gelu -- --target=sm_80 --emit=ptx
//
//===----------------------------------------------------------------------===//

#include <optional>

#include "examples/common/example.h"
#include "examples/gemm.h"

namespace tessera::examples {

Kernel GemmEpilogue(Dim M, Dim N, Dim K, const GemmConfig& c, const Epilogue& epilogue,
                    const std::string& name) {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, c.dtype), B = T.Tensor("B", {K, N}, c.dtype);
  auto Bias = T.Tensor("bias", {1, N}, c.dtype);
  std::optional<Tensor> R;
  if (epilogue.residual) R = T.Tensor("R", {M, N}, c.dtype);
  auto C = T.Tensor("C", {M, N}, c.dtype);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index x, Index y) {
    auto block = SwizzleBlocks(x, y, CeilDiv(C.dim(1), c.bn), CeilDiv(C.dim(0), c.bm), c.group);
    Index bx = block.first, by = block.second;
    if (c.pingpong) T.PingPong();
    if (c.persistent) T.Persistent();
    if (c.streamK) T.StreamK();
    if (c.multicast) T.Multicast(c.multicastBlocks);
    if (c.edgeLoop) T.EdgeLoop();
    auto As = T.AllocShared({c.bm, c.bk}, c.dtype, "As"), Bs = T.AllocShared({c.bk, c.bn}, c.dtype, "Bs");
    auto bias = T.AllocShared({1, c.bn}, c.dtype, "bias");
    auto acc = T.AllocFragment({c.bm, c.bn}, f32, "acc");
    // The accumulator starts at the bias row (C = A B + bias in f32): the
    // epilogue has one addition less per element, and the row's load and
    // barrier go before the main loop, whose first waits hide them.
    T.Copy(Bias.Tile(0, bx * c.bn), bias);
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) { acc(i, j) = Cast(bias(0, j), f32); });
    T.Pipelined(CeilDiv(K, c.bk), c.stages, [&](Index k) {
      T.Copy(A.Tile(by * c.bm, k * c.bk), As);
      T.Copy(B.Tile(k * c.bk, bx * c.bn), Bs);
      T.Gemm(As, Bs, acc);
    });
    // The residual tile lands in a fragment of the accumulator's layout.
    std::optional<Buffer> res;
    if (epilogue.residual) {
      res = T.AllocFragment({c.bm, c.bn}, c.dtype, "res");
      T.Copy(R->Tile(by * c.bm, bx * c.bn), *res);
    }
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) {
      Scalar v = acc(i, j);
      switch (epilogue.activation) {
        case Activation::kNone: break;
        case Activation::kGeluTanh:
          if (epilogue.compactGelu) {
            // h + h tanh(h (c1 + c2 h^2)), h = v / 2, c1 = 2 sqrt(2/pi),
            // c2 = 8 * 0.044715 sqrt(2/pi): the same function.
            Scalar h = 0.5 * v;
            v = h + h * Tanh(h * (1.5957691216057308 + 0.285419265090401 * (h * h)));
          } else {
            v = 0.5 * v * (1.0 + Tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          }
          break;
        case Activation::kGeluErf: v = 0.5 * v * (1.0 + Erf(v * 0.7071067811865476)); break;
        case Activation::kRelu: v = Max(v, 0.0); break;
        case Activation::kSilu: v = v / (1.0 + Exp(-v)); break;
      }
      if (epilogue.residual) v = v + Cast((*res)(i, j), f32);
      acc(i, j) = v;
    });
    T.Copy(acc, C.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Example GemmBiasGeluExample() {
  return {"gemm_bias_gelu_f16", [](const std::string& target) {
            return GemmBiasGelu(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                                GemmConfig::ForTarget(target), /*tanhForm=*/true, "gemm_bias_gelu_f16");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GemmBiasGeluExample())
