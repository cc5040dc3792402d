//===- misuse_test.cc - The C++ kernel API used wrongly -------------------===//
//
// A moved-from Kernel and handles (Tensor, Buffer, Index, Scalar) used
// outside the KernelBuilder that made them, or before their kernel's
// Launch: each is an error in Kernel::status() naming the kernels and the
// handle, never a crash or IR bound to another kernel's arguments.
//
//===----------------------------------------------------------------------===//

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "frontend/Tessera.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

/// A kernel that scales a vector: C = 2 A, `block` elements a block.
Kernel Scale(int64_t n, int64_t block) {
  KernelBuilder T("scale");
  auto A = T.Tensor("A", {n}, f32), C = T.Tensor("C", {n}, f32);
  T.Launch({CeilDiv(n, block)}, 64, [&](Index bx) {
    auto a = T.AllocFragment({block}, f32, "a");
    T.Copy(A.Tile(bx * block), a);
    T.Parallel({block}, [&](Index i) { a(i) = a(i) * 2.0; });
    T.Copy(a, C.Tile(bx * block));
  });
  return T.Build();
}

/// `message` holds `what` at `line` of this file.
void ExpectMessageAt(const std::string &message, int line, const std::string &what) {
  EXPECT_NE(message.find("misuse_test.cc:" + std::to_string(line) + ": tessera: " + what),
            std::string::npos)
      << "missing at line " << line << ": " << what << "\n"
      << message;
}

TEST(Frontend, DefaultConstructedKernelIsAnError) {
  Kernel kernel;
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(kernel.status().message().find("default-constructed"), std::string::npos)
      << kernel.status();
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile({"sm_80"});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("default-constructed"), std::string::npos)
      << compiled.status();
}

TEST(Frontend, MovedFromKernelIsAnErrorNotACrash) {
  Kernel kernel = Scale(64, 64);
  Kernel moved = std::move(kernel);
  ASSERT_TRUE(moved.status().ok()) << moved.status();
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition); // NOLINT: moved
  EXPECT_NE(kernel.status().message().find("Kernel was moved from"), std::string::npos)
      << kernel.status();
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile({"sm_80"});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("Kernel was moved from"), std::string::npos)
      << compiled.status();
  EXPECT_FALSE(kernel.GetKernelSource(Stage::kPTX, {"sm_80"}).ok());
  EXPECT_EQ(kernel.name(), "");
  EXPECT_EQ(kernel.ToString(), "");
  // Move assignment leaves the source moved-from too; a moved-from Kernel
  // takes a new value.
  Kernel assigned;
  assigned = std::move(moved);
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kFailedPrecondition); // NOLINT: moved
  EXPECT_FALSE(moved.Compile({"sm_80"}).ok());
  kernel = std::move(assigned);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_EQ(kernel.name(), "scale");
  EXPECT_TRUE(kernel.Compile({"sm_80"}).ok());
}

TEST(Frontend, HandlesOfADestroyedBuilderAreErrorsNotUseAfterFree) {
  std::optional<Buffer> buffer;
  std::optional<Tensor> tensor;
  Index index(0);
  Scalar value(0.0), alpha(0.0);
  {
    KernelBuilder first("first");
    tensor = first.Tensor("X", {Dim(64)}, f32);
    alpha = first.ScalarArg("alpha", f32);
    first.Launch({1}, 32, [&](Index bx) {
      buffer = first.AllocFragment({64}, f32, "frag");
      index = bx;
      first.Copy(tensor->Tile(0), *buffer);
      first.Parallel({64}, [&](Index i) { value = alpha * (*buffer)(i); });
      first.Copy(*buffer, tensor->Tile(0));
    });
    ASSERT_TRUE(first.Build().status().ok());
  }
  // No KernelBuilder is alive: recorded for the next one.
  int orphanLine = __LINE__ + 1;
  (void)tensor->dim(0);
  KernelBuilder second("second");
  auto Y = second.Tensor("Y", {Dim(64)}, f32);
  int bufferLine = 0, tileLine = 0, indexLine = 0, dimLine = 0, elementLine = 0;
  second.Launch({1}, 32, [&](Index) {
    auto f = second.AllocFragment({64}, f32, "f");
    second.Copy(Y.Tile(0), f);
    bufferLine = __LINE__ + 1;
    second.Copy(*buffer, f);
    tileLine = __LINE__ + 1;
    second.Copy(tensor->Tile(0), f);
    indexLine = __LINE__ + 1;
    second.Copy(f, Y.Tile(index));
    // Arithmetic and Tensor::dim report at the innermost statement's line.
    dimLine = __LINE__ + 1;
    second.Parallel({64}, [&](Index i) { f(i) = ToScalar(tensor->dim(0) + i); });
    elementLine = __LINE__ + 1;
    second.Parallel({64}, [&](Index i) { f(i) = (*buffer)(i) + value * alpha; });
    second.Copy(f, Y.Tile(0));
  });
  Kernel kernel = second.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  EXPECT_NE(message.find("tessera: Tensor::dim is only valid inside KernelBuilder::Launch's body"),
            std::string::npos)
      << "line " << orphanLine << ": " << message;
  const std::string destroyed = " belongs to kernel 'first' (whose KernelBuilder was destroyed), "
                                "not 'second'";
  ExpectMessageAt(message, bufferLine, "Buffer 'frag'" + destroyed);
  ExpectMessageAt(message, tileLine, "a tile of Tensor 'X'" + destroyed);
  ExpectMessageAt(message, indexLine, "Index" + destroyed);
  ExpectMessageAt(message, dimLine, "Tensor 'X'" + destroyed);
  ExpectMessageAt(message, elementLine, "Buffer 'frag'" + destroyed);
  ExpectMessageAt(message, elementLine, "Scalar" + destroyed);
  EXPECT_FALSE(kernel.Compile({"sm_80"}).ok());
}

