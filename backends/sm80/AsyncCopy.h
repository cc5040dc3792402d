//===- AsyncCopy.h - cp.async copies of pipelined loops ---------*- C++ -*-===//
//
// The tensor-to-shared copies sm80's cp.async strategy issues ahead of the
// compute (AsyncCopy.cpp), and the analyses that bound them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM80_ASYNCCOPY_H
#define TESSERA_BACKENDS_SM80_ASYNCCOPY_H

#include "contract/PipelineLoweringContext.h"

namespace tessera::sm80 {

/// How a cp.async copy's chunks are bounded (lowerAsyncCopy).
enum class CopyBounds {
  /// The caller proved the tile inside the tensor (tileInBounds) and
  /// `valid`: 16 bytes a chunk, no checks.
  kNone,
  /// Every chunk checked against every dimension and `valid`.
  kAll,
  /// The caller proved the tile inside the tensor along the `varying`
  /// dimensions (those that move with the loop's iteration) and `valid`;
  /// along the others (a tile on the M or N edge) each chunk's byte count
  /// is the same every iteration (precomputeEdgeBytes computes it before
  /// the edge loop).
  kInvariant,
};

/// The cp.async copies of one kernel's lowering.
class AsyncCopies {
public:
  explicit AsyncCopies(lowering::PipelineLoweringContext &kernel)
      : kl(kernel), b(kernel.builder()), loc(kernel.loc()) {}

  /// A tensor -> shared copy issued ahead with cp.async (zero-filled when
  /// `valid` is false or past the tensor), bounded as `bounds` says;
  /// `varying` marks the source dimensions that move with the iteration
  /// (kInvariant only).
  void lowerAsyncCopy(tile::CopyOp copy, mlir::Value valid, CopyBounds bounds,
                      llvm::ArrayRef<bool> varying = {});
  /// Whether the source tile of `copy` lies entirely inside its tensor
  /// (with `only`: along the dimensions it marks).
  mlir::Value tileInBounds(tile::CopyOp copy, llvm::ArrayRef<bool> only = {});
  /// Which source dimensions of `copy` (in pipelined loop `loop`) move with
  /// the loop's induction variable.
  llvm::SmallVector<bool> varyingDims(tile::PipelinedOp loop, tile::CopyOp copy);
  /// The bytes of the chunk at `coords` (`vector` elements) inside the
  /// tensor along the dimensions `varying` does not mark (every dimension
  /// when it is empty; the caller knows the others inside), 0 where `also`
  /// (if given) is false: 0 or the chunk's size, or part of it at the last
  /// dimension's end.
  mlir::Value chunkBytes(const lowering::TensorInfo &tensor, llvm::ArrayRef<mlir::Value> coords,
                         int64_t vector, llvm::ArrayRef<bool> varying, mlir::Value also = {});
  /// Computes chunkBytes for each chunk of `copy` here (before an edge
  /// loop), for lowerAsyncCopy's kInvariant copies to use, until
  /// forgetEdgeBytes.
  void precomputeEdgeBytes(tile::CopyOp copy, llvm::ArrayRef<bool> varying);
  void forgetEdgeBytes() { edgeBytes_.clear(); }

private:
  lowering::PipelineLoweringContext &kl;
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// precomputeEdgeBytes's counts: (copy, chunk's first slot) -> i32.
  llvm::DenseMap<std::pair<mlir::Operation *, int64_t>, mlir::Value> edgeBytes_;
};

} // namespace tessera::sm80

#endif // TESSERA_BACKENDS_SM80_ASYNCCOPY_H
