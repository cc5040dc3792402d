//===- registry_test.cc - Backend registry and compute capabilities ------===//
//
// This file tests ComputeCapability (parsing, printing, and the rule that
// sm_90a is not sm_90), the backend registry (which backend serves which
// target, the capability tables, the error that lists what is served), and
// that a fifth backend -- Turing, sm_75, defined only here -- compiles a
// vector add to PTX once added to the registry, without any change to
// shared code.
//
//===----------------------------------------------------------------------===//

#include <memory>
#include <string>
#include <vector>

#include "contract/Backend.h"
#include "driver/Compiler.h"
#include "backends/common/Dialects.h"
#include "backends/common/MmaAtoms.h"
#include "backends/common/Pipelines.h"
#include "backends/common/NVVMLowering.h"
#include "tests/backends/sm75/TestSm75Backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ComputeCapability cc(int major, int minor, bool archSpecific = false) {
  return ComputeCapability{major, minor, archSpecific};
}

/// The names of the capabilities a backend serves, e.g. {"sm_80", "sm_86"}.
std::vector<std::string> servedNames(const Backend &backend) {
  std::vector<std::string> names;
  for (const ComputeCapability &served : backend.getServedCapabilities())
    names.push_back(served.str());
  return names;
}

/// A registry with the built-in backends only (the global one may also hold
/// the Turing backend a test below adds).
BackendRegistry builtInRegistry() {
  BackendRegistry registry;
  registerAllBackends(registry);
  return registry;
}

const Backend *lookupOrFail(const BackendRegistry &registry, llvm::StringRef target) {
  std::string error;
  const Backend *backend = registry.lookup(target, error);
  EXPECT_NE(backend, nullptr) << target.str() << ": " << error;
  EXPECT_THAT(error, IsEmpty());
  return backend;
}

//===----------------------------------------------------------------------===//
// ComputeCapability
//===----------------------------------------------------------------------===//

TEST(ComputeCapability, ParsesNamesWithAndWithoutThePrefix) {
  EXPECT_EQ(ComputeCapability::parse("sm_80"), cc(8, 0));
  EXPECT_EQ(ComputeCapability::parse("80"), cc(8, 0));
  EXPECT_EQ(ComputeCapability::parse("sm_86"), cc(8, 6));
  EXPECT_EQ(ComputeCapability::parse("sm_90a"), cc(9, 0, true));
  EXPECT_EQ(ComputeCapability::parse("90a"), cc(9, 0, true));
  EXPECT_EQ(ComputeCapability::parse("sm_100"), cc(10, 0));
  EXPECT_EQ(ComputeCapability::parse("sm_120a"), cc(12, 0, true));
}

TEST(ComputeCapability, RejectsMalformedNames) {
  for (const char *text : {"", "sm_", "sm", "foo", "sm_8", "sm_9x", "sm_90aa", "sm_a", "a",
                           "sm_-80", "compute_80"})
    EXPECT_EQ(ComputeCapability::parse(text), std::nullopt) << "'" << text << "'";
}

TEST(ComputeCapability, PrintsTheCanonicalName) {
  EXPECT_EQ(cc(6, 0).str(), "sm_60");
  EXPECT_EQ(cc(8, 9).str(), "sm_89");
  EXPECT_EQ(cc(9, 0, true).str(), "sm_90a");
  EXPECT_EQ(cc(10, 0).str(), "sm_100");
  for (const char *name : {"sm_60", "sm_75", "sm_90", "sm_90a", "sm_100"})
    EXPECT_EQ(ComputeCapability::parse(name)->str(), name);
  EXPECT_EQ(cc(8, 6).value(), 86);
}

TEST(ComputeCapability, Sm90aIsNotSm90) {
  EXPECT_FALSE(cc(9, 0, true) == cc(9, 0));
  EXPECT_TRUE(cc(9, 0, true) == cc(9, 0, true));
}

TEST(ComputeCapability, IsAtLeastOrdersPortableCapabilitiesByValue) {
  EXPECT_TRUE(cc(8, 6).isAtLeast(cc(8, 0)));
  EXPECT_TRUE(cc(8, 0).isAtLeast(cc(8, 0)));
  EXPECT_FALSE(cc(8, 0).isAtLeast(cc(8, 6)));
  EXPECT_TRUE(cc(9, 0).isAtLeast(cc(6, 0)));
  EXPECT_FALSE(cc(7, 0).isAtLeast(cc(7, 5)));
  EXPECT_TRUE(cc(10, 0).isAtLeast(cc(9, 0)));
}

