//===- frontend_fuzzer.cc - Fuzzes the kernel-writing API -----------------===//
//
// This file implements a libFuzzer target for the frontend (frontend/
// Tessera.h): the input bytes are read as a program in a small grammar over
// KernelBuilder's public calls, which is built and, when Build() accepts it,
// compiled to PTX for a target the bytes choose. The grammar:
//
//   program   := tensor{1..4} scalar? launch
//   tensor    := rank 1..3, each dimension static (a table of sizes) or
//                Dynamic("M" | "N" | "K", divisibility), a dtype
//   launch    := grid of 1..3 extents (constants, dimensions, CeilDiv), a
//                thread count, a body of 1..3 block indices
//   statement := AllocShared | AllocFragment | Copy (tensor tile to buffer,
//                buffer to tensor tile, buffer to buffer) | Fill | Clear |
//                Gemm | Reduce* | ReduceArgMax | TopK | Parallel (1 or 2 indices, an expression of
//                buffer elements, constants and math) | Pipelined (a nested
//                body) | PingPong | Persistent | StreamK | Multicast |
//                EdgeLoop | If (a comparison of indices, one or two nested
//                bodies) | Serial | Unroll | AtomicAdd | Var / ScalarVar
//                (declared, assigned anywhere, often where it is refused) |
//                Require (of comparisons of any indices) |
//                WaitForPriorKernels | LaunchDependents | TensorAt (a view
//                at an address read from any tensor, of 1..2 extents, any
//                dtype and align; it joins the tensors, and is often used
//                outside the body that made it)
//   index     := constants, block and loop indices, + - * / % Min Max
//                CeilDiv, a value read from a tensor (Tensor::operator(),
//                any rank), a variable's value
//   tile      := offsets (sometimes one too many), sometimes Until(index,
//                axis)
//   expression also takes & | ^ ~ << >> ShiftRightLogical, Bitcast and
//                SaturatingCast
//
// Shapes, dtypes, ranks and counts come from the bytes and are often wrong
// together: Build() or Compile() must then return an error, never crash.
// The calls stay inside Launch's body, where the API says they belong.
//
// One input in four also misuses the API: the kernel's name is taken from a
// table of names PTX cannot hold (or from the bytes); handles of another
// KernelBuilder, alive or already destroyed, join the pools the statements
// draw from; and the built Kernel is moved from and then used.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/Tessera.h"
#include "runtime/kernel.pb.h"

namespace {

using namespace tessera;

/// Reads the input as a stream of choices; zeros once it is exhausted.
class Choices {
public:
  Choices(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  /// A number in [0, n).
  size_t pick(size_t n) { return n == 0 ? 0 : byte() % n; }
  template <typename T> const T &from(const std::vector<T> &table) {
    return table[pick(table.size())];
  }
  bool flag() { return byte() & 1; }
  bool done() const { return at_ >= size_; }

private:
  const uint8_t *data_;
  size_t size_;
  size_t at_ = 0;
};

const std::vector<DType> kDTypes = {f16, bf16, f32,    f64,    i8, i32,
                                     i64, f16,  f32, f8e4m3, f8e5m2, u8};
/// Sizes of tensor dimensions and buffer extents: the usual tiles, odd and
/// degenerate sizes, and a few that are out of range.
const std::vector<int64_t> kSizes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 3, 7, 1000, 0, -4};
const std::vector<int> kThreads = {32, 64, 128, 256, 384, 512, 1024, 96, 0, 2048};
const std::vector<int64_t> kConstants = {0, 1, 2, 3, 16, 64, 128, -1};
const std::vector<int> kStages = {1, 2, 3, 4, 5, 0, 40};
const std::vector<const char *> kTargets = {"sm_60", "sm_70", "sm_80", "sm_90a"};
/// Kernel names: good ones and what a PTX entry cannot be.
const std::vector<const char *> kNames = {"fuzz",        "_k2",    "a b", "a-b", "q\"x", "a@b",
                                          "caf\xc3\xa9", "9lives", "a.b", "",    "\x01", "$x"};

/// Handles made by another KernelBuilder: a tensor, a fragment and a block
/// index of its kernel.
struct ForeignHandles {
  std::unique_ptr<KernelBuilder> builder;
  std::optional<Tensor> tensor;
  std::optional<Buffer> buffer;
  std::optional<Index> index;
};

/// Builds another kernel and keeps its handles; with `destroy`, its builder
/// is gone before they are used.
std::unique_ptr<ForeignHandles> makeForeign(bool destroy) {
  auto foreign = std::make_unique<ForeignHandles>();
  foreign->builder = std::make_unique<KernelBuilder>("other");
  KernelBuilder &T = *foreign->builder;
  foreign->tensor = T.Tensor("f0", {Dim(64)}, f32);
  T.Launch({1}, 64, [&](Index bx) {
    foreign->buffer = T.AllocFragment({64}, f32, "foreign");
    foreign->index = bx;
    T.Copy(foreign->tensor->Tile(0), *foreign->buffer);
    T.Copy(*foreign->buffer, foreign->tensor->Tile(0));
  });
  (void)T.Build();
  if (destroy)
    foreign->builder.reset();
  return foreign;
}

/// The generator's state while it writes one kernel.
struct Program {
  Choices &in;
  KernelBuilder &T;
  std::vector<Tensor> tensors;
  std::vector<int> tensorRanks;
  std::vector<Dim> dims;
  std::vector<Buffer> buffers;
  std::vector<int> bufferRanks;
  std::vector<Index> indices;
  std::vector<Var> vars;
  std::vector<ScalarVar> scalarVars;
  bool hasScalar = false;
  Scalar scalar = Scalar(0.0);
  int depth = 0;
  /// Another builder's handles, which the statements may draw (misuse).
  const ForeignHandles *foreign = nullptr;

