//===- NVVMLowering.h - The common tail: gpu level to NVVM ------*- C++ -*-===//
//
// This file declares the lowering every backend shares from the gpu, scf,
// arith, math and memref dialects to the LLVM and NVVM dialects, and the
// emission of PTX from the result through LLVM's NVPTX backend, in process.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_NVVMLOWERING_H
#define TESSERA_BACKENDS_COMMON_NVVMLOWERING_H

#include <memory>
#include <string>

#include "contract/Backend.h"
#include "mlir/Support/LLVM.h"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class ModuleOp;
class Pass;
} // namespace mlir

namespace tessera {

/// Appends scf-to-cf, tessera-convert-to-nvvm and reconcile-unrealized-casts:
/// the tail most backends own unchanged.
void addCommonNVVMLowering(mlir::OpPassManager &pm, const ComputeCapability &cc);

/// The conversion of a gpu.module's kernels to the LLVM and NVVM dialects
/// (`tessera-convert-to-nvvm`), after scf-to-cf.
std::unique_ptr<mlir::Pass> createConvertToNVVMPass();
void registerConvertToNVVMPass();

/// Options of the LLVM IR and PTX stages.
struct PtxOptions {
  /// "sm_80", "sm_90a": the NVPTX CPU name.
  std::string chip;
  /// LLVM target features, e.g. "+ptx80".
  std::string features;
  /// libdevice.10.bc, linked when the module calls __nv_* functions.
  std::string libdevicePath;
  /// LLVM optimization level: 2 (default) runs the kernel pipeline (scalar
  /// cleanups, CSE, LICM; ptxas does the rest), 1 and 3 LLVM's O1 and O3
  /// pipelines, 0 none.
  int optLevel = 2;
  /// At optLevel 2: an LLVM pass pipeline (opt's -passes syntax) in place of
  /// the kernel pipeline; empty for the kernel pipeline.
  std::string llvmPipeline;
  /// Fuse f32 multiplies and adds into fma.rn.f32 (part of fast math: one
  /// rounding instead of two); false keeps mul.rn/add.rn apart.
  bool contractFloatOps = false;
  /// Runs LLVM's IR verifier on the translated module (with --verify-each;
  /// otherwise the lowered MLIR module is verified and its translation
  /// trusted, as clang trusts its own IR generation in release builds).
  bool verifyLLVMIR = false;
};

/// Translates the single gpu.module inside `module` (already in the LLVM and
/// NVVM dialects) to LLVM IR, links libdevice if needed and optimizes it.
/// Errors are reported as diagnostics on `module`.
mlir::FailureOr<std::unique_ptr<llvm::Module>> translateToOptimizedLLVMIR(
    mlir::ModuleOp module, llvm::LLVMContext &context, const PtxOptions &options);

/// Emits PTX for an optimized LLVM module.
mlir::FailureOr<std::string> emitPtx(llvm::Module &module, const PtxOptions &options,
                               std::string &error);

} // namespace tessera

#endif // TESSERA_BACKENDS_COMMON_NVVMLOWERING_H
