//===- AtomSelection.cpp - Pick an MMA atom for a tile.gemm ---------------===//
//
// This file implements the shared selection of MMA atoms: the backend gives
// an ordered preference list (data); the first atom legal for the gemm's
// operands, shapes and thread count wins, with a remark when it is not the
// first; an atom the author forced by name is an error when illegal.
//
//===----------------------------------------------------------------------===//

#include "lowering/TileQueries.h"

namespace tessera {

SharedSwizzle getSharedSwizzle(tile::BufferType type) {
  SharedSwizzle swizzle;
  if (type.getRank() != 2)
    return swizzle;
  // The widest swizzle that divides the row: 128-byte panels, else 64- or
  // 32-byte ones (a row of 192 bytes, head dimension 96 in f16, is three
  // 64-byte panels; one of 160 bytes five 32-byte panels).
  int64_t rowBytes = type.getShape()[1] * tile::getElementBytes(type.getElementType());
  for (int64_t panelBytes : {128, 64, 32}) {
    if (rowBytes % panelBytes != 0)
      continue;
    swizzle.rowBytes = panelBytes;
    swizzle.panels = rowBytes / panelBytes;
    break;
  }
  return swizzle;
}

std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                           int64_t threads, bool wholeRows, int64_t warpsM) {
  if (!atom.lowering || !atom.lowering->tilesAccumulatorOverWarps())
    return std::nullopt;
  return atom.lowering->chooseWarpTiling(atom, m, n, threads, wholeRows, warpsM);
}

namespace {

/// Why an atom cannot compute a gemm; `placement` when the reason is the
/// operands' element type or where an operand lives (shared memory or
/// registers): such an atom was never an alternative, so passing over it
/// earns no remark.
struct Illegality {
  std::string why;
  bool placement = false;
  explicit operator bool() const { return !why.empty(); }
};

} // namespace

/// The name atoms give an element type (MmaAtom::inputTypes and
/// accumulatorTypes): f32 inputs are "tf32" under precision tf32.
static std::string atomTypeName(mlir::Type type, bool tf32 = false) {
  if (type.isF32())
    return tf32 ? "tf32" : "f32";
  if (llvm::isa<mlir::Float8E4M3FNType>(type))
    return "e4m3";
  if (llvm::isa<mlir::Float8E5M2Type>(type))
    return "e5m2";
  if (type.isUnsignedInteger(8))
    return "u8";
  if (type.isSignlessInteger(8))
    return "s8";
  if (type.isSignlessInteger(32))
    return "s32";
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;  // f16, bf16, f64
  return name;
}

static Illegality whyIllegalFor(const MmaAtom &atom, tile::GemmOp gemm, int64_t threads) {
  auto a = llvm::cast<tile::BufferType>(gemm.getA().getType());
  auto b = llvm::cast<tile::BufferType>(gemm.getB().getType());
  auto c = llvm::cast<tile::BufferType>(gemm.getC().getType());
  bool tf32 = gemm.getPrecision() == tile::Precision::tf32;
  std::string type = atomTypeName(a.getElementType(), tf32);
  if (!llvm::is_contained(atom.inputTypes, type))
    return {atom.name + " does not take " + type + " inputs", true};
  std::string acc = atomTypeName(c.getElementType());
  if (!llvm::is_contained(atom.accumulatorTypes, acc))
    return {atom.name + " does not accumulate in " + acc, true};
  if (atom.kMajorOnly && (gemm.getTransposeA() || !gemm.getTransposeB()))
    return {atom.name + " reads " + type +
            " operands K-major only: A as M x K, B as N x K (transpose_b)"};
  if (!b.isShared())
    return {atom.name + " reads B from shared memory", true};
  bool aInRegisters = a.isFragment();
  if (aInRegisters && !atom.aFromRegisters)
    return {atom.name + " reads A from shared memory", true};
  if (!aInRegisters && !atom.aFromShared)
    return {atom.name + " reads A from registers", true};
  std::string why = whyIllegal(atom, type, gemm.getM(), gemm.getN(), gemm.getK(), threads);
  if (!why.empty())
    return {why};
  if (aInRegisters && gemm.getTransposeA())
    return {atom.name + " reads A from registers only as M x K (not transposed)"};
  if (!atom.lowering)
    return {atom.name + " has no lowering"};
  if (!atom.lowering->tilesAccumulatorOverWarps())
    return {};
  std::string familyWhy = atom.lowering->whyIllegal(atom, gemm, threads);
  if (!familyWhy.empty())
    return {familyWhy};
  // A in registers: each warp holds whole rows of A, so the warps tile the
  // accumulator by rows only.
  if (!chooseWarpTiling(atom, gemm.getM(), gemm.getN(), threads, aInRegisters))
    return {atom.name + " finds no warp tiling of " + std::to_string(gemm.getM()) + "x" +
            std::to_string(gemm.getN()) + " for " + std::to_string(threads / 32) + " warps" +
            (aInRegisters ? " that gives each warp whole rows (A in registers)" : "")};
  return {};
}

std::optional<MmaAtom> findMmaAtom(tile::GemmOp gemm, const Backend &backend,
                                   const ComputeCapability &cc, int64_t threads) {
  for (const MmaAtom &atom : backend.getMmaAtoms(cc))
    if ((!gemm.getAtom() || atom.name == *gemm.getAtom()) && !whyIllegalFor(atom, gemm, threads))
      return atom;
  return std::nullopt;
}

mlir::FailureOr<MmaAtom> selectMmaAtom(tile::GemmOp gemm, const Backend &backend,
                                       const ComputeCapability &cc, int64_t threads) {
  std::vector<MmaAtom> atoms = backend.getMmaAtoms(cc);
  // All reasons (for the error), and those of the alternatives passed over
  // (for the remark on a fallback).
  std::string reasons, fallbackReasons, preferred;
  for (const MmaAtom &atom : atoms) {
    if (gemm.getAtom() && atom.name != *gemm.getAtom())
      continue;
    Illegality illegal = whyIllegalFor(atom, gemm, threads);
    if (!illegal) {
      if (!gemm.getAtom() && !preferred.empty())
        gemm.emitRemark() << "using " << atom.name << " instead of " << preferred << ": "
                          << fallbackReasons;
      return atom;
    }
    reasons += (reasons.empty() ? "" : "; ") + illegal.why;
    if (!illegal.placement) {
      if (preferred.empty())
        preferred = atom.name;
      fallbackReasons += (fallbackReasons.empty() ? "" : "; ") + illegal.why;
    }
  }
  if (gemm.getAtom())
    return gemm.emitOpError() << "atom '" << *gemm.getAtom() << "' cannot be used on "
                              << cc.str()
                              << (reasons.empty() ? ": the backend has no such atom"
                                                  : ": " + reasons);
  return gemm.emitOpError() << "no MMA atom of " << cc.str() << " fits: " << reasons;
}

} // namespace tessera