  Index index() {
    switch (in.pick(10)) {
    case 5:
      return Max(index(), Index(in.from(kConstants)));
    case 7:
      if (!vars.empty())
        return in.from(vars);
      return Index(int64_t(3));
    case 8: {
      if (depth > 3)
        return Index(int64_t(4));
      ++depth;
      Index a = index(), b = index();
      --depth;
      switch (in.pick(4)) {
      case 0:
        return a - b;
      case 1:
        return a % b;
      case 2:
        return Min(a, b);
      default:
        return CeilDiv(a, b);
      }
    }
    case 6: {
      // A value read from data, at indices of any count (often wrong).
      if (tensors.empty() || depth > 3)
        return Index(int64_t(2));
      size_t t = in.pick(tensors.size());
      std::vector<Index> at;
      int rank = tensorRanks[t] + (in.pick(6) == 0 ? 1 : 0);
      ++depth;
      for (int i = 0; i < rank; ++i)
        at.push_back(index());
      --depth;
      return tensors[t].Read(at);
    }
    case 0:
      return Index(in.from(kConstants));
    case 1:
      return indices.empty() ? Index(int64_t(0)) : in.from(indices) * Index(in.from(kConstants));
    case 2:
      return indices.empty() ? Index(int64_t(0)) : in.from(indices);
    case 3:
      return indices.empty() ? Index(int64_t(1)) : in.from(indices) + Index(in.from(kConstants));
    default:
      return Index(in.from(kConstants)) / Index(in.from(kConstants));
    }
  }

  /// Offsets for a tile of `rank` dimensions (sometimes one too many).
  TileRef tile(size_t t) {
    // Through Tensor::Tile: the tile carries its tensor's builder, so a
    // foreign tensor's tile meets the ownership check.
    TileRef ref = tensors[t].Tile();
    int rank = tensorRanks[t] + (in.pick(8) == 0 ? 1 : 0);
    for (int i = 0; i < rank; ++i)
      ref.offsets.push_back(index());
    if (in.pick(6) == 0)
      return ref.Until(index(), int64_t(in.pick(4)) - 1);
    return ref;
  }

  Buffer alloc(bool shared) {
    std::vector<int64_t> shape;
    int rank = 1 + int(in.pick(3));
    for (int i = 0; i < rank; ++i)
      shape.push_back(in.from(kSizes));
    Buffer b = shared ? T.AllocShared(shape, in.from(kDTypes)) : T.AllocFragment(shape, in.from(kDTypes));
    buffers.push_back(b);
    bufferRanks.push_back(rank);
    return b;
  }

