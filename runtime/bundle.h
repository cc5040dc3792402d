//===- bundle.h - Reading and writing kernel files --------------*- C++ -*-===//
//
// This file declares the file format of precompiled kernels: a binary
// tessera.runtime.KernelBundle or tessera.runtime.CompiledKernel protobuf
// wrapped in a header that detects damage, read and written whole, and the
// validation every kernel read from a file passes before any launch.
//
// The file format, version 1 (all integers little-endian):
//
//   offset  size  field
//        0     8  magic: the bytes 0x89 'T' 'E' 'S' 'S' 'E' 'R' 'A' (the
//                 high first byte catches a text-mode transfer, like PNG's)
//        8     4  format version (kKernelFileFormatVersion)
//       12     4  payload kind: 1 a KernelBundle, 2 a CompiledKernel
//       16     8  payload length in bytes
//       24     8  64-bit FNV-1a hash of the payload (Fnv1a64)
//       32     n  payload: the binary protobuf
//
// Reading refuses, naming the file:
//  - an empty, truncated, extended or bit-flipped file, one without the magic
//    (e.g. a bare protobuf written before the header existed) or whose
//    payload does not parse: absl::DataLossError;
//  - another format version: absl::FailedPreconditionError naming both
//    versions (the file may be fine; this build cannot read it);
//  - the other payload kind, or a kernel that fails ValidateKernel:
//    absl::InvalidArgumentError.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_BUNDLE_H_
#define TESSERA_RUNTIME_BUNDLE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel.pb.h"

namespace tessera::runtime {

/// The format version this build writes and reads.
constexpr uint32_t kKernelFileFormatVersion = 1;
/// The size of the header before the payload.
constexpr size_t kKernelFileHeaderBytes = 32;

/// Threads per block at most, per the CUDA programming guide.
constexpr int64_t kMaxBlockThreads = 1024;
/// Dynamic shared memory per block a kernel file may ask for: well above
/// any NVIDIA GPU's per-block limit (227 KiB on sm_90), so only nonsense is
/// refused here; the device refuses what it cannot give at launch.
constexpr int64_t kMaxSharedMemoryBytes = int64_t(1) << 20;
/// Nesting depth of a grid or precondition expression at most (the compiler
/// writes a few levels: ceil_div(add(mul(...))), and(eq(mod(...)), le(...))).
constexpr int kMaxExprDepth = 32;
/// Blocks per thread block cluster at most (16, the non-portable maximum
/// of sm_90, cudaFuncAttributeNonPortableClusterSizeAllowed).
constexpr int64_t kMaxClusterBlocks = 16;
/// The largest kernel file read (header and payload): a bundle of every
/// conformance case of a target is a few MiB.
constexpr uint64_t kMaxKernelFileBytes = uint64_t(1) << 30;
/// A TMA box's extent per dimension at most (cuTensorMapEncodeTiled's
/// boxDim), and the tensor map's rank at most.
constexpr int64_t kMaxTensorMapBox = 256;
constexpr int kMaxTensorMapRank = 5;
/// Registers per thread at most (PTX ISA: 255 per thread).
constexpr int64_t kMaxRegisters = 255;

/// The 64-bit FNV-1a hash of `bytes` (offset basis 14695981039346656037,
/// prime 1099511628211). Every single-byte change changes it.
uint64_t Fnv1a64(absl::string_view bytes);

/// Reads the whole file at `path`: NotFound when it does not exist,
/// PermissionDenied when it cannot be opened, DataLoss when a read fails.
absl::StatusOr<std::string> ReadFile(absl::string_view path);

/// Writes `contents` to `path` through a temporary file of a unique name
/// (created with O_EXCL next to it) renamed over it, so a reader never sees
/// half a file. Only a regular file is replaced: FailedPrecondition when
/// `path` is a device, FIFO, directory or symlink; NotFound when the
/// directory does not exist; DataLoss when a write or the close fails.
absl::Status WriteFile(absl::string_view path, absl::string_view contents);

/// Whether `param` is a scalar of an integer dtype (i8, i32, i64 or u8): the
/// params a precondition may read (Expr::OP_PARAM).
bool IsIntegerScalarParam(const Param& param);

/// Checks every field of `kernel` (see bundle_validate.cc): entry and
/// target names, code present, params (kind, dtype, shape, alignment), grid
/// expressions (well-formed, bounded depth, symbols in range, no
/// precondition-only ops), preconditions (the same, and params that are
/// integer scalars), block threads, shared memory, dimension groups and
/// divisibility, tensor maps, stream-K workspace and clusters.
/// InvalidArgument names the field.
absl::Status ValidateKernel(const CompiledKernel& kernel);

/// ValidateKernel for each kernel, and each (entry, target) pair once: a
/// bundle may hold one kernel built for several targets.
absl::Status ValidateBundle(const KernelBundle& bundle);

/// `bundle` as the bytes of a kernel file (header and payload).
/// InvalidArgument when it fails ValidateBundle.
absl::StatusOr<std::string> SerializeBundle(const KernelBundle& bundle);

/// Parses and validates the bytes of a kernel file holding a bundle;
/// `name` (a path) is used in messages.
absl::StatusOr<KernelBundle> ParseBundle(absl::string_view bytes,
                                         absl::string_view name);

/// Reads, checks and validates the bundle file at `path`.
absl::StatusOr<KernelBundle> ReadBundle(absl::string_view path);

/// Writes `bundle` to `path` as a kernel file, replacing it.
absl::Status WriteBundle(const KernelBundle& bundle, absl::string_view path);

/// Parses and validates the bytes of a kernel file holding one kernel.
absl::StatusOr<CompiledKernel> ParseCompiledKernel(absl::string_view bytes,
                                                   absl::string_view name);

/// Reads, checks and validates the single-kernel file at `path`.
absl::StatusOr<CompiledKernel> ReadCompiledKernel(absl::string_view path);

/// Writes `kernel` to `path` as a kernel file, replacing it.
absl::Status WriteCompiledKernel(const CompiledKernel& kernel,
                                 absl::string_view path);

/// Reads the kernel file at `path` whichever payload it holds: a bundle as
/// ReadBundle, a single kernel as a bundle of one (ReadCompiledKernel).
absl::StatusOr<KernelBundle> ReadKernelFile(absl::string_view path);

/// The kernel of `bundle` whose entry is `entry`; NotFound lists the entries.
absl::StatusOr<const CompiledKernel*> FindKernel(const KernelBundle& bundle,
                                                 absl::string_view entry);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_BUNDLE_H_
