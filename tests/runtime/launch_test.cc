//===- launch_test.cc - Tests of argument checking and packing ------------===//
//
// This file tests PrepareLaunch, DynamicDimNames and FormatSignature without
// a GPU: every check that guards a launch, the PTX parameter order and the
// grid.
//
//===----------------------------------------------------------------------===//

#include "runtime/launch.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using test_kernels::AddScalar;
using test_kernels::AddTensor;
using test_kernels::Binary;
using test_kernels::Constant;
using test_kernels::ParamRef;
using test_kernels::Symbol;
using test_kernels::VectorAddKernel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A plausible, 256-byte aligned device address.
constexpr CUdeviceptr kBase = 0x7f0000000000;

/// Arguments for VectorAddKernel with lengths `a`, `b`, `c`.
std::vector<KernelArg> VectorAddArgs(int64_t a, int64_t b, int64_t c) {
  return {TensorArg{kBase, DTYPE_F32, {a}},
          TensorArg{kBase + 0x100000, DTYPE_F32, {b}},
          TensorArg{kBase + 0x200000, DTYPE_F32, {c}}, ScalarArg::F32(2.5f)};
}

/// The value of packed slot `i` as a `T`.
template <typename T>
T SlotAs(const PackedLaunch& packed, size_t i) {
  T value;
  std::memcpy(&value, &packed.slots.at(i), sizeof(T));
  return value;
}

TEST(PrepareLaunch, PacksPointersDynamicDimsAndScalarsInParamOrder) {
  absl::StatusOr<PackedLaunch> packed =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(1000, 1000, 1000));
  ASSERT_TRUE(packed.ok()) << packed.status();
  // A, N_A, B, N_B, C, N_C, alpha.
  EXPECT_THAT(packed->slot_sizes, ElementsAre(8, 8, 8, 8, 8, 8, 4));
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 0), kBase);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 1), 1000);
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 2), kBase + 0x100000);
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 4), kBase + 0x200000);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 5), 1000);
  EXPECT_EQ(SlotAs<float>(*packed, 6), 2.5f);
  EXPECT_THAT(packed->dynamic_dims, ElementsAre(1000, 1000, 1000));
  ASSERT_EQ(packed->kernel_params.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(packed->kernel_params[i], &packed->slots[i]);
  }
}

TEST(RebindPointers, RewritesOnlyThePointerSlots) {
  absl::StatusOr<PackedLaunch> packed =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(1000, 1000, 1000));
  ASSERT_TRUE(packed.ok()) << packed.status();
  const std::vector<uint64_t> before = packed->slots;
  const CUdeviceptr moved[] = {kBase + 0x400000, kBase + 0x500000, kBase + 0x600000};
  ASSERT_TRUE(RebindPointers(*packed, moved).ok());
  // A, N_A, B, N_B, C, N_C, alpha: pointers moved, the rest as packed.
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 0), kBase + 0x400000);
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 2), kBase + 0x500000);
  EXPECT_EQ(SlotAs<uint64_t>(*packed, 4), kBase + 0x600000);
  for (size_t i : {1, 3, 5, 6}) EXPECT_EQ(packed->slots[i], before[i]) << i;
  EXPECT_EQ(packed->kernel_params[0], &packed->slots[0]);
}

TEST(RebindPointers, RefusesAMisalignedNullOrMissingPointerAndWritesNothing) {
  absl::StatusOr<PackedLaunch> packed =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(1000, 1000, 1000));
  ASSERT_TRUE(packed.ok()) << packed.status();
  const std::vector<uint64_t> before = packed->slots;
  const CUdeviceptr misaligned[] = {kBase + 0x400000, kBase + 0x500004, kBase};
  EXPECT_THAT(RebindPointers(*packed, misaligned).message(),
              HasSubstr("argument 1: pointer 0x7f0000500004 is not aligned to 16 bytes"));
  const CUdeviceptr null[] = {kBase, kBase, 0};
  EXPECT_THAT(RebindPointers(*packed, null).message(), HasSubstr("argument 2: null pointer"));
  const CUdeviceptr two[] = {kBase, kBase};
  EXPECT_THAT(RebindPointers(*packed, two).message(),
              HasSubstr("the launch has 3 tensor arguments, got 2 pointers"));
  EXPECT_EQ(packed->slots, before);
}

