//===- cases_attention.cc - Conformance cases of FlashAttention -----------===//
//
// The FlashAttention example (examples/flash_attention.cc) in each target's
// configuration, over the combinations a backend must get right: f16 and
// bf16; head dimensions 64, 128 and 256; causal and not (the example
// itself, entry flash_attention, is a case through the example list). Their
// workloads (examples/workloads/flash_attention.cc) take lengths that are
// not multiples of the blocks, Sq != Skv, grouped-query heads, and check
// O and the log-sum-exp against float64.
//
//===----------------------------------------------------------------------===//

#include "examples/flash_attention.h"
#include "examples/flash_attention_bwd.h"
#include "tests/conformance/cases.h"

namespace tessera::conformance {

void AddAttentionCases(std::vector<Case>& cases) {
  struct Variant {
    DType dtype;
    int64_t headDim;
    bool causal;
    int64_t valueDim = 0;
  };
  // Every type x head dimension x mask the benchmarks time (64, 128), head
  // dimension 256 once per type, DeepSeek's prefill (Q K^T over 192, V over
  // 128), and the head dimensions whose rows are 32- or 64-byte swizzle
  // panels (80, 96, 112, 160).
  const Variant kVariants[] = {
      {f16, 64, false},       {f16, 64, true},   {f16, 128, false},      {f16, 128, true},
      {bf16, 64, false},      {bf16, 64, true},  {bf16, 128, false},     {bf16, 128, true},
      {f16, 256, false},      {bf16, 256, true}, {f16, 192, false, 128}, {f16, 192, true, 128},
      {bf16, 192, true, 128}, {f16, 96, false},  {bf16, 80, true},       {f16, 112, false},
      {f16, 160, true}};
  for (const Variant& v : kVariants) {
    for (bool varlen : {false, true}) {
      // The packed batch at the head dimensions the benchmarks time.
      if (varlen && v.headDim != 64 && v.headDim != 128) continue;
      examples::FlashAttentionConfig c;
      c.dtype = v.dtype, c.headDim = v.headDim, c.causal = v.causal, c.varlen = varlen;
      c.valueDim = v.valueDim;
      cases.push_back({examples::FlashAttentionName(c), [v, varlen](const std::string& target) {
                         auto config = examples::FlashAttentionConfig::ForTarget(
                             target, v.dtype, v.headDim, v.causal);
                         config.varlen = varlen;
                         config.valueDim = v.valueDim;
                         return examples::FlashAttention(config);
                       }});
    }
  }
  // The backward's causal mask, bf16 and head dimension 64 (the example is
  // f16, d128, no mask): each variant's three kernels, the dK/dV one named
  // by the family and the other two its companions.
  // The packed batch's: both types, both head dimensions, both masks.
  struct BwdVariant {
    Variant v;
    bool varlen;
  };
  for (const BwdVariant& bv :
       {BwdVariant{{bf16, 64, true}, false}, BwdVariant{{f16, 128, true}, false},
        BwdVariant{{f16, 64, false}, true}, BwdVariant{{bf16, 64, true}, true},
        BwdVariant{{f16, 128, true}, true}, BwdVariant{{bf16, 128, false}, true}}) {
    const Variant v = bv.v;
    examples::FlashAttentionBwdConfig c;
    c.dtype = v.dtype, c.headDim = v.headDim, c.causal = v.causal, c.varlen = bv.varlen;
    const std::string base = examples::FlashAttentionBwdName(c);
    for (const char* suffix : {"", "_pre", "_dq"}) {
      std::string name = base + suffix;
      cases.push_back({name, [bv, name, suffix = std::string(suffix)](const std::string& target) {
                         auto config = examples::FlashAttentionBwdConfig::ForTarget(
                             target, bv.v.dtype, bv.v.headDim, bv.v.causal);
                         config.varlen = bv.varlen;
                         if (suffix == "_pre") return examples::FlashAttentionBwdPre(config, name);
                         if (suffix == "_dq") return examples::FlashAttentionBwdDq(config, name);
                         return examples::FlashAttentionBwdDkDv(config, name);
                       }});
    }
  }
}

}  // namespace tessera::conformance
