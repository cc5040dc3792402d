//===- bundle_test.cc - Tests of kernel file I/O --------------------------===//
//
// This file tests that bundles and single kernels survive a write/read round
// trip, that damaged files (empty, truncated, extended, bit-flipped, bare
// protobufs, another format version) are refused with DataLoss or a version
// error naming the file, and that every field of a kernel is validated when
// it is read.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using test_kernels::Binary;
using test_kernels::Constant;
using test_kernels::ParamRef;
using test_kernels::Symbol;
using test_kernels::VectorAddKernel;
using ::testing::HasSubstr;

/// A path in the test's temporary directory.
std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

/// Writes `bytes` to `path` as they are.
void WriteRaw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Vector add with PTX: a kernel every check accepts.
CompiledKernel ValidKernel(const std::string& entry = "vector_add") {
  CompiledKernel kernel = VectorAddKernel();
  kernel.set_entry(entry);
  kernel.set_ptx(".version 8.0\n.target sm_80\n");
  return kernel;
}

/// A bundle of two valid kernels.
KernelBundle ValidBundle() {
  KernelBundle bundle;
  *bundle.add_kernels() = ValidKernel();
  *bundle.add_kernels() = ValidKernel("second");
  return bundle;
}

/// The bytes of ValidBundle() as a kernel file.
std::string ValidBundleBytes() {
  absl::StatusOr<std::string> bytes = SerializeBundle(ValidBundle());
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

TEST(Bundle, RoundTripsThroughAFile) {
  KernelBundle bundle = ValidBundle();
  bundle.mutable_kernels(0)->set_cubin(std::string("\x7f" "ELF\0\1\2", 7));
  bundle.mutable_kernels(0)->set_registers(32);
  const std::string path = TempPath("roundtrip.pb");

  ASSERT_TRUE(WriteBundle(bundle, path).ok());
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->SerializeAsString(), bundle.SerializeAsString());
  EXPECT_EQ(read->kernels(0).cubin().size(), 7u);

  absl::StatusOr<const CompiledKernel*> found = FindKernel(*read, "second");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->entry(), "second");
  EXPECT_THAT(FindKernel(*read, "third").status().message(),
              HasSubstr("no kernel 'third' in the bundle (it has: vector_add, "
                        "second)"));
}

TEST(Bundle, RoundTripsASingleCompiledKernel) {
  const std::string path = TempPath("kernel.pb");
  ASSERT_TRUE(WriteCompiledKernel(ValidKernel(), path).ok());
  absl::StatusOr<CompiledKernel> read = ReadCompiledKernel(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->entry(), "vector_add");
  EXPECT_EQ(read->params_size(), 4);
}

TEST(Bundle, RoundTripsABundleWithoutKernels) {
  const std::string path = TempPath("none.pb");
  ASSERT_TRUE(WriteBundle(KernelBundle(), path).ok());
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->kernels_size(), 0);
}

TEST(Bundle, WritesTheDocumentedHeader) {
  const std::string bytes = ValidBundleBytes();
  ASSERT_GE(bytes.size(), kKernelFileHeaderBytes);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89TESSERA", 8));
  EXPECT_EQ(bytes.substr(8, 4), std::string("\x01\0\0\0", 4));   // version 1
  EXPECT_EQ(bytes.substr(12, 4), std::string("\x01\0\0\0", 4));  // a bundle
  const std::string payload = bytes.substr(kKernelFileHeaderBytes);
  uint64_t length = 0, checksum = 0;
  for (int i = 0; i < 8; ++i) {
    length |= uint64_t(static_cast<unsigned char>(bytes[16 + i])) << (8 * i);
    checksum |= uint64_t(static_cast<unsigned char>(bytes[24 + i])) << (8 * i);
  }
  EXPECT_EQ(length, payload.size());
  EXPECT_EQ(checksum, Fnv1a64(payload));
  EXPECT_EQ(Fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // the published test vector
}

TEST(Bundle, ReportsMissingFileAsNotFound) {
  absl::StatusOr<KernelBundle> read = ReadBundle(TempPath("missing.pb"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("missing.pb"));
}

TEST(Bundle, RefusesAnEmptyFile) {
  const std::string path = TempPath("empty.pb");
  WriteRaw(path, "");
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("empty.pb is empty"));
}

TEST(Bundle, RefusesAFileWithoutTheMagic) {
  const std::string path = TempPath("corrupt.pb");
  WriteRaw(path, "\xff\xff\xff\xff garbage");
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("corrupt.pb is not a Tessera kernel file"));
}