TEST(PrepareLaunch, EvaluatesGridFromDynamicDims) {
  absl::StatusOr<PackedLaunch> packed =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(1000, 1000, 1000));
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->grid, ElementsAre(4, 1, 1));
  EXPECT_EQ(packed->block_threads, 256);
  EXPECT_FALSE(packed->empty);
}

TEST(PrepareLaunch, PacksMixedStaticAndDynamicDimsWithTwoDimensionalGrid) {
  CompiledKernel kernel;
  kernel.set_entry("matmul");
  AddTensor(kernel, "A", DTYPE_F16, {-1, 64});  // d0 = M
  AddTensor(kernel, "B", DTYPE_F16, {64, -1});  // d1 = N
  AddTensor(kernel, "C", DTYPE_F32, {-1, -1});  // d2 = M, d3 = N
  AddScalar(kernel, "k", DTYPE_I32);
  AddScalar(kernel, "beta", DTYPE_F64);
  AddScalar(kernel, "offset", DTYPE_I64);
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(1), Constant(128));
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(0), Constant(64));
  kernel.set_block_threads(128);
  kernel.set_shared_memory_bytes(96 * 1024);
  const std::vector<KernelArg> args = {
      TensorArg{kBase, DTYPE_F16, {300, 64}},
      TensorArg{kBase + 0x1000, DTYPE_F16, {64, 500}},
      TensorArg{kBase + 0x2000, DTYPE_F32, {300, 500}}, ScalarArg::I32(-3),
      ScalarArg::F64(0.25), ScalarArg::I64(int64_t{1} << 40)};
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(kernel, args);
  ASSERT_TRUE(packed.ok()) << packed.status();
  // A, M | B, N | C, M, N | k | beta | offset.
  EXPECT_THAT(packed->slot_sizes, ElementsAre(8, 8, 8, 8, 8, 8, 8, 4, 8, 8));
  EXPECT_EQ(SlotAs<int64_t>(*packed, 1), 300);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 3), 500);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 5), 300);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 6), 500);
  EXPECT_EQ(SlotAs<int32_t>(*packed, 7), -3);
  EXPECT_EQ(SlotAs<double>(*packed, 8), 0.25);
  EXPECT_EQ(SlotAs<int64_t>(*packed, 9), int64_t{1} << 40);
  EXPECT_THAT(packed->grid, ElementsAre(4, 5, 1));
  EXPECT_EQ(packed->shared_memory_bytes, 96 * 1024);
}

/// A GEMM-like kernel that takes tensor maps of A (128 x 64 boxes) and B
/// (64 x 64 boxes), both with a 128-byte swizzle.
CompiledKernel TensorMapKernel() {
  CompiledKernel kernel;
  kernel.set_entry("gemm");
  AddTensor(kernel, "A", DTYPE_F16, {-1, -1});
  AddTensor(kernel, "B", DTYPE_F16, {-1, -1});
  *kernel.add_grid() = Constant(1);
  kernel.set_block_threads(384);
  for (auto [param, rows] : {std::pair<int, int64_t>{0, 128}, {1, 64}}) {
    TensorMap* map = kernel.add_tensor_maps();
    map->set_param(param);
    map->add_box(rows);
    map->add_box(64);
    map->set_swizzle_bytes(128);
  }
  return kernel;
}