TEST(ComputeCapability, Sm90aHasEverythingSm90Has) {
  EXPECT_TRUE(cc(9, 0, true).isAtLeast(cc(9, 0)));
  EXPECT_TRUE(cc(9, 0, true).isAtLeast(cc(8, 0)));
}

TEST(ComputeCapability, OnlySm90aItselfIsAtLeastSm90a) {
  // Architecture-specific features (wgmma, setmaxnreg) run on exactly that
  // architecture: neither the portable sm_90 nor any later chip has them.
  EXPECT_TRUE(cc(9, 0, true).isAtLeast(cc(9, 0, true)));
  EXPECT_FALSE(cc(9, 0).isAtLeast(cc(9, 0, true)));
  EXPECT_FALSE(cc(10, 0).isAtLeast(cc(9, 0, true)));
  EXPECT_FALSE(cc(10, 0, true).isAtLeast(cc(9, 0, true)));
  EXPECT_FALSE(cc(8, 0).isAtLeast(cc(9, 0, true)));
}

//===----------------------------------------------------------------------===//
// BackendRegistry and the built-in backends
//===----------------------------------------------------------------------===//

TEST(BackendRegistry, RegistersFiveBuiltInBackendsInOrder) {
  BackendRegistry registry = builtInRegistry();
  std::vector<std::string> names;
  for (const auto &backend : registry.getBackends())
    names.push_back(backend->getName().str());
  EXPECT_THAT(names, ElementsAre("sm60", "sm70", "sm80", "sm90", "sm100"));
}

TEST(BackendRegistry, EachBackendServesItsFamily) {
  BackendRegistry registry = builtInRegistry();
  const auto &backends = registry.getBackends();
  ASSERT_EQ(backends.size(), 5u);
  EXPECT_THAT(servedNames(*backends[0]), ElementsAre("sm_60", "sm_61", "sm_62"));
  EXPECT_THAT(servedNames(*backends[1]), ElementsAre("sm_70", "sm_72"));
  EXPECT_THAT(servedNames(*backends[2]), ElementsAre("sm_80", "sm_86", "sm_87", "sm_89"));
  EXPECT_THAT(servedNames(*backends[3]), ElementsAre("sm_90", "sm_90a"));
  EXPECT_THAT(servedNames(*backends[4]), ElementsAre("sm_100", "sm_100a"));
  // Every served capability maps back to the backend that lists it.
  for (const auto &backend : backends)
    for (const ComputeCapability &served : backend->getServedCapabilities())
      EXPECT_EQ(registry.lookup(served), backend.get()) << served.str();
}

TEST(BackendRegistry, PicksSm90ForComputeCapability90) {
  BackendRegistry registry = builtInRegistry();
  const Backend *backend = lookupOrFail(registry, "sm_90");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->getName(), "sm90");
  EXPECT_EQ(lookupOrFail(registry, "sm_90a"), backend);
  EXPECT_EQ(lookupOrFail(registry, "90"), backend);
}

TEST(BackendRegistry, PicksSm100ForBlackwellWithoutWgmma) {
  BackendRegistry registry = builtInRegistry();
  const Backend *backend = lookupOrFail(registry, "sm_100a");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->getName(), "sm100");
  const TargetCapabilities &caps = backend->getCapabilities(cc(10, 0, true));
  EXPECT_FALSE(caps.hasWarpgroupMma);  // wgmma is sm_90a's alone
  EXPECT_TRUE(caps.hasBulkTensorCopy);
  EXPECT_TRUE(caps.hasAsyncCopy);
  EXPECT_EQ(caps.ptxFeature, "+ptx86");
}

TEST(BackendRegistry, PicksSm80ForAmpereAndAda) {
  BackendRegistry registry = builtInRegistry();
  for (const char *target : {"sm_80", "sm_86", "sm_87", "sm_89"}) {
    const Backend *backend = lookupOrFail(registry, target);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->getName(), "sm80") << target;
  }
}

