//===- SharedMemoryLayout.h - Where shared buffers go -----------*- C++ -*-===//
//
// The placement of a kernel's shared buffers, shared by the passes that plan
// shared memory: tile-plan-pipelines places them for each stage count it
// weighs, tile-plan-shared-memory for the stages decided.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PASSES_SHAREDMEMORYLAYOUT_H
#define TESSERA_PASSES_SHAREDMEMORYLAYOUT_H

#include <cstdint>
#include <utility>

#include "ir/TileDialect.h"
#include "llvm/ADT/SmallVector.h"

namespace tessera {

/// Shared buffers with the bytes each takes (all its stages).
using SharedBufferList = llvm::SmallVectorImpl<std::pair<tile::AllocSharedOp, int64_t>>;

/// Cross-warp reductions combine the warps' partial results through a
/// small shared buffer: one f32 (f64 for an f64 reduction) per warp and
/// result element. A reduction into a row slice needs it only where warps
/// split the columns (warps_n > 1). Gives each reduction of `kernel` that
/// needs one and has none its buffer.
void addReductionScratch(tile::KernelOp kernel);

/// Gives every shared buffer of `kernel` its offset (first fit, 128-byte
/// aligned, 1024 for swizzled buffers) for the stage counts the buffers
/// carry, records the total in the kernel's tile.shared_memory_bytes and
/// returns it; `placed`, when given, gets each buffer with its bytes.
/// Buffers whose live ranges do not overlap share space: the lowering puts
/// a barrier before every operation that touches shared memory, so a
/// buffer's first writer waits until the previous tenant's last reader is
/// done.
int64_t placeSharedBuffers(tile::KernelOp kernel, SharedBufferList *placed = nullptr);

} // namespace tessera

#endif // TESSERA_PASSES_SHAREDMEMORYLAYOUT_H
