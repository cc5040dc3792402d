//===- tessera-opt.cpp - mlir-opt for the tile dialect --------------------===//
//
// This file implements tessera-opt: the MLIR optimizer driver with the tile
// dialect, the dialects it lowers through, Tessera's passes and the upstream
// canonicalizer and CSE registered. FileCheck tests drive passes through it.
// Input MLIR's parser cannot read safely is refused first (SourceChecks.h).
//
//===----------------------------------------------------------------------===//

#include "backends/common/Dialects.h"
#include "driver/Compiler.h"
#include "driver/SourceChecks.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tessera::registerTesseraDialects(registry);
  tessera::compiler::registerTesseraPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "Tessera optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "tessera-opt: " << error << "\n";
    return 1;
  }
  // What MLIR's parser would crash on or recurse out of its stack over is
  // refused first, with its location (as tessera-compile does).
  if (std::optional<tessera::compiler::UnsafeSource> unsafe =
          tessera::compiler::findUnsafeSource(input->getBuffer())) {
    tessera::compiler::printUnsafeSource(llvm::errs(), input->getBufferIdentifier(),
                                         input->getBuffer(), *unsafe);
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "tessera-opt: " << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
