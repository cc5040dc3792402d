//===- tile_ir_fuzzer.cc - Fuzzes the tile dialect and the pipeline -------===//
//
// This file implements a libFuzzer target: the input is tile dialect text.
// It is parsed in a context with every Tessera dialect, verified, and
// compiled to PTX for each of the four targets (sm_60, sm_70, sm_80,
// sm_90a) through the compiler driver (driver/Compiler.h). Errors are
// expected and swallowed; a crash, an assertion, a sanitizer report or an
// LLVM fatal error (which exits) is a finding.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/common/Dialects.h"
#include "driver/Compiler.h"
#include "driver/SourceChecks.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace {

/// Inputs past this size are skipped: they only slow the search down (the
/// seeds are a few KiB), and libFuzzer's -max_len keeps to it too.
constexpr size_t kMaxInputBytes = 16 * 1024;

/// The targets every input is compiled for, one backend family each.
constexpr const char *kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    tessera::registerTesseraDialects(*r);
    return r;
  }();
  return *registry;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  // Diagnostics are the expected outcome for most inputs: swallow them.
  mlir::ScopedDiagnosticHandler swallow(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });

  // What MLIR's parser cannot read safely, tessera-compile refuses first.
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (tessera::compiler::findUnsafeSource(text))
    return 0;
  // A null-terminated copy, as the lexer expects.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.mlir"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;

  for (const char *target : kTargets) {
    mlir::OwningOpRef<mlir::ModuleOp> copy(module->clone());
    tessera::compiler::CompileOptions options;
    options.target = target;
    (void)tessera::compiler::compileModule(*copy, options);
  }
  return 0;
}
