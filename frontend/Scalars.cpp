//===- Scalars.cpp - Dimensions, indices and scalars of the frontend ------===//
//
// This file implements Dim, GridExtent, Index and Scalar: their arithmetic
// builds index and scalar operations through the current KernelBuilder.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;


Dim Dim::Dynamic(std::string name, int64_t divisibility) {
  Dim d;
  d.name_ = std::move(name);
  d.divisibility_ = std::max<int64_t>(divisibility, 1);
  return d;
}

GridExtent::GridExtent(const Dim &dim) : hasDim_(true), dim_(dim) {
  if (dim.isStatic()) {
    hasDim_ = false;
    constant_ = dim.size();
  }
}

GridExtent CeilDiv(const Dim &dim, int64_t tile) {
  if (dim.isStatic() && tile >= 1)
    return GridExtent(dim.size() / tile + (dim.size() % tile != 0));
  // A dynamic dimension, or a tile that is not positive: Launch and
  // Pipelined read the divisor (and report a bad one as the author's error).
  GridExtent extent(dim);
  extent.divisor_ = tile;
  return extent;
}

Index::Index(int64_t value) : constant_(value) {}

namespace {

/// An Index arithmetic error between two constants (a division by zero, an
/// overflow): reported by Build like any author's error; the value is 0.
Index constantError(const char *what, const Index &a, const Index &b) {
  std::string message = std::string("Index ") + what + " of constants " +
                        std::to_string(a.constant()) + " and " + std::to_string(b.constant());
  if (BuilderState::current)
    BuilderState::current->error(message);
  else
    recordMisuse("tessera: " + message);
  return Index(0);
}

/// Whether index `v` is non-negative by construction: block and loop
/// indices, dimensions, non-negative constants, and sums, products,
/// quotients, remainders, minima and maxima of such (a maximum needs one),
/// and a - Min(a, b). Other differences, values read from memory or a
/// variable, and converted scalars may be negative. `depth` bounds the walk over long chains.
bool knownNonNegative(mlir::Value v, int depth = 0) {
  if (depth > 16)
    return false;
  if (auto argument = mlir::dyn_cast<mlir::BlockArgument>(v))
    return mlir::isa<tile::KernelOp, tile::ParallelOp, tile::PipelinedOp, tile::SerialOp>(
        argument.getOwner()->getParentOp());
  mlir::Operation *op = v.getDefiningOp();
  auto both = [&] {
    return knownNonNegative(op->getOperand(0), depth + 1) &&
           knownNonNegative(op->getOperand(1), depth + 1);
  };
  if (auto constant = mlir::dyn_cast<mlir::arith::ConstantIndexOp>(op))
    return constant.value() >= 0;
  if (mlir::isa<tile::DimOp>(op))
    return true;
  if (mlir::isa<mlir::arith::AddIOp, mlir::arith::MulIOp, mlir::arith::DivUIOp,
                mlir::arith::RemUIOp, mlir::arith::CeilDivUIOp, mlir::arith::MinUIOp,
                mlir::arith::MaxUIOp, mlir::arith::DivSIOp, mlir::arith::RemSIOp,
                mlir::arith::CeilDivSIOp, mlir::arith::MinSIOp>(op))
    return both();
  // a - Min(a, b) (a clamped difference, max(a - b, 0)).
  if (mlir::isa<mlir::arith::SubIOp>(op))
    if (mlir::Operation *min = op->getOperand(1).getDefiningOp();
        min && mlir::isa<mlir::arith::MinUIOp, mlir::arith::MinSIOp>(min))
      return llvm::is_contained(min->getOperands(), op->getOperand(0));
  if (mlir::isa<mlir::arith::MaxSIOp>(op))
    return knownNonNegative(op->getOperand(0), depth + 1) ||
           knownNonNegative(op->getOperand(1), depth + 1);
  return false;
}

bool knownNonNegative(const Index &i) {
  return i.handle() ? knownNonNegative(BuilderState::value(i.handle())) : i.constant() >= 0;
}

/// Index arithmetic is signed, as int64_t's: the unsigned operation where
/// both operands are known non-negative (the same result, and what the
/// kernels' index math has always compiled to), else the signed one.
template <typename UnsignedOp, typename SignedOp>
Index signAware(const Index &a, const Index &b, const char *what) {
  // Both belong to the kernel being built before either's IR is read (a
  // handle of a destroyed builder points at freed IR).
  if (!state(what, a, b))
    return Index(int64_t(0));
  if (knownNonNegative(a) && knownNonNegative(b))
    return indexBinary<UnsignedOp>(a, b, what);
  return indexBinary<SignedOp>(a, b, what);
}

/// True when a / b (and a % b) of constants is defined.
bool divisible(const Index &a, const Index &b) {
  return b.constant() != 0 &&
         !(a.constant() == std::numeric_limits<int64_t>::min() && b.constant() == -1);
}

} // namespace

