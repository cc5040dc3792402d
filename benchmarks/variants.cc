//===- variants.cc - Tuning variants of the example kernels ---------------===//
//
// Writes a bundle of extra benchmark kernels for one target: tuning variants
// (block size, threads) of the examples, named "<kernel>__<knobs>", and the
// bf16 GEMM, so that one GPU run times them all beside the defaults
// (benchmarks/device/run.sh runs every bundle in .device/bundles).
//
//   variants --target=sm_90a OUT.pb
//   variants --probe --target=sm_90a OUT.pb   # the GEMMs gemm_probe runs
//   variants --ab --target=sm_90a OUT.pb      # the GEMM under three LLVM pipelines
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "examples/flash_attention.h"
#include "examples/flash_decoding.h"
#include "examples/fp8_gemm.h"
#include "examples/gemm.h"
#include "examples/gemm_split_k.h"
#include "examples/gemm_w4a16.h"
#include "examples/mla_decode.h"
#include "examples/softmax.h"
#include "frontend/Tessera.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"

namespace tessera::examples {
Kernel VectorAdd(Dim n, int64_t block, int threads, const std::string& name);
}  // namespace tessera::examples

namespace {

using namespace tessera;

/// Compiles `kernel` for `target` into `bundle`; false (and a message) when
/// it does not compile.
bool Add(runtime::KernelBundle& bundle, const Kernel& kernel, const std::string& target,
         int optLevel = 2) {
  CompileOptions options;
  options.target = target;
  options.optLevel = optLevel;
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "variants: %s: %s\n", kernel.name().c_str(),
                 std::string(compiled.status().message()).c_str());
    return false;
  }
  *bundle.add_kernels() = std::move(*compiled);
  return true;
}

/// GEMMs for benchmarks/gemm_probe.cc: static shapes, one tile each.
bool AddProbes(runtime::KernelBundle& bundle, const std::string& target) {
  struct Probe {
    int64_t m, n, k, bk;
    bool transposeB;
    int stages;
  };
  for (Probe p : {Probe{64, 64, 32, 32, false, 1}, Probe{64, 64, 64, 64, false, 1},
                  Probe{64, 64, 64, 64, true, 1}, Probe{64, 128, 64, 64, false, 1},
                  Probe{128, 256, 64, 64, false, 4}, Probe{128, 256, 512, 64, false, 4},
                  Probe{128, 256, 512, 64, true, 4}}) {
    examples::GemmConfig config;
    config.bm = p.m, config.bn = p.n, config.bk = p.bk, config.stages = p.stages;
    config.threads = int(p.m / 64 * 128);
    config.group = 0;
    config.transposeB = p.transposeB;
    std::string name = absl::StrCat("probe_", p.m, "x", p.n, "x", p.k, p.transposeB ? "_tn" : "",
                                    "_s", p.stages);
    if (!Add(bundle, examples::Gemm(p.m, p.n, p.k, config, name), target)) return false;
  }
  return true;
}

