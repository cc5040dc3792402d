//===- tessera-compile.cpp - Compile a tile module to any stage -----------===//
//
// This file implements tessera-compile: reads a .mlir tile module, compiles
// it for a target and prints a stage (tile, gpu, lowered, llvm, ptx, cubin),
// or writes a kernel bundle for the runtime. Bad input gets a located
// diagnostic and exit code 1, never a crash.
//
//===----------------------------------------------------------------------===//

#include "backends/common/Dialects.h"
#include "driver/Compiler.h"
#include "driver/SourceChecks.h"
#include "runtime/bundle.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"), cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<std::string> target("target",
                                   cl::desc("Target, e.g. sm_60, sm_70, sm_80, sm_90a "
                                            "(default: the module's tile.target)"));
static cl::opt<std::string> emit("emit", cl::desc("Stage to print: tile|gpu|lowered|llvm|ptx|cubin"),
                                 cl::init("ptx"));
static cl::opt<std::string> bundle("bundle",
                                   cl::desc("Also write the kernels as a KernelBundle protobuf"),
                                   cl::value_desc("file"));
static cl::opt<std::string> libdevice("libdevice", cl::desc("Path of libdevice.10.bc"),
                                      cl::init("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"));
static cl::opt<std::string> ptxas("ptxas", cl::desc("ptxas to assemble cubins with"));
static cl::opt<bool> assemble("assemble", cl::desc("Assemble a cubin with ptxas and record "
                                                   "registers and spills"));
static cl::opt<bool> timing("timing", cl::desc("Print the compile time to stderr"));
static cl::opt<int> optLevel("O",
                             cl::desc("LLVM optimization level: 2 the kernel pipeline (default), "
                                      "1 and 3 LLVM's O1 and O3, 0 none"),
                             cl::init(2));
static cl::opt<std::string> llvmPipeline(
    "llvm-pipeline", cl::desc("At -O2: an LLVM pass pipeline (opt's -passes syntax) in place of "
                              "the kernel pipeline"));
static cl::opt<bool> fastMath("fast-math",
                              cl::desc("Approximate tanh, exp, erf and f32 division "
                                       "(tanh.approx.f32, ex2.approx.ftz.f32, rational erf, "
                                       "div.approx.ftz.f32); "
                                       "--fast-math=false uses libdevice's exact forms"),
                              cl::init(true));

static cl::opt<bool> verifyEach("verify-each",
                                cl::desc("Verify the IR after every MLIR pass (names the pass "
                                         "that breaks it; slower)"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tessera-compile: " << message << "\n";
  return 1;
}

/// The most input read: a tile module is kilobytes; the bound keeps
/// /dev/zero or a runaway pipe from taking the machine's memory.
constexpr size_t kMaxInputBytes = size_t(64) << 20;

/// The whole input (`-`: stdin), at most kMaxInputBytes; null and `error`
/// set otherwise.
static std::unique_ptr<llvm::MemoryBuffer> readInput(llvm::StringRef path, std::string &error) {
  int fd = 0;
  if (path != "-") {
    if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd)) {
      error = ("cannot open input file '" + path + "': " + ec.message()).str();
      return nullptr;
    }
  }
  std::string contents;
  std::vector<char> chunk(1 << 16);
  while (true) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      error = ("cannot read " + path + ": " + std::strerror(errno)).str();
    else if (contents.size() + size_t(n) > kMaxInputBytes)
      error = (path + " is larger than " + llvm::Twine(kMaxInputBytes >> 20) +
               " MiB, the most tessera-compile reads")
                  .str();
    if (n <= 0 || !error.empty())
      break;
    contents.append(chunk.data(), size_t(n));
  }
  if (path != "-")
    ::close(fd);
  if (!error.empty())
    return nullptr;
  return llvm::MemoryBuffer::getMemBufferCopy(contents, path == "-" ? "<stdin>" : path);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // An LLVM back-end failure (e.g. an instruction the target cannot select)
  // is one readable line and exit code 1, not an abort with a stack dump.
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << "tessera-compile: code generation failed: " << reason << "\n";
        llvm::errs().flush();
        std::_Exit(1);
      },
      nullptr);
  cl::ParseCommandLineOptions(argc, argv, "Tessera compiler: tile module to PTX\n");
  std::optional<tessera::compiler::Stage> stage = tessera::compiler::parseStage(emit);
  if (!stage)
    return fail("unknown --emit=" + emit + " (expected " + tessera::compiler::stageNames() + ")");

  mlir::DialectRegistry registry;
  tessera::registerTesseraDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  if (target.getNumOccurrences() > 0 && target.empty())
    return fail("--target needs a value, e.g. --target=sm_90a");
  if (bundle.getNumOccurrences() > 0 && bundle.empty())
    return fail("--bundle needs a file name");
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = readInput(inputFile, error);
  if (!input)
    return fail(error);
  std::optional<tessera::compiler::UnsafeSource> unsafe =
      tessera::compiler::findUnsafeSource(input->getBuffer());
  if (unsafe) {
    tessera::compiler::printUnsafeSource(llvm::errs(), input->getBufferIdentifier(),
                                         input->getBuffer(), *unsafe);
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  tessera::compiler::CompileOptions options;
  options.target = target;
  options.libdevicePath = libdevice;
  options.ptxasPath = ptxas;
  options.assemble = assemble || *stage == tessera::compiler::Stage::Cubin;
  options.optLevel = optLevel;
  options.llvmPipeline = llvmPipeline;
  options.fastMath = fastMath;
  options.verifyEachPass = verifyEach;
  options.keepStages = {*stage};
  auto compiled = tessera::compiler::compileModule(*module, options);
  if (mlir::failed(compiled))
    return 1;
  if (timing) {
    llvm::errs() << "compile time to PTX: " << llvm::format("%.1f", compiled->compileMillis)
                 << " ms (";
    llvm::interleaveComma(compiled->phaseMillis, llvm::errs(), [](const auto &phase) {
      llvm::errs() << phase.first << " " << llvm::format("%.1f", phase.second);
    });
    llvm::errs() << ")\n";
  }

  if (!bundle.empty()) {
    tessera::runtime::KernelBundle out;
    for (const auto &kernel : compiled->kernels)
      *out.add_kernels() = kernel;
    // Through the runtime's writer: the kernel file header and checksum,
    // and the same validation every reader applies.
    if (absl::Status written = tessera::runtime::WriteBundle(out, bundle); !written.ok())
      return fail(written.ToString());
  }
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  output->os() << compiled->getStage(*stage);
  output->os().flush();
  if (std::error_code ec = output->os().error()) {
    output->os().clear_error();
    std::string name = outputFile == "-" ? "standard output" : outputFile.getValue();
    return fail("cannot write " + name + ": " + ec.message());
  }
  output->keep();
  return 0;
}