Index operator+(const Index &a, const Index &b) {
  int64_t sum;
  if (!a.handle() && !b.handle())
    return __builtin_add_overflow(a.constant(), b.constant(), &sum)
               ? constantError("addition overflows", a, b)
               : Index(sum);
  return indexBinary<mlir::arith::AddIOp>(a, b, "Index +");
}
Index operator-(const Index &a, const Index &b) {
  int64_t difference;
  if (!a.handle() && !b.handle())
    return __builtin_sub_overflow(a.constant(), b.constant(), &difference)
               ? constantError("subtraction overflows", a, b)
               : Index(difference);
  return indexBinary<mlir::arith::SubIOp>(a, b, "Index -");
}
Index operator*(const Index &a, const Index &b) {
  int64_t product;
  if (!a.handle() && !b.handle())
    return __builtin_mul_overflow(a.constant(), b.constant(), &product)
               ? constantError("multiplication overflows", a, b)
               : Index(product);
  return indexBinary<mlir::arith::MulIOp>(a, b, "Index *");
}
Index operator/(const Index &a, const Index &b) {
  if (!a.handle() && !b.handle())
    return divisible(a, b) ? Index(a.constant() / b.constant())
                           : constantError("division by zero or overflowing", a, b);
  return signAware<mlir::arith::DivUIOp, mlir::arith::DivSIOp>(a, b, "Index /");
}
Index operator%(const Index &a, const Index &b) {
  if (!a.handle() && !b.handle())
    return divisible(a, b) ? Index(a.constant() % b.constant())
                           : constantError("remainder by zero or overflowing", a, b);
  return signAware<mlir::arith::RemUIOp, mlir::arith::RemSIOp>(a, b, "Index %");
}

Index Min(const Index &a, const Index &b, SourceLoc where) {
  ExpressionAt expression(where);
  if (!a.handle() && !b.handle())
    return Index(std::min(a.constant(), b.constant()));
  return signAware<mlir::arith::MinUIOp, mlir::arith::MinSIOp>(a, b, "Min of indices");
}

Index Max(const Index &a, const Index &b, SourceLoc where) {
  ExpressionAt expression(where);
  if (!a.handle() && !b.handle())
    return Index(std::max(a.constant(), b.constant()));
  return signAware<mlir::arith::MaxUIOp, mlir::arith::MaxSIOp>(a, b, "Max of indices");
}

Index CeilDiv(const Index &a, const Index &b, SourceLoc where) {
  ExpressionAt expression(where);
  if (!a.handle() && !b.handle()) {
    if (!divisible(a, b))
      return constantError("ceiling division by zero or overflowing", a, b);
    int64_t quotient = a.constant() / b.constant();
    bool up = a.constant() % b.constant() != 0 && ((a.constant() < 0) == (b.constant() < 0));
    return Index(quotient + (up ? 1 : 0));
  }
  return signAware<mlir::arith::CeilDivUIOp, mlir::arith::CeilDivSIOp>(a, b, "CeilDiv of indices");
}

std::pair<Index, Index> SwizzleBlocks(const Index &bx, const Index &by, const Index &gridX,
                                      const Index &gridY, int64_t group) {
  Index pid = by * gridX + bx;
  Index width = gridX * group;
  Index firstRow = (pid / width) * group;
  // firstRow < gridY, so the rows left and all that follows are
  // non-negative: the unsigned operations.
  Index rows = indexBinary<mlir::arith::MinUIOp>(gridY - firstRow, Index(group), "SwizzleBlocks");
  Index inGroup = pid % width;
  return {indexBinary<mlir::arith::DivUIOp>(inGroup, rows, "SwizzleBlocks"),
          firstRow + indexBinary<mlir::arith::RemUIOp>(inGroup, rows, "SwizzleBlocks")};
}

