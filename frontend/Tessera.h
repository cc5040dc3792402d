//===- Tessera.h - The kernel-writing C++ API -------------------*- C++ -*-===//
//
// This file declares the C++ API kernel authors write with. It reads like
// TileLang: a kernel is a short function of its tuning knobs, tiles are
// values, loops take lambdas, and nothing names an architecture.
//
//   Kernel VectorAdd(Dim N, int64_t block) {
//     KernelBuilder T("vector_add");
//     auto A = T.Tensor("A", {N}, f32), B = T.Tensor("B", {N}, f32),
//          C = T.Tensor("C", {N}, f32);
//     T.Launch({CeilDiv(N, block)}, 256, [&](Index bx) {
//       auto a = T.AllocFragment({block}, f32), b = T.AllocFragment({block}, f32);
//       T.Copy(A.Tile(bx * block), a);
//       T.Copy(B.Tile(bx * block), b);
//       T.Parallel({block}, [&](Index i) { a(i) = a(i) + b(i); });
//       T.Copy(a, C.Tile(bx * block));
//     });
//     return T.Build();
//   }
//
// The header includes no MLIR: the IR lives behind opaque handles, so user
// code compiles quickly. Errors point at the author's line.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_FRONTEND_TESSERA_H
#define TESSERA_FRONTEND_TESSERA_H

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera {

namespace runtime {
class CompiledKernel;
} // namespace runtime

/// Element types of tensors, buffers and scalars. FP8 (e4m3: 4 exponent
/// bits, max 448, no infinity; e5m2: 5 exponent bits, max 57344) and u8 are
/// storage types: Parallel bodies Cast them to f32 (or i32) to compute, and
/// Cast back, saturating to FP8's finite range.
enum class DType { kF16, kBF16, kF32, kF64, kI8, kI32, kI64, kF8E4M3, kF8E5M2, kU8 };
inline constexpr DType f16 = DType::kF16;
inline constexpr DType bf16 = DType::kBF16;
inline constexpr DType f32 = DType::kF32;
inline constexpr DType f64 = DType::kF64;
inline constexpr DType i8 = DType::kI8;
inline constexpr DType i32 = DType::kI32;
inline constexpr DType i64 = DType::kI64;
inline constexpr DType f8e4m3 = DType::kF8E4M3;
inline constexpr DType f8e5m2 = DType::kF8E5M2;
inline constexpr DType u8 = DType::kU8;

/// How a Gemm of f32 tiles may round its operands: kIEEE computes exact f32
/// products (CUDA cores); kTF32 lets tensor cores round A and B to TF32
/// (10 explicit mantissa bits), as torch's allow_tf32 does.
enum class Precision { kIEEE, kTF32 };

/// Where in the author's code an operation was written. Defaulted at call
/// sites, so diagnostics point at the author's line.
struct SourceLoc {
  SourceLoc(const char *file = __builtin_FILE(), int line = __builtin_LINE())
      : file(file), line(line) {}
  const char *file;
  int line;
};

/// A tensor dimension: a static size, or a named size known only at launch.
/// Every tensor dimension named with the same symbol must be equal at launch.
class Dim {
public:
  /// A static dimension.
  Dim(int64_t size) : size_(size) {}
  /// A dynamic dimension named `name` (e.g. Dim::Dynamic("N")). With
  /// `divisibility` > 1 the caller promises the size is a multiple of it (the
  /// runtime checks at launch), which lets the compiler use wide vector
  /// accesses across rows of that length.
  static Dim Dynamic(std::string name, int64_t divisibility = 1);
  bool isStatic() const { return size_ >= 0; }
  int64_t size() const { return size_; }
  const std::string &name() const { return name_; }
  int64_t divisibility() const { return divisibility_; }

private:
  Dim() = default;
  int64_t size_ = -1;
  std::string name_;
  int64_t divisibility_ = 1;
};

/// A grid extent: a constant, a dimension, or CeilDiv(dimension, tile).
class GridExtent {
public:
  GridExtent(int64_t value) : constant_(value) {}
  GridExtent(const Dim &dim);
  friend GridExtent CeilDiv(const Dim &dim, int64_t tile);

  const Dim *dim() const { return hasDim_ ? &dim_ : nullptr; }
  int64_t constant() const { return constant_; }
  int64_t divisor() const { return divisor_; }

private:
  bool hasDim_ = false;
  Dim dim_ = Dim(0);
  int64_t constant_ = 0;
  int64_t divisor_ = 1;
};

/// ceil(dim / tile): the number of tiles that cover `dim`.
GridExtent CeilDiv(const Dim &dim, int64_t tile);

namespace detail {
struct BuilderState;
/// The KernelBuilder a handle (Index, Scalar, Tensor, Buffer) comes from,
/// shared by the builder and its handles so that it outlives both: a handle
/// used in another builder's kernel, or after its builder is destroyed, is
/// then an error in Kernel::status() instead of IR that is not the kernel's.
struct HandleOwner;
using HandleOwnerRef = std::shared_ptr<HandleOwner>;
} // namespace detail

/// An index inside a kernel: a block index, a loop index, an offset.
/// `Index(0)` is the constant 0 (no other constructor takes a literal).
/// Index arithmetic is signed 64-bit, as int64_t's: a difference may go
/// negative, / and % truncate toward zero, Min, Max and comparisons are
/// signed, and constants fold the same way. (Where both operands are known
/// non-negative, as block and loop indices, dimensions and their sums and
/// products are, the code uses the cheaper unsigned instructions, which give
/// the same results.)
class Index {
public:
  Index(int64_t value);
  friend Index operator+(const Index &a, const Index &b);
  friend Index operator-(const Index &a, const Index &b);
  friend Index operator*(const Index &a, const Index &b);
  /// Division truncating toward zero, and its remainder (the sign of `a`).
  friend Index operator/(const Index &a, const Index &b);
  friend Index operator%(const Index &a, const Index &b);

  /// The opaque IR value (an mlir::Value), or null for a plain constant.
  void *handle() const { return handle_; }
  int64_t constant() const { return constant_; }

private:
  friend struct detail::BuilderState;
  /// An IR value; the tag keeps `Index(0)` from meaning a null handle.
  struct FromHandle {};
  Index(void *handle, detail::HandleOwnerRef owner, FromHandle)
      : handle_(handle), owner_(std::move(owner)) {}
  void *handle_ = nullptr;
  /// The builder of an IR value; null for a constant, which any kernel takes.
  detail::HandleOwnerRef owner_;
  int64_t constant_ = 0;
};

/// The smaller and the larger of two indices (signed: `Max(Index(0), a - b)`
/// is 0 when b > a).
Index Min(const Index &a, const Index &b, SourceLoc loc = {});
Index Max(const Index &a, const Index &b, SourceLoc loc = {});
/// ceil(a / b) for indices (signed).
Index CeilDiv(const Index &a, const Index &b, SourceLoc loc = {});

/// Grouped raster order: remaps the block indices of a gridX x gridY grid
/// so that consecutive blocks walk down `group` rows of tiles before moving
/// right. Blocks running at once then share rows of A and columns of B in
/// L2 (TileLang's use_swizzle, Triton's GROUP_M). Returns {x, y}.
std::pair<Index, Index> SwizzleBlocks(const Index &bx, const Index &by, const Index &gridX,
                                      const Index &gridY, int64_t group);

/// A scalar value inside a parallel body: an element, a constant, a result.
class Scalar {
public:
  Scalar(double value);
  friend Scalar operator+(const Scalar &a, const Scalar &b);
  friend Scalar operator-(const Scalar &a, const Scalar &b);
  friend Scalar operator*(const Scalar &a, const Scalar &b);
  friend Scalar operator/(const Scalar &a, const Scalar &b);
  friend Scalar operator-(const Scalar &a);

  /// The opaque IR value, or null for a constant or a kernel argument.
  void *handle() const { return handle_; }
  double constant() const { return constant_; }
  /// The kernel argument this scalar names, or -1.
  int argument() const { return argument_; }

private:
  friend struct detail::BuilderState;
  friend class KernelBuilder;
  Scalar(void *handle, detail::HandleOwnerRef owner) : handle_(handle), owner_(std::move(owner)) {}
  void *handle_ = nullptr;
  /// The builder of an IR value or argument; null for a constant.
  detail::HandleOwnerRef owner_;
  double constant_ = 0;
  int argument_ = -1;
};

// Namespace-scope declarations, so that element references (which convert to
// Scalar) combine with the same operators.
Scalar operator+(const Scalar &a, const Scalar &b);
Scalar operator-(const Scalar &a, const Scalar &b);
Scalar operator*(const Scalar &a, const Scalar &b);
Scalar operator/(const Scalar &a, const Scalar &b);
Scalar operator-(const Scalar &a);

/// Elementwise math, lowered to the math dialect (approximate forms where the
/// backend allows).
Scalar Max(const Scalar &a, const Scalar &b, SourceLoc loc = {});
Scalar Min(const Scalar &a, const Scalar &b, SourceLoc loc = {});
Scalar Exp(const Scalar &x, SourceLoc loc = {});
Scalar Exp2(const Scalar &x, SourceLoc loc = {});
Scalar Rsqrt(const Scalar &x, SourceLoc loc = {});
Scalar Erf(const Scalar &x, SourceLoc loc = {});
Scalar Log(const Scalar &x, SourceLoc loc = {});
Scalar Sqrt(const Scalar &x, SourceLoc loc = {});
Scalar Tanh(const Scalar &x, SourceLoc loc = {});
Scalar Abs(const Scalar &x, SourceLoc loc = {});
/// Converts between element types: to FP8 rounded to nearest even and
/// saturated to its finite range (NaN stays NaN); u8 zero-extends; integers
/// narrow by wrapping (keeping the low bits) and widen sign-extended; floats
/// convert to integers truncating toward zero (a value out of the integer's
/// range is undefined: use SaturatingCast).
Scalar Cast(const Scalar &x, DType to, SourceLoc loc = {});
/// Cast, but values beyond `to`'s range become its extreme values: integers
/// clamp (an i32 stored as i8 to [-128, 127]), floats into integers clamp
/// (NaN to 0), floats into floats clamp to the finite range (NaN stays NaN).
Scalar SaturatingCast(const Scalar &x, DType to, SourceLoc loc = {});
/// The bits of `x` as a scalar of type `to` of the same width: f32 <-> i32,
/// f64 <-> i64 (an f32 built from its sign, exponent and mantissa fields).
Scalar Bitcast(const Scalar &x, DType to, SourceLoc loc = {});

/// Bit operations on integer scalars of one type (i8, i32, i64; a constant
/// takes the other side's type; & | ^ also on booleans). Integers are
/// signed: >> shifts arithmetically (copying the sign bit), and
/// ShiftRightLogical shifts in zeros, for unpacking fields (int4 weights:
/// `(w >> (4 * i)) & 0xF`). A shift by an amount at or past the width (or
/// negative) gives 0, or for >> the sign in every bit, as PTX's shifts clamp;
/// a constant amount outside [0, width) is an error in Kernel::status().
/// Two constants fold as 64-bit integers.
Scalar operator&(const Scalar &a, const Scalar &b);
Scalar operator|(const Scalar &a, const Scalar &b);
Scalar operator^(const Scalar &a, const Scalar &b);
Scalar operator~(const Scalar &a);
Scalar operator<<(const Scalar &a, const Scalar &b);
Scalar operator>>(const Scalar &a, const Scalar &b);
Scalar ShiftRightLogical(const Scalar &a, const Scalar &b, SourceLoc loc = {});

/// Comparisons of two scalars of one type (f32, f16, bf16, f64 or an
/// integer type; a constant takes the other side's type) give a boolean
/// Scalar for Select. Floats compare ordered (false when either is NaN),
/// except != (true when either is NaN); integers compare signed. Scalars of
/// two types are an error in Kernel::status(): Cast one.
Scalar operator<(const Scalar &a, const Scalar &b);
Scalar operator<=(const Scalar &a, const Scalar &b);
Scalar operator>(const Scalar &a, const Scalar &b);
Scalar operator>=(const Scalar &a, const Scalar &b);
Scalar operator==(const Scalar &a, const Scalar &b);
Scalar operator!=(const Scalar &a, const Scalar &b);
/// Signed comparisons of indices (a global row against a global column, a
/// position against a length), as boolean Scalars for Select.
Scalar operator<(const Index &a, const Index &b);
Scalar operator<=(const Index &a, const Index &b);
Scalar operator>(const Index &a, const Index &b);
Scalar operator>=(const Index &a, const Index &b);
Scalar operator==(const Index &a, const Index &b);
Scalar operator!=(const Index &a, const Index &b);
/// Both, either, and the negation of boolean Scalars.
Scalar And(const Scalar &a, const Scalar &b, SourceLoc loc = {});
Scalar Or(const Scalar &a, const Scalar &b, SourceLoc loc = {});
Scalar Not(const Scalar &a, SourceLoc loc = {});
/// `onTrue` where the boolean `condition` holds, else `onFalse`; the
/// branches have one type (a constant takes the other's; two constants are
/// f32). A causal mask: `s(i, j) = Select(col > row, -INFINITY, s(i, j))`.
Scalar Select(const Scalar &condition, const Scalar &onTrue, const Scalar &onFalse,
              SourceLoc loc = {});
/// An index as a scalar of type `to` (a global position as a float, say).
/// Into a type of up to 32 bits the index is taken below 2^31.
Scalar ToScalar(const Index &index, DType to = f32, SourceLoc loc = {});
/// An integer scalar (i8, i32, i64; sign-extended) as an Index: a bin or a
/// position computed from data inside a Parallel body (for an atomic), or
/// from a scalar argument outside one.
Index ToIndex(const Scalar &x, SourceLoc loc = {});

/// A variable of the block (KernelBuilder::Var, KernelBuilder::ScalarVar):
/// a running offset, a counter, a page index that the kernel's statements
/// assign and read in order. Every thread assigns it alike, so its value is
/// the block's and may be a tile offset, a loop count or a condition. It is
/// assigned in the Launch body, If branches and Serial loops; not in a
/// Parallel body (each thread would assign its own) nor in a Pipelined body
/// (whose copies run iterations ahead of it); both are errors in
/// Kernel::status(). Reading it in a Parallel body reads its value before
/// the loop. Copying a Var copies the handle: both name one variable.
class Var {
public:
  /// The value the last assignment before this point gave.
  operator Index() const;
  /// Assigns a block-uniform value.
  Var &operator=(const Index &value);
  /// Assigns `other`'s current value.
  Var &operator=(const Var &other) { return *this = Index(other); }
  Var(const Var &) = default;
  Var &operator+=(const Index &value) { return *this = Index(*this) + value; }
  Var &operator-=(const Index &value) { return *this = Index(*this) - value; }

private:
  friend struct detail::BuilderState;
  Var(void *handle, detail::HandleOwnerRef owner) : handle_(handle), owner_(std::move(owner)) {}
  void *handle_ = nullptr;
  detail::HandleOwnerRef owner_;
};

/// A variable of the block holding a scalar (i8, i32, i64, f32 or f64): a
/// running maximum, a flag. The same rules as Var.
class ScalarVar {
public:
  operator Scalar() const;
  ScalarVar &operator=(const Scalar &value);
  ScalarVar &operator=(const ScalarVar &other) { return *this = Scalar(other); }
  ScalarVar(const ScalarVar &) = default;
  ScalarVar &operator+=(const Scalar &value) { return *this = Scalar(*this) + value; }

private:
  friend struct detail::BuilderState;
  ScalarVar(void *handle, detail::HandleOwnerRef owner)
      : handle_(handle), owner_(std::move(owner)) {}
  void *handle_ = nullptr;
  detail::HandleOwnerRef owner_;
};

/// A tile of a tensor at an origin: the operand of Copy.
struct TileRef {
  int argument;
  std::vector<Index> offsets;
  /// The tensor dimensions the tile's axes span (Along); empty: all.
  std::vector<int64_t> dims;
  /// The builder of the tensor (Tensor::Tile sets it); a kernel takes a tile
  /// of another builder's tensor as an error. Null: `argument` is trusted to
  /// be this kernel's.
  detail::HandleOwnerRef owner = nullptr;

  /// Makes the tile a slice: its axes span tensor dimensions `dims`
  /// (increasing, the innermost among them), the others stay at their
  /// offsets. A [rows, dim] tile of a [batch, seq, heads, dim] tensor:
  /// `Q.Tile(b, row, h, 0).Along({1, 3})`. Rows past `seq` read as zero and
  /// are not written: bounds are the slice's, not the whole tensor's.
  TileRef Along(std::vector<int64_t> spanned) const {
    TileRef slice = *this;
    slice.dims = std::move(spanned);
    return slice;
  }
  /// Where axis `untilAxis` of the tile ends early (an index into the
  /// tensor dimension it spans), or none.
  std::optional<Index> until;
  int64_t untilAxis = 0;
  /// Ends axis `axis` of the tile at `end` (an index into the tensor
  /// dimension the axis spans): elements at or past it read as zero and are
  /// not written, as if the tensor ended there. Rows of a sequence in a
  /// packed [tokens, dim] batch: `Q.Tile(start + r, 0).Until(stop)` neither
  /// reads nor overwrites the next sequence's rows. Not a bulk tensor copy
  /// (TMA) on sm_90a.
  TileRef Until(const Index &end, int64_t axis = 0) const {
    TileRef bounded = *this;
    bounded.until = end;
    bounded.untilAxis = axis;
    return bounded;
  }
};

/// A global tensor argument of a kernel.
class Tensor {
public:
  /// The tile of this tensor whose origin is `offsets` (one per dimension).
  template <typename... Ts> TileRef Tile(Ts... offsets) const {
    return TileRef{argument_, {Index(offsets)...}, {}, owner_};
  }
  /// Dimension `i` (the launch-time value for dynamic dimensions).
  Index dim(int i) const;
  /// The element at `indices` (one per dimension) of an i32 or i64 tensor,
  /// as an Index: a value that comes from data (a block table's page, a
  /// packed batch's start), usable as a tile offset, a loop count or in a
  /// comparison. Every thread reads it (it is the block's), in a Launch or
  /// Pipelined body, not in a Parallel one; outside the tensor it reads 0.
  /// `page = table(b, k)`, then `Pool.Tile(page, 0, 0)`. Copies check a
  /// tile's upper bounds only: a negative value read (a -1 sentinel) must
  /// not become a tile offset.
  template <typename... Ts> Index operator()(Ts... indices) const {
    return Read({Index(indices)...});
  }
  /// The same with the indices in a vector.
  Index Read(const std::vector<Index> &indices) const;
  int argument() const { return argument_; }

private:
  friend class KernelBuilder;
  friend struct detail::BuilderState;
  Tensor(detail::HandleOwnerRef owner, int argument)
      : owner_(std::move(owner)), argument_(argument) {}
  detail::HandleOwnerRef owner_;
  int argument_;
};

class ElementRef;

/// A buffer in shared memory or a fragment in registers.
class Buffer {
public:
  template <typename... Ts> ElementRef operator()(Ts... indices) const;
  void *handle() const { return handle_; }

private:
  friend class KernelBuilder;
  friend struct detail::BuilderState;
  explicit Buffer(void *handle) : handle_(handle) {}
  Buffer(void *handle, detail::HandleOwnerRef owner, int number)
      : handle_(handle), owner_(std::move(owner)), number_(number) {}
  void *handle_;
  /// The builder that allocated the buffer, and the buffer's number there
  /// (which names it in diagnostics); null and -1 for a failed allocation.
  detail::HandleOwnerRef owner_;
  int number_ = -1;
};

/// One element of a buffer: reads convert to Scalar, assignment stores.
class ElementRef {
public:
  operator Scalar() const;
  ElementRef &operator=(const Scalar &value);
  ElementRef &operator=(const ElementRef &other);

private:
  friend class Buffer;
  friend struct detail::BuilderState;
  ElementRef(const Buffer &buffer, std::vector<Index> indices)
      : buffer_(buffer), indices_(std::move(indices)) {}
  Buffer buffer_;
  std::vector<Index> indices_;
};

template <typename... Ts> ElementRef Buffer::operator()(Ts... indices) const {
  return ElementRef(*this, {Index(indices)...});
}

/// The stages a compilation can print.
enum class Stage { kTile, kGpu, kLowered, kLLVM, kPTX, kCubin };

/// Options for compiling a kernel.
struct CompileOptions {
  /// "sm_60", "sm_70", "sm_80", "sm_90a", ...
  std::string target = "sm_90a";
  /// Assemble a cubin with ptxas (registers, spills) in addition to PTX.
  bool assemble = false;
  /// Approximate tanh, exp, erf and f32 division (tanh.approx.f32,
  /// ex2.approx.ftz.f32, a rational erf, div.approx.ftz.f32); false:
  /// libdevice's exact forms and IEEE division.
  bool fastMath = true;
  /// LLVM's passes: 2 the kernel pipeline (default), 1 and 3 LLVM's O1 and
  /// O3 pipelines (slower to compile), 0 none.
  int optLevel = 2;
  /// The ptxas that `assemble` runs; empty: the one tessera-compile finds
  /// (CUDA's for sm_80 and later, CUDA 12's from tools/setup.sh for sm_60
  /// and sm_70).
  std::string ptxasPath;
  /// libdevice's bitcode, for exact math (fastMath = false); empty: CUDA's
  /// at /usr/local/cuda/nvvm/libdevice/libdevice.10.bc.
  std::string libdevicePath;
};

/// A built kernel: tile IR that compiles for any registered target.
class Kernel {
public:
  Kernel();
  ~Kernel();
  Kernel(Kernel &&);
  Kernel &operator=(Kernel &&);

  /// OK unless building the kernel failed (then every call reports it). A
  /// moved-from or default-constructed Kernel reports FailedPrecondition
  /// from every call.
  const absl::Status &status() const;
  const std::string &name() const;
  /// The kernel as tile dialect text (what tessera-compile reads).
  std::string ToString() const;
  /// The text of one compilation stage for `options.target`.
  absl::StatusOr<std::string> GetKernelSource(Stage stage,
                                              const CompileOptions &options = {}) const;
  /// What compiling for `options.target` remarks on, one line each
  /// ("file:line:col: text" at the author's statement): why an atom, a
  /// pipelining strategy or a schedule was not used, what was staged through
  /// shared memory. Empty when the compiler had nothing to say.
  absl::StatusOr<std::vector<std::string>> GetRemarks(const CompileOptions &options = {}) const;
  /// Compiles for `options.target`: PTX (and a cubin if asked), the
  /// signature and launch geometry, for tessera::runtime.
  absl::StatusOr<runtime::CompiledKernel> Compile(const CompileOptions &options = {}) const;

private:
  friend class KernelBuilder;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The layout of a TensorAt view: `strides` (elements) of every dimension
/// but the innermost, which is contiguous (none: dense row-major); and
/// `align` (bytes: 0, or a power of two from the element's size to 16),
/// a promise that the address, every stride and the innermost size are
/// multiples of it, which lets copies move 16-byte vectors. The kernel
/// checks the promise and stops (the launch fails with a trap) where it
/// is broken; without one, elements move one at a time.
struct ViewLayout {
  std::vector<Index> strides;
  int64_t align = 0;
};

/// Builds one kernel. Declare tensors, then Launch with the body. The
/// handles it makes (Tensor, Buffer, Index, Scalar) belong to it: using one
/// in another builder's kernel, or after this builder is destroyed, is an
/// error that Build reports (Kernel::status()), and builds nothing.
class KernelBuilder {
public:
  /// `name` becomes the kernel's PTX entry: an identifier of ASCII letters,
  /// digits and '_' that does not start with a digit. Any other name is an
  /// error that Build reports at `loc` (no symbol is mangled behind the
  /// author's back).
  explicit KernelBuilder(std::string name, SourceLoc loc = {});
  ~KernelBuilder();

  /// A global tensor argument.
  tessera::Tensor Tensor(const std::string &name, std::vector<Dim> shape, DType dtype,
                         SourceLoc loc = {});
  /// A scalar argument, usable in parallel bodies.
  Scalar ScalarArg(const std::string &name, DType dtype, SourceLoc loc = {});
  /// An i32 argument that sizes the grid (or a Pipelined count), as a
  /// dimension: a variable-length batch's longest sequence, `Dim maxLen =
  /// T.SizeArg("max_seqlen")`, then `T.Launch({CeilDiv(maxLen, 128), ...})`.
  /// No tensor has it as a dimension; the runtime refuses a negative value
  /// that sizes the grid, and a negative Pipelined count runs no iteration.
  /// The caller promises what it means (blocks past a sequence's end find
  /// nothing to do; rows past maxLen are not computed).
  Dim SizeArg(const std::string &name, SourceLoc loc = {});

  /// A tensor of `dtype` and `shape` at the device address held in the i64
  /// element `at` of `pointers`: a pointer array's entry (a grouped GEMM's
  /// per-group operands, each its own allocation). A constant extent in
  /// `shape` is a static dimension; others (read from data, say) are
  /// dynamic, and negative ones count as 0. The view is the block's (every
  /// thread reads the same pointer): make it in Launch's body, or in an If
  /// or Serial body, not in a Parallel or Pipelined one; it is valid in the
  /// body that made it. Copies check its bounds as any tensor's, so a view
  /// of size 0 (null pointer) is never read. Bulk tensor copies (TMA) need
  /// an address the host knows, so its copies take the cp.async path.
  /// `name` is used in diagnostics.
  tessera::Tensor TensorAt(const tessera::Tensor &pointers, const std::vector<Index> &at,
                           const std::vector<Index> &shape, DType dtype, const std::string &name,
                           const ViewLayout &layout = {}, SourceLoc loc = {});

  /// A variable of the block, first holding `initial` (Var's rules). Call
  /// inside Launch's body: `auto row = T.Var(start); T.Serial(n, [&](Index)
  /// { ...; row += T(lengths, i); });`. `name` is used in diagnostics.
  tessera::Var Var(const Index &initial, const std::string &name = "", SourceLoc loc = {});
  /// A variable holding a scalar of type `dtype` (i8, i32, i64, f32, f64).
  tessera::ScalarVar ScalarVar(const Scalar &initial, DType dtype, const std::string &name = "",
                               SourceLoc loc = {});
  /// A precondition of the kernel: the boolean `condition`, built from
  /// dimensions (Tensor::dim), integer scalar arguments (ToIndex of one, or
  /// a comparison of one) and constants, must hold at launch. The runtime
  /// checks it before launching and refuses with an error naming the values
  /// and `loc`: `T.Require(K % 128 == 0)`, `T.Require(H % Hkv == 0)`. The
  /// kernel may rely on it. Call inside Launch's body, outside loops and
  /// branches. A constant false condition is an error in Kernel::status().
  void Require(const Scalar &condition, SourceLoc loc = {});
  /// Marks the kernel as one that may start while the kernel before it on
  /// the stream is ending: every thread waits here until the kernels
  /// launched before it have ended and their writes are visible. On targets
  /// with grid dependency control (sm_90a) the runtime launches it with
  /// programmatic stream serialization, so its launch and setup overlap the
  /// previous kernel's tail; elsewhere it generates no code. Call it once, in
  /// Launch's body outside loops and branches, before anything that reads or
  /// writes a Tensor (Tensor::dim excepted): Kernel::status() says so
  /// otherwise. A combine kernel after a split one is the typical user.
  void WaitForPriorKernels(SourceLoc loc = {});
  /// Lets a kernel launched after this one that calls WaitForPriorKernels be
  /// launched once every block of this kernel has passed this point (it
  /// still waits for this kernel's end before touching memory). Call it in
  /// Launch's body outside loops and branches, early to hide the next
  /// kernel's launch behind this one's work. No code on targets without grid
  /// dependency control.
  void LaunchDependents(SourceLoc loc = {});
  /// Records the author's own error (a configuration the kernel cannot
  /// take, say), which Build reports in Kernel::status() as any other, at
  /// `loc`: `if (D % 16) T.Error("head dimension " + ... + " is not a
  /// multiple of 16")`. Valid anywhere, before or inside Launch.
  void Error(const std::string &message, SourceLoc loc = {});

  /// Launches the body over a grid of blocks of `threads` threads.  /// Launches the body over a
  /// grid of blocks of `threads` threads.
  void Launch(std::vector<GridExtent> grid, int threads, std::function<void(Index)> body,
              SourceLoc loc = {});
  void Launch(std::vector<GridExtent> grid, int threads, std::function<void(Index, Index)> body,
              SourceLoc loc = {});
  void Launch(std::vector<GridExtent> grid, int threads,
              std::function<void(Index, Index, Index)> body, SourceLoc loc = {});

  /// A tile in shared memory (one per block).
  Buffer AllocShared(std::vector<int64_t> shape, DType dtype, const std::string &name = "",
                     SourceLoc loc = {});
  /// A tile spread over the block's registers.
  Buffer AllocFragment(std::vector<int64_t> shape, DType dtype, const std::string &name = "",
                       SourceLoc loc = {});

  /// Copies a tile; parts outside the tensor are not read (zero) or written.
  void Copy(const TileRef &src, const Buffer &dst, SourceLoc loc = {});
  void Copy(const Buffer &src, const TileRef &dst, SourceLoc loc = {});
  void Copy(const Buffer &src, const Buffer &dst, SourceLoc loc = {});
  /// Adds a buffer into a tensor tile: dst += src, each element an atomic
  /// add in global memory, so blocks adding into one tile (split-K's
  /// partial products) need no other synchronization; parts outside the
  /// tensor are not written. The tensor holds f32, f64, f16, bf16, i32 or
  /// i64 (the buffer's elements convert as in Copy); the sum is exact up to
  /// the order of the additions.
  void AtomicAdd(const Buffer &src, const TileRef &dst, SourceLoc loc = {});
  /// Inside a Parallel body: combines `value` into the element of `tensor`
  /// at `indices` (global positions) as one atomic operation and returns
  /// the element's old value; any number of threads and blocks may combine
  /// into one element (a histogram: `T.AtomicAdd(H, {bin}, 1)`; a
  /// scatter-add). Indices outside the tensor do nothing and return 0. Add
  /// takes f32, f64, f16, bf16, i32, i64; Max and Min i32, i64, f32.
  Scalar AtomicAdd(const tessera::Tensor &tensor, std::vector<Index> indices, const Scalar &value,
                   SourceLoc loc = {});
  Scalar AtomicMax(const tessera::Tensor &tensor, std::vector<Index> indices, const Scalar &value,
                   SourceLoc loc = {});
  Scalar AtomicMin(const tessera::Tensor &tensor, std::vector<Index> indices, const Scalar &value,
                   SourceLoc loc = {});
  void Fill(const Buffer &buffer, double value, SourceLoc loc = {});
  void Clear(const Buffer &buffer, SourceLoc loc = {});

  /// C += A * B on tiles: A is M x K (K x M with transposeA), B is K x N
  /// (N x K with transposeB), C an f32 fragment M x N. The backend picks the
  /// instruction (FMA, mma.sync, wgmma); `atom` forces one by name.
  void Gemm(const Buffer &a, const Buffer &b, const Buffer &c, bool transposeA = false,
            bool transposeB = false, const std::string &atom = "", SourceLoc loc = {});
  /// The same with a precision for f32 tiles (Precision::kTF32: tensor cores
  /// may round A and B to TF32). C's type follows A and B: f32 or f16 for
  /// f16 and FP8, f32 for bf16 and f32; f64 for f64; i32 for i8 and u8. FP8,
  /// i8 and u8 tensor cores read K-major operands: A M x K, B N x K
  /// (transposeB).
  void Gemm(const Buffer &a, const Buffer &b, const Buffer &c, Precision precision,
            bool transposeA = false, bool transposeB = false, const std::string &atom = "",
            SourceLoc loc = {});

  /// A loop over [0, count) whose copies the backend may overlap with its
  /// compute, `stages` iterations deep.
  void Pipelined(const GridExtent &count, int stages, std::function<void(Index)> body,
                 SourceLoc loc = {});
  void Pipelined(const Index &count, int stages, std::function<void(Index)> body,
                 SourceLoc loc = {});
  void Pipelined(int64_t count, int stages, std::function<void(Index)> body,
                 SourceLoc loc = {});

  /// Runs `then` when the boolean `condition` holds, else `otherwise` (if
  /// given). The condition is the block's, the same for every thread: a
  /// comparison of block indices, loop indices of Pipelined and Serial,
  /// dimensions, scalar arguments and values read from tensors (never of a
  /// Parallel's indices: there, Select). Allocate buffers before the If;
  /// they live across it. A constant condition builds one branch only.
  /// FlashAttention's mask on the key blocks that cross the diagonal:
  /// `T.If(k * BN + BN > bx * BM, [&] { T.Parallel(...mask...); })`.
  void If(const Scalar &condition, std::function<void()> then,
          std::function<void()> otherwise = nullptr, SourceLoc loc = {});
  /// A loop over [0, count) that the whole block runs in order: a running
  /// offset, chunks of a long row, a loop around Pipelined loops.
  void Serial(const Index &count, std::function<void(Index)> body, SourceLoc loc = {});
  /// Serial over a constant count (at most 64), its body emitted once per
  /// iteration with the index a constant.
  void Unroll(int64_t count, std::function<void(Index)> body, SourceLoc loc = {});

  /// Reductions over the last axis of a fragment (f16, bf16, f32, f64, or
  /// i32 and i64, signed, wrapping sums) into a fragment of the remaining
  /// shape, which every thread then holds whole (so Parallel bodies
  /// may read it at any index, e.g. a row maximum for every element of the
  /// row). With `clear` the result replaces `dst`, else it is combined with
  /// it.
  void ReduceMax(const Buffer &src, const Buffer &dst, bool clear = true, SourceLoc loc = {});
  void ReduceMin(const Buffer &src, const Buffer &dst, bool clear = true, SourceLoc loc = {});
  void ReduceSum(const Buffer &src, const Buffer &dst, bool clear = true, SourceLoc loc = {});
  /// Sum of absolute values.
  void ReduceAbsSum(const Buffer &src, const Buffer &dst, bool clear = true, SourceLoc loc = {});
  /// The maximum of each row of `src` (a [rows, n] fragment of f16, bf16,
  /// f32, f64, i32 or i64) into `values` ([rows], src's type) and into
  /// `indices` ([rows], i32) the first position holding it plus `offset`
  /// (NaN counts as the maximum: a row holding one gives NaN and the first
  /// NaN's position, as torch.argmax does). Without `clear` a row's results
  /// change only where this maximum is strictly larger than the one they
  /// hold, so chunks of a long row, walked in order with their start as
  /// `offset`, give the first position of the row's maximum. Two
  /// reductions (the value, then the smallest position holding it).
  void ReduceArgMax(const Buffer &src, const Buffer &values, const Buffer &indices,
                    const Index &offset = Index(0), bool clear = true, SourceLoc loc = {});
  /// The same with the minimum.
  void ReduceArgMin(const Buffer &src, const Buffer &values, const Buffer &indices,
                    const Index &offset = Index(0), bool clear = true, SourceLoc loc = {});
  /// The k largest elements of each row of `src` ([rows, n] as above) into
  /// `values` ([rows, k], src's type), largest first, and their positions
  /// into `indices` ([rows, k], i32); equal values in increasing position,
  /// NaN above every number.
  /// k (values' last extent) is at most 16 and n: k rounds of ReduceArgMax,
  /// each masking the position it took (a MoE router's top-k experts).
  void TopK(const Buffer &src, const Buffer &values, const Buffer &indices, SourceLoc loc = {});

  /// An elementwise loop nest over a tile, spread over the block's threads.
  void Parallel(std::vector<int64_t> extents, std::function<void(Index)> body,
                SourceLoc loc = {});
  void Parallel(std::vector<int64_t> extents, std::function<void(Index, Index)> body,
                SourceLoc loc = {});

  /// Asks for the ping-pong schedule (call inside Launch's body; the grid
  /// needs a y extent): on targets whose pipelining specializes warps
  /// (sm_90a), each launched block runs two of the grid's blocks adjacent
  /// along y, one per group of `threads` consumer threads, which take turns
  /// on the tensor cores, so one block's epilogue overlaps the other's main
  /// loop. Blocks keep their meaning; elsewhere, or when the kernel uses
  /// shared memory besides a Pipelined loop's staged copies, the grid runs
  /// as written.
  void PingPong(SourceLoc loc = {});
  /// Asks for a persistent kernel (call inside Launch's body): as many
  /// blocks as the device holds at once, each looping over the grid's
  /// blocks, so a warp-specialized loop's producer loads the next block's
  /// tiles while the consumers run this block's epilogue. Not combined with
  /// PingPong.
  void Persistent(SourceLoc loc = {});
  /// A persistent kernel whose last partial wave of blocks is split along the
  /// Pipelined loop's iterations over all launched blocks (stream-K): their
  /// partial accumulators meet in a runtime-provided workspace before the
  /// epilogue. An accumulator may start at any value (a bias row, say): the
  /// tile's first piece keeps it, the later pieces start at zero. For a
  /// kernel whose one Pipelined loop holds copies and gemms and whose
  /// iteration count does not depend on the block; otherwise it stays
  /// persistent, with a remark.
  void StreamK(SourceLoc loc = {});
  /// Asks for thread block clusters of `blocks` (2, 4 or 8) blocks along x
  /// whose shared tiles are multicast (not with PingPong; with StreamK the
  /// whole tiles multicast, pieces of split tiles load alone): on
  /// targets with clusters and a warp-specialized Pipelined loop,
  /// neighboring blocks (a persistent kernel: tiles t ^ j, j < blocks) that
  /// load the same tile of the loop's largest copy each load 1/blocks of it
  /// and multicast it to all. Pays where L2 traffic limits (RESULTS.md);
  /// elsewhere a remark. Another count is an error in Kernel::status().
  void Multicast(int64_t blocks = 2, SourceLoc loc = {});
  /// Tiles on the M or N edge run their pipelined loop in a body of their own
  /// whose bounds are computed once per tile (`edge_loop`, a tuning option:
  /// faster edges, slightly slower kernels elsewhere; see tile.kernel).
  void EdgeLoop(SourceLoc loc = {});

  /// Finishes the kernel and verifies it; errors are kept in Kernel::status().
  Kernel Build();

private:
  void argReduce(bool max, const Buffer &src, const Buffer &values, const Buffer &indices,
                 const Index &offset, bool clear, SourceLoc loc);
  std::unique_ptr<detail::BuilderState> state_;
};

} // namespace tessera

#endif // TESSERA_FRONTEND_TESSERA_H
