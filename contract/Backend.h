//===- Backend.h - The backend plugin contract ------------------*- C++ -*-===//
//
// This file declares what a backend plugin is: static capability data for
// the compute capabilities it serves, the code it owns (its MMA atoms'
// lowering, contract/AtomLowering.h; its pipelining strategies,
// contract/PipelineStrategy.h; the tail of the lowering pipeline), and the
// conformance cases it skips. Shared passes
// ask a backend questions through this interface and never test its name or
// number. Adding an architecture means adding one folder under backends/ and
// one line in driver/Registration.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_BACKEND_H
#define TESSERA_CONTRACT_BACKEND_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpPassManager;
class Operation;
} // namespace mlir

namespace tessera {

namespace lowering {
class MmaAtomLowering;
} // namespace lowering
class PipelineStrategy;

/// A compute capability such as 8.0 or 9.0a. `sm_90a` is not `sm_90`: the
/// architecture-specific variant has features (wgmma, setmaxnreg) that run on
/// exactly that architecture and no later one.
struct ComputeCapability {
  int major = 0;
  int minor = 0;
  /// True for the architecture-specific variant (the `a` suffix).
  bool archSpecific = false;

  /// Parses "sm_80", "sm_90a" (also "80", "90a"); std::nullopt otherwise.
  static std::optional<ComputeCapability> parse(llvm::StringRef text);
  /// "sm_80", "sm_90a".
  std::string str() const;
  /// The numeric value, e.g. 86 for 8.6.
  int value() const { return major * 10 + minor; }
  /// True when code built for this capability may use everything `other` has.
  bool isAtLeast(const ComputeCapability &other) const;
  bool operator==(const ComputeCapability &other) const {
    return major == other.major && minor == other.minor && archSpecific == other.archSpecific;
  }
};

/// Static capability data of one architecture, a table per family.
struct TargetCapabilities {
  /// Shared memory a block may use, opting in above 48 KiB where allowed (bytes).
  int64_t sharedMemoryPerBlock = 48 * 1024;
  /// Shared memory of one multiprocessor (bytes).
  int64_t sharedMemoryPerSM = 64 * 1024;
  /// 32-bit registers of one multiprocessor.
  int64_t registersPerSM = 64 * 1024;
  /// Registers one thread may use.
  int64_t registersPerThread = 255;
  int64_t maxThreadsPerBlock = 1024;
  /// The widest global load or store one thread issues (bytes).
  int64_t globalVectorBytes = 16;
  /// cp.async (global to shared without registers).
  bool hasAsyncCopy = false;
  /// ldmatrix (shared to MMA fragments).
  bool hasLdmatrix = false;
  /// stmatrix (MMA fragments to shared, PTX ISA §9.7.14.5.16, sm_90+).
  bool hasStmatrix = false;
  /// cp.async.bulk.tensor (TMA).
  bool hasBulkTensorCopy = false;
  /// cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (PTX ISA §9.7.9.21, sm_89+): a
  /// saturating conversion to FP8 in one instruction.
  bool hasFp8Convert = false;
  /// red.global.add.v2.f32 / .v4.f32 (PTX ISA §9.7.13.6, sm_90+): one
  /// reduction adds 2 or 4 consecutive f32 elements.
  bool hasVectorRedF32 = false;
  /// red.global.add.noftz.f16x2 (sm_70+ here) and .bf16x2 (sm_90+): one
  /// reduction adds a pair of 16-bit floats.
  bool hasRedF16x2 = false;
  bool hasRedBf16x2 = false;
  /// mbarrier objects in shared memory.
  bool hasMbarrier = false;
  /// Thread block clusters.
  bool hasClusters = false;
  /// The scoped memory model (PTX ISA §8, sm_70+): fence.acq_rel, and
  /// ld.acquire / red.release / st.relaxed at .gpu scope. Without it,
  /// membar.gl and volatile accesses order the same.
  bool hasScopedMemoryOrder = false;
  /// wgmma.mma_async (warpgroup MMA; architecture-specific sm_90a).
  bool hasWarpgroupMma = false;
  /// tanh.approx.f32 (PTX ISA §9.7.3.22, sm_75+): math.tanh in f32 uses it
  /// (max relative error about 2^-11) instead of libdevice's tanhf.
  bool hasTanhApprox = false;
  /// griddepcontrol.wait / .launch_dependents (PTX ISA, sm_90+) and launches
  /// with programmatic stream serialization: tile.wait_prior_kernels lets a
  /// kernel start before the previous one on its stream has ended.
  bool hasGridDependencyControl = false;
  /// The stream-K schedule's cost model: the MMA FLOPs one multiprocessor
  /// does in the time one byte of a split tile's f32 partials takes to make
  /// its trip through L2 (stored by the contributing block, loaded by the
  /// finishing one) while every multiprocessor does the same. A kernel splits
  /// its last partial wave only when that saves each block more loop
  /// iterations than this many FLOPs per partial byte cost; 0 always splits.
  int64_t streamKFlopsPerPartialByte = 0;
  /// mma.sync shapes available (e.g. "m8n8k4", "m16n8k16").
  std::vector<std::string> mmaShapes;
  /// The lowest PTX ISA version that holds every instruction this backend
  /// emits for the target, as an LLVM feature ("+ptx70").
  std::string ptxFeature;
};

/// An MMA instruction atom, described as data (CuTe style: the name carries
/// the whole contract, e.g. SM80_16x8x16_F32F16F16F32_TN).
struct MmaAtom {
  /// The atom's name; `tile.gemm {atom = "..."}` forces it.
  std::string name;
  /// The shape of one instruction.
  int64_t m = 1, n = 1, k = 1;
  /// Element types of A and B it takes ("f16", "bf16", "f32", "tf32" (f32
  /// under precision tf32), "f64", "e4m3", "e5m2", "s8", "u8").
  std::vector<std::string> inputTypes;
  /// Threads that execute one instruction together (1 SIMT, 32 a warp,
  /// 128 a warpgroup).
  int64_t threads = 1;
  /// Warpgroup atoms whose N is chosen from the tile (wgmma m64nNk16): the
  /// largest N one instruction takes; N is then any multiple of `n` up to
  /// it. 0 for atoms of one fixed shape.
  int64_t maxN = 0;
  /// The tile one warp covers per instruction where it is not m x n: the
  /// four quadpairs of m8n8k4 cover 16 x 16. 0 for m x n.
  int64_t warpM = 0, warpN = 0;
  /// Operands read from shared memory through matrix descriptors by the
  /// asynchronous proxy (wgmma): writers of those buffers must fence the
  /// proxies before the instruction reads them.
  bool readsSharedAsync = false;
  /// Where the atom reads A: from shared memory (every atom's SS form), or
  /// from registers in its A-operand fragment layout (mma.sync m16n8k16,
  /// wgmma's RS form). No atom reads B from registers: a B fragment is
  /// staged through shared memory by tile-layout-inference.
  bool aFromShared = true;
  bool aFromRegisters = false;
  /// The code of the atom's family (contract/AtomLowering.h), in the folder
  /// of the backend that introduced the instruction: it emits a gemm with
  /// the atom and answers for the family's warp tiling, legality and
  /// accumulator layout. Shared passes ask it; they never name the family.
  const lowering::MmaAtomLowering *lowering = nullptr;
  /// Accumulator types it takes ("f32", "f16", "f64", "s32").
  std::vector<std::string> accumulatorTypes = {"f32"};
  /// Reads A as M x K and B as N x K only (transpose_b): 8-bit and TF32
  /// tensor-core operands are K-major (ldmatrix and wgmma transpose 16-bit
  /// elements only).
  bool kMajorOnly = false;
};

/// A conformance case a backend does not run, and why.
struct ConformanceSkip {
  std::string caseName;
  std::string reason;
};

/// A backend plugin: one per NVIDIA architecture family.
class Backend {
public:
  virtual ~Backend() = default;