TEST(Frontend, HandlesOfAnotherBuilderAreErrorsNamingBothKernels) {
  KernelBuilder producer("producer");
  auto X = producer.Tensor("X", {Dim(256)}, f32);
  auto alpha = producer.ScalarArg("alpha", f32);
  std::optional<Buffer> shared;
  Index block(0);
  producer.Launch({4}, 64, [&](Index bx) {
    shared = producer.AllocShared({64}, f32, "staged");
    block = bx;
    producer.Copy(X.Tile(bx * 64), *shared);
    producer.Copy(*shared, X.Tile(bx * 64));
  });

  // Before: X.Tile(0) was the consumer's argument 0 (Y: a copy from the
  // wrong tensor), `alpha` its argument 1 (Z), and the others MLIR's
  // "using value defined outside the region" or a crash.
  KernelBuilder consumer("consumer");
  auto Y = consumer.Tensor("Y", {Dim(64)}, f32), Z = consumer.Tensor("Z", {Dim(64)}, f32);
  int tensorLine = 0, bufferLine = 0, indexLine = 0, dimLine = 0, parallelLine = 0;
  consumer.Launch({1}, 64, [&](Index) {
    auto f = consumer.AllocFragment({64}, f32, "f");
    tensorLine = __LINE__ + 1;
    consumer.Copy(X.Tile(0), f);
    bufferLine = __LINE__ + 1;
    consumer.Copy(*shared, f);
    indexLine = __LINE__ + 1;
    consumer.Copy(Y.Tile(block), f);
    dimLine = __LINE__ + 1;
    consumer.Parallel({64}, [&](Index i) { f(i) = ToScalar(X.dim(0) + i); });
    parallelLine = __LINE__ + 1;
    consumer.Parallel({64}, [&](Index i) { f(i) = f(i) * alpha + (*shared)(i) + f(block); });
    consumer.Copy(f, Z.Tile(0));
  });
  Kernel kernel = consumer.Build();
  ASSERT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument) << kernel.status();
  std::string message(kernel.status().message());
  const std::string foreign = " belongs to kernel 'producer', not 'consumer'";
  ExpectMessageAt(message, tensorLine, "a tile of Tensor 'X'" + foreign);
  ExpectMessageAt(message, bufferLine, "Buffer 'staged'" + foreign);
  ExpectMessageAt(message, indexLine, "Index" + foreign);
  ExpectMessageAt(message, dimLine, "Tensor 'X'" + foreign);
  ExpectMessageAt(message, parallelLine, "Scalar argument 'alpha'" + foreign);
  ExpectMessageAt(message, parallelLine, "Buffer 'staged'" + foreign);
  ExpectMessageAt(message, parallelLine, "Index" + foreign);
  EXPECT_EQ(message.find("defined outside"), std::string::npos) << message;
  EXPECT_FALSE(kernel.Compile({"sm_80"}).ok());
  // The producer is untouched by the consumer's misuse.
  Kernel produced = producer.Build();
  ASSERT_TRUE(produced.status().ok()) << produced.status();
  EXPECT_TRUE(produced.Compile({"sm_80"}).ok());
}