  Buffer buffer() {
    if (buffers.empty() || in.pick(6) == 0)
      return alloc(in.flag());
    return in.from(buffers);
  }

  /// An element of a buffer at the loop's indices (or constants).
  ElementRef element(const Buffer &b, int rank, const std::vector<Index> &at) {
    auto idx = [&](int i) { return i < int(at.size()) ? at[i] : Index(int64_t(0)); };
    switch (rank) {
    case 1:
      return b(idx(0));
    case 2:
      return b(idx(0), idx(1));
    default:
      return b(idx(0), idx(1), idx(2));
    }
  }

  Scalar expression(const std::vector<Index> &at, int level = 0) {
    switch (level > 2 ? 0 : in.pick(10)) {
    case 0:
      return Scalar(double(in.from(kConstants)) * 0.5);
    case 1:
    case 2: {
      size_t i = in.pick(buffers.size());
      if (buffers.empty())
        return Scalar(1.0);
      return element(buffers[i], bufferRanks[i], at);
    }
    case 3:
      return expression(at, level + 1) + expression(at, level + 1);
    case 4:
      return expression(at, level + 1) * expression(at, level + 1);
    case 5:
      return expression(at, level + 1) / expression(at, level + 1);
    case 6:
      return Max(expression(at, level + 1), expression(at, level + 1));
    case 7: {
      Scalar x = expression(at, level + 1);
      switch (in.pick(8)) {
      case 0:
        return Exp(x);
      case 1:
        return Tanh(x);
      case 2:
        return Erf(x);
      case 3:
        return Rsqrt(x);
      case 4:
        return Log(x);
      case 5:
        return Abs(x);
      case 6:
        return -x;
      default:
        return Cast(x, in.from(kDTypes));
      }
    }
    case 8:
      if (!scalarVars.empty() && in.flag())
        return in.from(scalarVars);
      return hasScalar ? scalar : Scalar(2.0);
    case 9:
      return bits(at, level);
    default:
      return Scalar(1.0) - expression(at, level + 1);
    }
  }

  /// Bit operations, bit casts and saturating casts, on whatever types the
  /// operands have (often not integers: then an error).
  Scalar bits(const std::vector<Index> &at, int level) {
    Scalar x = expression(at, level + 1);
    Scalar y = in.flag() ? Scalar(double(in.from(kConstants))) : expression(at, level + 1);
    switch (in.pick(9)) {
    case 0:
      return x & y;
    case 1:
      return x | y;
    case 2:
      return x ^ y;
    case 3:
      return ~x;
    case 4:
      return x << y;
    case 5:
      return x >> y;
    case 6:
      return ShiftRightLogical(x, y);
    case 7:
      return Bitcast(x, in.from(kDTypes));
    default:
      return SaturatingCast(x, in.from(kDTypes));
    }
  }

  /// A body of 1..3 statements, with `k` as a loop index when given.
  void nested(const Index *k) {
    ++depth;
    if (k)
      indices.push_back(*k);
    int count = 1 + int(in.pick(3));
    for (int i = 0; i < count; ++i)
      statement();
    if (k)
      indices.pop_back();
    --depth;
  }

  /// If, Serial or Unroll around nested statements.
  void control() {
    if (depth > 1)
      return;
    switch (in.pick(4)) {
    case 0:
      T.If(index() < index(), [&] { nested(nullptr); });
      return;
    case 1:
      T.If(
          index() == index(), [&] { nested(nullptr); }, [&] { nested(nullptr); });
      return;
    case 2:
      T.Serial(index(), [&](Index k) { nested(&k); });
      return;
    default:
      T.Unroll(int64_t(in.from(kConstants)) * (in.flag() ? 1 : 40), [&](Index k) { nested(&k); });
      return;
    }
  }

  void parallel() {
    if (buffers.empty())
      alloc(false);
    size_t target = in.pick(buffers.size());
    Buffer dst = buffers[target];
    int rank = bufferRanks[target];
    std::vector<int64_t> extents;
    int loopRank = in.pick(4) == 0 ? 3 - rank : rank;
    loopRank = loopRank < 1 ? 1 : (loopRank > 2 ? 2 : loopRank);
    for (int i = 0; i < loopRank; ++i)
      extents.push_back(in.pick(4) == 0 ? in.from(kSizes) : 16);
    if (loopRank == 1) {
      T.Parallel(extents, [&](Index i) { element(dst, rank, {i}) = expression({i}); });
    } else {
      T.Parallel(extents,
                 [&](Index i, Index j) { element(dst, rank, {i, j}) = expression({i, j}); });
    }
  }

