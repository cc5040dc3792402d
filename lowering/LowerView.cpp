//===- LowerView.cpp - Tensors at addresses read from data ----------------===//
//
// tile.view: the pointer read (every thread the same element, 0 outside the
// pointer tensor), its sizes (negative ones as 0, so the unsigned bounds
// checks of copies hold), explicit strides (row-major where none are given:
// copies then check vector alignment against the innermost divisor, which
// is all a view's address promises), and the `align` promise checked once.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <numeric>

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

TensorInfo KernelLowering::viewTypeInfo(ViewOp view) {
  auto type = cast<TileTensorType>(view.getResult().getType());
  TensorInfo info{type, Value(), {}, {}};
  info.addressFromData = true;
  for (int64_t dim : type.getShape())
    info.divisors.push_back(ShapedType::isDynamic(dim) ? 1 : dim);
  // The innermost divisor divides the strides and the address (in
  // elements): what `align` promises, or one element.
  int64_t element = getElementBytes(type.getElementType());
  int64_t aligned = int64_t(view.getAlign().value_or(element)) / element;
  int64_t inner = type.getShape().back();
  info.divisors.back() = std::gcd(ShapedType::isDynamic(inner) ? 0 : inner, aligned);
  return info;
}

LogicalResult KernelLowering::lowerView(ViewOp view) {
  SmallVector<Value> indices;
  for (Value index : view.getIndices())
    indices.push_back(map_.lookupOrDefault(index));
  Type i64 = b_.getI64Type();
  Value address = readElement(tensors_[view.getPointers()], indices);
  TensorInfo info = viewTypeInfo(view);
  info.ptr = LLVM::IntToPtrOp::create(
      b_, loc_, LLVM::LLVMPointerType::get(b_.getContext(), kGlobalAddressSpace), address);
  auto sizes = view.getSizes().begin();
  for (int64_t dim : info.type.getShape())
    info.dims.push_back(
        ShapedType::isDynamic(dim)
            ? arith::MaxSIOp::create(b_, loc_, map_.lookupOrDefault(*sizes++), cst(0)).getResult()
            : cst(dim));
  if (view.getStrides().empty()) {
    info.strides = rowMajorStrides(info.dims);
  } else {
    for (Value stride : view.getStrides())
      info.strides.push_back(map_.lookupOrDefault(stride));
    info.strides.push_back(cst(1));
  }
  int64_t element = getElementBytes(info.type.getElementType());
  if (std::optional<uint64_t> align = view.getAlign(); align && int64_t(*align) > element) {
    // address | strides | innermost size, in bytes: any of the low bits set
    // breaks the promise that vector copies rely on.
    Value bits = address;
    auto orBytes = [&](Value elements) {
      Value bytes = arith::IndexCastOp::create(b_, loc_, i64, mul(elements, cst(element)));
      bits = arith::OrIOp::create(b_, loc_, bits, bytes);
    };
    orBytes(info.dims.back());
    for (Value stride : ArrayRef<Value>(info.strides).drop_back())
      orBytes(stride);
    Value low = arith::AndIOp::create(
        b_, loc_, bits, arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(*align - 1)));
    Value broken =
        arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ne, low,
                              arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(0)));
    ifThen(broken, [&] { LLVM::Trap::create(b_, loc_); });
  }
  tensors_[view.getResult()] = info;
  return success();
}

} // namespace tessera::lowering