/// sm_90a's schedule candidates for the FP8 and TF32 GEMMs (the defaults
/// reuse the f16 GEMM's 128 x 256 tiles of 128-byte k-steps): the
/// ping-pong schedule, taller tiles, fewer stages and a grid launch, each
/// "<kernel>__<knobs>". (Multicast does not apply: their B tiles are one
/// 128-byte panel wide, and clusters split a copy by panels.)
bool AddDtypeGemmVariants(runtime::KernelBundle& bundle, const std::string& target) {
  using examples::Fp8GemmConfig;
  auto fp8 = [&](const Fp8GemmConfig& c, const std::string& suffix) {
    return Add(bundle,
               examples::Fp8Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 16), Dim::Dynamic("K", 16),
                                 c, "fp8_gemm__" + suffix),
               target);
  };
  auto tf32 = [&](const examples::GemmConfig& c, const std::string& suffix) {
    return Add(bundle,
               examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 16), c,
                              "gemm_tf32__" + suffix),
               target);
  };
  const Fp8GemmConfig fp8Default = Fp8GemmConfig::ForTarget(target);
  const examples::GemmConfig tf32Default =
      examples::GemmConfig::ForType(target, f32, f32, f32, Precision::kTF32);
  Fp8GemmConfig f = fp8Default;
  examples::GemmConfig t = tf32Default;
  // Ping-pong: 128 x 128 tiles, one consumer warpgroup each, 6 stages of
  // 32 KiB.
  f.pingpong = t.pingpong = true;
  f.persistent = t.persistent = false;
  f.bn = t.bn = 128;
  f.stages = t.stages = 6;
  f.threads = t.threads = 128;
  if (!fp8(f, "pingpong") || !tf32(t, "pingpong")) return false;
  // 256 x 128 tiles on four consumer warpgroups.
  f = fp8Default, t = tf32Default;
  f.bm = t.bm = 256;
  f.bn = t.bn = 128;
  f.threads = t.threads = 512;
  if (!fp8(f, "256x128_t512") || !tf32(t, "256x128_t512")) return false;
  f = fp8Default, t = tf32Default;
  f.stages = t.stages = 3;
  if (!fp8(f, "s3") || !tf32(t, "s3")) return false;
  f = fp8Default, t = tf32Default;
  f.persistent = t.persistent = false;
  return fp8(f, "grid") && tf32(t, "grid");
}

/// FlashAttention's block and stage candidates beside ForTarget's, f16,
/// d64 to d256, causal and not, each "<kernel>__<knobs>".
bool AddAttentionVariants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t bm, bn;
    int stages, threads;
  };
  const Knobs candidates[] = {{128, 128, 2, 256}, {128, 64, 3, 256}, {192, 64, 2, 384},
                              {64, 64, 2, 128}, {128, 32, 2, 256}, {128, 128, 3, 256}};
  // Wide heads: the warp-specialized form's blocks beside the 4-warp one.
  const Knobs wide[] = {{128, 32, 2, 256}, {128, 64, 2, 256}, {64, 32, 2, 128}};
  for (int64_t d : {64, 128, 160, 192, 256})
    for (bool causal : {false, true})
      for (Knobs k : d > 128 ? absl::MakeConstSpan(wide) : absl::MakeConstSpan(candidates)) {
        examples::FlashAttentionConfig c =
            examples::FlashAttentionConfig::ForTarget(target, f16, d, causal);
        if (c.bm == k.bm && c.bn == k.bn && c.stages == k.stages && c.threads == k.threads)
          continue;
        c.bm = k.bm, c.bn = k.bn, c.stages = k.stages, c.threads = k.threads;
        std::string name = absl::StrCat(examples::FlashAttentionName(c), "__", k.bm, "x", k.bn,
                                        "_s", k.stages, "_t", k.threads);
        if (!Add(bundle, examples::FlashAttention(c, name), target)) return false;
      }
  return true;
}

/// The split-K GEMM (examples/gemm_split_k.cc) over tiles, warpgroups and
/// split counts, for the skinny shapes its benchmarks run: entries
/// gemm_split_k__<bm>x<bn>x<bk>_s<stages>_t<threads>_k<splits>.
bool AddSplitKVariants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t bm, bn, bk;
    int stages, threads;
    int64_t splits;
  };
  const Knobs knobs[] = {{64, 128, 64, 4, 128, 2},  {64, 128, 64, 4, 128, 8},
                         {64, 256, 64, 4, 128, 4},  {128, 128, 64, 4, 256, 2},
                         {128, 128, 64, 4, 256, 4}, {128, 256, 64, 4, 256, 2},
                         {128, 256, 64, 3, 256, 1},
                         // Narrow columns: 128 blocks at N = 8192 without a
                         // split, or 256 with two; deeper pipelines.
                         {128, 64, 64, 6, 256, 1},  {128, 64, 64, 6, 256, 2},
                         {128, 128, 64, 6, 256, 2}, {128, 128, 128, 3, 256, 2}};
  for (const Knobs& k : knobs) {
    examples::SplitKConfig c = examples::SplitKConfig::ForTarget(target);
    c.bm = k.bm, c.bn = k.bn, c.bk = k.bk, c.stages = k.stages, c.threads = k.threads;
    c.splits = k.splits;
    std::string name = absl::StrCat("gemm_split_k__", k.bm, "x", k.bn, "x", k.bk, "_s", k.stages,
                                    "_t", k.threads, "_k", k.splits);
    if (!Add(bundle,
             examples::GemmSplitK(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), c,
                                  name),
             target))
      return false;
  }
  return true;
}