  /// Declares, assigns or requires: variables, preconditions and the
  /// kernel's order with its neighbors (anywhere, often where refused).
  void state() {
    switch (in.pick(8)) {
    case 7: {
      if (tensors.empty())
        return;
      size_t t = in.pick(tensors.size());
      std::vector<Index> at, shape;
      for (int i = tensorRanks[t] + (in.pick(6) == 0 ? 1 : 0); i > 0; --i)
        at.push_back(index());
      for (int i = 1 + in.pick(2); i > 0; --i)
        shape.push_back(in.flag() ? Index(int64_t(in.from(kConstants))) : index());
      ViewLayout layout;
      if (in.flag())
        layout.strides.assign(shape.size() - (in.pick(4) == 0 ? 0 : 1), index());
      layout.align = in.flag() ? int64_t(1) << in.pick(6) : 0;
      tensors.push_back(T.TensorAt(tensors[t], at, shape, in.from(kDTypes), "view", layout));
      tensorRanks.push_back(int(shape.size()));
      return;
    }
    case 0:
      vars.push_back(T.Var(index(), in.flag() ? "v" : ""));
      return;
    case 1:
      scalarVars.push_back(T.ScalarVar(expression(indices), in.from(kDTypes)));
      return;
    case 2:
      if (!vars.empty())
        vars[in.pick(vars.size())] = index();
      return;
    case 3:
      if (!scalarVars.empty())
        scalarVars[in.pick(scalarVars.size())] = expression(indices);
      return;
    case 4:
      T.WaitForPriorKernels();
      return;
    case 5:
      T.LaunchDependents();
      return;
    default:
      T.Require(in.flag() ? index() % index() == index() : index() <= index());
      return;
    }
  }

  void statement() {
    switch (in.pick(20)) {
    case 19:
      state();
      return;
    case 16:
    case 17:
      control();
      return;
    case 18: {
      size_t t = in.pick(tensors.size());
      Buffer b = buffer();
      T.AtomicAdd(b, tile(t));
      return;
    }
    case 0:
      alloc(true);
      return;
    case 1:
      alloc(false);
      return;
    case 2: {
      size_t t = in.pick(tensors.size());
      T.Copy(tile(t), buffer());
      return;
    }
    case 3: {
      size_t t = in.pick(tensors.size());
      Buffer b = buffer();
      T.Copy(b, tile(t));
      return;
    }
    case 4: {
      Buffer a = buffer();
      T.Copy(a, buffer());
      return;
    }
    case 5:
      T.Fill(buffer(), double(in.from(kConstants)));
      return;
    case 6:
      T.Clear(buffer());
      return;
    case 7: {
      Buffer a = buffer(), b = buffer(), c = buffer();
      T.Gemm(a, b, c, in.pick(4) == 0, in.pick(4) == 0);
      return;
    }
    case 8: {
      Buffer src = buffer(), dst = buffer();
      bool clear = in.flag();
      switch (in.pick(6)) {
      case 4:
        T.ReduceArgMax(src, dst, buffer(), index(), clear);
        return;
      case 5:
        T.TopK(src, dst, buffer());
        return;
      case 0:
        T.ReduceMax(src, dst, clear);
        return;
      case 1:
        T.ReduceMin(src, dst, clear);
        return;
      case 2:
        T.ReduceSum(src, dst, clear);
        return;
      default:
        T.ReduceAbsSum(src, dst, clear);
        return;
      }
    }
    case 9:
    case 10:
      parallel();
      return;
    case 11:
    case 12:
      pipelined();
      return;
    case 13:
      switch (in.pick(5)) {
      case 0:
        T.PingPong();
        return;
      case 1:
        T.Persistent();
        return;
      case 2:
        T.StreamK();
        return;
      case 3:
        T.Multicast(int64_t(in.pick(10)));
        return;
      default:
        T.EdgeLoop();
        return;
      }
    default:
      return;
    }
  }

