//===- gpu_test.cc - Runtime tests that need a CUDA device ----------------===//
//
// This file runs the runtime end to end on a GPU: device queries, buffers,
// loading a hand-written PTX vector add (`.target sm_80`, so the driver JIT
// runs it on any newer device), checked launches, the JIT error log and
// timing. Without a CUDA device every test is skipped and says so.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/autotune.h"
#include "runtime/buffer.h"
#include "runtime/cuda_driver.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/timer.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using ::testing::HasSubstr;

/// C[i] = A[i] + alpha * B[i] for i < nA, with VectorAddKernel's parameters.
constexpr char kVectorAddPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry vector_add(.param .u64 A, .param .u64 nA, .param .u64 B,
                           .param .u64 nB, .param .u64 C, .param .u64 nC,
                           .param .f32 alpha) {
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [B];
  ld.param.u64 %rd3, [C];
  ld.param.u64 %rd4, [nA];
  ld.param.f32 %f1, [alpha];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.s64 %rd5, %rd5, %rd6;
  setp.ge.s64 %p1, %rd5, %rd4;
  @%p1 bra $L_done;
  shl.b64 %rd7, %rd5, 2;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
  add.s64 %rd8, %rd1, %rd7;
  add.s64 %rd9, %rd2, %rd7;
  add.s64 %rd10, %rd3, %rd7;
  ld.global.f32 %f2, [%rd8];
  ld.global.f32 %f3, [%rd9];
  fma.rn.f32 %f4, %f1, %f3, %f2;
  st.global.f32 [%rd10], %f4;
$L_done:
  ret;
}
)";

/// Opens device 0 once per test, or skips the test without a GPU.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<int> count = DeviceCount();
    if (!count.ok() || *count == 0) {
      GTEST_SKIP() << "requires a CUDA device: "
                   << (count.ok() ? "none visible" : count.status().ToString());
    }
    absl::StatusOr<Device> device = Device::Open(0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::make_unique<Device>(*std::move(device));
  }

  /// VectorAddKernel carrying kVectorAddPtx.
  static CompiledKernel VectorAdd() {
    CompiledKernel kernel = test_kernels::VectorAddKernel();
    kernel.set_ptx(kVectorAddPtx);
    return kernel;
  }

  /// vector_add's A and B on the device and C poisoned with NaN.
  struct VectorAddBuffers {
    DeviceBuffer A, B, C;
    /// vector_add's arguments over them: C = A + alpha B, n elements.
    std::vector<KernelArg> Args(int64_t n, float alpha) const {
      return {TensorArg{A.ptr(), DTYPE_F32, {n}}, TensorArg{B.ptr(), DTYPE_F32, {n}},
              TensorArg{C.ptr(), DTYPE_F32, {n}}, ScalarArg::F32(alpha)};
    }
  };
  static absl::StatusOr<VectorAddBuffers> UploadVectorAdd(const std::vector<float>& a,
                                                          const std::vector<float>& b) {
    const size_t bytes = a.size() * sizeof(float);
    auto A = DeviceBuffer::Allocate(bytes), B = DeviceBuffer::Allocate(bytes),
         C = DeviceBuffer::Allocate(bytes);
    for (const auto* buffer : {&A, &B, &C})
      if (!buffer->ok()) return buffer->status();
    for (absl::Status s : {A->CopyFromHost(a.data(), bytes), B->CopyFromHost(b.data(), bytes),
                           C->Fill32(0x7FC00000u)})
      if (!s.ok()) return s;
    return VectorAddBuffers{*std::move(A), *std::move(B), *std::move(C)};
  }

  std::unique_ptr<Device> device_;
};

TEST_F(GpuTest, DeviceReportsItsLimits) {
  EXPECT_FALSE(device_->name().empty());
  EXPECT_GE(device_->compute_capability_major(), 6);
  EXPECT_GT(device_->sm_count(), 0);
  EXPECT_GT(device_->l2_cache_bytes(), 0);
  EXPECT_GE(device_->max_shared_memory_per_block_optin(), 48 * 1024);
  EXPECT_GE(device_->max_shared_memory_per_sm(),
            device_->max_shared_memory_per_block_optin());
  std::printf("%s\n", device_->Describe().c_str());
}

