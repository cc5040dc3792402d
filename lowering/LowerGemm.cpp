//===- LowerGemm.cpp - tile.gemm in tile-lower-to-gpu --------------------===//
//
// tile.gemm is lowered by its atom: the selected atom's lowering
// (MmaAtom::lowering) lives in the backend that introduced the instruction
// and emits the gemm through the services this kernel lowering lends it
// (GemmLoweringContext, contract/AtomLowering.h).
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

namespace tessera::lowering {

LogicalResult KernelLowering::lowerGemm(GemmOp gemm) {
  FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
  if (failed(atom))
    return failure();
  if (!atom->lowering)
    return gemm.emitOpError() << "atom " << atom->name << " of backend " << backend_.getName()
                              << " has no lowering (MmaAtom::lowering is not set)";
  return atom->lowering->lowerGemm(*this, gemm, *atom);
}

void KernelLowering::fenceRegisters(Value fragment, int64_t regs) {
  const BufferInfo &info = buffers_[fragment];
  SmallVector<Value> values;
  for (int64_t r = 0; r < regs; ++r)
    values.push_back(memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(r)}));
  SmallVector<Value> fenced = fenceValues(b_, loc_, values);
  for (int64_t r = 0; r < regs; ++r)
    memref::StoreOp::create(b_, loc_, fenced[r], info.memref, ValueRange{cst(r)});
}

} // namespace tessera::lowering
