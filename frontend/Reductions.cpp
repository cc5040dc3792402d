//===- Reductions.cpp - Arg-reductions and top-k in the frontend ----------===//
//
// This file implements KernelBuilder::ReduceArgMax, ReduceArgMin and TopK
// as compositions of tile.reduce and tile.parallel: a row's extreme value
// (one reduction), then the smallest position holding it (an integer
// reduction over the positions that hold it), and for top-k that pair k
// times, each time masking the position taken. Their scratch fragments are
// allocated at the start of the kernel's body, so the calls are valid
// wherever a reduction is (inside If and Serial too).
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

namespace {

constexpr double kNoPosition = 2147483647.0;

/// A fragment of `type` for the frontend's own use, allocated at the start
/// of the kernel's body.
Buffer scratchFragment(BuilderState &s, tile::BufferType type, const std::string &label,
                       const SourceLoc &loc) {
  mlir::OpBuilder::InsertionGuard guard(s.b());
  s.b().setInsertionPointToStart(&s.kernel.getBodyBlock());
  auto op = tile::AllocFragmentOp::create(s.b(), s.loc(loc), type, s.b().getStringAttr(label),
                                          nullptr, nullptr, nullptr);
  return s.buffer(op.getResult(), label);
}

/// The shapes and types an arg-reduction or top-k takes, or an error
/// naming `what`: `src` a [rows, n] fragment of f16, bf16, f32, f64, i32 or
/// i64; `values` of src's type and `indices` of i32, both [rows] (top-k:
/// [rows, k] with k <= n and k <= 16).
struct ArgShapes {
  tile::BufferType src;
  int64_t rows = 0, n = 0, k = 0;
};

std::optional<ArgShapes> argShapes(BuilderState &s, const char *what, const Buffer &src,
                                   const Buffer &values, const Buffer &indices, bool topK,
                                   const SourceLoc &loc) {
  mlir::Location at = s.loc(loc);
  if (BuilderState::current != &s) {
    s.error(std::string(what) + " is only valid inside KernelBuilder::Launch's body", at);
    return std::nullopt;
  }
  if (!s.takes(src, at) || !s.takes(values, at) || !s.takes(indices, at))
    return std::nullopt;
  if (!src.handle() || !values.handle() || !indices.handle()) {
    s.error(std::string(what) + " of a buffer that was not allocated", at);
    return std::nullopt;
  }
  auto type = [](const Buffer &b) {
    return mlir::cast<tile::BufferType>(BuilderState::value(b.handle()).getType());
  };
  ArgShapes shapes{type(src)};
  mlir::Type element = shapes.src.getElementType();
  bool numeric = element.isF16() || element.isBF16() || element.isF32() || element.isF64() ||
                 element.isSignlessInteger(32) || element.isSignlessInteger(64);
  if (!shapes.src.isFragment() || shapes.src.getRank() != 2 || !numeric) {
    s.error(std::string(what) +
                " takes a [rows, n] fragment of f16, bf16, f32, f64, i32 or i64, "
                "not " +
                BuilderState::stringify(shapes.src),
            at);
    return std::nullopt;
  }
  shapes.rows = shapes.src.getShape()[0];
  shapes.n = shapes.src.getShape()[1];
  tile::BufferType v = type(values), i = type(indices);
  shapes.k = topK ? (v.getRank() == 2 ? v.getShape()[1] : 0) : 1;
  llvm::SmallVector<int64_t> shape = {shapes.rows};
  if (topK)
    shape.push_back(shapes.k);
  auto fits = [&](tile::BufferType b, mlir::Type want) {
    return b.isFragment() && b.getShape() == llvm::ArrayRef<int64_t>(shape) &&
           b.getElementType() == want;
  };
  std::string expected = topK ? "[rows, k]" : "[rows]";
  if (!fits(v, element) || !fits(i, s.b().getI32Type())) {
    s.error(std::string(what) + " of a " + BuilderState::stringify(shapes.src) +
                " needs values and indices fragments of shape " + expected + " and types " +
                BuilderState::stringify(element) + " and i32, got " + BuilderState::stringify(v) +
                " and " + BuilderState::stringify(i),
            at);
    return std::nullopt;
  }
  if (topK && (shapes.k < 1 || shapes.k > 16 || shapes.k > shapes.n)) {
    s.error(std::string(what) + " takes k in [1, min(16, n)], got k = " + std::to_string(shapes.k) +
                " for n = " + std::to_string(shapes.n),
            at);
    return std::nullopt;
  }
  return shapes;
}

/// The extreme of each row of `src` into `best` and the smallest position
/// (plus `offset`) holding it into `where`, skipping positions `taken`
/// marks (when given). A NaN extreme is held by the row's first NaN (NaN
/// compares unequal to itself, so it is matched as "both NaN").
void rowExtreme(KernelBuilder &T, bool max, const Buffer &src, const ArgShapes &shapes,
                const Buffer &best, const Buffer &where, const Buffer &candidates,
                const Buffer *taken, const Index &offset, const SourceLoc &loc) {
  if (max)
    T.ReduceMax(src, best, /*clear=*/true, loc);
  else
    T.ReduceMin(src, best, /*clear=*/true, loc);
  T.Parallel(
      {shapes.rows, shapes.n},
      [&](Index i, Index j) {
        Scalar x = src(i, j), extreme = best(i);
        Scalar holds = Or(x == extreme, And(x != x, extreme != extreme));
        if (taken)
          holds = And(holds, Scalar((*taken)(i, j)) == 0);
        candidates(i, j) = Select(holds, ToScalar(j + offset, i32), kNoPosition);
      },
      loc);
  T.ReduceMin(candidates, where, /*clear=*/true, loc);
}

} // namespace