/// The W4A16 GEMM (examples/gemm_w4a16.cc) over tiles, k-depth and stages,
/// for decode (M of 1 to 16: narrow row tiles, more blocks) and prefill:
/// entries gemm_w4a16__<bm>x<bn>x<bk>_s<stages>_t<threads>.
bool AddW4A16Variants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t bm, bn, bk;
    int stages, threads;
  };
  const Knobs knobs[] = {{16, 64, 128, 4, 128},  {16, 128, 128, 4, 128}, {16, 64, 64, 4, 128},
                         {64, 64, 128, 3, 128},  {64, 128, 128, 3, 128}, {64, 128, 64, 4, 128},
                         {128, 128, 64, 3, 256}, {128, 256, 64, 3, 256}};
  for (const Knobs& k : knobs) {
    examples::W4A16Config c = examples::W4A16Config::ForTarget(target);
    c.bm = k.bm, c.bn = k.bn, c.bk = k.bk, c.stages = k.stages, c.threads = k.threads;
    std::string name =
        absl::StrCat("gemm_w4a16__", k.bm, "x", k.bn, "x", k.bk, "_s", k.stages, "_t", k.threads);
    if (!Add(bundle,
             examples::GemmW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), c,
                                 name),
             target))
      return false;
  }
  return true;
}

/// The decode form (examples/gemv_w4a16.cc) over rows per block, columns,
/// words per k-tile and stages: gemv_w4a16__r<rows>_<bn>x<words>_s<stages>
/// _t<threads>.
bool AddGemvW4A16Variants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t rows, bn, words;
    int stages, threads;
  };
  const Knobs knobs[] = {{1, 32, 32, 8, 128},
                         {1, 64, 32, 4, 128},
                         {1, 64, 64, 4, 512},
                         {1, 32, 64, 4, 256},
                         {1, 128, 64, 3, 512},
                         {1, 32, 32, 6, 256},
                         {2, 32, 32, 8, 256},
                         {4, 32, 32, 8, 128},
                         {4, 32, 32, 8, 256},
                         // Deeper k-tiles (the loop's addressing per weight halves) and
                         // narrower blocks (more of them per multiprocessor).
                         {1, 32, 128, 4, 256},
                         {1, 64, 128, 3, 512},
                         {1, 16, 128, 4, 128},
                         {1, 16, 64, 4, 128}};
  for (const Knobs& k : knobs) {
    examples::W4A16DecodeConfig c = examples::W4A16DecodeConfig::ForTarget(target);
    c.rows = k.rows, c.bn = k.bn, c.words = k.words, c.stages = k.stages, c.threads = k.threads;
    std::string name = absl::StrCat("gemv_w4a16__r", k.rows, "_", k.bn, "x", k.words, "_s",
                                    k.stages, "_t", k.threads);
    if (!Add(bundle,
             examples::GemvW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), c,
                                 name),
             target))
      return false;
  }
  return true;
}

