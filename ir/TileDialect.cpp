//===- TileDialect.cpp - The tile dialect -----------------------*- C++ -*-===//
//
// This file implements the `tile` dialect: custom syntax for its types and
// its region-holding operations, and the verifiers whose messages tell a
// kernel author what to change.
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"
#include "ir/TileVerify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessera::tile;

#include "ir/TileDialect.cpp.inc"
#include "ir/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/TileTypes.cpp.inc"

#define GET_OP_CLASSES
#include "ir/TileOps.cpp.inc"

void TileDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/TileAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/TileTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/TileOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The largest byte offset, byte count, stage count or iteration count the
/// dialect accepts: shared memory offsets and sizes, stage rings and
/// tile.parallel iteration spaces are 32-bit quantities in the lowered code.
/// (A pipelined loop may ask for more stages than fit; planning gives it
/// what fits.)

TargetAttr tessera::tile::getTargetAttr(Operation *op) {
  for (Operation *cur = op; cur; cur = cur->getParentOp())
    if (auto attr = cur->getAttrOfType<TargetAttr>(TileDialect::kTargetAttrName))
      return attr;
  return {};
}

int64_t tessera::tile::getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

int64_t tessera::tile::getBufferBytes(BufferType type) {
  return type.getNumElements() * getElementBytes(type.getElementType());
}

Type tessera::tile::getReduceScratchElementType(Type element) {
  if (isa<IntegerType>(element))
    return element;
  MLIRContext *ctx = element.getContext();
  return element.getIntOrFloatBitWidth() > 32 ? Type(Float64Type::get(ctx))
                                              : Type(Float32Type::get(ctx));
}

bool tessera::tile::isSupportedElementType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
         type.isSignlessInteger(8) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64) || isStorageOnlyType(type);
}

bool tessera::tile::isStorageOnlyType(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type) || type.isUnsignedInteger(8);
}



//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name) {
  StringRef rest = name;
  if (!rest.consume_front("sm_") || rest.empty())
    return emitError() << "target '" << name
                       << "' is not of the form sm_XY or sm_XYa (e.g. sm_80, sm_90a)";
  rest.consume_back("a");
  unsigned value = 0;
  if (rest.size() < 2 || rest.getAsInteger(10, value))
    return emitError() << "target '" << name
                       << "' is not of the form sm_XY or sm_XYa (e.g. sm_80, sm_90a)";
  return success();
}

LogicalResult DistributionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                       int64_t threads, int64_t vector) {
  if (threads < 1 || threads > 1024)
    return emitError() << "distribution threads must be in [1, 1024], got " << threads;
  if (vector < 1 || !llvm::isPowerOf2_64(vector))
    return emitError() << "distribution vector must be a positive power of two, got " << vector;
  return success();
}

LogicalResult MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t m,
                                    int64_t n, int64_t warpsM, int64_t warpsN,
                                    ArrayRef<int64_t> lanes, ArrayRef<int64_t> registers) {
  if (m < 1 || n < 1 || m > 256 || n > 256 || !llvm::isPowerOf2_64(m) || !llvm::isPowerOf2_64(n))
    return emitError() << "mma_layout steps are powers of two up to 256, got m = " << m
                       << ", n = " << n;
  if (warpsM < 1 || warpsN < 1 || warpsM > 32 || warpsN > 32 || warpsM * warpsN > 32)
    return emitError() << "mma_layout warps must be positive and at most 32 in all, got warps_m = "
                       << warpsM << ", warps_n = " << warpsN;
  if (lanes.size() != 5)
    return emitError() << "mma_layout needs one basis per lane bit (5), got " << lanes.size();
  // The bases place the step's m x n elements once each: its row offsets
  // are 1, 2, ..., m / 2 once each, and likewise its column offsets.
  uint64_t rows = 0, cols = 0;
  for (int64_t basis : llvm::concat<const int64_t>(lanes, registers)) {
    uint64_t &seen = isRowBasis(basis) ? rows : cols;
    int64_t offset = isRowBasis(basis) ? basisRows(basis) : basisCols(basis);
    int64_t extent = isRowBasis(basis) ? m : n;
    if (offset < 1 || !llvm::isPowerOf2_64(offset) || offset >= extent ||
        (seen & uint64_t(offset)) != 0)
      return emitError() << "mma_layout bases must place each element of its m" << m << "n" << n
                         << " step once (each row and column offset a distinct power of two "
                            "below the step)";
    seen |= uint64_t(offset);
  }
  if (rows != uint64_t(m - 1) || cols != uint64_t(n - 1))
    return emitError() << "mma_layout bases cover " << (rows + 1) << " x " << (cols + 1)
                       << " elements of its m" << m << "n" << n << " step";
  return success();
}