Scalar::Scalar(double value) : constant_(value) {}

Scalar operator+(const Scalar &a, const Scalar &b) {
  if (isConstant(a) && isConstant(b))
    return Scalar(a.constant() + b.constant());
  return binary<mlir::arith::AddFOp, mlir::arith::AddIOp>(a, b, "Scalar +");
}
Scalar operator-(const Scalar &a, const Scalar &b) {
  if (isConstant(a) && isConstant(b))
    return Scalar(a.constant() - b.constant());
  return binary<mlir::arith::SubFOp, mlir::arith::SubIOp>(a, b, "Scalar -");
}
Scalar operator*(const Scalar &a, const Scalar &b) {
  if (isConstant(a) && isConstant(b))
    return Scalar(a.constant() * b.constant());
  return binary<mlir::arith::MulFOp, mlir::arith::MulIOp>(a, b, "Scalar *");
}
Scalar operator/(const Scalar &a, const Scalar &b) {
  if (isConstant(a) && isConstant(b))
    return Scalar(a.constant() / b.constant());
  return binary<mlir::arith::DivFOp, mlir::arith::DivSIOp>(a, b, "Scalar /");
}
Scalar operator-(const Scalar &a) { return Scalar(0.0) - a; }

Scalar Max(const Scalar &a, const Scalar &b, SourceLoc where) {
  ExpressionAt expression(where);
  if (isConstant(a) && isConstant(b))
    return Scalar(std::max(a.constant(), b.constant()));
  return binary<mlir::arith::MaximumFOp, mlir::arith::MaxSIOp>(a, b, "Max");
}
Scalar Min(const Scalar &a, const Scalar &b, SourceLoc where) {
  ExpressionAt expression(where);
  if (isConstant(a) && isConstant(b))
    return Scalar(std::min(a.constant(), b.constant()));
  return binary<mlir::arith::MinimumFOp, mlir::arith::MinSIOp>(a, b, "Min");
}
Scalar Exp(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::ExpOp>(x, "Exp");
}
Scalar Log(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::LogOp>(x, "Log");
}
Scalar Exp2(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::Exp2Op>(x, "Exp2");
}
Scalar Rsqrt(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::RsqrtOp>(x, "Rsqrt");
}
Scalar Erf(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::ErfOp>(x, "Erf");
}
Scalar Sqrt(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::SqrtOp>(x, "Sqrt");
}
Scalar Tanh(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::TanhOp>(x, "Tanh");
}
Scalar Abs(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  return unary<mlir::math::AbsFOp>(x, "Abs");
}

Scalar Cast(const Scalar &x, DType to, SourceLoc where) {
  ExpressionAt expression(where);
  BuilderState *state = detail::state("Cast", x);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Type type = toMlirType(s.context.get(), to);
  if (isConstant(x))
    return s.scalar(s.materialize(x, type));
  mlir::Value v = s.resolve(x);
  mlir::Location loc = s.here();
  mlir::Type from = v.getType();
  if (from == type)
    return x;
  // Storage types convert through tile.cast (arith computes with neither);
  // to FP8 saturating, as quantization wants.
  if (tile::isStorageOnlyType(from) || tile::isStorageOnlyType(type))
    return s.scalar(tile::CastOp::create(s.b(), loc, type, v,
                                         /*saturate=*/tile::isStorageOnlyType(type) &&
                                             mlir::isa<mlir::FloatType>(type)));
  auto fromFloat = mlir::dyn_cast<mlir::FloatType>(from);
  auto toFloat = mlir::dyn_cast<mlir::FloatType>(type);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return s.scalar(mlir::arith::ExtFOp::create(s.b(), loc, type, v));
    if (fromFloat.getWidth() == toFloat.getWidth())
      v = mlir::arith::ExtFOp::create(s.b(), loc, s.b().getF32Type(), v);
    return s.scalar(mlir::arith::TruncFOp::create(s.b(), loc, type, v));
  }
  if (fromFloat)
    return s.scalar(mlir::arith::FPToSIOp::create(s.b(), loc, type, v));
  if (toFloat)
    return s.scalar(mlir::arith::SIToFPOp::create(s.b(), loc, type, v));
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return s.scalar(mlir::arith::ExtSIOp::create(s.b(), loc, type, v));
  return s.scalar(mlir::arith::TruncIOp::create(s.b(), loc, type, v));
}