/// Flash-decoding's split pass (examples/flash_decoding.cc) over keys per
/// step, stages and threads, and for one token:
/// flash_decoding[_one]__h<heads>_<bn>_s<stages>_t<threads>.
bool AddFlashDecodingVariants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t bn;
    int stages, threads;
  };
  struct Variant {
    bool one;
    int64_t heads;
    Knobs k;
  };
  // Tokens one after another (cp.async, 16 rows on mma.sync); one token
  // (the key loop at the top level), on sm_90a with 64 rows a warp-
  // specialized loop of TMA loads and wgmmas.
  for (Variant v : {Variant{false, 16, {128, 3, 128}}, Variant{false, 16, {64, 3, 128}},
                    Variant{false, 16, {64, 2, 128}}, Variant{true, 16, {64, 4, 128}},
                    Variant{true, 16, {128, 3, 128}}, Variant{true, 64, {64, 4, 128}},
                    Variant{true, 64, {128, 3, 128}}, Variant{true, 64, {64, 6, 128}},
                    Variant{true, 64, {128, 4, 128}}}) {
    examples::FlashDecodingConfig c = examples::FlashDecodingConfig::ForTarget(target);
    c.bn = v.k.bn, c.stages = v.k.stages, c.threads = v.k.threads, c.oneToken = v.one;
    c.heads = v.heads;
    std::string name = absl::StrCat(v.one ? "flash_decoding_one__" : "flash_decoding__", "h",
                                    v.heads, "_", v.k.bn, "_s", v.k.stages, "_t", v.k.threads);
    if (!Add(bundle, examples::FlashDecoding(c, name), target)) return false;
  }
  return true;
}

/// MLA decode's split pass (examples/mla_decode.cc) over heads a block,
/// keys a step, stages and threads, and for one token:
/// mla_decode[_one]__h<heads>_<bn>_s<stages>_t<threads>.
bool AddMlaDecodeVariants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Variant {
    bool one;
    int64_t heads, bn;
    int stages, threads;
  };
  // 16 heads at 32 keys a step and two stages leave room for two blocks a
  // multiprocessor; 32 heads on 8 warps read the cache half as often.
  for (Variant v : {Variant{false, 16, 32, 4, 128}, Variant{false, 16, 32, 2, 128},
                    Variant{false, 16, 64, 2, 256}, Variant{false, 32, 64, 2, 256},
                    Variant{false, 32, 32, 3, 256}, Variant{true, 16, 64, 2, 128},
                    Variant{true, 16, 64, 2, 256},
                    // 64 heads on eight warps (O's rows split over two warps,
                    // its columns over four): 128 heads read the cache twice,
                    // not eight times.
                    Variant{false, 64, 32, 2, 256}, Variant{false, 64, 64, 2, 256}}) {
    examples::MlaDecodeConfig c = examples::MlaDecodeConfig::ForTarget(target);
    c.heads = v.heads, c.bn = v.bn, c.stages = v.stages, c.threads = v.threads;
    c.oneToken = v.one;
    std::string name = absl::StrCat(v.one ? "mla_decode_one__" : "mla_decode__", "h", v.heads, "_",
                                    v.bn, "_s", v.stages, "_t", v.threads);
    if (!Add(bundle, examples::MlaDecode(c, name), target)) return false;
  }
  return true;
}

