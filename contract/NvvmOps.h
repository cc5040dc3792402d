//===- NvvmOps.h - Typed NVVM ops for the kernel lowering -------*- C++ -*-===//
//
// This file declares the builders of the instructions the kernel lowering
// and the atoms' lowerings emit as typed NVVM ops (MLIR 22's NVVM dialect)
// rather than inline PTX. They live in one file so that the costly
// NVVMDialect.h is parsed once, not by every file of the lowering. Each
// builder names the PTX instruction its op prints.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_NVVMOPS_H
#define TESSERA_CONTRACT_NVVMOPS_H

#include <cstdint>

#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace tessera::lowering {

/// Adds the NVVM dialect to `registry` (a dependent dialect of the passes
/// that build these ops).
void insertNvvmDialect(mlir::DialectRegistry &registry);

/// `cp.async.commit_group;` (PTX ISA, cp.async.commit_group).
void cpAsyncCommitGroup(mlir::OpBuilder &b, mlir::Location loc);
/// `cp.async.wait_group n;` (PTX ISA, cp.async.wait_group).
void cpAsyncWaitGroup(mlir::OpBuilder &b, mlir::Location loc, int64_t n);
/// `fence.proxy.async.shared::cta;` (PTX ISA, membar/fence).
void fenceProxyAsyncShared(mlir::OpBuilder &b, mlir::Location loc);
/// `wgmma.wait_group.sync.aligned n;` (PTX ISA, wgmma.wait_group).
void wgmmaWaitGroup(mlir::OpBuilder &b, mlir::Location loc, int64_t n);
/// `setmaxnreg.{inc,dec}.sync.aligned.u32 count;` (PTX ISA, setmaxnreg).
void setMaxRegisters(mlir::OpBuilder &b, mlir::Location loc, int64_t count, bool increase);
/// `cp.async.bulk.commit_group;` (PTX ISA, cp.async.bulk.commit_group).
void bulkCommitGroup(mlir::OpBuilder &b, mlir::Location loc);
/// `cp.async.bulk.wait_group{.read} n;` (PTX ISA, cp.async.bulk.wait_group):
/// with `read`, until the groups' sources have been read.
void bulkWaitGroup(mlir::OpBuilder &b, mlir::Location loc, int64_t n, bool read);
/// griddepcontrol.wait (`wait`) or griddepcontrol.launch_dependents.
void gridDependencyControl(mlir::OpBuilder &b, mlir::Location loc, bool wait);
/// `fence.mbarrier_init.release.cluster;` (PTX ISA, membar/fence).
void fenceMbarrierInit(mlir::OpBuilder &b, mlir::Location loc);
/// Waits until the phase of parity `parity` (i32) of the mbarrier at 32-bit
/// shared address `barrier` completes: a loop on
/// `mbarrier.try_wait.parity.shared::cta.b64` (PTX ISA, mbarrier.try_wait).
/// `clusterScope`: the wait acquires at cluster scope (`.acquire.cluster`),
/// for arrivals released by another block of the cluster.
void mbarrierWaitParity(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                        mlir::Value parity, bool clusterScope = false);
/// `mapa.shared::cluster.u32`: the shared::cluster address (i32) of the
/// location at 32-bit shared address `address` in the cluster's block of
/// rank `rank` (i32) (PTX ISA, mapa).
mlir::Value mapaShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value address,
                       mlir::Value rank);
/// `mov.u32 %r, %cluster_ctarank;`: the block's rank in its cluster, i32
/// (PTX ISA, special registers: %cluster_ctarank).
mlir::Value clusterCtaRank(mlir::OpBuilder &b, mlir::Location loc);
/// `barrier.cluster.arrive.aligned;` and `barrier.cluster.wait.aligned;`
/// (PTX ISA, barrier.cluster): without a qualifier, arrive has .release
/// and wait .acquire semantics.
void clusterArrive(mlir::OpBuilder &b, mlir::Location loc);
void clusterWait(mlir::OpBuilder &b, mlir::Location loc);
/// `bar.sync id, threads;` (PTX ISA, bar/barrier: bar.sync is
/// barrier.sync.aligned): named barrier `id` (an i32 value, or a constant)
/// over `threads` threads.
void namedBarrierSync(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id, int64_t threads);
void namedBarrierSync(mlir::OpBuilder &b, mlir::Location loc, int64_t id, int64_t threads);
/// `membar.gl;` (PTX ISA, membar/fence): orders this thread's memory
/// accesses at GPU scope.
void membarGpu(mlir::OpBuilder &b, mlir::Location loc);
/// `dp4a.{u32,s32}.{u32,s32} d, a, b, c;` (PTX ISA, integer arithmetic:
/// dp4a, sm_61+): c plus the dot product of the four bytes of `a` and of
/// `bVec` (vector<4xi8>, byte 0 first), each sign- or zero-extended as
/// `signedA` / `signedB` say; i32, wrapping.
mlir::Value dp4a(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a, bool signedA,
                 mlir::Value bVec, bool signedB, mlir::Value c);
/// `mma.sync.aligned.m8n8k4.{row,col}.{row,col}.f32.f16.f16.f32` (PTX ISA,
/// mma): A and B two i32 (f16 pairs) each, C eight f32; returns D. With C
/// four vector<2xf16> (its own fragment layout), the `.f16.f16.f16.f16` form.
llvm::SmallVector<mlir::Value> mmaM8n8k4(mlir::OpBuilder &b, mlir::Location loc, bool colA,
                                         bool colB, mlir::ValueRange a, mlir::ValueRange bRegs,
                                         mlir::ValueRange c);

/// `mma.sync.aligned.mMnNkK.row.col.{acc}.{a}.{b}.{acc}` (PTX ISA, mma) of
/// the types `a` and `acc` name ("f16", "bf16", "tf32", "s8", "u8", "f64";
/// "f32", "f16", "s32", "f64"), B of A's type: A and B as the b32 registers
/// the PTX ISA lists (f64: one f64 each), C one value per accumulator
/// element (f16 packed in pairs here); returns D likewise. s8 and u8
/// accumulate with wrapping (as the SIMT atom's i32 sums).
llvm::SmallVector<mlir::Value> mmaSync(mlir::OpBuilder &b, mlir::Location loc, int64_t m,
                                       int64_t n, int64_t k, llvm::StringRef a,
                                       llvm::StringRef acc, mlir::ValueRange aRegs,
                                       mlir::ValueRange bRegs, mlir::ValueRange c);

} // namespace tessera::lowering

#endif // TESSERA_CONTRACT_NVVMOPS_H