TEST(PrepareLaunch, DescribesTensorMapsAfterTheParams) {
  const std::vector<KernelArg> args = {TensorArg{kBase, DTYPE_F16, {300, 4000}},
                                       TensorArg{kBase + 0x1000000, DTYPE_F16, {4000, 520}}};
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(TensorMapKernel(), args);
  ASSERT_TRUE(packed.ok()) << packed.status();
  ASSERT_EQ(packed->tensor_maps.size(), 2u);
  const PackedLaunch::TensorMapParam& a = packed->tensor_maps[0];
  // Innermost first: columns, then rows with an 8000-byte row pitch.
  EXPECT_THAT(a.dims, ElementsAre(4000, 300));
  EXPECT_THAT(a.strides_bytes, ElementsAre(8000));
  EXPECT_THAT(a.box, ElementsAre(64, 128));
  EXPECT_EQ(a.address, kBase);
  EXPECT_EQ(a.swizzle_bytes, 128);
  EXPECT_THAT(packed->tensor_maps[1].box, ElementsAre(64, 64));
  // 2 x (pointer, 2 dims) slots, then the two 64-byte aligned map cells.
  ASSERT_EQ(packed->kernel_params.size(), 8u);
  EXPECT_EQ(packed->kernel_params[6], packed->tensor_maps[0].cell);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(packed->kernel_params[7]) % 64, 0u);
  EXPECT_FALSE(packed->tensor_maps_encoded);
}

TEST(PrepareLaunch, RejectsTensorMapRowPitchNotAMultipleOf16Bytes) {
  const std::vector<KernelArg> args = {TensorArg{kBase, DTYPE_F16, {300, 4001}},
                                       TensorArg{kBase + 0x1000000, DTYPE_F16, {4001, 520}}};
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(TensorMapKernel(), args);
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(std::string(packed.status().message()),
              HasSubstr("gemm: argument 0 (A): dimension 0 has a stride of 8002 bytes; the "
                        "kernel's bulk tensor copies need multiples of 16"));
}

TEST(PrepareLaunch, RejectsWrongArgumentCount) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  args.pop_back();
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("vector_add: expects 4 arguments (A, B, C, alpha), got 3"));
}

TEST(PrepareLaunch, RejectsWrongTensorDtype) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  std::get<TensorArg>(args[1]).dtype = DTYPE_F16;
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("argument 1 (B: f32[N]): expects element type f32, got f16"));
}

TEST(PrepareLaunch, ChecksFp8AndU8TensorsByTypeAndSize) {
  CompiledKernel kernel;
  kernel.set_entry("quantize");
  kernel.set_block_threads(128);
  AddTensor(kernel, "Q", DTYPE_F8E4M3, {-1}, 16);
  AddTensor(kernel, "U", DTYPE_U8, {-1}, 16);
  *kernel.add_grid() = Symbol(0);
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(
      kernel, {TensorArg{kBase, DTYPE_F8E4M3, {64}}, TensorArg{kBase, DTYPE_U8, {48}}});
  ASSERT_TRUE(packed.ok()) << packed.status();
  absl::Status status = PrepareLaunch(kernel, {TensorArg{kBase, DTYPE_F8E5M2, {64}},
                                               TensorArg{kBase, DTYPE_I8, {48}}})
                            .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("expects element type f8e4m3, got f8e5m2"));
  EXPECT_EQ(DTypeName(DTYPE_U8), "u8");
}

TEST(PrepareLaunch, RejectsWrongScalarDtype) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  args[3] = ScalarArg::F64(2.5);
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_THAT(status.message(), HasSubstr("expects a scalar f32, got f64"));
}

TEST(PrepareLaunch, RejectsScalarWhereTensorIsExpected) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  args[0] = ScalarArg::F32(1.0f);
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_THAT(status.message(), HasSubstr("argument 0 (A: f32[N]): expects a tensor"));
}

TEST(PrepareLaunch, RejectsOutOfRangeIntegerScalar) {
  CompiledKernel kernel;
  kernel.set_entry("k");
  kernel.set_block_threads(32);
  AddScalar(kernel, "n", DTYPE_I32);
  absl::Status status =
      PrepareLaunch(kernel, {ScalarArg{DTYPE_I32, int64_t{1} << 33}}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  status = PrepareLaunch(kernel, {ScalarArg{DTYPE_I32, 1.5}}).status();
  EXPECT_THAT(status.message(), HasSubstr("expects an integer i32 value"));
}

TEST(PrepareLaunch, RejectsStaticShapeMismatch) {
  CompiledKernel kernel;
  kernel.set_entry("tile");
  kernel.set_block_threads(128);
  AddTensor(kernel, "X", DTYPE_F16, {128, -1});
  absl::Status status =
      PrepareLaunch(kernel, {TensorArg{kBase, DTYPE_F16, {64, 10}}}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("tile: argument 0 (X: f16[128, X.shape[1]]): dimension 0 "
                        "must be 128, got 64"));
}

TEST(PrepareLaunch, RejectsWrongRank) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  std::get<TensorArg>(args[2]).shape = {8, 1};
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_THAT(status.message(), HasSubstr("expects rank 1, got rank 2"));
}