namespace {

/// A comparison, as predicates of arith.cmpf (ordered; unordered for !=)
/// and arith.cmpi (signed), with its constant folding.
struct Comparison {
  const char *name;
  mlir::arith::CmpFPredicate fp;
  mlir::arith::CmpIPredicate ip;
  bool (*fold)(double, double);
};
constexpr Comparison kLess{"<", mlir::arith::CmpFPredicate::OLT, mlir::arith::CmpIPredicate::slt,
                           [](double a, double b) { return a < b; }};
constexpr Comparison kLessEqual{"<=", mlir::arith::CmpFPredicate::OLE,
                                mlir::arith::CmpIPredicate::sle,
                                [](double a, double b) { return a <= b; }};
constexpr Comparison kGreater{">", mlir::arith::CmpFPredicate::OGT,
                              mlir::arith::CmpIPredicate::sgt,
                              [](double a, double b) { return a > b; }};
constexpr Comparison kGreaterEqual{">=", mlir::arith::CmpFPredicate::OGE,
                                   mlir::arith::CmpIPredicate::sge,
                                   [](double a, double b) { return a >= b; }};
constexpr Comparison kEqual{"==", mlir::arith::CmpFPredicate::OEQ, mlir::arith::CmpIPredicate::eq,
                            [](double a, double b) { return a == b; }};
constexpr Comparison kNotEqual{"!=", mlir::arith::CmpFPredicate::UNE,
                               mlir::arith::CmpIPredicate::ne,
                               [](double a, double b) { return a != b; }};

/// True for a boolean (i1) value.
bool isBoolean(mlir::Value v) { return v && v.getType().isInteger(1); }

Scalar compare(const Comparison &c, const Scalar &a, const Scalar &b) {
  if (isConstant(a) && isConstant(b))
    return Scalar(c.fold(a.constant(), b.constant()) ? 1.0 : 0.0);
  BuilderState *state = detail::state((std::string("Scalar ") + c.name).c_str(), a, b);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Value x = s.resolve(a), y = s.resolve(b);
  mlir::Type type = (x ? x : y).getType();
  if (x && y && x.getType() != y.getType()) {
    s.error(std::string("comparing (") + c.name + ") scalars of types " +
            BuilderState::stringify(x.getType()) + " and " +
            BuilderState::stringify(y.getType()) + "; Cast one");
    return Scalar(0.0);
  }
  if (isBoolean(x ? x : y) || mlir::isa<mlir::IndexType>(type)) {
    s.error(std::string("comparing (") + c.name + ") scalars of type " +
            BuilderState::stringify(type) + "; compare numbers (use And, Or, Not on booleans)");
    return Scalar(0.0);
  }
  x = s.materialize(a, type);
  y = s.materialize(b, type);
  if (mlir::isa<mlir::FloatType>(type))
    return s.scalar(mlir::arith::CmpFOp::create(s.b(), s.here(), c.fp, x, y));
  return s.scalar(mlir::arith::CmpIOp::create(s.b(), s.here(), c.ip, x, y));
}

Scalar compare(const Comparison &c, const Index &a, const Index &b) {
  if (!a.handle() && !b.handle())
    return Scalar(c.fold(double(a.constant()), double(b.constant())) ? 1.0 : 0.0);
  BuilderState *state = detail::state((std::string("Index ") + c.name).c_str(), a, b);
  if (!state)
    return Scalar(0.0);
  return state->scalar(mlir::arith::CmpIOp::create(state->b(), state->here(), c.ip,
                                                   state->materialize(a), state->materialize(b)));
}

mlir::Value boolean(BuilderState &s, const Scalar &x, const char *what) {
  return booleanValue(s, x, what);
}

/// And / Or of two booleans.
template <typename Op>
Scalar logical(const Scalar &a, const Scalar &b, const char *what, bool (*fold)(bool, bool)) {
  if (isConstant(a) && isConstant(b))
    return Scalar(fold(a.constant() != 0, b.constant() != 0) ? 1.0 : 0.0);
  BuilderState *state = detail::state(what, a, b);
  if (!state)
    return Scalar(0.0);
  mlir::Value x = boolean(*state, a, what), y = boolean(*state, b, what);
  if (!x || !y)
    return Scalar(0.0);
  return state->scalar(Op::create(state->b(), state->here(), x, y));
}

} // namespace