TEST_F(GpuTest, BufferRoundTripsAndFills) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(16);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_TRUE(buffer->Fill32(0x7FC00000u).ok());
  std::vector<float> host(4);
  ASSERT_TRUE(buffer->CopyToHost(host.data(), 16).ok());
  EXPECT_TRUE(std::isnan(host[3]));
  ASSERT_TRUE(buffer->Fill(0).ok());
  ASSERT_TRUE(buffer->CopyToHost(host.data(), 16).ok());
  EXPECT_EQ(host[0], 0.0f);
  EXPECT_EQ(buffer->CopyToHost(host.data(), 32).code(),
            absl::StatusCode::kOutOfRange);
}

TEST_F(GpuTest, LaunchesVectorAddThroughTheJit) {
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(VectorAdd());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE(kernel->from_cubin());
  EXPECT_GT(kernel->registers(), 0);
  // A small block: several an SM.
  EXPECT_GT(kernel->resident_blocks(), device_->sm_count());

  constexpr int64_t kN = 1000;
  std::vector<float> a(kN), b(kN), c(kN);
  for (int64_t i = 0; i < kN; ++i) a[i] = i, b[i] = 2 * i;
  absl::StatusOr<VectorAddBuffers> buffers = UploadVectorAdd(a, b);
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  const std::vector<KernelArg> args = buffers->Args(kN, 0.5f);
  ASSERT_TRUE(Launch(*kernel, args).ok());
  ASSERT_TRUE(buffers->C.CopyToHost(c.data(), kN * sizeof(float)).ok());
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], 2.0f * i) << "i = " << i;

  absl::StatusOr<TimingResult> timing =
      TimeIt([&] { return Launch(*kernel, args); }, {2, 10, true, nullptr});
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(timing->samples_ms.size(), 10u);
  EXPECT_GT(timing->min_ms, 0.0);
  EXPECT_LE(timing->min_ms, timing->median_ms);
  EXPECT_LE(timing->median_ms, timing->max_ms);
}