TEST(PrepareLaunch, RejectsNegativeDimension) {
  absl::Status status =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(-1, -1, -1)).status();
  EXPECT_THAT(status.message(), HasSubstr("dimension 0 is negative (-1)"));
}

TEST(PrepareLaunch, RejectsDimGroupMismatchNamingTheSymbol) {
  absl::Status status =
      PrepareLaunch(VectorAddKernel(), VectorAddArgs(1000, 999, 1000)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "vector_add: dimension N: A has 1000 but B has 999");
}

TEST(PrepareLaunch, RejectsMisalignedTensorPointer) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  std::get<TensorArg>(args[2]).ptr = kBase + 4;
  absl::Status status = PrepareLaunch(VectorAddKernel(), args).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("argument 2 (C: f32[N]): pointer 0x7f0000000004 is not "
                        "aligned to 16 bytes"));
}

TEST(PrepareLaunch, RejectsNullPointerForNonEmptyTensor) {
  std::vector<KernelArg> args = VectorAddArgs(8, 8, 8);
  std::get<TensorArg>(args[0]).ptr = 0;
  EXPECT_THAT(PrepareLaunch(VectorAddKernel(), args).status().message(),
              HasSubstr("null pointer"));
}

TEST(PrepareLaunch, MarksZeroSizedProblemAsEmpty) {
  std::vector<KernelArg> args = VectorAddArgs(0, 0, 0);
  for (int i = 0; i < 3; ++i) std::get<TensorArg>(args[i]).ptr = 0;
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(VectorAddKernel(), args);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_TRUE(packed->empty);
  EXPECT_EQ(packed->grid[0], 0);
}

TEST(PrepareLaunch, RejectsGridBeyondHardwareLimits) {
  CompiledKernel kernel;
  kernel.set_entry("wide");
  kernel.set_block_threads(32);
  AddTensor(kernel, "X", DTYPE_I8, {-1}, 1);
  *kernel.add_grid() = Constant(1);
  *kernel.add_grid() = Symbol(0);
  absl::Status status =
      PrepareLaunch(kernel, {TensorArg{kBase, DTYPE_I8, {70000}}}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(status.message(), HasSubstr("grid y = X.shape[0] is 70000"));
}

/// A kernel over a packed batch whose grid reads a size argument:
/// X [T] and grid (ceil_div(max_len, 64), Cu's length).
CompiledKernel SizedKernel() {
  CompiledKernel kernel;
  kernel.set_entry("sized");
  kernel.set_block_threads(64);
  AddTensor(kernel, "X", DTYPE_F32, {-1}, 4);
  AddTensor(kernel, "Cu", DTYPE_I32, {-1}, 4);
  AddScalar(kernel, "max_len", DTYPE_I32);
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, ParamRef(2), Constant(64));
  *kernel.add_grid() = Symbol(1);
  return kernel;
}

TEST(PrepareLaunch, EvaluatesGridFromSizeArguments) {
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(
      SizedKernel(), {TensorArg{kBase, DTYPE_F32, {1000}},
                      TensorArg{kBase + 0x10000, DTYPE_I32, {5}}, ScalarArg::I32(130)});
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->grid, ElementsAre(3, 5, 1));
  packed =
      PrepareLaunch(SizedKernel(), {TensorArg{kBase, DTYPE_F32, {1000}},
                                    TensorArg{kBase + 0x10000, DTYPE_I32, {5}}, ScalarArg::I32(0)});
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_TRUE(packed->empty);
  EXPECT_THAT(FormatSignature(SizedKernel()),
              HasSubstr("grid (ceil_div(max_len, 64), Cu.shape[0], 1)"));
}