TEST(Frontend, TwoBuildersOfOneNameAreToldApart) {
  KernelBuilder a("same");
  auto A = a.Tensor("A", {Dim(64)}, f32);
  KernelBuilder b("same");
  auto B = b.Tensor("B", {Dim(64)}, f32);
  int line = 0;
  b.Launch({1}, 32, [&](Index) {
    auto f = b.AllocFragment({64}, f32);
    line = __LINE__ + 1;
    b.Copy(A.Tile(0), f);
    b.Copy(f, B.Tile(0));
  });
  ExpectMessageAt(std::string(b.Build().status().message()), line,
                  "a tile of Tensor 'A' belongs to another KernelBuilder's kernel 'same', not "
                  "'same'");
}

TEST(Frontend, ArgumentsDeclaredAfterLaunchOrNotTensorsAreErrors) {
  KernelBuilder T("late");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  auto scale = T.ScalarArg("scale", f32);
  int lateLine = 0, rawLine = 0, scalarLine = 0, elementLine = 0;
  T.Launch({1}, 32, [&](Index) {
    auto late = T.Tensor("Late", {Dim(64)}, f32);
    auto bias = T.ScalarArg("bias", f32);
    auto f = T.AllocFragment({64}, f32);
    lateLine = __LINE__ + 1;
    T.Copy(late.Tile(0), f);
    rawLine = __LINE__ + 1;
    T.Copy(TileRef{7, {Index(0)}}, f);
    scalarLine = __LINE__ + 1;
    T.Copy(f, TileRef{1, {Index(0)}});
    elementLine = __LINE__ + 1;
    T.Parallel({64}, [&](Index i) { f(i) = f(i) * scale + bias; });
    T.Copy(f, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  const std::string notAnArgument = " is not among the arguments of kernel 'late' (Launch takes "
                                    "the arguments declared before it)";
  ExpectMessageAt(message, lateLine, "a tile of Tensor 'Late'" + notAnArgument);
  ExpectMessageAt(message, rawLine, "a tile of Tensor '#7'" + notAnArgument);
  ExpectMessageAt(message, scalarLine, "a tile of Tensor 'scale' names a scalar argument");
  ExpectMessageAt(message, elementLine, "Scalar argument 'bias'" + notAnArgument);
}

TEST(Frontend, PipelinedOverADimensionOfATensorDeclaredAfterLaunchIsAnError) {
  KernelBuilder T("late_dimension");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  int line = 0;
  T.Launch({1}, 32, [&](Index) {
    auto late = T.Tensor("Late", {Dim::Dynamic("K")}, f32);
    auto f = T.AllocFragment({64}, f32);
    line = __LINE__ + 1;
    T.Pipelined(CeilDiv(Dim::Dynamic("K"), 16), 2, [&](Index) {});
    T.Copy(f, A.Tile(0));
  });
  ExpectMessageAt(std::string(T.Build().status().message()), line,
                  "Tensor 'Late' is not among the arguments of kernel 'late_dimension'");
}

TEST(Frontend, ElementsOfABufferAllocatedOutsideLaunchAreErrors) {
  KernelBuilder T("unallocated");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  auto outside = T.AllocFragment({64}, f32);
  int line = 0;
  T.Launch({1}, 32, [&](Index) {
    auto f = T.AllocFragment({64}, f32);
    T.Copy(A.Tile(0), f);
    line = __LINE__ + 1;
    T.Parallel({64}, [&](Index i) { outside(i) = f(i) + outside(i); });
    T.Copy(f, A.Tile(0));
  });
  ExpectMessageAt(std::string(T.Build().status().message()), line,
                  "an element of a buffer that was not allocated inside Launch's body");
}

TEST(Frontend, ErrorsInNamedExpressionsNameTheExpressionsLine) {
  // Select, Max, Cast, ... take the author's line; an operator's error
  // names the operator at the enclosing statement's line.
  KernelBuilder T("expression_lines");
  auto X = T.Tensor("X", {Dim(64)}, f32);
  int parallelLine = 0, selectLine = 0, maxLine = 0, bitcastLine = 0;
  T.Launch({1}, 64, [&](Index) {
    auto f = T.AllocFragment({64}, f32, "f");
    auto g = T.AllocFragment({64}, i32, "g");
    T.Clear(g);
    parallelLine = __LINE__ + 1;
    T.Parallel({64}, [&](Index i) {
      selectLine = __LINE__ + 1;
      Scalar picked = Select(f(i), 1.0, 2.0);
      maxLine = __LINE__ + 1;
      Scalar larger = Max(Scalar(f(i)), Scalar(g(i)));
      bitcastLine = __LINE__ + 1;
      Scalar bits = Bitcast(Scalar(f(i)), f64);
      f(i) = picked + larger + bits + (f(i) + g(i));
    });
    T.Copy(f, X.Tile(0));
  });
  Kernel kernel = T.Build();
  std::string message(kernel.status().message());
  ExpectMessageAt(message, selectLine, "Select's condition takes a boolean (a comparison)");
  ExpectMessageAt(message, maxLine, "Max of scalars of types f32 and i32; Cast one");
  ExpectMessageAt(message, bitcastLine, "Bitcast");
  ExpectMessageAt(message, parallelLine, "Scalar + of scalars of types f32 and i32");
}

TEST(Frontend, StructuralErrorsNameTheAuthorsLine) {
  // A second Launch, a builder never launched, a negative dimension and a
  // Parallel whose extents do not match its body: each names its line.
  int secondLine = 0, firstLine = 0, dimLine = 0, parallelLine = 0;
  KernelBuilder T("structure");
  dimLine = __LINE__ + 1;
  auto A = T.Tensor("A", {Dim(-7)}, f32);
  auto B = T.Tensor("B", {Dim(64)}, f32);
  auto body = [&](Index) {
    auto a = T.AllocFragment({64}, f32, "a");
    T.Copy(B.Tile(0), a);
    parallelLine = __LINE__ + 1;
    T.Parallel({64}, [&](Index i, Index j) { a(i) = a(j); });
    T.Copy(a, B.Tile(0));
  };
  firstLine = __LINE__ + 1;
  T.Launch({1}, 64, body);
  secondLine = __LINE__ + 1;
  T.Launch({1}, 64, body);
  (void)A;
  std::string message(T.Build().status().message());
  ExpectMessageAt(message, dimLine, "tensor 'A' has dimension -7");
  ExpectMessageAt(message, parallelLine, "Parallel with a two-index body needs two extents, not 1");
  ExpectMessageAt(message, secondLine,
                  "Launch is called a second time; kernel 'structure' has one Launch, at "
                  "tests/frontend/misuse_test.cc:" +
                      std::to_string(firstLine));
  EXPECT_EQ(message.find("redefinition"), std::string::npos) << message;

  int unlaunchedLine = __LINE__ + 1;
  KernelBuilder unlaunched("unlaunched");
  Kernel kernel = unlaunched.Build();
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  ExpectMessageAt(std::string(kernel.status().message()), unlaunchedLine,
                  "kernel 'unlaunched' was never launched");
}

TEST(Frontend, ResourceErrorsNameEachBuffer) {
  // Over the shared memory and over the register budget: the error and each
  // note name the buffers, at the author's lines (not loc(unknown)).
  auto compileError = [](int64_t elements, bool shared) {
    KernelBuilder T("resources");
    auto A = T.Tensor("A", {Dim(elements)}, f32);
    T.Launch({1}, 32, [&](Index) {
      Buffer first = shared ? T.AllocShared({elements}, f32, "first")
                            : T.AllocFragment({elements}, f32, "first");
      Buffer second = shared ? T.AllocShared({elements}, f32, "second")
                             : T.AllocFragment({elements}, f32, "second");
      T.Copy(A.Tile(0), first);
      T.Copy(first, second);
      T.Copy(second, A.Tile(0));
    });
    Kernel kernel = T.Build();
    EXPECT_TRUE(kernel.status().ok()) << kernel.status();
    absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile({"sm_80"});
    EXPECT_FALSE(compiled.ok());
    return compiled.ok() ? std::string() : std::string(compiled.status().message());
  };
  std::string shared = compileError(1 << 16, /*shared=*/true);
  EXPECT_EQ(shared.find("loc(unknown)"), std::string::npos) << shared;
  for (const char *name : {"(first)", "(second)"})
    EXPECT_NE(shared.find(std::string("bytes allocated here ") + name), std::string::npos)
        << shared;
  std::string registers = compileError(4096, /*shared=*/false);
  EXPECT_EQ(registers.find("loc(unknown)"), std::string::npos) << registers;
  for (const char *name : {"'first'", "'second'"})
    EXPECT_NE(registers.find(std::string("registers per thread: ") + name), std::string::npos)
        << registers;
}

TEST(Frontend, NestingPastTheLimitIsAnError) {
  // Bodies nest at most 64 deep (deeper IR would exhaust the parser's
  // stack): 64 nested Ifs compile; 4000 stop at the 65th with its line.
  auto nested = [](int depth, int *line) {
    KernelBuilder T("nested");
    auto A = T.Tensor("A", {Dim(64)}, f32);
    T.Launch({1}, 64, [&](Index bx) {
      auto a = T.AllocFragment({64}, f32, "a");
      T.Copy(A.Tile(0), a);
      std::function<void(int)> nest = [&](int level) {
        if (level == depth) {
          T.Copy(a, A.Tile(0));
          return;
        }
        *line = __LINE__ + 1;
        T.If(bx < Index(5), [&] { nest(level + 1); });
      };
      nest(0);
    });
    return T.Build();
  };
  int line = 0;
  Kernel fits = nested(64, &line);
  ASSERT_TRUE(fits.status().ok()) << fits.status();
  EXPECT_TRUE(fits.Compile({"sm_80"}).ok());
  Kernel deep = nested(4000, &line);
  ExpectMessageAt(std::string(deep.status().message()), line,
                  "If nested 65 bodies deep, more than the 64 Tessera compiles");
}

TEST(Frontend, SignedIndexOpsOfADestroyedBuilderAreErrors) {
  // Min, Max, / and % look at their operands' IR to choose unsigned or
  // signed operations: with a destroyed builder's Index that IR is freed,
  // so the ownership check comes first (the frontend fuzzer found it).
  std::optional<Index> stale;
  {
    KernelBuilder first("first");
    auto X = first.Tensor("X", {Dim(64)}, f32);
    first.Launch({4}, 32, [&](Index bx) {
      stale = bx;
      auto f = first.AllocFragment({16}, f32, "f");
      first.Copy(X.Tile(bx * 16), f);
      first.Copy(f, X.Tile(bx * 16));
    });
    ASSERT_TRUE(first.Build().status().ok());
  }
  KernelBuilder second("second");
  auto Y = second.Tensor("Y", {Dim(64)}, f32);
  int line = 0;
  second.Launch({4}, 32, [&](Index bx) {
    auto f = second.AllocFragment({16}, f32, "f");
    line = __LINE__ + 1;
    Index mixed = Max(*stale, bx) + Min(bx, *stale) + *stale / bx + bx % *stale;
    second.Copy(Y.Tile(mixed * 0), f);
    second.Copy(f, Y.Tile(bx * 16));
  });
  std::string message(second.Build().status().message());
  // Max and Min report at their call's line, / and % at the statement's.
  size_t count = 0;
  for (size_t at = message.find("Index belongs to kernel 'first'"); at != std::string::npos;
       at = message.find("Index belongs to kernel 'first'", at + 1))
    ++count;
  EXPECT_EQ(count, 4u) << message;
  ExpectMessageAt(message, line, "Index belongs to kernel 'first'");
}

TEST(Frontend, LaunchBodyAndGridMustAgree) {
  // A body of two block indices over a grid of one reads no index that is
  // not there: an error at the Launch's line.
  KernelBuilder T("arity");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  int line = __LINE__ + 1;
  T.Launch({1}, 64, [&](Index x, Index y) {
    auto a = T.AllocFragment({64}, f32, "a");
    T.Copy(A.Tile(x + y), a);
  });
  Kernel kernel = T.Build();
  ExpectMessageAt(std::string(kernel.status().message()), line,
                  "Launch with a body of 2 block indices needs 2 grid extents, not 1");
}

TEST(Frontend, BuildersMayEndInAnyOrder) {
  // A ends before B: misuse after both are gone goes to the next builder,
  // not to freed state.
  auto a = std::make_unique<KernelBuilder>("a");
  auto b = std::make_unique<KernelBuilder>("b");
  a.reset();
  b.reset();
  int line = __LINE__ + 1;
  Scalar stray = Exp(Scalar(1.0));
  (void)stray;
  KernelBuilder next("next");
  Kernel kernel = next.Build();
  std::string message(kernel.status().message());
  EXPECT_NE(message.find("Exp is only valid inside KernelBuilder::Launch's body"),
            std::string::npos)
      << "line " << line << ": " << message;
}

} // namespace
} // namespace tessera
