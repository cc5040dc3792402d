//===- test_kernels.h - Kernel descriptions shared by runtime tests -*- C++ -*-===//
//
// This file builds small CompiledKernel descriptions (vector add, a 2-D
// matmul-like signature) and grid and precondition expressions for the
// runtime tests.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_RUNTIME_TEST_KERNELS_H_
#define TESSERA_TESTS_RUNTIME_TEST_KERNELS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "runtime/kernel.pb.h"

namespace tessera::runtime::test_kernels {

/// A constant expression.
inline Expr Constant(int64_t value) {
  Expr expr;
  expr.set_op(Expr::OP_CONSTANT);
  expr.set_value(value);
  return expr;
}

/// Dynamic dimension `index`.
inline Expr Symbol(int64_t index) {
  Expr expr;
  expr.set_op(Expr::OP_SYMBOL);
  expr.set_value(index);
  return expr;
}

/// The value of param `index` (an integer scalar; preconditions only).
inline Expr ParamRef(int64_t index) {
  Expr expr;
  expr.set_op(Expr::OP_PARAM);
  expr.set_value(index);
  return expr;
}

/// `lhs op rhs`.
inline Expr Binary(Expr::Op op, const Expr& lhs, const Expr& rhs) {
  Expr expr;
  expr.set_op(op);
  *expr.mutable_lhs() = lhs;
  *expr.mutable_rhs() = rhs;
  return expr;
}

/// Adds a tensor parameter.
inline void AddTensor(CompiledKernel& kernel, const std::string& name,
                      DType dtype, std::initializer_list<int64_t> shape,
                      int64_t alignment = 16) {
  Param* param = kernel.add_params();
  param->set_name(name);
  param->set_kind(Param::KIND_TENSOR);
  param->set_dtype(dtype);
  for (int64_t dim : shape) param->add_shape(dim);
  param->set_alignment(alignment);
}

/// Adds a scalar parameter.
inline void AddScalar(CompiledKernel& kernel, const std::string& name,
                      DType dtype) {
  Param* param = kernel.add_params();
  param->set_name(name);
  param->set_kind(Param::KIND_SCALAR);
  param->set_dtype(dtype);
}

/// y = A + alpha * B over f32[N]: C[i] = A[i] + alpha * B[i]; params
/// (A, B, C, alpha), one dim group N = {0, 1, 2}, grid ceil_div(N, 256),
/// 256 threads.
inline CompiledKernel VectorAddKernel() {
  CompiledKernel kernel;
  kernel.set_target("sm_80");
  kernel.set_entry("vector_add");
  AddTensor(kernel, "A", DTYPE_F32, {-1});
  AddTensor(kernel, "B", DTYPE_F32, {-1});
  AddTensor(kernel, "C", DTYPE_F32, {-1});
  AddScalar(kernel, "alpha", DTYPE_F32);
  DimGroup* group = kernel.add_dim_groups();
  group->set_name("N");
  for (int d : {0, 1, 2}) group->add_dims(d);
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(0), Constant(256));
  kernel.set_block_threads(256);
  return kernel;
}

}  // namespace tessera::runtime::test_kernels

#endif  // TESSERA_TESTS_RUNTIME_TEST_KERNELS_H_