TEST(PrepareLaunch, RefusesANegativeSizeArgument) {
  absl::Status status =
      PrepareLaunch(SizedKernel(), {TensorArg{kBase, DTYPE_F32, {1000}},
                                    TensorArg{kBase + 0x10000, DTYPE_I32, {5}}, ScalarArg::I32(-3)})
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("size argument max_len is -3; the grid needs it at least 0"));
}

TEST(PrepareLaunch, ReportsGridDivisionByZero) {
  CompiledKernel kernel;
  kernel.set_entry("div");
  kernel.set_block_threads(32);
  AddTensor(kernel, "X", DTYPE_I8, {-1, -1}, 1);
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(0), Symbol(1));
  absl::Status status =
      PrepareLaunch(kernel, {TensorArg{kBase, DTYPE_I8, {5, 0}}}).status();
  EXPECT_THAT(status.message(), HasSubstr("division by zero"));
  EXPECT_THAT(status.message(), HasSubstr("grid x"));
}

TEST(PrepareLaunch, RejectsMalformedKernelDescriptions) {
  CompiledKernel kernel = VectorAddKernel();
  kernel.set_block_threads(0);
  EXPECT_THAT(PrepareLaunch(kernel, VectorAddArgs(8, 8, 8)).status().message(),
              HasSubstr("block_threads 0"));
  kernel = VectorAddKernel();
  kernel.mutable_dim_groups(0)->add_dims(7);
  EXPECT_THAT(PrepareLaunch(kernel, VectorAddArgs(8, 8, 8)).status().message(),
              HasSubstr("dimension group N refers to dynamic dimension 7"));
  kernel = VectorAddKernel();
  kernel.set_cluster_x(16);
  EXPECT_THAT(PrepareLaunch(kernel, VectorAddArgs(8, 8, 8)).status().message(),
              HasSubstr("cluster_x 16 outside [0, 8]"));
  kernel = VectorAddKernel();
  kernel.set_cluster_x(4);
  kernel.set_cluster_y(4);
  EXPECT_THAT(PrepareLaunch(kernel, VectorAddArgs(8, 8, 8)).status().message(),
              HasSubstr("a cluster of 4 x 4 blocks, over 8"));
  kernel = VectorAddKernel();
  kernel.set_persistent(true);
  kernel.set_cluster_y(2);
  EXPECT_THAT(PrepareLaunch(kernel, VectorAddArgs(8, 8, 8)).status().message(),
              HasSubstr("persistent with cluster_y 2"));
}

TEST(FormatSignature, SaysClusters) {
  CompiledKernel kernel = TensorMapKernel();
  kernel.set_cluster_x(2);
  EXPECT_THAT(FormatSignature(kernel), HasSubstr(", clusters of 2, TMA A[128, 64]"));
  kernel.set_cluster_y(4);
  EXPECT_THAT(FormatSignature(kernel), HasSubstr(", clusters of 2x4, TMA A[128, 64]"));
}

TEST(FormatSignature, ListsTensorMaps) {
  EXPECT_THAT(FormatSignature(TensorMapKernel()),
              HasSubstr("block 384 smem 0 B target , TMA A[128, 64] swizzle 128, "
                        "TMA B[64, 64] swizzle 128"));
}

TEST(FormatSignature, ListsPreconditions) {
  CompiledKernel kernel = VectorAddKernel();
  *kernel.add_preconditions()->mutable_condition() =
      Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, Symbol(0), Constant(8)), Constant(0));
  EXPECT_THAT(FormatSignature(kernel), HasSubstr("target sm_80, requires N % 8 == 0, PTX"));
}

TEST(FormatSignature, NamesDynamicDimsAfterTheirGroup) {
  EXPECT_EQ(FormatSignature(VectorAddKernel()),
            "vector_add(A: f32[N] align 16, B: f32[N] align 16, C: f32[N] "
            "align 16, alpha: f32) grid (ceil_div(N, 256), 1, 1) block 256 "
            "smem 0 B target sm_80, PTX");
}

}  // namespace
}  // namespace tessera::runtime

