//===- catalog.cc - The list of example kernels and targets ---------------===//
//
// This file lists every example (each defined in its own examples/*.cc) and
// the targets they are built for.
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

namespace tessera::examples {

Example VectorAddExample();
Example GemmExample();
Example SoftmaxExample();
Example RmsNormExample();
Example LayerNormExample();
Example GemmBiasGeluExample();
Example Fp8GemmExample();
Example Fp8GemmBlockwiseExample();
Example FlashAttentionExample();
Example GemmW4A16Example();
Example GemvW4A16Example();
Example FlashDecodingExample();
Example FlashDecodingCombineExample();
Example FlashDecodingOneExample();
Example FlashDecodingPagedExample();
Example FlashDecodingPaged16Example();
Example FlashDecodingPaged256Example();
Example GemmSplitKExample();
Example PagedGatherExample();
Example SoftmaxVarlenExample();
Example MlaDecodeExample();
Example MlaDecodeCombineExample();
Example FlashAttentionBwdExample();
Example FlashAttentionBwdPreExample();
Example FlashAttentionBwdDqExample();
Example GroupedGemmExample();
Example GroupedGemmMaskedExample();
Example GroupedGemmPointersExample();
Example GroupedGemmPointersAnyExample();
Example GroupedGemmFp8Example();
Example GroupedGemmFp8MaskedExample();
Example MoeExample();
Example MoeAlignExample();
Example MoePlanExample();
Example MoeGatherExample();
Example MoeCombineExample();

const std::vector<std::string>& AllTargets() {
  static const auto* targets = new std::vector<std::string>{"sm_60", "sm_70", "sm_80", "sm_90a"};
  return *targets;
}

const std::vector<Example>& AllExamples() {
  static const auto* examples = new std::vector<Example>{VectorAddExample(),
                                                         GemmExample(),
                                                         SoftmaxExample(),
                                                         RmsNormExample(),
                                                         LayerNormExample(),
                                                         GemmBiasGeluExample(),
                                                         Fp8GemmExample(),
                                                         Fp8GemmBlockwiseExample(),
                                                         FlashAttentionExample(),
                                                         GemmW4A16Example(),
                                                         GemmSplitKExample(),
                                                         PagedGatherExample(),
                                                         GemvW4A16Example(),
                                                         FlashDecodingExample(),
                                                         FlashDecodingCombineExample(),
                                                         FlashDecodingOneExample(),
                                                         FlashDecodingPagedExample(),
                                                         FlashDecodingPaged16Example(),
                                                         FlashDecodingPaged256Example(),
                                                         SoftmaxVarlenExample(),
                                                         MlaDecodeExample(),
                                                         MlaDecodeCombineExample(),
                                                         FlashAttentionBwdExample(),
                                                         FlashAttentionBwdPreExample(),
                                                         FlashAttentionBwdDqExample(),
                                                         GroupedGemmExample(),
                                                         GroupedGemmMaskedExample(),
                                                         GroupedGemmPointersExample(),
                                                         GroupedGemmPointersAnyExample(),
                                                         GroupedGemmFp8Example(),
                                                         GroupedGemmFp8MaskedExample(),
                                                         MoeExample(),
                                                         MoeAlignExample(),
                                                         MoePlanExample(),
                                                         MoeGatherExample(),
                                                         MoeCombineExample()};
  return *examples;
}

}  // namespace tessera::examples
