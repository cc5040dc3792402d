//===- Dialects.h - Every dialect and interface Tessera uses ----*- C++ -*-===//
//
// This file declares the one place that registers the dialects, the
// conversion-to-LLVM interfaces and the LLVM IR translations the compiler
// needs, so tools and libraries agree on them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_DIALECTS_H
#define TESSERA_BACKENDS_COMMON_DIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tessera {

/// Registers the tile dialect, the upstream dialects it lowers through
/// (gpu, scf, cf, arith, math, memref, nvvm, llvm), their ConvertToLLVM
/// interfaces and their translations to LLVM IR.
void registerTesseraDialects(mlir::DialectRegistry &registry);

} // namespace tessera

#endif // TESSERA_BACKENDS_COMMON_DIALECTS_H
