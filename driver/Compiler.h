//===- Compiler.h - Tile module to PTX, every stage printable ---*- C++ -*-===//
//
// This file declares the compiler driver: it runs the tile-level passes, the
// backend's pipeline tail, translation to LLVM IR and NVPTX code generation
// in process, keeps the text of every stage, and describes each kernel for
// the runtime as a tessera.runtime.CompiledKernel.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DRIVER_COMPILER_H
#define TESSERA_DRIVER_COMPILER_H

#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "runtime/kernel.pb.h"

namespace tessera::compiler {

/// The most operations one tile.kernel may hold (its body, nested bodies
/// included): the passes' time grows faster than linearly in a kernel's
/// size, and kernels are a few hundred operations.
inline constexpr int64_t kMaxKernelOperations = 10000;

/// The stages a compilation can print.
enum class Stage {
  /// Tile IR after layout inference, shared memory planning and each
  /// pipelined loop's schedule.
  Tile,
  /// gpu/scf/arith/memref level, after tile-lower-to-gpu.
  Gpu,
  /// LLVM and NVVM dialects, after the backend's pipeline tail.
  Lowered,
  /// Optimized LLVM IR.
  LLVM,
  /// PTX assembly.
  PTX,
  /// A cubin assembled by ptxas (needs ptxas for the target).
  Cubin,
};

/// Parses "tile", "gpu", "lowered", "llvm", "ptx", "cubin".
std::optional<Stage> parseStage(llvm::StringRef name);

/// Registers Tessera's passes (the shared tile passes and the NVVM tail)
/// with the global pass registry, for tessera-opt and textual pipelines.
/// Registration is the driver's job: passes/ and backends/ do not know
/// each other.
void registerTesseraPasses();
/// The list of stage names, for help texts.
llvm::StringRef stageNames();

struct CompileOptions {
  /// Overrides the module's `tile.target` when not empty (e.g. "sm_80").
  std::string target;
  /// libdevice, linked when kernels call __nv_* math functions.
  std::string libdevicePath = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  /// ptxas to assemble a cubin with; empty: search (see findPtxas).
  std::string ptxasPath;
  /// Assemble a cubin (and record registers and spills) after PTX.
  bool assemble = false;
  /// LLVM optimization level: 2 (default) runs the kernel pipeline (scalar
  /// cleanups, CSE, LICM; ptxas does the rest), 1 and 3 LLVM's O1 and O3
  /// pipelines, 0 none.
  int optLevel = 2;
  /// At optLevel 2: an LLVM pass pipeline (opt's -passes syntax) in place of
  /// the kernel pipeline, to time others; empty for the kernel pipeline.
  std::string llvmPipeline;
  /// Approximate math where the target has it: tanh.approx.f32 (about 2^-11
  /// relative error), exp as ex2.approx.ftz.f32 of x log2(e) (a few ulp,
  /// subnormal results flushed to zero), erf as a branchless rational form
  /// (3.8e-7 absolute error) and f32 division as div.approx.ftz.f32 (2 ulp;
  /// 0 for divisors beyond 2^126). false: libdevice's exact forms.
  bool fastMath = true;
  /// The text stages to keep in CompiledModule (printing a large module
  /// costs milliseconds, so only what is asked for is printed). PTX (and
  /// the cubin when assembling) are always kept.
  std::vector<Stage> keepStages;
  /// Verify the IR after every MLIR pass (MLIR's verify-each), so a pass
  /// that breaks it is named. Otherwise the input is verified before the
  /// passes and the lowered module once before translation: verifying after
  /// each of the eight passes took about 15 ms of the sm_80 GEMM's 100.
  /// The environment variable TESSERA_VERIFY_EACH=1 turns it on too (the
  /// test suite sets it).
  bool verifyEachPass = false;
};

/// The result of compiling one tile module.
struct CompiledModule {
  std::string target;
  std::string tile, gpu, lowered, llvm, ptx, cubin;
  /// One description per kernel, PTX (and cubin) included.
  std::vector<runtime::CompiledKernel> kernels;
  /// Wall time from tile IR to PTX, in milliseconds, and its split over
  /// the phases ("tile passes", "lower to gpu", "lowering tail",
  /// "LLVM IR + opt", "PTX codegen").
  double compileMillis = 0;
  std::vector<std::pair<std::string, double>> phaseMillis;
  /// Messages from ptxas (registers, spills) when it ran.
  std::string ptxasLog;

  /// The text of one stage (binary for Cubin); empty unless the stage was
  /// kept (CompileOptions::keepStages).
  const std::string &getStage(Stage stage) const;
};

/// Compiles `module` (modified in place). Errors are emitted as MLIR
/// diagnostics in the module's context; install a handler to collect them.
mlir::FailureOr<CompiledModule> compileModule(mlir::ModuleOp module,
                                              const CompileOptions &options);

/// A ptxas able to assemble for `target` (e.g. "sm_70"), or "" if none is
/// found: `explicitPath` if set, else the CUDA 12 ptxas installed by
/// tools/setup.sh (which still knows sm_60/sm_70), else $CUDA_HOME/bin/ptxas
/// or /usr/local/cuda/bin/ptxas for sm_75 and newer.
std::string findPtxas(llvm::StringRef target, llvm::StringRef explicitPath = "");

/// Runs ptxas on `ptx` for `arch` (e.g. "sm_90a"). Returns the cubin; `log`
/// receives ptxas's messages (and the reason on failure).
mlir::FailureOr<std::string> assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                                         llvm::StringRef arch, std::string &log);

/// Parses the registers and spill bytes of `entry` from ptxas -v output.
void parsePtxasLog(llvm::StringRef log, llvm::StringRef entry, int &registers,
                   int64_t &spillBytes);

} // namespace tessera::compiler

#endif // TESSERA_DRIVER_COMPILER_H
