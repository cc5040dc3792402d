//===- tessera-opt.cpp - mlir-opt for the tile dialect --------------------===//
//
// This file implements tessera-opt: the MLIR optimizer driver with the tile
// dialect, the dialects it lowers through, Tessera's passes and the upstream
// canonicalizer and CSE registered. FileCheck tests drive passes through it.
//
//===----------------------------------------------------------------------===//

#include "driver/Compiler.h"
#include "backends/common/Dialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tessera::registerTesseraDialects(registry);
  tessera::compiler::registerTesseraPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessera optimizer driver\n", registry));
}