bool MmaLayoutAttr::isM16N8() const {
  return getM() == 16 && getN() == 8 && getLanes() == ArrayRef(kM16N8Lanes) &&
         getRegisters() == ArrayRef(kM16N8Registers);
}

/// `[r1, c2, ...]`: a list of bases (r: rows, c: columns).
static ParseResult parseBases(AsmParser &parser, SmallVectorImpl<int64_t> &bases) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    StringRef word;
    SMLoc at = parser.getCurrentLocation();
    int64_t offset = 0;
    if (parser.parseKeyword(&word) || word.size() < 2 || (word[0] != 'r' && word[0] != 'c') ||
        word.drop_front().getAsInteger(10, offset) || offset < 1)
      return parser.emitError(at, "expected a basis: rN (N rows) or cN (N columns)");
    bases.push_back(word[0] == 'r' ? offset : -offset);
    return success();
  });
}

static void printBases(AsmPrinter &printer, ArrayRef<int64_t> bases) {
  printer << "[";
  llvm::interleaveComma(bases, printer, [&](int64_t basis) {
    printer << (isRowBasis(basis) ? "r" : "c")
            << (isRowBasis(basis) ? basisRows(basis) : basisCols(basis));
  });
  printer << "]";
}

Attribute MmaLayoutAttr::parse(AsmParser &parser, Type) {
  int64_t m, n, warpsM, warpsN;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword("m") || parser.parseEqual() ||
      parser.parseInteger(m) || parser.parseComma() || parser.parseKeyword("n") ||
      parser.parseEqual() || parser.parseInteger(n) || parser.parseComma() ||
      parser.parseKeyword("warps_m") || parser.parseEqual() || parser.parseInteger(warpsM) ||
      parser.parseComma() || parser.parseKeyword("warps_n") || parser.parseEqual() ||
      parser.parseInteger(warpsN))
    return {};
  SmallVector<int64_t> lanes(std::begin(kM16N8Lanes), std::end(kM16N8Lanes));
  SmallVector<int64_t> registers(std::begin(kM16N8Registers), std::end(kM16N8Registers));
  if (succeeded(parser.parseOptionalComma())) {
    lanes.clear();
    registers.clear();
    if (parser.parseKeyword("lanes") || parser.parseEqual() || parseBases(parser, lanes) ||
        parser.parseComma() || parser.parseKeyword("registers") || parser.parseEqual() ||
        parseBases(parser, registers))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(at); }, parser.getContext(), m, n, warpsM, warpsN,
                    lanes, registers);
}

void MmaLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<m = " << getM() << ", n = " << getN() << ", warps_m = " << getWarpsM()
          << ", warps_n = " << getWarpsN();
  if (getLanes() != ArrayRef(kM16N8Lanes) || getRegisters() != ArrayRef(kM16N8Registers)) {
    printer << ", lanes = ";
    printBases(printer, getLanes());
    printer << ", registers = ";
    printBases(printer, getRegisters());
  }
  printer << ">";
}

LogicalResult MmaLayoutAttr::verifyShape(function_ref<InFlightDiagnostic()> emitError,
                                         ArrayRef<int64_t> shape, StringRef what) const {
  if (shape.size() != 2)
    return emitError() << "an mma_layout needs a 2-D " << what << ", got rank " << shape.size();
  int64_t rows = getM() * getWarpsM(), cols = getN() * getWarpsN();
  if (shape[0] % rows != 0 || shape[1] % cols != 0)
    return emitError() << "the " << what << " (" << shape[0] << " x " << shape[1]
                       << ") does not split into " << getWarpsM() << " x " << getWarpsN()
                       << " warps of m" << getM() << "n" << getN()
                       << " steps (its extents must be multiples of " << rows << " and " << cols
                       << ")";
  return success();
}

int64_t DistributionAttr::slotsPerThread(int64_t numElements) const {
  int64_t chunk = getThreads() * getVector();
  return ((numElements + chunk - 1) / chunk) * getVector();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type TileTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return TileTensorType::getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                                parser.getContext(), shape, elementType);
}

void TileTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape()) {
    if (ShapedType::isDynamic(dim))
      printer << "?";
    else
      printer << dim;
    printer << "x";
  }
  printer << getElementType() << ">";
}

LogicalResult TileTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty())
    return emitError() << "a tile tensor needs at least one dimension";
  for (int64_t dim : shape)
    if (!ShapedType::isDynamic(dim) && dim <= 0)
      return emitError() << "tensor dimensions must be positive or '?', got " << dim;
  if (!isSupportedElementType(elementType))
    return emitError() << "unsupported tensor element type " << elementType << " (expected "
                       << kElementTypes << ")";
  return success();
}

int64_t TileTensorType::getNumDynamicDims() const {
  return llvm::count_if(getShape(), ShapedType::isDynamic);
}

Type BufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  StringRef scopeName;
  llvm::SMLoc scopeLoc;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma())
    return {};
  scopeLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&scopeName) || parser.parseGreater())
    return {};
  std::optional<MemoryScope> scope = symbolizeMemoryScope(scopeName);
  if (!scope) {
    parser.emitError(scopeLoc) << "unknown buffer scope '" << scopeName
                               << "' (expected 'shared' or 'fragment')";
    return {};
  }
  return BufferType::getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                                parser.getContext(), shape, elementType, *scope);
}

void BufferType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType() << ", " << stringifyMemoryScope(getScope()) << ">";
}

LogicalResult BufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType, MemoryScope) {
  if (shape.empty())
    return emitError() << "a tile buffer needs at least one dimension";
  // A buffer lives in one block's shared memory or registers (at most a few
  // hundred KiB); past 2^31 elements its size no longer fits the arithmetic.
  constexpr int64_t kMaxElements = int64_t(1) << 31;
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim <= 0)
      return emitError() << "buffer dimensions must be positive, got " << dim;
    if (dim > kMaxElements / elements)
      return emitError() << "a tile buffer holds at most 2^31 elements";
    elements *= dim;
  }
  if (!isSupportedElementType(elementType))
    return emitError() << "unsupported buffer element type " << elementType << " (expected "
                       << kElementTypes << ")";
  return success();
}