TEST(BackendRegistry, PicksSm60AndSm70ForPascalAndVolta) {
  BackendRegistry registry = builtInRegistry();
  EXPECT_EQ(lookupOrFail(registry, "sm_61")->getName(), "sm60");
  EXPECT_EQ(lookupOrFail(registry, "sm_72")->getName(), "sm70");
}

TEST(BackendRegistry, GivesWarpgroupMmaToSm90aButNotSm90) {
  BackendRegistry registry = builtInRegistry();
  const Backend *sm90 = lookupOrFail(registry, "sm_90");
  ASSERT_NE(sm90, nullptr);
  EXPECT_TRUE(sm90->getCapabilities(cc(9, 0, true)).hasWarpgroupMma);
  EXPECT_FALSE(sm90->getCapabilities(cc(9, 0)).hasWarpgroupMma);
  // Both have the rest of Hopper.
  for (const ComputeCapability &c : {cc(9, 0), cc(9, 0, true)}) {
    const TargetCapabilities &caps = sm90->getCapabilities(c);
    EXPECT_TRUE(caps.hasBulkTensorCopy) << c.str();
    EXPECT_TRUE(caps.hasMbarrier) << c.str();
    EXPECT_TRUE(caps.hasClusters) << c.str();
    EXPECT_EQ(caps.sharedMemoryPerBlock, 227 * 1024) << c.str();
  }
}

TEST(BackendRegistry, AnswersFeatureQuestionsPerCapability) {
  BackendRegistry registry = builtInRegistry();
  auto caps = [&](llvm::StringRef target) -> const TargetCapabilities & {
    const Backend *backend = lookupOrFail(registry, target);
    return backend->getCapabilities(*ComputeCapability::parse(target));
  };
  EXPECT_EQ(caps("sm_60").sharedMemoryPerBlock, 48 * 1024);
  EXPECT_EQ(caps("sm_61").sharedMemoryPerSM, 96 * 1024);
  EXPECT_EQ(caps("sm_70").sharedMemoryPerBlock, 96 * 1024);
  EXPECT_EQ(caps("sm_80").sharedMemoryPerBlock, 163 * 1024);
  EXPECT_EQ(caps("sm_86").sharedMemoryPerBlock, 99 * 1024);
  EXPECT_EQ(caps("sm_87").sharedMemoryPerBlock, 163 * 1024);
  EXPECT_EQ(caps("sm_89").sharedMemoryPerBlock, 99 * 1024);

  EXPECT_FALSE(caps("sm_60").hasAsyncCopy);
  EXPECT_FALSE(caps("sm_70").hasAsyncCopy);
  EXPECT_TRUE(caps("sm_80").hasAsyncCopy);
  EXPECT_TRUE(caps("sm_80").hasLdmatrix);
  EXPECT_FALSE(caps("sm_80").hasBulkTensorCopy);
  EXPECT_THAT(caps("sm_60").mmaShapes, IsEmpty());
  EXPECT_THAT(caps("sm_70").mmaShapes, ElementsAre("m8n8k4"));
  EXPECT_THAT(caps("sm_80").mmaShapes, ::testing::Contains("m16n8k16"));
  for (const char *target : {"sm_60", "sm_70", "sm_80", "sm_90a"})
    EXPECT_EQ(caps(target).globalVectorBytes, 16) << target;
}

TEST(BackendRegistry, ListsWhatIsServedWhenNoBackendServesATarget) {
  BackendRegistry registry = builtInRegistry();
  std::string error;
  EXPECT_EQ(registry.lookup("sm_120", error), nullptr);
  EXPECT_EQ(error, "no backend serves target 'sm_120' (served: sm60: sm_60 sm_61 sm_62; "
                   "sm70: sm_70 sm_72; sm80: sm_80 sm_86 sm_87 sm_89; sm90: sm_90 sm_90a; "
                   "sm100: sm_100 sm_100a)");
  // sm_80a is well formed but no backend lists it.
  EXPECT_EQ(registry.lookup("sm_80a", error), nullptr);
  EXPECT_THAT(error, HasSubstr("no backend serves target 'sm_80a'"));
}

TEST(BackendRegistry, RejectsMalformedTargetNames) {
  BackendRegistry registry = builtInRegistry();
  std::string error;
  EXPECT_EQ(registry.lookup("foo", error), nullptr);
  EXPECT_EQ(error, "unknown target 'foo' (expected sm_XY or sm_XYa, e.g. sm_80, sm_90a)");
}

