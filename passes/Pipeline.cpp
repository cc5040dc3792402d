//===- Pipeline.cpp - The tile-level pass pipeline ------------------------===//
//
// This file assembles the architecture-independent part of the pipeline.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace tessera {

void addTilePipeline(mlir::OpPassManager &pm) {
  pm.addPass(createTileLayoutInference());
  pm.addPass(createTilePlanSharedMemory());
  pm.addPass(createTileLowerToGPU());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

} // namespace tessera