TEST(Bundle, RefusesABareProtobuf) {
  const std::string path = TempPath("bare.pb");
  WriteRaw(path, ValidBundle().SerializeAsString());
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("no magic header"));
}

TEST(Bundle, RefusesEveryTruncation) {
  const std::string bytes = ValidBundleBytes();
  const std::string path = TempPath("truncated.pb");
  for (size_t size = 1; size < bytes.size(); ++size) {
    WriteRaw(path, bytes.substr(0, size));
    absl::StatusOr<KernelBundle> read = ReadBundle(path);
    ASSERT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << "size " << size;
    EXPECT_THAT(read.status().message(), HasSubstr("truncated.pb")) << "size " << size;
  }
  // Cut at the boundary between the two kernels: a bare protobuf would
  // parse as a bundle of one kernel.
  const std::string one = [] {
    KernelBundle first;
    *first.add_kernels() = ValidKernel();
    return first.SerializeAsString();
  }();
  WriteRaw(path, bytes.substr(0, kKernelFileHeaderBytes + one.size()));
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("truncated.pb is truncated"));
}

TEST(Bundle, ReadsNoFurtherThanAKernelFileMayGo) {
  // A device is read header first: /dev/zero fails its magic at 32 bytes.
  absl::StatusOr<KernelBundle> zero = ReadBundle("/dev/zero");
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(zero.status().message(),
              HasSubstr("/dev/zero is not a Tessera kernel file"));

  // A FIFO whose header announces 2^40 payload bytes: refused after it.
  std::string header = ValidBundleBytes().substr(0, kKernelFileHeaderBytes);
  for (int i = 0; i < 8; ++i)
    header[16 + i] = static_cast<char>((uint64_t(1) << 40) >> (8 * i));
  const std::string fifo = TempPath("announcing.pb");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << header; });
  absl::StatusOr<KernelBundle> announced = ReadBundle(fifo);
  writer.join();
  EXPECT_EQ(announced.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(announced.status().message(),
              HasSubstr("header says 1099511627776 payload bytes"));

  // A regular file over the limit is refused before it is read (sparse).
  const std::string huge = TempPath("huge.pb");
  WriteRaw(huge, "");
  ASSERT_EQ(::truncate(huge.c_str(), kMaxKernelFileBytes + 1), 0);
  absl::StatusOr<KernelBundle> big = ReadBundle(huge);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(),
              HasSubstr("more than a kernel file may be"));
  std::remove(huge.c_str());
}

TEST(Bundle, RefusesAnExtendedFile) {
  const std::string path = TempPath("extended.pb");
  WriteRaw(path, ValidBundleBytes() + std::string(1, '\0'));
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("extended.pb is extended"));
}

TEST(Bundle, RefusesEveryFlippedBit) {
  const std::string bytes = ValidBundleBytes();
  const std::string path = TempPath("flipped.pb");
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      absl::StatusOr<KernelBundle> read = ParseBundle(flipped, path);
      ASSERT_FALSE(read.ok()) << "byte " << i << " bit " << bit;
      // The version and kind fields have their own errors; every other
      // flipped bit is damage.
      if (i < 8 || i >= 16) {
        ASSERT_EQ(read.status().code(), absl::StatusCode::kDataLoss)
            << "byte " << i << " bit " << bit << ": " << read.status();
      }
    }
  }
  WriteRaw(path, bytes.substr(0, 40) + std::string(1, bytes[40] ^ 4) + bytes.substr(41));
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("flipped.pb is corrupt: the payload's checksum"));
}

TEST(Bundle, RefusesAnotherFormatVersionNamingBoth) {
  std::string bytes = ValidBundleBytes();
  bytes[8] = 2;
  const std::string path = TempPath("version2.pb");
  WriteRaw(path, bytes);
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(),
              HasSubstr("version2.pb is kernel file format version 2; this build reads version 1"));
}