/// Tuning variants of the examples, the bf16 GEMM, the fused epilogues and
/// the softmax shapes the issues measure beside the defaults.
bool AddVariants(runtime::KernelBundle& bundle, const std::string& target) {
  struct Knobs {
    int64_t block;
    int threads;
  };
  for (Knobs k : {Knobs{512, 128}}) {
    std::string name = absl::StrCat("vector_add__b", k.block, "_t", k.threads);
    if (!Add(bundle, examples::VectorAdd(Dim::Dynamic("N"), k.block, k.threads, name), target))
      return false;
  }
  struct GemmKnobs {
    int64_t bm, bn, bk;
    int stages, threads;
  };
  // Earlier sweeps (RESULTS.md, runs 5 and 6) covered 64-wide K tiles, 256
  // threads and 128 x 256 tiles; the closest rival of the default remains.
  for (GemmKnobs k : {GemmKnobs{128, 128, 32, 3, 128}, GemmKnobs{128, 256, 32, 3, 256},
                      GemmKnobs{128, 128, 64, 3, 128}}) {
    examples::GemmConfig config;
    config.bm = k.bm, config.bn = k.bn, config.bk = k.bk;
    config.stages = k.stages, config.threads = k.threads;
    config.group = 0;  // plain raster order, to compare with the default
    std::string name = absl::StrCat("gemm_f16__", k.bm, "x", k.bn, "x", k.bk, "_s", k.stages,
                                    "_t", k.threads);
    if (!Add(bundle, examples::GemmDynamic(config, name), target)) return false;
  }
  // A schedule's GEMMs (f16, bf16) and, with `gelu`, its fused GEMM, each
  // named "<kernel>__<suffix>".
  auto addSchedule = [&](examples::GemmConfig config, const std::string& suffix, bool gelu) {
    for (DType dtype : {f16, bf16}) {
      config.dtype = dtype;
      std::string name = absl::StrCat(dtype == f16 ? "gemm_f16__" : "gemm_bf16__", suffix);
      if (!Add(bundle, examples::GemmDynamic(config, name), target)) return false;
    }
    config.dtype = f16;
    return !gelu ||
           Add(bundle,
               examples::GemmBiasGelu(Dim::Dynamic("M"), Dim::Dynamic("N", 8),
                                      Dim::Dynamic("K", 8), config, /*tanhForm=*/true,
                                      "gemm_bias_gelu_f16__" + suffix),
               target);
  };
  // sm_80: eight warps of 64 x 64 (256 x 128 and 128 x 256 tiles) beside
  // the default's four; 64 deep (three stages, 144 KiB: A's copies whole
  // 128-byte lines, RESULTS.md run 109) and 32 deep.
  if (target == "sm_80") {
    for (GemmKnobs k : {GemmKnobs{256, 128, 32, 3, 256}, GemmKnobs{128, 256, 32, 4, 256},
                        GemmKnobs{256, 128, 64, 3, 256}, GemmKnobs{128, 256, 64, 3, 256}}) {
      examples::GemmConfig config = examples::GemmConfig::ForTarget(target);
      config.bm = k.bm, config.bn = k.bn, config.bk = k.bk;
      config.stages = k.stages, config.threads = k.threads;
      std::string name = absl::StrCat("gemm_f16__", k.bm, "x", k.bn, "x", k.bk, "_s", k.stages,
                                      "_t", k.threads, "_g8");
      if (!Add(bundle, examples::GemmDynamic(config, name), target)) return false;
    }
    // Persistent and stream-K on the default tile (RESULTS.md runs 132-134:
    // stream-K balances the last wave, +2% at 4096^3, +5% at 8192^3), in f16
    // and bf16, the fused GEMM on stream-K, and stream-K in other raster
    // groups.
    examples::GemmConfig persistent = examples::GemmConfig::ForTarget(target);
    persistent.persistent = true;
    if (!Add(bundle, examples::GemmDynamic(persistent, "gemm_f16__persistent"), target))
      return false;
    examples::GemmConfig streamK = persistent;
    streamK.streamK = true;
    if (!addSchedule(streamK, "streamk", true)) return false;
    // The edge loop (KernelBuilder::EdgeLoop) on stream-K and the grid
    // launch (RESULTS.md runs 146-148: edges up to 11% faster, 2-3% slower
    // without edges).
    examples::GemmConfig edge = streamK;
    edge.edgeLoop = true;
    if (!addSchedule(edge, "streamk_edge", false)) return false;
    edge.persistent = edge.streamK = false;
    if (!addSchedule(edge, "edge", false)) return false;
    for (int64_t group : {4, 16}) {
      examples::GemmConfig grouped = streamK;
      grouped.group = group;
      if (!Add(bundle,
               examples::GemmDynamic(grouped, absl::StrCat("gemm_f16__streamk_group", group)),
               target))
        return false;
    }
  }
  if (target == "sm_90a") {
    // A tile beside the default 128 x 256: 256 x 128 on four consumer
    // warpgroups, in f16 and bf16 (RESULTS.md runs 20, 25: ahead at some
    // shapes, behind at others; 128 x 192, 192 x 128 and 64-row tiles were
    // slower), and the fused GEMM on it (the tuner's pick for the plain GEMM
    // at 8192^3, run 104).
    for (GemmKnobs k : {GemmKnobs{256, 128, 64, 4, 512}}) {
      examples::GemmConfig config = examples::GemmConfig::ForTarget(target);
      config.bm = k.bm, config.bn = k.bn, config.bk = k.bk;
      config.stages = k.stages, config.threads = k.threads;
      if (!addSchedule(config,
                       absl::StrCat(k.bm, "x", k.bn, "x", k.bk, "_s", k.stages, "_t", k.threads),
                       true))
        return false;
    }
    // Narrow tiles launched over the grid, eight stages deep, for skinny
    // products (M of 16 to 256, large N and K: decode's projections), where
    // the default tile leaves most SMs idle and B streams once from memory.
    for (GemmKnobs k : {GemmKnobs{128, 64, 64, 8, 256}, GemmKnobs{64, 128, 64, 8, 128},
                        GemmKnobs{64, 64, 64, 8, 128}, GemmKnobs{64, 64, 64, 12, 128},
                        GemmKnobs{64, 128, 64, 9, 128}, GemmKnobs{64, 64, 128, 6, 128},
                        GemmKnobs{128, 64, 128, 4, 256}}) {
      examples::GemmConfig config = examples::GemmConfig::ForTarget(target);
      config.bm = k.bm, config.bn = k.bn, config.bk = k.bk;
      config.stages = k.stages, config.threads = k.threads, config.persistent = false;
      std::string suffix =
          absl::StrCat(k.bm, "x", k.bn, "x", k.bk, "_s", k.stages, "_t", k.threads, "_grid");
      if (!addSchedule(config, suffix, false)) return false;
      // In clusters that multicast the largest tile (A's, which every block
      // of a 128-row product reads; B's for 64-row tiles): a share of the
      // L2 traffic that narrow tiles multiply.
      if (k.stages != 8) continue;
      config.multicast = true;
      for (int64_t blocks : {2, 4}) {
        config.multicastBlocks = blocks;
        if (!addSchedule(config, absl::StrCat(suffix, "_mc", blocks), false)) return false;
      }
    }
    // 128 x 192 tiles (B in three panels), persistent, alone and in clusters
    // of two (one block loads one panel of B, the other two): for shapes
    // whose 128 x 256 tiles leave a partial last wave (3000 x 5000 x 4000:
    // 480 tiles, 3.64 waves; 648 of 128 x 192, 4.91).
    for (int stages : {4, 5}) {
      examples::GemmConfig narrow = examples::GemmConfig::ForTarget(target);
      narrow.bn = 192, narrow.stages = stages;
      std::string name = absl::StrCat("128x192x64_s", stages);
      if (!addSchedule(narrow, name, false)) return false;
      narrow.multicast = true;
      if (!addSchedule(narrow, name + "_mc", false)) return false;
    }
    // The ping-pong schedule: 128 x 128 tiles, one consumer warpgroup each
    // (two m64n128 wgmmas per k-step), two tiles per block taking turns.
    if (!addSchedule(examples::GemmConfig::PingPongForTarget(target), "pingpong", true))
      return false;
    // The default tile launched over the whole grid (not persistent), as
    // before run 29.
    examples::GemmConfig grid = examples::GemmConfig::ForTarget(target);
    grid.persistent = false;
    if (!addSchedule(grid, "grid", true)) return false;
    // The grid launch in clusters of two sharing B's tiles (multicast).
    examples::GemmConfig gridMulticast = grid;
    gridMulticast.multicast = true;
    if (!addSchedule(gridMulticast, "grid_mc", true)) return false;
    // The persistent default in clusters of two (tiles t and t ^ 1 share
    // B's tiles), as cuBLAS's kernels at 4096^3 and 8192^3 run (run 63).
    examples::GemmConfig multicast = examples::GemmConfig::ForTarget(target);
    multicast.multicast = true;
    if (!addSchedule(multicast, "mc", true)) return false;
    // Clusters of four (tiles t ^ j, j < 4, share B's tiles; each block
    // loads one of its four panels): a quarter of B's L2 traffic, for shapes
    // where B's copies limit (a row pitch off the 32-byte sectors, run 143).
    examples::GemmConfig multicast4 = multicast;
    multicast4.multicastBlocks = 4;
    if (!addSchedule(multicast4, "mc4", true)) return false;
    multicast4.persistent = false;
    if (!addSchedule(multicast4, "grid_mc4", false)) return false;
    // Stream-K: the default tile, persistent, the last partial wave split
    // along K over all blocks.
    examples::GemmConfig streamK = examples::GemmConfig::ForTarget(target);
    streamK.streamK = true;
    if (!addSchedule(streamK, "streamk", true)) return false;
    // Stream-K in clusters of two (whole tiles multicast B) and of four.
    examples::GemmConfig streamKMulticast = streamK;
    streamKMulticast.multicast = true;
    if (!addSchedule(streamKMulticast, "streamk_mc", true)) return false;
    streamKMulticast.multicastBlocks = 4;
    if (!addSchedule(streamKMulticast, "streamk_mc4", false)) return false;
    // Stream-K on the 256 x 128 tile (four consumer warpgroups): a tuning
    // candidate for shapes whose last wave of that tile is partial.
    examples::GemmConfig tallStreamK = streamK;
    tallStreamK.bm = 256, tallStreamK.bn = 128, tallStreamK.threads = 512;
    if (!addSchedule(tallStreamK, "256x128x64_s4_t512_streamk", false)) return false;
  }
  // The fused GEMM through LLVM's O3 pipeline, against the kernel pipeline
  // the compiler runs by default (optLevel 2); --ab does the same for the GEMM.
  examples::GemmConfig defaults = examples::GemmConfig::ForTarget(target);
  if (!Add(bundle,
           examples::GemmBiasGelu(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                                  defaults, /*tanhForm=*/true, "gemm_bias_gelu_f16__o3"),
           target, 3))
    return false;
  examples::GemmConfig bf16Config = examples::GemmConfig::ForTarget(target);
  bf16Config.dtype = bf16;
  if (!Add(bundle, examples::GemmDynamic(bf16Config, "gemm_bf16"), target)) return false;
  if (target == "sm_90a" && !AddDtypeGemmVariants(bundle, target)) return false;
  if (target == "sm_90a" && !AddSplitKVariants(bundle, target)) return false;
  if (target == "sm_90a" && !AddW4A16Variants(bundle, target)) return false;
  if (target == "sm_90a" && !AddGemvW4A16Variants(bundle, target)) return false;
  if (target == "sm_90a" && !AddFlashDecodingVariants(bundle, target)) return false;
  if (target == "sm_90a" && !AddMlaDecodeVariants(bundle, target)) return false;
  if ((target == "sm_90a" || target == "sm_80") && !AddAttentionVariants(bundle, target))
    return false;
  // The data types' GEMMs beside torch._int_mm and torch.matmul with TF32
  // (fp8_gemm, beside torch._scaled_mm, is an example: in <target>.pb).
  for (auto [name, dtype, acc, precision] :
       {std::tuple<const char*, DType, DType, Precision>{"gemm_i8", i8, i32, Precision::kIEEE},
        {"gemm_tf32", f32, f32, Precision::kTF32}}) {
    examples::GemmConfig c = examples::GemmConfig::ForType(target, dtype, acc, acc, precision);
    if (!Add(bundle,
             examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 16), c,
                            name),
             target))
      return false;
  }
  // The fused epilogues the issue measures beside tanh GELU.
  for (auto [name, epilogue] :
       {std::pair<const char*, examples::Epilogue>{"gemm_bias_gelu_erf_f16",
                                                   {examples::Activation::kGeluErf, false}},
        {"gemm_bias_gelu_f16__compact", {examples::Activation::kGeluTanh, false, true}},
        {"gemm_bias_silu_f16", {examples::Activation::kSilu, false}},
        {"gemm_bias_residual_f16", {examples::Activation::kNone, true}}}) {
    if (!Add(bundle,
             examples::GemmEpilogue(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                                    examples::GemmConfig::ForTarget(target), epilogue, name),
             target))
      return false;
  }
  for (auto [name, n, dtype, threads] :
       {std::tuple<const char*, int64_t, DType, int>{"softmax_f32", 8192, f32, 256},
        {"softmax_f16_1000", 1000, f16, 64},
        {"softmax_f16_1000__t128", 1000, f16, 128}}) {
    if (!Add(bundle, examples::Softmax(Dim::Dynamic("M"), n, dtype, 1, threads, name), target))
      return false;
  }
  // Rows of a vocabulary's length: the online softmax in chunks of 16000 on
  // 256 threads (RESULTS.md runs 122-127); on 512 threads, and the whole row
  // in registers, as candidates.
  if (!Add(bundle,
           examples::SoftmaxOnline(Dim::Dynamic("M"), 32000, f16, 16000, 256, "softmax_f16_32000"),
           target) ||
      !Add(bundle,
           examples::SoftmaxOnline(Dim::Dynamic("M"), 32000, f16, 16000, 512,
                                   "softmax_f16_32000__t512"),
           target) ||
      !Add(bundle,
           examples::Softmax(Dim::Dynamic("M"), 32000, f16, 1, 512, "softmax_f16_32000__whole_row"),
           target))
    return false;
  return true;
}