TEST(BackendRegistry, EmptyRegistryServesNothing) {
  BackendRegistry registry;
  std::string error;
  EXPECT_EQ(registry.lookup("sm_80", error), nullptr);
  EXPECT_EQ(error, "no backend serves target 'sm_80' (served: )");
}

//===----------------------------------------------------------------------===//
// A fifth backend, defined outside backends/ (tests/backends/sm75)
//===----------------------------------------------------------------------===//

constexpr const char *kVectorAdd = R"mlir(
module {
  tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>, %C: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx) {
    %a = tile.alloc_fragment : !tile.buffer<1024xf32, fragment>
    %b = tile.alloc_fragment : !tile.buffer<1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %off = arith.muli %bx, %c1024 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %B[%off] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      %y = tile.load %b[%i] : !tile.buffer<1024xf32, fragment>
      %s = arith.addf %x, %y : f32
      tile.store %s, %a[%i] : !tile.buffer<1024xf32, fragment>
    }
    tile.copy %a to %C[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}
)mlir";

/// 80 KiB of shared memory: over Turing's 64 KiB, within Ampere's 163 KiB.
constexpr const char *kBigShared = R"mlir(
module {
  tile.kernel @big() grid(affine_map<()[] -> (1)>) threads(256) blocks(%bx) {
    %s = tile.alloc_shared {name = "staging"} : !tile.buffer<20480xf32, shared>
  }
}
)mlir";

/// An MLIR context with every Tessera dialect, collecting diagnostics.
class CompileModule : public ::testing::Test {
protected:
  CompileModule()
      : context_(makeRegistry()),
        handler_(&context_, [this](mlir::Diagnostic &diag) {
          diagnostics_ += diag.str() + "\n";
          return mlir::success();
        }) {
    context_.loadAllAvailableDialects();
  }

  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    registerTesseraDialects(registry);
    return registry;
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(const char *source) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context_);
    EXPECT_TRUE(module) << diagnostics_;
    return module;
  }

  /// Compiles `source` for `target`; diagnostics land in diagnostics_.
  mlir::FailureOr<compiler::CompiledModule> compile(const char *source,
                                                    const std::string &target) {
    diagnostics_.clear();
    mlir::OwningOpRef<mlir::ModuleOp> module = parse(source);
    if (!module)
      return mlir::failure();
    compiler::CompileOptions options;
    options.target = target;
    return compiler::compileModule(*module, options);
  }

  mlir::MLIRContext context_;
  mlir::ScopedDiagnosticHandler handler_;
  std::string diagnostics_;
};

TEST(BackendRegistry, ServesSm75OnlyOnceATuringBackendIsAdded) {
  BackendRegistry registry = builtInRegistry();
  std::string error;
  EXPECT_EQ(registry.lookup("sm_75", error), nullptr);
  EXPECT_THAT(error, HasSubstr("no backend serves target 'sm_75'"));

  registry.add(testing::makeTestSm75Backend());
  const Backend *backend = lookupOrFail(registry, "sm_75");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->getName(), "test-sm75");
  EXPECT_EQ(backend->getCapabilities(cc(7, 5)).sharedMemoryPerBlock, 64 * 1024);
  // The built-in targets still go where they went.
  EXPECT_EQ(lookupOrFail(registry, "sm_70")->getName(), "sm70");
  EXPECT_EQ(lookupOrFail(registry, "sm_80")->getName(), "sm80");
}

TEST(BackendRegistry, LaterBackendWinsForTheSameCapability) {
  // A test or out-of-tree plugin can stand in for a built-in backend.
  class StandInSm80 final : public Backend {
  public:
    llvm::StringRef getName() const override { return "stand-in"; }
    std::vector<ComputeCapability> getServedCapabilities() const override {
      return {{8, 0, false}};
    }
    const TargetCapabilities &getCapabilities(const ComputeCapability &) const override {
      static const TargetCapabilities caps;  // the defaults: only lookups are tested
      return caps;
    }
    void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
      addCommonNVVMLowering(pm, cc);
    }
    std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &) const override {
      return {getSimtFmaAtom()};
    }
    std::vector<const PipelineStrategy *>
    getPipelineStrategies(const ComputeCapability &) const override {
      return {&common::inOrderPipeline()};
    }
  };
  BackendRegistry registry = builtInRegistry();
  registry.add(std::make_unique<StandInSm80>());
  EXPECT_EQ(lookupOrFail(registry, "sm_80")->getName(), "stand-in");
  EXPECT_EQ(lookupOrFail(registry, "sm_86")->getName(), "sm80");
}