namespace tessera::runtime {
namespace {

TEST(PrepareLaunch, ChecksPromisedDivisibilityOfDynamicDims) {
  CompiledKernel kernel = VectorAddKernel();
  // The compiler assumed every dynamic length is a multiple of 8.
  for (int i = 0; i < 3; ++i) kernel.add_dim_divisibility(8);
  EXPECT_TRUE(PrepareLaunch(kernel, VectorAddArgs(1000, 1000, 1000)).ok());
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(kernel, VectorAddArgs(1001, 1001, 1001));
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(std::string(packed.status().message()),
              HasSubstr("is 1001, but the kernel was compiled for multiples of 8"));
}

TEST(PrepareLaunch, IgnoresDivisibilityOfOne) {
  CompiledKernel kernel = VectorAddKernel();
  for (int i = 0; i < 3; ++i) kernel.add_dim_divisibility(1);
  EXPECT_TRUE(PrepareLaunch(kernel, VectorAddArgs(1001, 1001, 1001)).ok());
}

/// Adds a dim group `name` over dynamic dimensions `dims`.
void AddGroup(CompiledKernel& kernel, const std::string& name, std::initializer_list<int> dims) {
  DimGroup* group = kernel.add_dim_groups();
  group->set_name(name);
  for (int d : dims) group->add_dims(d);
}

/// C[M, N] = A[M, K] * B[K, N] requiring K % 128 == 0 (declared at gemm.cc:42):
/// dynamic dimensions M = {0, 4}, K = {1, 2}, N = {3, 5}.
CompiledKernel GemmKernel() {
  CompiledKernel kernel;
  kernel.set_entry("gemm");
  kernel.set_block_threads(128);
  AddTensor(kernel, "A", DTYPE_F16, {-1, -1});
  AddTensor(kernel, "B", DTYPE_F16, {-1, -1});
  AddTensor(kernel, "C", DTYPE_F32, {-1, -1});
  AddGroup(kernel, "M", {0, 4});
  AddGroup(kernel, "K", {1, 2});
  AddGroup(kernel, "N", {3, 5});
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(3), Constant(128));
  *kernel.add_grid() = Binary(Expr::OP_CEIL_DIV, Symbol(0), Constant(128));
  Precondition* precondition = kernel.add_preconditions();
  *precondition->mutable_condition() =
      Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, Symbol(1), Constant(128)), Constant(0));
  precondition->set_where("gemm.cc:42");
  return kernel;
}

/// Arguments for GemmKernel of sizes M x K times K x N.
std::vector<KernelArg> GemmArgs(int64_t m, int64_t n, int64_t k) {
  return {TensorArg{kBase, DTYPE_F16, {m, k}}, TensorArg{kBase + 0x1000000, DTYPE_F16, {k, n}},
          TensorArg{kBase + 0x2000000, DTYPE_F32, {m, n}}};
}

/// Attention over Q[H, 64] with an i32 scalar Hkv (the key/value heads),
/// requiring H % Hkv == 0 && Hkv <= H (declared at attention.cc:7).
CompiledKernel AttentionKernel() {
  CompiledKernel kernel;
  kernel.set_entry("attention");
  kernel.set_block_threads(128);
  AddTensor(kernel, "Q", DTYPE_F16, {-1, 64});
  AddScalar(kernel, "scale", DTYPE_F32);
  AddScalar(kernel, "Hkv", DTYPE_I32);
  AddGroup(kernel, "H", {0});
  *kernel.add_grid() = Symbol(0);
  Precondition* precondition = kernel.add_preconditions();
  *precondition->mutable_condition() = Binary(
      Expr::OP_AND, Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, Symbol(0), ParamRef(2)), Constant(0)),
      Binary(Expr::OP_LE, ParamRef(2), Symbol(0)));
  precondition->set_where("attention.cc:7");
  return kernel;
}

/// Arguments for AttentionKernel with `h` heads of queries, `hkv` of keys.
std::vector<KernelArg> AttentionArgs(int64_t h, int32_t hkv) {
  return {TensorArg{kBase, DTYPE_F16, {h, 64}}, ScalarArg::F32(0.125f), ScalarArg::I32(hkv)};
}