/// A/B of LLVM pipelines on the default GEMM, in the order A B C C B A so
/// that drift over the run (clocks, temperature) shows: LLVM's O3, the
/// kernel pipeline (the default) and the kernel pipeline with loop rotation
/// and unrolling (run 17: no gain on sm_90a, 8% slower on sm_80).
bool AddPipelineAB(runtime::KernelBundle& bundle, const std::string& target) {
  static constexpr const char* kUnroll =
      "always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,loop-mssa(licm),"
      "loop(loop-rotate),loop-unroll<O3>,gvn,instcombine<no-verify-fixpoint>,infer-alignment,"
      "load-store-vectorizer,adce,simplifycfg)";
  struct Variant {
    const char* name;
    int optLevel;
    const char* pipeline;  // nullptr: the compiler's own
  };
  const Variant variants[] = {{"o3", 3, nullptr}, {"kernel", 2, nullptr},
                              {"kernel_unroll", 2, kUnroll}};
  examples::GemmConfig defaults = examples::GemmConfig::ForTarget(target);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      const Variant& v = variants[round == 0 ? i : 2 - i];
      if (v.pipeline)
        setenv("TESSERA_LLVM_PIPELINE", v.pipeline, 1);
      else
        unsetenv("TESSERA_LLVM_PIPELINE");
      std::string name = absl::StrCat("gemm_f16__", v.name, "_", round == 0 ? "a" : "b");
      bool ok = Add(bundle, examples::GemmDynamic(defaults, name), target, v.optLevel);
      unsetenv("TESSERA_LLVM_PIPELINE");
      if (!ok) return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  std::string target = "sm_90a", out;
  bool probe = false, ab = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--target=", 9) == 0)
      target = argv[i] + 9;
    else if (std::strcmp(argv[i], "--probe") == 0)
      probe = true;
    else if (std::strcmp(argv[i], "--ab") == 0)
      ab = true;
    else
      out = argv[i];
  }
  if (out.empty()) {
    std::fprintf(stderr, "usage: variants [--probe | --ab] [--target=sm_90a] OUT.pb\n");
    return 2;
  }
  runtime::KernelBundle bundle;
  bool ok = probe ? AddProbes(bundle, target)
            : ab  ? AddPipelineAB(bundle, target)
                  : AddVariants(bundle, target);
  if (!ok) return 1;
  if (absl::Status s = runtime::WriteBundle(bundle, out); !s.ok()) {
    std::fprintf(stderr, "variants: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("variants: %d kernels for %s -> %s\n", bundle.kernels_size(), target.c_str(),
              out.c_str());
  return 0;
}