  /// A short name, e.g. "sm80"; used in messages and listings only.
  virtual llvm::StringRef getName() const = 0;
  /// The compute capabilities this backend serves, e.g. 8.0, 8.6, 8.9.
  virtual std::vector<ComputeCapability> getServedCapabilities() const = 0;
  /// The capability data of one served compute capability.
  virtual const TargetCapabilities &getCapabilities(const ComputeCapability &cc) const = 0;
  /// Appends the tail of the lowering pipeline this backend owns: from the
  /// gpu/scf/arith/memref level to the LLVM and NVVM dialects. Backends that
  /// need nothing special call addCommonNVVMLowering (backends/common).
  virtual void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const = 0;
  /// MMA atoms in order of preference for `cc`; selection takes the first
  /// one legal for a gemm (lowering/AtomSelection.cpp: selectMmaAtom). Every
  /// atom carries its lowering; the last is usually the SIMT FMA atom every
  /// backend can fall back to (backends/common/MmaAtoms.h).
  virtual std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &cc) const = 0;
  /// Pipelining strategies in order of preference for `cc`
  /// (contract/PipelineStrategy.h); tile-plan-pipelines gives each
  /// tile.pipelined loop the first that can run it. The last should run any
  /// loop (the in-order strategy of backends/common).
  virtual std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &cc) const = 0;
  /// Conformance cases this backend skips, each with a reason.
  virtual std::vector<ConformanceSkip> getConformanceSkips() const { return {}; }

  /// True when this backend serves `cc` (exact major/minor; an
  /// architecture-specific request needs a backend that lists it).
  bool serves(const ComputeCapability &cc) const;
};