  void pipelined() {
    if (depth > 1)
      return;
    int stages = in.from(kStages);
    auto body = [&](Index k) {
      ++depth;
      indices.push_back(k);
      int count = 1 + int(in.pick(4));
      for (int i = 0; i < count; ++i)
        statement();
      indices.pop_back();
      --depth;
    };
    switch (in.pick(3)) {
    case 0:
      T.Pipelined(int64_t(in.from(kConstants)), stages, body);
      return;
    case 1:
      T.Pipelined(dims.empty() ? GridExtent(4) : CeilDiv(in.from(dims), in.from(kSizes)), stages,
                  body);
      return;
    default:
      T.Pipelined(index(), stages, body);
      return;
    }
  }

  GridExtent extent() {
    switch (in.pick(3)) {
    case 0:
      return GridExtent(in.from(kConstants));
    case 1:
      return dims.empty() ? GridExtent(1) : GridExtent(in.from(dims));
    default:
      return dims.empty() ? GridExtent(2) : CeilDiv(in.from(dims), in.from(kSizes));
    }
  }

  void body(const std::vector<Index> &blocks) {
    indices = blocks;
    if (foreign) {
      tensors.push_back(*foreign->tensor);
      tensorRanks.push_back(1);
      buffers.push_back(*foreign->buffer);
      bufferRanks.push_back(1);
      indices.push_back(*foreign->index);
    }
    int count = 1 + int(in.pick(12));
    for (int i = 0; i < count && !in.done(); ++i)
      statement();
  }

  void run() {
    int numTensors = 1 + int(in.pick(4));
    for (int t = 0; t < numTensors; ++t) {
      std::vector<Dim> shape;
      int rank = 1 + int(in.pick(3));
      for (int i = 0; i < rank; ++i) {
        if (in.pick(3) == 0) {
          Dim dim = Dim::Dynamic(std::string(1, "MNK"[in.pick(3)]),
                                 std::vector<int64_t>{1, 8, 16, 3}[in.pick(4)]);
          shape.push_back(dim);
          dims.push_back(dim);
        } else {
          shape.push_back(Dim(in.from(kSizes)));
        }
      }
      tensors.push_back(T.Tensor("t" + std::to_string(t), shape, in.from(kDTypes)));
      tensorRanks.push_back(rank);
    }
    if (in.pick(4) == 0) {
      scalar = T.ScalarArg("alpha", in.from(kDTypes));
      hasScalar = true;
    }
    std::vector<GridExtent> grid;
    int gridRank = 1 + int(in.pick(3));
    for (int i = 0; i < gridRank; ++i)
      grid.push_back(extent());
    int threads = in.from(kThreads);
    switch (gridRank) {
    case 1:
      T.Launch(grid, threads, [&](Index x) { body({x}); });
      return;
    case 2:
      T.Launch(grid, threads, [&](Index x, Index y) { body({x, y}); });
      return;
    default:
      T.Launch(grid, threads, [&](Index x, Index y, Index z) { body({x, y, z}); });
      return;
    }
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  Choices in(data, size);
  const char *target = kTargets[in.pick(kTargets.size())];
  const bool misuse = in.pick(4) == 0;
  std::string name = "fuzz";
  std::unique_ptr<ForeignHandles> foreign;
  if (misuse) {
    if (in.pick(3) == 0) {
      char first = char(in.byte()), second = char(in.byte());
      name = std::string{first, second};
    } else {
      name = in.from(kNames);
    }
    if (in.flag())
      foreign = makeForeign(/*destroy=*/in.flag());
  }
  CompileOptions options;
  options.target = target;
  Kernel kernel = [&] {
    KernelBuilder T(name);
    Program program{in, T};
    program.foreign = foreign.get();
    program.run();
    return T.Build();
  }();
  if (misuse) {
    // The moved-from Kernel answers every call with an error.
    Kernel moved = std::move(kernel);
    (void)kernel.status(); // NOLINT: used after the move on purpose
    (void)kernel.Compile(options);
    (void)kernel.GetKernelSource(Stage::kPTX, options);
    kernel = std::move(moved);
  }
  if (!kernel.status().ok())
    return 0;
  (void)kernel.Compile(options);
  return 0;
}