Scalar operator<(const Scalar &a, const Scalar &b) { return compare(kLess, a, b); }
Scalar operator<=(const Scalar &a, const Scalar &b) { return compare(kLessEqual, a, b); }
Scalar operator>(const Scalar &a, const Scalar &b) { return compare(kGreater, a, b); }
Scalar operator>=(const Scalar &a, const Scalar &b) { return compare(kGreaterEqual, a, b); }
Scalar operator==(const Scalar &a, const Scalar &b) { return compare(kEqual, a, b); }
Scalar operator!=(const Scalar &a, const Scalar &b) { return compare(kNotEqual, a, b); }
Scalar operator<(const Index &a, const Index &b) { return compare(kLess, a, b); }
Scalar operator<=(const Index &a, const Index &b) { return compare(kLessEqual, a, b); }
Scalar operator>(const Index &a, const Index &b) { return compare(kGreater, a, b); }
Scalar operator>=(const Index &a, const Index &b) { return compare(kGreaterEqual, a, b); }
Scalar operator==(const Index &a, const Index &b) { return compare(kEqual, a, b); }
Scalar operator!=(const Index &a, const Index &b) { return compare(kNotEqual, a, b); }

Scalar And(const Scalar &a, const Scalar &b, SourceLoc where) {
  ExpressionAt expression(where);
  return logical<mlir::arith::AndIOp>(a, b, "And", [](bool x, bool y) { return x && y; });
}
Scalar Or(const Scalar &a, const Scalar &b, SourceLoc where) {
  ExpressionAt expression(where);
  return logical<mlir::arith::OrIOp>(a, b, "Or", [](bool x, bool y) { return x || y; });
}
Scalar Not(const Scalar &a, SourceLoc where) {
  ExpressionAt expression(where);
  return logical<mlir::arith::XOrIOp>(a, Scalar(1.0), "Not",
                                      [](bool x, bool y) { return x != y; });
}

Scalar Select(const Scalar &condition, const Scalar &onTrue, const Scalar &onFalse,
              SourceLoc where) {
  ExpressionAt expression(where);
  if (isConstant(condition))
    return condition.constant() != 0 ? onTrue : onFalse;
  BuilderState *state = detail::state("Select", condition, onTrue, onFalse);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Value cond = boolean(s, condition, "Select's condition");
  mlir::Value x = s.resolve(onTrue), y = s.resolve(onFalse);
  if (x && y && x.getType() != y.getType()) {
    s.error("Select's branches have types " + BuilderState::stringify(x.getType()) + " and " +
            BuilderState::stringify(y.getType()) + "; Cast one");
    return Scalar(0.0);
  }
  if (!cond)
    return Scalar(0.0);
  mlir::Type type = x ? x.getType() : y ? y.getType() : s.b().getF32Type();
  x = s.materialize(onTrue, type);
  y = s.materialize(onFalse, type);
  return s.scalar(mlir::arith::SelectOp::create(s.b(), s.here(), cond, x, y));
}

Scalar ToScalar(const Index &index, DType to, SourceLoc where) {
  ExpressionAt expression(where);
  if (!index.handle())
    return Scalar(double(index.constant()));
  BuilderState *state = detail::state("ToScalar", index);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Type type = toMlirType(s.context.get(), to);
  mlir::Location loc = s.here();
  auto floatType = mlir::dyn_cast<mlir::FloatType>(type);
  // Into a float of at most 32 bits through i32 (cvt.rn.f32.s32, where
  // s64 is slower; f32 holds integers exactly only to 2^24 anyway).
  mlir::Type integer =
      floatType ? (floatType.getWidth() <= 32 ? s.b().getI32Type() : s.b().getI64Type()) : type;
  mlir::Value v = mlir::arith::IndexCastOp::create(s.b(), loc, integer, s.materialize(index));
  if (floatType)
    v = mlir::arith::SIToFPOp::create(s.b(), loc, type, v);
  return s.scalar(v);
}

