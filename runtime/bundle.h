//===- bundle.h - Reading and writing kernel files --------------*- C++ -*-===//
//
// This file declares the file format of precompiled kernels: a binary
// tessera.runtime.CompiledKernel or tessera.runtime.KernelBundle protobuf,
// read and written whole, with a clear status for a missing, unreadable or
// corrupt file.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_BUNDLE_H_
#define TESSERA_RUNTIME_BUNDLE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel.pb.h"

namespace tessera::runtime {

/// Reads the whole file at `path`: NotFound when it does not exist,
/// PermissionDenied when it cannot be opened, DataLoss when a read fails.
absl::StatusOr<std::string> ReadFile(absl::string_view path);

/// Writes `contents` to `path` through a temporary file renamed over it, so
/// a reader never sees half a file.
absl::Status WriteFile(absl::string_view path, absl::string_view contents);

/// Reads a binary KernelBundle from `path`.
absl::StatusOr<KernelBundle> ReadBundle(absl::string_view path);

/// Writes `bundle` to `path` in binary form, replacing the file.
absl::Status WriteBundle(const KernelBundle& bundle, absl::string_view path);

/// Reads a binary CompiledKernel from `path`.
absl::StatusOr<CompiledKernel> ReadCompiledKernel(absl::string_view path);

/// Writes `kernel` to `path` in binary form, replacing the file.
absl::Status WriteCompiledKernel(const CompiledKernel& kernel,
                                 absl::string_view path);

/// The kernel of `bundle` whose entry is `entry`; NotFound lists the entries.
absl::StatusOr<const CompiledKernel*> FindKernel(const KernelBundle& bundle,
                                                 absl::string_view entry);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_BUNDLE_H_