void KernelBuilder::ReduceArgMax(const Buffer &src, const Buffer &values, const Buffer &indices,
                                 const Index &offset, bool clear, SourceLoc loc) {
  argReduce(/*max=*/true, src, values, indices, offset, clear, loc);
}

void KernelBuilder::ReduceArgMin(const Buffer &src, const Buffer &values, const Buffer &indices,
                                 const Index &offset, bool clear, SourceLoc loc) {
  argReduce(/*max=*/false, src, values, indices, offset, clear, loc);
}

void KernelBuilder::argReduce(bool max, const Buffer &src, const Buffer &values,
                              const Buffer &indices, const Index &offset, bool clear,
                              SourceLoc loc) {
  BuilderState &s = *state_;
  const char *what = max ? "ReduceArgMax" : "ReduceArgMin";
  std::optional<ArgShapes> shapes = argShapes(s, what, src, values, indices, false, loc);
  if (!shapes || !s.takes(offset, s.loc(loc)))
    return;
  mlir::MLIRContext *ctx = s.context.get();
  mlir::Type element = shapes->src.getElementType();
  auto rowsOf = [&](mlir::Type type) {
    return tile::BufferType::get(ctx, {shapes->rows}, type, tile::MemoryScope::fragment);
  };
  Buffer best = scratchFragment(s, rowsOf(element), std::string(what) + ".best", loc);
  Buffer where = scratchFragment(s, rowsOf(s.b().getI32Type()), std::string(what) + ".where", loc);
  Buffer candidates =
      scratchFragment(s,
                      tile::BufferType::get(ctx, shapes->src.getShape(), s.b().getI32Type(),
                                            tile::MemoryScope::fragment),
                      std::string(what) + ".candidates", loc);
  rowExtreme(*this, max, src, *shapes, best, where, candidates, nullptr, offset, loc);
  // Into the results: replacing them, or where this extreme is strictly
  // beyond the one they hold (an earlier one wins a tie).
  Parallel(
      {shapes->rows},
      [&](Index i) {
        Scalar found = Select(Scalar(where(i)) == kNoPosition, -1, where(i));
        if (clear) {
          values(i) = best(i);
          indices(i) = found;
          return;
        }
        Scalar now = best(i), held = values(i);
        // Strictly beyond, or a first NaN (the extreme NaN is).
        Scalar beyond = Or(max ? now > held : now < held, And(now != now, held == held));
        indices(i) = Select(beyond, found, indices(i));
        values(i) = Select(beyond, best(i), values(i));
      },
      loc);
}

void KernelBuilder::TopK(const Buffer &src, const Buffer &values, const Buffer &indices,
                         SourceLoc loc) {
  BuilderState &s = *state_;
  std::optional<ArgShapes> shapes = argShapes(s, "TopK", src, values, indices, true, loc);
  if (!shapes)
    return;
  mlir::MLIRContext *ctx = s.context.get();
  mlir::Type element = shapes->src.getElementType();
  auto rowsOf = [&](mlir::Type type) {
    return tile::BufferType::get(ctx, {shapes->rows}, type, tile::MemoryScope::fragment);
  };
  Buffer work = scratchFragment(s, shapes->src, "TopK.work", loc);
  Buffer best = scratchFragment(s, rowsOf(element), "TopK.best", loc);
  Buffer where = scratchFragment(s, rowsOf(s.b().getI32Type()), "TopK.where", loc);
  auto positions = [&] {
    return tile::BufferType::get(ctx, shapes->src.getShape(), s.b().getI32Type(),
                                 tile::MemoryScope::fragment);
  };
  Buffer candidates = scratchFragment(s, positions(), "TopK.candidates", loc);
  Buffer taken = scratchFragment(s, positions(), "TopK.taken", loc);
  // A taken position becomes the type's lowest value (-inf for floats), so
  // it does not raise the next extreme, and is marked, so that it is not
  // taken again when the rest are that low too.
  double lowest = mlir::isa<mlir::FloatType>(element) ? -INFINITY
                  : element.isSignlessInteger(32)     ? -2147483648.0
                                                      : -0x1p63;
  Parallel(
      {shapes->rows, shapes->n},
      [&](Index i, Index j) {
        work(i, j) = src(i, j);
        taken(i, j) = 0;
      },
      loc);
  for (int64_t r = 0; r < shapes->k; ++r) {
    rowExtreme(*this, /*max=*/true, work, *shapes, best, where, candidates, &taken, Index(0), loc);
    Parallel(
        {shapes->rows, shapes->k},
        [&](Index i, Index c) {
          Scalar now = c == Index(r);
          values(i, c) = Select(now, best(i), values(i, c));
          indices(i, c) =
              Select(now, Select(Scalar(where(i)) == kNoPosition, -1, where(i)), indices(i, c));
        },
        loc);
    if (r + 1 < shapes->k)
      Parallel(
          {shapes->rows, shapes->n},
          [&](Index i, Index j) {
            Scalar now = ToScalar(j, i32) == Scalar(where(i));
            work(i, j) = Select(now, lowest, work(i, j));
            taken(i, j) = Select(now, 1, taken(i, j));
          },
          loc);
  }
}

} // namespace tessera