TEST(Bundle, RefusesAKernelFileWhereABundleIsExpected) {
  const std::string path = TempPath("single.pb");
  ASSERT_TRUE(WriteCompiledKernel(ValidKernel(), path).ok());
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(),
              HasSubstr("single.pb holds a CompiledKernel, not a KernelBundle"));
}

TEST(Bundle, ReportsAMissingDirectoryAsNotFound) {
  absl::Status written = WriteBundle(KernelBundle(), "/nonexistent-dir/tessera/out.pb");
  EXPECT_EQ(written.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(written.message(), HasSubstr("/nonexistent-dir/tessera/out.pb"));
}

TEST(Bundle, ReplacesOnlyARegularFile) {
  // A symlink, a FIFO and a directory at the path stay as they are.
  const std::string target = TempPath("symlink-target.pb");
  const std::string link = TempPath("link.pb");
  std::remove(target.c_str());
  std::remove(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  absl::Status written = WriteBundle(ValidBundle(), link);
  EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(written.message(),
              HasSubstr("link.pb: it exists and is not a regular file"));
  struct stat info;
  EXPECT_EQ(::lstat(link.c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_NE(::stat(target.c_str(), &info), 0);

  const std::string fifo = TempPath("fifo.pb");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(WriteBundle(ValidBundle(), fifo).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));

  const char* dir = std::getenv("TEST_TMPDIR");
  EXPECT_EQ(WriteBundle(ValidBundle(), dir != nullptr ? dir : "/tmp").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(Bundle, LeavesWhatIsAtPathDotTmpAlone) {
  // The temporary file has a name of its own: a file or a symlink at
  // PATH.tmp is neither overwritten nor followed.
  const std::string path = TempPath("tmp-neighbour.pb");
  const std::string sentinel = TempPath("tmp-sentinel");
  WriteRaw(sentinel, "keep");
  std::remove((path + ".tmp").c_str());
  ASSERT_EQ(::symlink(sentinel.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_TRUE(WriteBundle(ValidBundle(), path).ok());
  absl::StatusOr<std::string> kept = ReadFile(sentinel);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, "keep");
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->kernels_size(), 2);
}

TEST(Bundle, KeepsTheModeOfTheFileItReplaces) {
  const std::string path = TempPath("mode.pb");
  ASSERT_TRUE(WriteBundle(ValidBundle(), path).ok());
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteBundle(ValidBundle(), path).ok());
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST(Bundle, RefusesToWriteAnInvalidKernel) {
  KernelBundle bundle;
  *bundle.add_kernels() = ValidKernel();
  bundle.mutable_kernels(0)->set_block_threads(-5);
  absl::Status written = WriteBundle(bundle, TempPath("invalid.pb"));
  EXPECT_EQ(written.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(written.message(), HasSubstr("block_threads must be in [1, 1024], got -5"));
}

TEST(Bundle, RefusesAKernelTwiceForOneTarget) {
  KernelBundle bundle;
  *bundle.add_kernels() = ValidKernel();
  *bundle.add_kernels() = ValidKernel();
  EXPECT_THAT(ValidateBundle(bundle).message(),
              HasSubstr("'vector_add' for " + bundle.kernels(0).target() + " appears twice"));
}

TEST(Bundle, TakesOneKernelForSeveralTargets) {
  KernelBundle bundle;
  *bundle.add_kernels() = ValidKernel();
  *bundle.add_kernels() = ValidKernel();
  bundle.mutable_kernels(1)->set_target(bundle.kernels(0).target() == "sm_80" ? "sm_90a"
                                                                              : "sm_80");
  EXPECT_TRUE(ValidateBundle(bundle).ok()) << ValidateBundle(bundle);
}

/// Adds the precondition `condition` declared at "add.cc:9" to `kernel`.
void Require(CompiledKernel& kernel, const Expr& condition) {
  Precondition* precondition = kernel.add_preconditions();
  *precondition->mutable_condition() = condition;
  precondition->set_where("add.cc:9");
}

TEST(Bundle, AcceptsPreconditionsOverDimsAndIntegerScalars) {
  CompiledKernel kernel = ValidKernel();
  for (DType dtype : {DTYPE_I8, DTYPE_I32, DTYPE_I64, DTYPE_U8}) {
    test_kernels::AddScalar(kernel, absl::StrCat("n", kernel.params_size()), dtype);
    Require(kernel,
            Binary(Expr::OP_AND, Binary(Expr::OP_LE, ParamRef(kernel.params_size() - 1), Symbol(0)),
                   Binary(Expr::OP_NE, Binary(Expr::OP_SUB, Symbol(0), Constant(1)),
                          Binary(Expr::OP_MAX, Constant(0), Constant(1)))));
  }
  EXPECT_TRUE(ValidateKernel(kernel).ok()) << ValidateKernel(kernel);
}

/// One way to break a valid kernel, and the message it should give.
struct Breakage {
  const char* name;
  std::function<void(CompiledKernel&)> edit;
  const char* message;
};

TEST(Bundle, ValidatesEveryFieldAtLoad) {
  const std::vector<Breakage> breakages = {
      {"empty entry", [](CompiledKernel& k) { k.set_entry(""); }, "is not a PTX identifier"},
      {"path entry", [](CompiledKernel& k) { k.set_entry("../x"); }, "is not a PTX identifier"},
      {"target", [](CompiledKernel& k) { k.set_target("ampere"); }, "target 'ampere'"},
      {"no code", [](CompiledKernel& k) { k.clear_ptx(); }, "has neither PTX nor a cubin"},
      {"negative block", [](CompiledKernel& k) { k.set_block_threads(-1); },
       "block_threads must be in [1, 1024], got -1"},
      {"zero block", [](CompiledKernel& k) { k.set_block_threads(0); },
       "block_threads must be in [1, 1024], got 0"},
      {"huge block", [](CompiledKernel& k) { k.set_block_threads(2048); },
       "block_threads must be in [1, 1024], got 2048"},
      {"negative shared", [](CompiledKernel& k) { k.set_shared_memory_bytes(-4096); },
       "shared_memory_bytes must be in [0, 1048576], got -4096"},
      {"huge shared", [](CompiledKernel& k) { k.set_shared_memory_bytes(int64_t(1) << 40); },
       "shared_memory_bytes must be in"},
      {"no grid", [](CompiledKernel& k) { k.clear_grid(); }, "grid has 0 extents"},
      {"four extents",
       [](CompiledKernel& k) {
         for (int i = 0; i < 3; ++i) *k.add_grid() = Constant(1);
       },
       "grid has 4 extents"},
      {"zero extent", [](CompiledKernel& k) { *k.mutable_grid(0) = Constant(0); },
       "grid extent 0 is the constant 0"},
      {"symbol out of range", [](CompiledKernel& k) { *k.mutable_grid(0) = Symbol(3); },
       "grid extent 0 names dynamic dimension 3, but the params have 3"},
      {"negative symbol", [](CompiledKernel& k) { *k.mutable_grid(0) = Symbol(-1); },
       "names dynamic dimension -1"},
      {"missing operand", [](CompiledKernel& k) { k.mutable_grid(0)->clear_rhs(); },
       "lacks an operand"},
      {"unknown operator",
       [](CompiledKernel& k) { k.mutable_grid(0)->set_op(static_cast<Expr::Op>(42)); },
       "unknown operator 42"},
      {"unspecified operator",
       [](CompiledKernel& k) { k.mutable_grid(0)->set_op(Expr::OP_UNSPECIFIED); },
       "unknown operator 0"},
      {"operands under a leaf",
       [](CompiledKernel& k) { *k.mutable_grid(0)->mutable_lhs()->mutable_lhs() = Constant(1); },
       "operands under a constant or symbol"},
      {"deep expression",
       [](CompiledKernel& k) {
         Expr e = Constant(1);
         for (int i = 0; i < 40; ++i) e = Binary(Expr::OP_ADD, e, Constant(1));
         *k.mutable_grid(0) = e;
       },
       "nested deeper than 32 levels"},
      {"grid comparison",
       [](CompiledKernel& k) { *k.mutable_grid(0) = Binary(Expr::OP_LT, Symbol(0), Constant(1)); },
       "grid extent 0 uses operator OP_LT, which only a precondition may use"},
      {"grid float param",
       [](CompiledKernel& k) { *k.mutable_grid(0)->mutable_rhs() = ParamRef(3); },
       "grid extent 0 names param #3 'alpha', which is not an integer scalar"},
      {"grid param out of range",
       [](CompiledKernel& k) { *k.mutable_grid(0)->mutable_lhs() = ParamRef(7); },
       "grid extent 0 names param 7, but the kernel has 4 params"},
      {"precondition without condition", [](CompiledKernel& k) { k.add_preconditions(); },
       "precondition #0 has no condition"},
      {"precondition tensor param",
       [](CompiledKernel& k) { Require(k, Binary(Expr::OP_EQ, ParamRef(0), Constant(1))); },
       "precondition #0 (add.cc:9) names param #0 'A', which is not an integer scalar"},
      {"precondition float param",
       [](CompiledKernel& k) { Require(k, Binary(Expr::OP_LT, ParamRef(3), Symbol(0))); },
       "names param #3 'alpha', which is not an integer scalar (i8, i32, i64 or u8)"},
      {"precondition param out of range",
       [](CompiledKernel& k) { Require(k, Binary(Expr::OP_LT, Symbol(0), ParamRef(4))); },
       "precondition #0 (add.cc:9) names param 4, but the kernel has 4 params"},
      {"precondition symbol out of range",
       [](CompiledKernel& k) {
         Require(k, Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, Symbol(3), Constant(8)), Constant(0)));
       },
       "precondition #0 (add.cc:9) names dynamic dimension 3, but the params have 3"},
      {"precondition missing operand",
       [](CompiledKernel& k) {
         Expr condition = Binary(Expr::OP_MIN, Symbol(0), Constant(8));
         condition.clear_rhs();
         Require(k, condition);
       },
       "precondition #0 (add.cc:9) operator 16 lacks an operand"},
      {"precondition unknown operator",
       [](CompiledKernel& k) {
         Require(k, Binary(static_cast<Expr::Op>(40), Symbol(0), Constant(8)));
       },
       "precondition #0 (add.cc:9) has unknown operator 40"},
      {"operands under a param",
       [](CompiledKernel& k) {
         test_kernels::AddScalar(k, "n", DTYPE_I32);
         Expr param = ParamRef(4);
         *param.mutable_lhs() = Constant(1);
         Require(k, param);
       },
       "has operands under a param"},
      {"param kind",
       [](CompiledKernel& k) { k.mutable_params(0)->set_kind(Param::KIND_UNSPECIFIED); },
       "param #0 'A' has no valid kind"},
      {"param dtype", [](CompiledKernel& k) { k.mutable_params(1)->set_dtype(DTYPE_UNSPECIFIED); },
       "param #1 'B' has no valid dtype"},
      {"unknown dtype",
       [](CompiledKernel& k) { k.mutable_params(1)->set_dtype(static_cast<DType>(99)); },
       "has no valid dtype (99)"},
      {"zero dimension", [](CompiledKernel& k) { k.mutable_params(0)->set_shape(0, 0); },
       "dimensions must be positive or -1 (dynamic), got 0"},
      {"negative dimension", [](CompiledKernel& k) { k.mutable_params(0)->set_shape(0, -2); },
       "dimensions must be positive or -1 (dynamic), got -2"},
      {"rank 0 tensor", [](CompiledKernel& k) { k.mutable_params(0)->clear_shape(); },
       "is a tensor of rank 0"},
      {"scalar shape", [](CompiledKernel& k) { k.mutable_params(3)->add_shape(4); },
       "is a scalar with a shape"},
      {"alignment", [](CompiledKernel& k) { k.mutable_params(0)->set_alignment(12); },
       "alignment must be 0 or a power of two up to 4096, got 12"},
      {"negative alignment", [](CompiledKernel& k) { k.mutable_params(0)->set_alignment(-16); },
       "got -16"},
      {"dim group", [](CompiledKernel& k) { k.mutable_dim_groups(0)->add_dims(7); },
       "dim group 'N' names dynamic dimension 7"},
      {"divisibility count", [](CompiledKernel& k) { k.add_dim_divisibility(8); },
       "dim_divisibility has 1 entries for 3 dynamic dimensions"},
      {"divisibility value",
       [](CompiledKernel& k) {
         for (int64_t d : {8, 0, 8}) k.add_dim_divisibility(d);
       },
       "dim_divisibility entries must be in [1, 2^31], got 0"},
      {"tensor map param", [](CompiledKernel& k) { k.add_tensor_maps()->set_param(3); },
       "tensor map #0 describes param 3, which is not a tensor"},
      {"tensor map out of range", [](CompiledKernel& k) { k.add_tensor_maps()->set_param(-1); },
       "describes param -1"},
      {"tensor map rank",
       [](CompiledKernel& k) {
         TensorMap* map = k.add_tensor_maps();
         map->add_box(64);
         map->add_box(64);
       },
       "has a box of rank 2 for a tensor of rank 1"},
      {"tensor map box", [](CompiledKernel& k) { k.add_tensor_maps()->add_box(512); },
       "box extents must be in [1, 256], got 512"},
      {"tensor map swizzle",
       [](CompiledKernel& k) {
         TensorMap* map = k.add_tensor_maps();
         map->add_box(64);
         map->set_swizzle_bytes(48);
       },
       "swizzle must be 0, 32, 64 or 128 bytes, got 48"},
      {"registers", [](CompiledKernel& k) { k.set_registers(-3); },
       "registers must be in [0, 255], got -3"},
      {"spills", [](CompiledKernel& k) { k.set_spill_bytes(-1); }, "must be non-negative"},
      {"stream-K slot", [](CompiledKernel& k) { k.set_stream_k_slot_bytes(-8); },
       "stream_k_slot_bytes must be in [0, 2^30], got -8"},
      {"stream-K without persistent", [](CompiledKernel& k) { k.set_stream_k_slot_bytes(64); },
       "not persistent"},
      {"negative cluster", [](CompiledKernel& k) { k.set_cluster_x(-2); },
       "cluster_x must be in [0, 16], got -2"},
      {"huge cluster", [](CompiledKernel& k) { k.set_cluster_x(64); },
       "cluster_x must be in [0, 16], got 64"},
      {"negative cluster y", [](CompiledKernel& k) { k.set_cluster_y(-1); },
       "cluster_y must be in [0, 16], got -1"},
      {"huge 2-D cluster",
       [](CompiledKernel& k) {
         k.set_cluster_x(8);
         k.set_cluster_y(4);
       },
       "a cluster of 8 x 4 blocks is over 16 blocks"},
      {"persistent 2-D cluster",
       [](CompiledKernel& k) {
         k.set_persistent(true);
         k.set_cluster_y(2);
       },
       "a persistent kernel's clusters run along x only, got cluster_y 2"},
  };
  const std::string path = TempPath("invalid-field.pb");
  for (const Breakage& breakage : breakages) {
    CompiledKernel kernel = ValidKernel();
    breakage.edit(kernel);
    absl::Status valid = ValidateKernel(kernel);
    EXPECT_EQ(valid.code(), absl::StatusCode::kInvalidArgument) << breakage.name;
    EXPECT_THAT(valid.message(), HasSubstr(breakage.message)) << breakage.name;

    // The same kernel in a well-formed file is refused at load, naming the
    // file.
    KernelBundle bundle;
    *bundle.add_kernels() = kernel;
    std::string payload = bundle.SerializeAsString();
    std::string bytes = ValidBundleBytes().substr(0, 16);
    for (uint64_t v : {uint64_t(payload.size()), Fnv1a64(payload)})
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(v >> (8 * i)));
    WriteRaw(path, bytes + payload);
    absl::StatusOr<KernelBundle> read = ReadBundle(path);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << breakage.name;
    EXPECT_THAT(read.status().message(), HasSubstr("invalid-field.pb: "))
        << breakage.name;
    EXPECT_THAT(read.status().message(), HasSubstr(breakage.message)) << breakage.name;
  }
}

}  // namespace
}  // namespace tessera::runtime