TEST(PrepareLaunch, AcceptsArgumentsThatMeetThePreconditions) {
  absl::StatusOr<PackedLaunch> gemm = PrepareLaunch(GemmKernel(), GemmArgs(1000, 1000, 1024));
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_THAT(gemm->grid, ElementsAre(8, 8, 1));
  for (int32_t hkv : {1, 8, 32}) {
    absl::StatusOr<PackedLaunch> attention =
        PrepareLaunch(AttentionKernel(), AttentionArgs(32, hkv));
    ASSERT_TRUE(attention.ok()) << attention.status();
    // Q, H, scale, Hkv.
    EXPECT_THAT(attention->slot_sizes, ElementsAre(8, 8, 4, 4));
    EXPECT_EQ(SlotAs<int32_t>(*attention, 3), hkv);
  }
}

TEST(PrepareLaunch, RefusesADynamicDimThatBreaksAPrecondition) {
  absl::Status status = PrepareLaunch(GemmKernel(), GemmArgs(1000, 1000, 1000)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("gemm: precondition K % 128 == 0 (declared at gemm.cc:42) does not "
                        "hold: K = 1000"));
}

TEST(PrepareLaunch, RefusesAScalarThatBreaksAPreconditionNamingEachValueOnce) {
  absl::Status status = PrepareLaunch(AttentionKernel(), AttentionArgs(32, 5)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("attention: precondition H % Hkv == 0 && Hkv <= H (declared at "
                        "attention.cc:7) does not hold: H = 32, Hkv = 5"));
  // The first clause holds, the second does not.
  status = PrepareLaunch(AttentionKernel(), AttentionArgs(0, 8)).status();
  EXPECT_THAT(status.message(), HasSubstr("does not hold: H = 0, Hkv = 8"));
}

TEST(PrepareLaunch, ReportsAPreconditionThatCannotBeEvaluated) {
  absl::Status status = PrepareLaunch(AttentionKernel(), AttentionArgs(32, 0)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("attention: precondition H % Hkv == 0 && Hkv <= H (declared at "
                        "attention.cc:7) cannot be evaluated with H = 32, Hkv = 0: division by "
                        "zero in H % Hkv"));
}

TEST(PrepareLaunch, NamesAPreconditionWithoutWhereByItsText) {
  CompiledKernel kernel = GemmKernel();
  kernel.mutable_preconditions(0)->clear_where();
  EXPECT_THAT(PrepareLaunch(kernel, GemmArgs(8, 8, 8)).status().message(),
              HasSubstr("gemm: precondition K % 128 == 0 does not hold: K = 8"));
}

TEST(PrepareLaunch, ChecksPreconditionsBeforeTheDivisibilityDerivedFromThem) {
  CompiledKernel kernel = GemmKernel();
  for (int64_t divisor : {1, 128, 128, 1, 1, 1}) kernel.add_dim_divisibility(divisor);
  EXPECT_THAT(PrepareLaunch(kernel, GemmArgs(8, 8, 1000)).status().message(),
              HasSubstr("precondition K % 128 == 0 (declared at gemm.cc:42)"));
}

TEST(PrepareLaunch, PacksU8ScalarsThatPreconditionsRead) {
  CompiledKernel kernel;
  kernel.set_entry("staged");
  kernel.set_block_threads(32);
  AddScalar(kernel, "stages", DTYPE_U8);
  *kernel.add_grid() = Constant(1);
  *kernel.add_preconditions()->mutable_condition() = Binary(Expr::OP_LE, ParamRef(0), Constant(4));
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(kernel, {ScalarArg{DTYPE_U8, int64_t{3}}});
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->slot_sizes, ElementsAre(1));
  EXPECT_EQ(SlotAs<uint8_t>(*packed, 0), 3);
  EXPECT_THAT(PrepareLaunch(kernel, {ScalarArg{DTYPE_U8, int64_t{200}}}).status().message(),
              HasSubstr("staged: precondition stages <= 4 does not hold: stages = 200"));
  EXPECT_THAT(PrepareLaunch(kernel, {ScalarArg{DTYPE_U8, int64_t{256}}}).status().message(),
              HasSubstr("value 256 does not fit in u8"));
}

}  // namespace
}  // namespace tessera::runtime