/// The set of registered backends.
class BackendRegistry {
public:
  /// The process-wide registry, with every backend of driver/Registration.cpp.
  static BackendRegistry &global();

  /// Adds a backend. A later backend serving the same capability wins, so a
  /// test or an out-of-tree plugin can stand in for a built-in one.
  void add(std::unique_ptr<Backend> backend);
  /// The backend serving `cc`, or nullptr.
  const Backend *lookup(const ComputeCapability &cc) const;
  /// The backend for a target name; on failure `error` says why (malformed
  /// name, or no backend serves it, listing what is served).
  const Backend *lookup(llvm::StringRef target, std::string &error) const;
  const std::vector<std::unique_ptr<Backend>> &getBackends() const { return backends_; }

private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

/// Why `atom` cannot compute a gemm with these operands, or "" if it can:
/// element type, and M, N, K multiples of the atom's shape where required.
std::string whyIllegal(const MmaAtom &atom, llvm::StringRef inputType, int64_t m, int64_t n,
                       int64_t k, int64_t threads);

/// Attributes tile-lower-to-gpu puts on a kernel's gpu.func when its launch
/// differs from the tile.kernel's: the block size (a producer warpgroup
/// added), the dynamic shared memory (mbarriers added), and the TMA tensor
/// maps it takes after its params ([param, swizzle bytes, rank, box extents
/// outermost first] per map, flattened) at the PTX param indices in kTensorMapArgsAttr
/// (passed by value as 128-byte __grid_constant__ params).
/// A module attribute asking for exact math (CompileOptions::fastMath off).
inline constexpr llvm::StringLiteral kExactMathAttr = "tile.exact_math";
inline constexpr llvm::StringLiteral kLoweredBlockThreadsAttr = "tessera.block_threads";
inline constexpr llvm::StringLiteral kLoweredSharedBytesAttr = "tessera.shared_memory_bytes";
inline constexpr llvm::StringLiteral kTensorMapsAttr = "tessera.tensor_maps";
inline constexpr llvm::StringLiteral kTensorMapArgsAttr = "tessera.tensor_map_args";
/// Blocks of the grid one launched block runs, adjacent along y (the
/// ping-pong schedule): the launch's y extent is divided by it, rounded up.
inline constexpr llvm::StringLiteral kLoweredTilesPerBlockAttr = "tessera.tiles_per_block";
/// A persistent kernel: launched with as many blocks as the device holds.
inline constexpr llvm::StringLiteral kLoweredPersistentAttr = "tessera.persistent";
/// Blocks per thread block cluster along x and y (launched with cluster
/// dimensions; the grid's x and y rounded up to multiples). Absent: 1.
inline constexpr llvm::StringLiteral kLoweredClusterXAttr = "tessera.cluster_x";
inline constexpr llvm::StringLiteral kLoweredClusterYAttr = "tessera.cluster_y";
/// A stream-K kernel: the bytes of one block's partial accumulators in the
/// workspace (a pointer param after the kernel's own, before tensor maps).
inline constexpr llvm::StringLiteral kLoweredStreamKSlotBytesAttr = "tessera.stream_k_slot_bytes";
/// A kernel that waits for the kernels before it (tile.wait_prior_kernels
/// lowered to griddepcontrol.wait): launched with programmatic stream
/// serialization.
inline constexpr llvm::StringLiteral kLoweredWaitsForPriorKernelsAttr =
    "tessera.waits_for_prior_kernels";

/// Registers the built-in backends (sm60, sm70, sm80, sm90, sm100): the one list,
/// defined by the driver (driver/Registration.cpp); the global registry
/// calls it once.
void registerAllBackends(BackendRegistry &registry);

/// The backend and capability named by the `tile.target` attribute of the
/// module enclosing `op`; emits a diagnostic on `op` and returns failure-like
/// nullptr when the attribute is missing or names no served target.
const Backend *getBackendFor(mlir::Operation *op, ComputeCapability *cc);

} // namespace tessera

#endif // TESSERA_CONTRACT_BACKEND_H