namespace {

/// Whether `buffer`, whose element is read or written, was allocated (not
/// the null Buffer of an Alloc outside Launch's body); otherwise an error.
bool allocated(BuilderState &s, const Buffer &buffer) {
  if (buffer.handle())
    return true;
  s.error("an element of a buffer that was not allocated inside Launch's body");
  return false;
}

} // namespace

ElementRef::operator Scalar() const {
  BuilderState *state = detail::state("Reading a buffer element", *this);
  if (!state || !allocated(*state, buffer_))
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Value buffer = BuilderState::value(buffer_.handle());
  llvm::SmallVector<mlir::Value> indices;
  for (const Index &i : indices_)
    indices.push_back(s.materialize(i));
  return s.scalar(tile::LoadOp::create(s.b(), s.here(), buffer, indices));
}

ElementRef &ElementRef::operator=(const Scalar &value) {
  BuilderState *state = detail::state("Writing a buffer element", *this, value);
  if (!state || !allocated(*state, buffer_))
    return *this;
  BuilderState &s = *state;
  mlir::Value buffer = BuilderState::value(buffer_.handle());
  mlir::Type type = mlir::cast<tile::BufferType>(buffer.getType()).getElementType();
  mlir::Value v = s.materialize(value, type);
  if (v.getType() != type) {
    s.error("storing a value of another element type into a buffer; use Cast");
    v = s.materialize(Scalar(0.0), type);
  }
  llvm::SmallVector<mlir::Value> indices;
  for (const Index &i : indices_)
    indices.push_back(s.materialize(i));
  tile::StoreOp::create(s.b(), s.here(), v, buffer, indices);
  return *this;
}

ElementRef &ElementRef::operator=(const ElementRef &other) {
  return *this = static_cast<Scalar>(other);
}

Index Tensor::dim(int i) const {
  // Only the tensor's own builder: not another kernel's, nor a destroyed one.
  BuilderState *state = detail::state("Tensor::dim", *this);
  if (!state)
    return Index(1);
  BuilderState &s = *state;
  if (i < 0 || i >= int(s.arguments[argument_].shape.size())) {
    s.error("Tensor::dim(" + std::to_string(i) + ") of tensor '" + s.arguments[argument_].name +
            "' of rank " + std::to_string(s.arguments[argument_].shape.size()));
    return Index(1);
  }
  mlir::Value tensor = s.tensorValue(argument_);
  return s.index(tile::DimOp::create(s.b(), s.here(), tensor, static_cast<int64_t>(i)));
}

Index Tensor::Read(const std::vector<Index> &indices) const {
  BuilderState *state = detail::state("Reading a tensor element", *this);
  if (!state)
    return Index(0);
  BuilderState &s = *state;
  // Like an element of a buffer, the read is located at its statement.
  mlir::Location at = s.here();
  for (const Index &i : indices)
    if (!s.takes(i, at))
      return Index(0);
  const BuilderState::Argument &argument = s.arguments[argument_];
  mlir::Value tensor = s.tensorValue(argument_);
  auto type = mlir::cast<tile::TileTensorType>(tensor.getType());
  std::string what = "reading an element of tensor '" + argument.name + "'";
  if (indices.size() != argument.shape.size()) {
    s.error(what + " of rank " + std::to_string(argument.shape.size()) + " with " +
                std::to_string(indices.size()) + " indices",
            at);
    return Index(0);
  }
  if (!type.getElementType().isSignlessInteger(32) &&
      !type.getElementType().isSignlessInteger(64)) {
    s.error(what + " of type " + BuilderState::stringify(type.getElementType()) +
                " as an Index; indices come from i32 or i64 tensors",
            at);
    return Index(0);
  }
  if (s.inParallel()) {
    s.error(what + " inside a Parallel body; read it (a value for the whole block) before "
                   "the Parallel",
            at);
    return Index(0);
  }
  llvm::SmallVector<mlir::Value> values;
  for (const Index &i : indices)
    values.push_back(s.materialize(i));
  return s.index(tile::ReadOp::create(s.b(), at, tensor, values));
}

} // namespace tessera