TEST_F(CompileModule, CompilesVectorAddForEveryBuiltInTarget) {
  for (const char *target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = compile(kVectorAdd, target);
    ASSERT_TRUE(mlir::succeeded(compiled)) << target << ": " << diagnostics_;
    EXPECT_EQ(compiled->target, target);
    EXPECT_THAT(compiled->ptx, HasSubstr(std::string(".target ") + target));
    EXPECT_THAT(compiled->ptx, HasSubstr("ld.global.v4.b32"));
    ASSERT_EQ(compiled->kernels.size(), 1u);
    EXPECT_EQ(compiled->kernels[0].entry(), "vector_add");
    EXPECT_EQ(compiled->kernels[0].block_threads(), 256);
  }
}

TEST_F(CompileModule, ReportsMalformedAndUnservedTargets) {
  EXPECT_TRUE(mlir::failed(compile(kVectorAdd, "foo")));
  EXPECT_THAT(diagnostics_, HasSubstr("target 'foo' is not of the form sm_XY or sm_XYa"));
  EXPECT_TRUE(mlir::failed(compile(kVectorAdd, "sm_120")));
  EXPECT_THAT(diagnostics_, HasSubstr("no backend serves target 'sm_120' (served: sm60:"));
  EXPECT_TRUE(mlir::failed(compile(kVectorAdd, "")));
  EXPECT_THAT(diagnostics_, HasSubstr("no compilation target"));
}

// A module built or edited by hand is verified before the passes see it;
// the error is the verifier's, and nothing is lowered.
TEST_F(CompileModule, RefusesAModuleThatDoesNotVerify) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(kVectorAdd);
  ASSERT_TRUE(module);
  mlir::Operation *kernel = &module->getBody()->front();
  kernel->setAttr("threads",
                  mlir::IntegerAttr::get(mlir::IntegerType::get(&context_, 64), 4096));
  diagnostics_.clear();
  compiler::CompileOptions options;
  options.target = "sm_80";
  EXPECT_TRUE(mlir::failed(compiler::compileModule(*module, options)));
  EXPECT_THAT(diagnostics_, HasSubstr("threads per block must be in [1, 1024], got 4096"));
}

// The one test that changes the global registry: sm_75 is refused until the
// Turing backend above is added, then the unchanged compiler, passes and
// common lowering produce sm_75 PTX, within Turing's own limits.
TEST_F(CompileModule, TuringBackendDefinedInATestCompilesVectorAdd) {
  EXPECT_TRUE(mlir::failed(compile(kVectorAdd, "sm_75")));
  EXPECT_THAT(diagnostics_, HasSubstr("no backend serves target 'sm_75'"));

  BackendRegistry::global().add(testing::makeTestSm75Backend());

  auto compiled = compile(kVectorAdd, "sm_75");
  ASSERT_TRUE(mlir::succeeded(compiled)) << diagnostics_;
  EXPECT_EQ(compiled->target, "sm_75");
  EXPECT_THAT(compiled->ptx, HasSubstr(".target sm_75"));
  EXPECT_THAT(compiled->ptx, HasSubstr(".visible .entry vector_add("));
  EXPECT_THAT(compiled->ptx, HasSubstr(".maxntid 256, 1, 1"));
  EXPECT_THAT(compiled->ptx, HasSubstr("ld.global.v4.b32"));
  ASSERT_EQ(compiled->kernels.size(), 1u);
  EXPECT_EQ(compiled->kernels[0].target(), "sm_75");

  // Shared passes ask the new backend for its limits.
  EXPECT_TRUE(mlir::failed(compile(kBigShared, "sm_75")));
  EXPECT_THAT(diagnostics_, HasSubstr("kernel 'big' needs 81920 bytes of shared memory, over the "
                                      "65536-byte per-block limit of sm_75: staging"));
  EXPECT_TRUE(mlir::succeeded(compile(kBigShared, "sm_80"))) << diagnostics_;
}

} // namespace
} // namespace tessera