// A prepared launch on a stream under capture becomes a CUDA graph node
// (Launch makes no synchronous call), and the graph replays it: after the
// inputs change, a replay computes from the new ones.
TEST_F(GpuTest, PreparedLaunchIsCapturedInACudaGraphAndReplayed) {
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(VectorAdd());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const CudaDriver& driver = kernel->driver();
  constexpr int64_t kN = 777;
  const size_t bytes = kN * sizeof(float);
  std::vector<float> a(kN), b(kN), c(kN);
  for (int64_t i = 0; i < kN; ++i) a[i] = 0.25f * i, b[i] = 3.0f - i;
  absl::StatusOr<VectorAddBuffers> buffers = UploadVectorAdd(a, b);
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  DeviceBuffer &A = buffers->A, &C = buffers->C;
  absl::StatusOr<PackedLaunch> packed = PrepareLaunch(kernel->spec(), buffers->Args(kN, 2.0f));
  ASSERT_TRUE(packed.ok()) << packed.status();

  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  // Released however the test ends.
  auto release = absl::MakeCleanup([&] {
    if (exec != nullptr) driver.cuGraphExecDestroy(exec);
    if (graph != nullptr) driver.cuGraphDestroy(graph);
    if (stream != nullptr) driver.cuStreamDestroy(stream);
  });
  ASSERT_EQ(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(driver.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  absl::Status captured = Launch(*kernel, *packed, stream);
  CUresult ended = driver.cuStreamEndCapture(stream, &graph);
  // Launch's own error first: a failed launch invalidates the capture.
  ASSERT_TRUE(captured.ok()) << captured;
  ASSERT_EQ(ended, CUDA_SUCCESS);
  ASSERT_EQ(driver.cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  // Capturing ran nothing: C still holds the poison.
  ASSERT_EQ(driver.cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_TRUE(C.CopyToHost(c.data(), bytes).ok());
  EXPECT_TRUE(std::isnan(c[0]));
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      for (int64_t i = 0; i < kN; ++i) a[i] = -1.5f * i;
      ASSERT_TRUE(A.CopyFromHost(a.data(), bytes).ok());
    }
    ASSERT_EQ(driver.cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(driver.cuStreamSynchronize(stream), CUDA_SUCCESS);
    ASSERT_TRUE(C.CopyToHost(c.data(), bytes).ok());
    for (int64_t i = 0; i < kN; ++i)
      ASSERT_EQ(c[i], a[i] + 2.0f * b[i]) << "round " << round << ", i = " << i;
  }
}

// A copy at an offset lands there and leaves the rest; one past the end is
// refused, naming the offset and the size.
TEST_F(GpuTest, CopyFromHostAtAnOffset) {
  auto buffer = DeviceBuffer::Allocate(16);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_TRUE(buffer->Fill(0).ok());
  const uint8_t bytes[4] = {1, 2, 3, 4};
  ASSERT_TRUE(buffer->CopyFromHost(bytes, 4, 12).ok());
  uint8_t back[16];
  ASSERT_TRUE(buffer->CopyToHost(back, 16).ok());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[i], i < 12 ? 0 : i - 11) << i;
  absl::Status past = buffer->CopyFromHost(bytes, 4, 13);
  EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(past.message().find("at byte 13 of a buffer of 16 bytes"), std::string::npos) << past;
}

// With sync_each_run, TimeIt waits for each timed run before it asks for
// the next launch: the previous launch's work has finished every time.
TEST_F(GpuTest, TimeItCanWaitForEachRun) {
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(VectorAdd());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  constexpr int64_t kN = 1 << 20;
  auto A = DeviceBuffer::Allocate(kN * 4), B = DeviceBuffer::Allocate(kN * 4),
       C = DeviceBuffer::Allocate(kN * 4);
  ASSERT_TRUE(A.ok() && B.ok() && C.ok());
  const std::vector<KernelArg> args = {
      TensorArg{A->ptr(), DTYPE_F32, {kN}}, TensorArg{B->ptr(), DTYPE_F32, {kN}},
      TensorArg{C->ptr(), DTYPE_F32, {kN}}, ScalarArg::F32(1.0f)};
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load();
  ASSERT_TRUE(driver.ok()) << driver.status();
  CUevent done = nullptr;
  ASSERT_EQ((*driver)->cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  int calls = 0, unfinished = 0;
  TimingOptions options;
  options.warmup = 0, options.iterations = 10, options.sync_each_run = true;
  absl::StatusOr<TimingResult> timing = TimeIt(
      [&]() -> absl::Status {
        if (calls++ > 0 && (*driver)->cuEventQuery(done) != CUDA_SUCCESS) ++unfinished;
        absl::Status status = Launch(*kernel, args);
        if (status.ok() && (*driver)->cuEventRecord(done, nullptr) != CUDA_SUCCESS)
          status = absl::InternalError("cuEventRecord");
        return status;
      },
      options);
  (*driver)->cuEventDestroy(done);
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(unfinished, 0);
  EXPECT_EQ(timing->samples_ms.size(), 10u);
  EXPECT_GT(timing->min_ms, 0.0);
}

TEST_F(GpuTest, SkipsEmptyLaunch) {
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(VectorAdd());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<KernelArg> args = {
      TensorArg{0, DTYPE_F32, {0}}, TensorArg{0, DTYPE_F32, {0}},
      TensorArg{0, DTYPE_F32, {0}}, ScalarArg::F32(1.0f)};
  EXPECT_TRUE(Launch(*kernel, args).ok());
}

TEST_F(GpuTest, LaunchErrorsNameTheKernel) {
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(VectorAdd());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<KernelArg> args = {
      TensorArg{0x1000, DTYPE_F32, {8}}, TensorArg{0x1000, DTYPE_F32, {7}},
      TensorArg{0x1000, DTYPE_F32, {8}}, ScalarArg::F32(1.0f)};
  EXPECT_EQ(std::string(Launch(*kernel, args).message()),
            "vector_add: dimension N: A has 8 but B has 7");
}

TEST_F(GpuTest, OptsInToLargeDynamicSharedMemory) {
  CompiledKernel spec = VectorAdd();
  spec.set_shared_memory_bytes(device_->max_shared_memory_per_block_optin());
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(spec);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // All of an SM's shared memory: one block an SM at once.
  EXPECT_EQ(kernel->resident_blocks(), device_->sm_count());
  EXPECT_EQ(kernel->persistent_blocks(), 0);
  spec.set_shared_memory_bytes(device_->max_shared_memory_per_block_optin() + 1);
  kernel = LoadedKernel::Load(spec);
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(std::string(kernel.status().message()),
              HasSubstr("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES"));
}

TEST_F(GpuTest, BadPtxReportsTheJitLog) {
  CompiledKernel spec = VectorAdd();
  spec.set_ptx(".version 7.0\n.target sm_80\n.address_size 64\n"
               ".visible .entry vector_add() { bogus.instruction; ret; }\n");
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(spec);
  ASSERT_FALSE(kernel.ok());
  const std::string message(kernel.status().message());
  EXPECT_THAT(message, HasSubstr("kernel 'vector_add': cuModuleLoadDataEx"));
  EXPECT_THAT(message, HasSubstr("JIT log:"));
  std::printf("%s\n", message.c_str());
}

TEST_F(GpuTest, ArchSpecificKernelRunsOnItsOwnComputeCapabilityOnly) {
  // The same PTX, labelled for another architecture-specific target than
  // the device's: refused before the driver sees it, naming both.
  const int major = device_->compute_capability_major();
  const int minor = device_->compute_capability_minor();
  const std::string other = (major == 10 && minor == 0) ? "sm_90a" : "sm_100a";
  CompiledKernel spec = VectorAdd();
  spec.set_target(other);
  absl::StatusOr<LoadedKernel> refused = LoadedKernel::Load(spec);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(refused.status().message());
  EXPECT_THAT(message, HasSubstr("kernel 'vector_add': built for " + other));
  EXPECT_THAT(message,
              HasSubstr(absl::StrCat("this device is compute capability ",
                                     major, ".", minor)));
  // Labelled for the device's own architecture-specific target, it loads.
  spec.set_target(absl::StrCat("sm_", major, minor, "a"));
  EXPECT_TRUE(LoadedKernel::Load(spec).ok());
}

/// Block (x, y) of a grid gridDim.x wide writes its place in its cluster
/// and the cluster's shape: Out[4 (y gridDim.x + x) ..] = {%cluster_ctaid.x,
/// %cluster_ctaid.y, %cluster_nctaid.x, %cluster_nctaid.y}.
constexpr char kClusterIdsPtx[] = R"(
.version 7.8
.target sm_90
.address_size 64

.visible .entry cluster_ids(.param .u64 Out, .param .u64 nOut) {
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  mov.u32 %r8, %tid.x;
  setp.ne.u32 %p1, %r8, 0;
  @%p1 bra $L_done;
  ld.param.u64 %rd1, [Out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ctaid.y;
  mov.u32 %r3, %nctaid.x;
  mov.u32 %r4, %cluster_ctaid.x;
  mov.u32 %r5, %cluster_ctaid.y;
  mov.u32 %r6, %cluster_nctaid.x;
  mov.u32 %r7, %cluster_nctaid.y;
  mad.lo.u32 %r9, %r2, %r3, %r1;
  mul.wide.u32 %rd2, %r9, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
$L_done:
  ret;
}
)";

TEST_F(GpuTest, LaunchesTwoDimensionalClusters) {
  if (device_->compute_capability_major() < 9)
    GTEST_SKIP() << "thread block clusters need compute capability 9.0";
  // A 3 x 3 grid in clusters of 2 x 2: launched as 4 x 4 blocks.
  CompiledKernel spec;
  spec.set_target("sm_90");
  spec.set_entry("cluster_ids");
  test_kernels::AddTensor(spec, "Out", DTYPE_I32, {-1});
  *spec.add_grid() = test_kernels::Constant(3);
  *spec.add_grid() = test_kernels::Constant(3);
  spec.set_block_threads(32);
  spec.set_cluster_x(2);
  spec.set_cluster_y(2);
  spec.set_ptx(kClusterIdsPtx);
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(spec);
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  constexpr int64_t kBlocks = 16;
  std::vector<int32_t> out(4 * kBlocks);
  auto buffer = DeviceBuffer::Allocate(out.size() * sizeof(int32_t));
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(buffer->Fill32(0xFFFFFFFFu).ok());  // -1 poison.
  ASSERT_TRUE(
      Launch(*kernel, {TensorArg{buffer->ptr(), DTYPE_I32, {4 * kBlocks}}})
          .ok());
  ASSERT_TRUE(
      buffer->CopyToHost(out.data(), out.size() * sizeof(int32_t)).ok());
  for (int64_t y = 0; y < 4; ++y) {
    for (int64_t x = 0; x < 4; ++x) {
      const int32_t* block = &out[4 * (4 * y + x)];
      EXPECT_EQ(block[0], x % 2) << "block (" << x << ", " << y << ")";
      EXPECT_EQ(block[1], y % 2) << "block (" << x << ", " << y << ")";
      EXPECT_EQ(block[2], 2) << "block (" << x << ", " << y << ")";
      EXPECT_EQ(block[3], 2) << "block (" << x << ", " << y << ")";
    }
  }
}

TEST_F(GpuTest, MissingEntryIsNotFound) {
  CompiledKernel spec = VectorAdd();
  spec.set_entry("no_such_entry");
  absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(spec);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(kernel.status().message()),
              HasSubstr("kernel 'no_such_entry': cuModuleGetFunction failed: "
                        "CUDA_ERROR_NOT_FOUND"));
}

/// A variant of VectorAdd named `entry` with `threads` per block (the same
/// PTX under another entry name: it loops over nothing, each thread one
/// element, so any block size computes the same C).
CompiledKernel VectorAddVariant(const std::string& entry, int threads) {
  CompiledKernel kernel = test_kernels::VectorAddKernel();
  std::string ptx = kVectorAddPtx;
  ptx.replace(ptx.find("entry vector_add("), 17, "entry " + entry + "(");
  kernel.set_ptx(ptx);
  kernel.set_entry(entry);
  kernel.set_block_threads(threads);
  *kernel.mutable_grid(0) = test_kernels::Binary(Expr::OP_CEIL_DIV, test_kernels::Symbol(0),
                                                 test_kernels::Constant(threads));
  return kernel;
}

TEST_F(GpuTest, AutotunePicksARunningCandidateAndRecordsFailures) {
  absl::StatusOr<LoadedKernel> a = LoadedKernel::Load(VectorAdd());
  absl::StatusOr<LoadedKernel> b = LoadedKernel::Load(VectorAddVariant("vector_add__t64", 64));
  // Takes no alpha: the arguments do not fit it.
  CompiledKernel noAlpha = VectorAddVariant("vector_add__noalpha", 128);
  noAlpha.mutable_params()->RemoveLast();
  absl::StatusOr<LoadedKernel> c = LoadedKernel::Load(noAlpha);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << b.status() << c.status();

  constexpr int64_t kN = (1 << 20) + 3;
  const size_t bytes = kN * sizeof(float);
  std::vector<float> x(kN), y(kN), out(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = 0.25f * (i % 1000), y[i] = 1.0f + (i % 7);
  auto A = DeviceBuffer::Allocate(bytes), B = DeviceBuffer::Allocate(bytes),
       C = DeviceBuffer::Allocate(bytes);
  ASSERT_TRUE(A.ok() && B.ok() && C.ok());
  ASSERT_TRUE(A->CopyFromHost(x.data(), bytes).ok());
  ASSERT_TRUE(B->CopyFromHost(y.data(), bytes).ok());
  const std::vector<KernelArg> args = {
      TensorArg{A->ptr(), DTYPE_F32, {kN}}, TensorArg{B->ptr(), DTYPE_F32, {kN}},
      TensorArg{C->ptr(), DTYPE_F32, {kN}}, ScalarArg::F32(2.0f)};
  const std::vector<const LoadedKernel*> candidates = {&*a, &*b, &*c};

  absl::StatusOr<TuneResult> tuned = Autotune(candidates, args);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  ASSERT_EQ(tuned->trials.size(), 3u);
  EXPECT_TRUE(tuned->best == 0 || tuned->best == 1) << tuned->Summary();
  EXPECT_TRUE(tuned->trials[0].timing.has_value());
  EXPECT_TRUE(tuned->trials[1].timing.has_value());
  EXPECT_FALSE(tuned->trials[2].timing.has_value());
  // Every round's runs count (three rounds by default, in the first pass and
  // in the final). The first candidate (the family's own kernel) wins the
  // first pass by more than 3% or meets the winner in the final, whose runs
  // alone rank the finalists.
  EXPECT_EQ(tuned->trials[0].timing->samples_ms.size(), 3u * DefaultTuneTiming().iterations);
  if (tuned->trials[0].final_round)
    EXPECT_TRUE(tuned->trials[tuned->best].final_round) << tuned->Summary();
  else
    EXPECT_EQ(tuned->best, 0) << tuned->Summary();
  EXPECT_FALSE(tuned->trials[2].final_round);
  EXPECT_THAT(tuned->trials[2].status.ToString(), HasSubstr("vector_add__noalpha"));
  EXPECT_THAT(tuned->Summary(), HasSubstr("vector_add__t64"));
  std::printf("%s\n", tuned->Summary().c_str());

  // The winner computes C (poisoned first).
  ASSERT_TRUE(C->Fill32(0x7FC00000u).ok());
  ASSERT_TRUE(Launch(*candidates[tuned->best], args).ok());
  ASSERT_TRUE(C->CopyToHost(out.data(), bytes).ok());
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], x[i] + 2.0f * y[i]) << "i = " << i;

  // SelectTuned tunes once per size, then answers from the cache.
  TuneCache cache;
  TuneResult first, second;
  absl::StatusOr<const LoadedKernel*> chosen =
      SelectTuned(candidates, args, device_->name(), cache, DefaultTuneTiming(), &first);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(first.trials.size(), 3u);
  EXPECT_EQ(cache.Lookup(absl::StrCat(TuneKey("vector_add", "sm_80", device_->name(), {kN}), "|",
                                      CodeFingerprint(candidates))),
            (*chosen)->entry());
  absl::StatusOr<const LoadedKernel*> again =
      SelectTuned(candidates, args, device_->name(), cache, DefaultTuneTiming(), &second);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *chosen);
  EXPECT_TRUE(second.trials.empty());
  // Other code (a rebuilt or added candidate) is tuned afresh.
  const std::vector<const LoadedKernel*> fewer = {&*a, &*c};
  TuneResult third;
  absl::StatusOr<const LoadedKernel*> retuned =
      SelectTuned(fewer, args, device_->name(), cache, DefaultTuneTiming(), &third);
  ASSERT_TRUE(retuned.ok()) << retuned.status();
  EXPECT_EQ(*retuned, &*a);
  EXPECT_EQ(third.trials.size(), 2u);

  // None that runs: an error naming each.
  const std::vector<const LoadedKernel*> none = {&*c};
  absl::StatusOr<TuneResult> failed = Autotune(none, args);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(failed.status().message()),
              HasSubstr("no candidate ran (vector_add__noalpha: "));
}

}  // namespace
}  // namespace tessera::runtime