int64_t BufferType::getNumElements() const {
  int64_t n = 1;
  for (int64_t dim : getShape())
    n *= dim;
  return n;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type, AffineMap grid, int64_t threads) {
  state.addAttribute(getSymNameAttrName(state.name), builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addAttribute(getGridAttrName(state.name), AffineMapAttr::get(grid));
  state.addAttribute(getThreadsAttrName(state.name), builder.getI64IntegerAttr(threads));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type input : type.getInputs())
    block->addArgument(input, state.location);
  for (unsigned i = 0; i < grid.getNumResults(); ++i)
    block->addArgument(builder.getIndexType(), state.location);
  KernelOp::ensureTerminator(*body, builder, state.location);
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren, /*allowType=*/true))
    return failure();
  AffineMapAttr grid;
  int64_t threads = 0;
  if (parser.parseKeyword("grid") || parser.parseLParen() ||
      parser.parseAttribute(grid, getGridAttrName(result.name), result.attributes) ||
      parser.parseRParen() || parser.parseKeyword("threads") || parser.parseLParen() ||
      parser.parseInteger(threads) || parser.parseRParen())
    return failure();
  result.addAttribute(getThreadsAttrName(result.name),
                      parser.getBuilder().getI64IntegerAttr(threads));
  SmallVector<OpAsmParser::Argument> blockArgs;
  if (parser.parseKeyword("blocks") ||
      parser.parseArgumentList(blockArgs, OpAsmParser::Delimiter::Paren))
    return failure();
  SmallVector<Type> inputs;
  for (auto &arg : args)
    inputs.push_back(arg.type);
  for (auto &arg : blockArgs) {
    arg.type = parser.getBuilder().getIndexType();
    args.push_back(arg);
  }
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(parser.getBuilder().getFunctionType(inputs, {})));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  KernelOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << "(";
  Block &block = getBodyBlock();
  for (unsigned i = 0, e = getNumKernelArguments(); i < e; ++i) {
    if (i)
      p << ", ";
    p.printRegionArgument(block.getArgument(i));
  }
  // I64Attr accessors return uint64_t: print the signed value, so that even
  // an invalid count prints as text that parses back.
  p << ") grid(" << getGridAttr() << ") threads(" << getThreadsAttr().getInt() << ") blocks(";
  llvm::interleaveComma(getBlockIndices(), p, [&](BlockArgument arg) { p << arg; });
  p << ")";
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {getSymNameAttrName(), getFunctionTypeAttrName(), getGridAttrName(),
                            getThreadsAttrName()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

int64_t KernelOp::getNumDynamicDims() {
  int64_t count = 0;
  for (Type input : getFunctionType().getInputs())
    if (auto tensor = dyn_cast<TileTensorType>(input))
      count += tensor.getNumDynamicDims();
  return count;
}

int64_t KernelOp::getNumGridSymbols() {
  std::optional<ArrayRef<int64_t>> sizeArgs = getSizeArgs();
  return getNumDynamicDims() + (sizeArgs ? int64_t(sizeArgs->size()) : 0);
}

int64_t KernelOp::getDynamicDimDivisibility(int64_t i) {
  if (auto divisibility = getDimDivisibility())
    if (i >= 0 && i < int64_t(divisibility->size()))
      return std::max<int64_t>(1, (*divisibility)[i]);
  return 1;
}

std::string KernelOp::getArgumentName(unsigned i) {
  if (auto names = getArgNames())
    if (i < names->size())
      return cast<StringAttr>((*names)[i]).str();
  return "arg" + std::to_string(i);
}

bool tessera::tile::isKernelName(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult KernelOp::verify() {
  if (!isKernelName(getSymName()))
    return emitOpError() << "name '" << getSymName() << "' " << kKernelNameRule;
  for (auto [i, input] : llvm::enumerate(getFunctionType().getInputs())) {
    if (isa<TileTensorType>(input) || input.isIndex() ||
        (input.isIntOrFloat() && isSupportedElementType(input) && !isStorageOnlyType(input)))
      continue;
    if (isStorageOnlyType(input))
      return emitOpError() << "argument #" << i << " is a scalar of storage type " << input
                           << "; pass scalars as f16, bf16, f32, f64, i8, i32 or i64";
    return emitOpError() << "argument #" << i << " has type " << input
                         << "; kernel arguments are !tile.tensor values or scalars";
  }
  AffineMap grid = getGrid();
  if (grid.getNumDims() != 0)
    return emitOpError() << "grid map must use symbols only (the dynamic tensor dimensions), "
                            "not dimensions: "
                         << AffineMapAttr::get(grid);
  if (grid.getNumResults() < 1 || grid.getNumResults() > 3)
    return emitOpError() << "grid must have 1 to 3 extents, got " << grid.getNumResults();
  if (std::optional<ArrayRef<int64_t>> sizeArgs = getSizeArgs()) {
    ArrayRef<Type> inputs = getFunctionType().getInputs();
    for (auto [k, arg] : llvm::enumerate(*sizeArgs)) {
      if (arg < 0 || arg >= int64_t(inputs.size()))
        return emitOpError() << "size_args names argument #" << arg << ", but the kernel has "
                             << inputs.size();
      if (!inputs[arg].isInteger(32) && !inputs[arg].isInteger(64))
        return emitOpError() << "size_args names argument #" << arg << " of type " << inputs[arg]
                             << "; a size argument is an i32 or i64 scalar";
      if (k > 0 && arg <= (*sizeArgs)[k - 1])
        return emitOpError() << "size_args must be increasing argument numbers";
    }
  }
  if (int64_t(grid.getNumSymbols()) != getNumGridSymbols()) {
    if (getSizeArgs())
      return emitOpError() << "grid map has " << grid.getNumSymbols()
                           << " symbols but the tensor arguments have " << getNumDynamicDims()
                           << " dynamic dimensions and size_args names "
                           << getNumGridSymbols() - getNumDynamicDims()
                           << " arguments; the map's symbols are those dimensions in argument "
                              "order, then the size arguments";
    return emitOpError() << "grid map has " << grid.getNumSymbols()
                         << " symbols but the tensor arguments have " << getNumDynamicDims()
                         << " dynamic dimensions; the map's symbols are those dimensions in "
                            "argument order";
  }
  for (AffineExpr extent : grid.getResults())
    if (auto constant = dyn_cast<AffineConstantExpr>(extent))
      if (constant.getValue() < 1 || constant.getValue() > detail::kMaxInt32Quantity)
        return emitOpError() << "grid extents must be in [1, 2^31 - 1], got "
                             << constant.getValue();
  // I64Attr accessors return uint64_t: compare and print the signed value.
  int64_t threads = getThreadsAttr().getInt();
  if (threads < 1 || threads > 1024)
    return emitOpError() << "threads per block must be in [1, 1024], got " << threads;
  if (getStreamK() && !getPersistent())
    return emitOpError() << "stream_k needs persistent";
  if (getPingpong() && getPersistent())
    return emitOpError() << "pingpong and persistent cannot be combined";
  if (getMulticast() && getPingpong())
    return emitOpError() << "multicast cannot be combined with pingpong";
  if (std::optional<uint64_t> blocks = getMulticastBlocks()) {
    if (!getMulticast())
      return emitOpError() << "multicast_blocks needs multicast";
    int64_t n = getMulticastBlocksAttr().getInt();
    if (n != 2 && n != 4 && n != 8)
      return emitOpError() << "multicast_blocks must be 2, 4 or 8 (a cluster's blocks), got " << n;
  }
  if (getPingpong() && grid.getNumResults() < 2)
    return emitOpError() << "pingpong pairs blocks along y: it needs a grid of two or three "
                            "extents, got "
                         << grid.getNumResults();
  if (auto names = getArgNames())
    if (names->size() != getNumKernelArguments())
      return emitOpError() << "arg_names has " << names->size() << " names for "
                           << getNumKernelArguments() << " arguments";
  if (auto divisibility = getDimDivisibility()) {
    if (int64_t(divisibility->size()) != getNumDynamicDims())
      return emitOpError() << "dim_divisibility has " << divisibility->size()
                           << " entries for " << getNumDynamicDims() << " dynamic dimensions";
    for (int64_t d : *divisibility)
      if (d < 1)
        return emitOpError() << "dim_divisibility entries must be positive, got " << d;
  }
  if (auto groups = getDimGroups()) {
    for (NamedAttribute group : *groups) {
      auto dims = dyn_cast<DenseI64ArrayAttr>(group.getValue());
      if (!dims)
        return emitOpError() << "dim_groups entry '" << group.getName().getValue()
                             << "' must be an array<i64> of dynamic dimension numbers";
      for (int64_t dim : dims.asArrayRef())
        if (dim < 0 || dim >= getNumDynamicDims())
          return emitOpError() << "dim_groups entry '" << group.getName().getValue()
                               << "' names dynamic dimension " << dim << ", but there are "
                               << getNumDynamicDims();
    }
  }
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &block = getBodyBlock();
  unsigned expected = getNumKernelArguments() + getGrid().getNumResults();
  if (block.getNumArguments() != expected)
    return emitOpError() << "body takes " << block.getNumArguments()
                         << " arguments; expected the " << getNumKernelArguments()
                         << " kernel arguments and " << getGrid().getNumResults()
                         << " block indices";
  for (auto [i, input] : llvm::enumerate(getFunctionType().getInputs()))
    if (block.getArgument(i).getType() != input)
      return emitOpError() << "body argument #" << i << " has type "
                           << block.getArgument(i).getType() << ", expected " << input;
  for (BlockArgument arg : getBlockIndices())
    if (!arg.getType().isIndex())
      return emitOpError() << "block indices must be of type index";
  return success();
}

//===----------------------------------------------------------------------===//
// DimOp
//===----------------------------------------------------------------------===//

LogicalResult DimOp::verify() {
  auto type = cast<TileTensorType>(getTensor().getType());
  int64_t index = getIndexAttr().getInt();
  if (index < 0 || index >= type.getRank())
    return emitOpError() << "dimension " << index << " is out of range for a tensor of rank "
                         << type.getRank();
  return success();
}

LogicalResult ReadOp::verify() {
  auto type = cast<TileTensorType>(getTensor().getType());
  if (!type.getElementType().isSignlessInteger(32) && !type.getElementType().isSignlessInteger(64))
    return emitOpError() << "reads an index from a tensor of " << type.getElementType()
                         << "; indices come from i32 or i64 tensors";
  if (int64_t(getIndices().size()) != type.getRank())
    return emitOpError() << "a tensor of rank " << type.getRank() << " needs " << type.getRank()
                         << " indices, got " << getIndices().size();
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError() << "reads a block-uniform index and is not valid inside tile.parallel; "
                            "read it before the loop";
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  auto type = cast<TileTensorType>(getTensor().getType());
  int64_t index = getIndexAttr().getInt();
  if (index < 0 || index >= type.getRank())
    return {};
  int64_t dim = type.getShape()[index];
  if (ShapedType::isDynamic(dim))
    return {};
  return IntegerAttr::get(IndexType::get(getContext()), dim);
}

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

LogicalResult AllocSharedOp::verify() {
  if (!cast<BufferType>(getType()).isShared())
    return emitOpError() << "allocates shared memory, but the result type " << getType()
                         << " is not in scope 'shared'";
  if (IntegerAttr offset = getOffsetAttr()) {
    int64_t bytes = offset.getInt();
    if (bytes < 0 || bytes > detail::kMaxInt32Quantity)
      return emitOpError() << "offset must be in [0, 2^31 - 1], got " << bytes;
  }
  if (IntegerAttr stagesAttr = getStagesAttr()) {
    int64_t stages = stagesAttr.getInt();
    if (stages < 1 || stages > detail::kMaxInt32Quantity)
      return emitOpError() << "stages must be in [1, 2^31 - 1], got " << stages;
    int64_t bytes = getBufferBytes(cast<BufferType>(getType()));
    if (bytes > detail::kMaxInt32Quantity / stages)
      return emitOpError() << stages << " stages of " << bytes
                           << " bytes exceed 2^31 - 1 bytes of shared memory";
  }
  return success();
}

LogicalResult tessera::tile::detail::verifyRowSlice(
    function_ref<InFlightDiagnostic()> emitError, MmaLayoutAttr layout, int64_t rows,
    StringRef what) {
  if (rows % (layout.getM() * layout.getWarpsM()) != 0)
    return emitError() << "the " << what << " (" << rows << " rows) does not split into "
                       << layout.getWarpsM() << " warps of " << layout.getM() << "-row steps of "
                       << layout;
  return success();
}

LogicalResult AllocFragmentOp::verify() {
  if (!cast<BufferType>(getType()).isFragment())
    return emitOpError() << "allocates a fragment, but the result type " << getType()
                         << " is not in scope 'fragment'";
  auto type = cast<BufferType>(getType());
  if (getRowSlice()) {
    if (!getMmaLayoutAttr() || type.getRank() != 1 || getReplicated() || getDistributionAttr())
      return emitOpError() << "a row_slice fragment is 1-D, has an mma_layout and no "
                              "distribution, and is not replicated; got "
                           << type;
    return detail::verifyRowSlice([&] { return emitOpError(); }, getMmaLayoutAttr(),
                                  type.getShape()[0], "row slice");
  }
  if (MmaLayoutAttr layout = getMmaLayoutAttr())
    return layout.verifyShape([&] { return emitOpError(); }, type.getShape(), "fragment");
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

BufferType CopyOp::getTileType() {
  if (auto dst = dyn_cast<BufferType>(getDst().getType()))
    return dst;
  return cast<BufferType>(getSrc().getType());
}

SmallVector<Value> CopyOp::getTileOffsets() {
  OperandRange offsets =
      isa<TileTensorType>(getSrc().getType()) ? getSrcOffsets() : getDstOffsets();
  std::optional<ArrayRef<int64_t>> dims = getTensorDims();
  if (!dims)
    return SmallVector<Value>(offsets.begin(), offsets.end());
  SmallVector<Value> spanned;
  for (int64_t d : *dims)
    if (d >= 0 && d < int64_t(offsets.size()))
      spanned.push_back(offsets[d]);
  return spanned;
}

LogicalResult CopyOp::verify() {
  Type srcType = getSrc().getType(), dstType = getDst().getType();
  if (isa<TileTensorType>(srcType) && isa<TileTensorType>(dstType))
    return emitOpError() << "copies between two global tensors are not supported; stage the "
                            "tile through a shared buffer or a fragment";
  BufferType tile = getTileType();
  auto checkSide = [&](Type type, OperandRange offsets, StringRef side) -> LogicalResult {
    if (auto tensor = dyn_cast<TileTensorType>(type)) {
      if (int64_t(offsets.size()) != tensor.getRank())
        return emitOpError() << side << " tensor of rank " << tensor.getRank() << " needs "
                             << tensor.getRank() << " offsets, got " << offsets.size();
      if (std::optional<ArrayRef<int64_t>> dims = getTensorDims()) {
        if (int64_t(dims->size()) != tile.getRank())
          return emitOpError() << "tensor_dims names " << dims->size()
                               << " dimensions for a tile of rank " << tile.getRank();
        for (size_t i = 0; i < dims->size(); ++i)
          if ((*dims)[i] < 0 || (*dims)[i] >= tensor.getRank() || (i && (*dims)[i] <= (*dims)[i - 1]))
            return emitOpError() << "tensor_dims must be increasing dimensions of the " << side
                                 << " tensor of rank " << tensor.getRank();
        if (dims->back() != tensor.getRank() - 1)
          return emitOpError() << "tensor_dims must span the " << side
                               << " tensor's innermost dimension (the tile's rows are contiguous)";
        return success();
      }
      if (tensor.getRank() != tile.getRank())
        return emitOpError() << "tile " << tile << " has rank " << tile.getRank()
                             << " but the " << side << " tensor has rank " << tensor.getRank()
                             << "; tensor_dims names the dimensions a slice spans";
      return success();
    }
    if (!offsets.empty())
      return emitOpError() << side << " buffer takes no offsets; the whole buffer is the tile";
    return success();
  };
  if (getTensorDims() && !isa<TileTensorType>(srcType) && !isa<TileTensorType>(dstType))
    return emitOpError() << "tensor_dims needs a tensor operand";
  if (getUntil() && !isa<TileTensorType>(srcType) && !isa<TileTensorType>(dstType))
    return emitOpError() << "until bounds a tensor's tile and needs a tensor operand";
  if (std::optional<int64_t> axis = getUntilAxis()) {
    if (!getUntil())
      return emitOpError() << "until_axis without until";
    if (*axis < 0 || *axis >= tile.getRank())
      return emitOpError() << "until_axis " << *axis << " is not an axis of the tile of rank "
                           << tile.getRank();
  }
  if (failed(checkSide(srcType, getSrcOffsets(), "source")) ||
      failed(checkSide(dstType, getDstOffsets(), "destination")))
    return failure();
  auto srcBuffer = dyn_cast<BufferType>(srcType);
  auto dstBuffer = dyn_cast<BufferType>(dstType);
  if (srcBuffer && dstBuffer && srcBuffer.getShape() != dstBuffer.getShape())
    return emitOpError() << "source " << srcBuffer << " and destination " << dstBuffer
                         << " have different shapes";
  Type srcElt = isa<TileTensorType>(srcType) ? cast<TileTensorType>(srcType).getElementType()
                                         : srcBuffer.getElementType();
  Type dstElt = isa<TileTensorType>(dstType) ? cast<TileTensorType>(dstType).getElementType()
                                         : dstBuffer.getElementType();
  if (getAtomicAdd()) {
    if (!isa<TileTensorType>(dstType))
      return emitOpError() << "atomic_add adds into a tensor tile; the destination is " << dstType;
    if (!dstElt.isF32() && !dstElt.isF64() && !dstElt.isF16() && !dstElt.isBF16() &&
        !dstElt.isSignlessInteger(32) && !dstElt.isSignlessInteger(64))
      return emitOpError() << "atomic_add into a tensor of " << dstElt
                           << "; atomics add f32, f64, f16, bf16, i32 or i64";
  }
  // Floats convert to floats and integers to integers or floats; a float
  // into an integer needs a rounding the author chooses (tile.cast in a
  // tile.parallel body).
  if (srcElt != dstElt && !isa<FloatType>(dstElt) &&
      !(isa<IntegerType>(srcElt) && isa<IntegerType>(dstElt)))
    return emitOpError() << "cannot convert " << srcElt << " to " << dstElt
                         << "; a copy converts between float types, between integer types "
                            "and from integers to floats (tile.cast a float into an integer in "
                            "a tile.parallel body)";
  return success();
}

//===----------------------------------------------------------------------===//
// FillOp
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  Type elementType = cast<BufferType>(getBuffer().getType()).getElementType();
  // A ui8 buffer is filled with its bits as an i8 (arith has no ui8).
  if (elementType.isUnsignedInteger(8) && getValue().getType().isSignlessInteger(8))
    return success();
  if (getValue().getType() != elementType)
    return emitOpError() << "fill value has type " << getValue().getType()
                         << " but the buffer holds " << elementType;
  return success();
}

