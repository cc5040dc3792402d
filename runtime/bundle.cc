//===- bundle.cc - Reading and writing kernel files -----------------------===//
//
// This file implements whole-file I/O for CompiledKernel and KernelBundle:
// the header of the kernel file format (bundle.h) around the binary
// protobuf, checked before the payload is parsed, and the parsed kernels
// validated (bundle_validate.cc). Writes go to a temporary file of a unique
// name renamed over the target (a regular file or nothing), so a reader
// never sees a half-written bundle.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/stubs/logging.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {

absl::StatusOr<std::string> ReadFile(absl::string_view name) {
  const std::string path(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    std::string message = absl::StrCat("cannot open ", path, ": ",
                                       std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    return absl::PermissionDeniedError(message);
  }
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": a directory"));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return contents.str();
}

absl::Status WriteFile(absl::string_view name, absl::string_view contents) {
  const std::string path(name);
  // Only a regular file is replaced: a device, a FIFO, a directory or a
  // symlink at `path` stays as it is.
  struct stat existing;
  const bool exists = ::lstat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot write ", path, ": it exists and is not a regular file"));
  }
  // A temporary file of a name no one else has (mkstemp opens it with
  // O_EXCL), next to `path` so that the rename stays on one file system.
  std::string temporary = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    const int error = errno;
    std::string message = absl::StrCat("cannot write ", path,
                                       ": cannot create a file next to it (",
                                       std::strerror(error), ")");
    if (error == ENOENT) return absl::NotFoundError(message);
    return absl::PermissionDeniedError(message);
  }
  size_t written = 0;
  int error = 0;
  while (written < contents.size()) {
    const ssize_t n =
        ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    written += static_cast<size_t>(n);
  }
  // The mode of the file replaced, else rw-r--r-- (mkstemp's is rw-------).
  const mode_t mode = exists ? (existing.st_mode & 07777) : 0644;
  if (error == 0 && ::fchmod(fd, mode) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return absl::DataLossError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(temporary.c_str());
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot rename ", temporary, " to ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

namespace {

/// The first 8 bytes of every kernel file.
constexpr char kMagic[8] = {'\x89', 'T', 'E', 'S', 'S', 'E', 'R', 'A'};

/// What a kernel file's payload holds (the header's kind field).
enum class PayloadKind : uint32_t { kBundle = 1, kKernel = 2 };

const char* KindName(uint32_t kind) {
  switch (static_cast<PayloadKind>(kind)) {
    case PayloadKind::kBundle:
      return "a KernelBundle";
    case PayloadKind::kKernel:
      return "a CompiledKernel";
  }
  return "an unknown payload";
}

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t LoadLittleEndian(absl::string_view bytes, size_t offset, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i)
    value |= uint64_t(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return value;
}

/// The header and `payload`, as written to a file.
std::string Wrap(PayloadKind kind, absl::string_view payload) {
  std::string out(kMagic, sizeof(kMagic));
  AppendLittleEndian(out, kKernelFileFormatVersion, 4);
  AppendLittleEndian(out, static_cast<uint32_t>(kind), 4);
  AppendLittleEndian(out, payload.size(), 8);
  AppendLittleEndian(out, Fnv1a64(payload), 8);
  out.append(payload.data(), payload.size());
  return out;
}

/// The payload of the kernel file `bytes` after checking its header.
absl::StatusOr<absl::string_view> Unwrap(absl::string_view bytes, PayloadKind kind,
                                         absl::string_view name) {
  if (bytes.empty())
    return absl::DataLossError(absl::StrCat(name, " is empty: not a Tessera kernel file"));
  if (bytes.size() < sizeof(kMagic) ||
      bytes.substr(0, sizeof(kMagic)) != absl::string_view(kMagic, sizeof(kMagic))) {
    return absl::DataLossError(absl::StrCat(
        name, " is not a Tessera kernel file: no magic header (", bytes.size(),
        " bytes; files written before format version 1 need to be written again)"));
  }
  if (bytes.size() < kKernelFileHeaderBytes) {
    return absl::DataLossError(absl::StrCat(name, " is truncated: ", bytes.size(),
                                            " bytes, less than its ",
                                            kKernelFileHeaderBytes, "-byte header"));
  }
  const uint64_t version = LoadLittleEndian(bytes, 8, 4);
  if (version != kKernelFileFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, " is kernel file format version ", version, "; this build reads version ",
        kKernelFileFormatVersion));
  }
  const uint64_t found_kind = LoadLittleEndian(bytes, 12, 4);
  if (found_kind != static_cast<uint32_t>(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " holds ", KindName(found_kind), ", not ",
                     KindName(static_cast<uint32_t>(kind))));
  }
  const uint64_t length = LoadLittleEndian(bytes, 16, 8);
  const uint64_t actual = bytes.size() - kKernelFileHeaderBytes;
  if (length != actual) {
    return absl::DataLossError(absl::StrCat(
        name, " is ", actual < length ? "truncated" : "extended", ": its header says ",
        length, " payload bytes, the file holds ", actual));
  }
  absl::string_view payload = bytes.substr(kKernelFileHeaderBytes);
  const uint64_t checksum = LoadLittleEndian(bytes, 24, 8);
  if (Fnv1a64(payload) != checksum) {
    return absl::DataLossError(
        absl::StrCat(name, " is corrupt: the payload's checksum does not match its header"));
  }
  return payload;
}

/// The bytes of the kernel file at `name`, read no further than a kernel
/// file may go: a regular file over kMaxKernelFileBytes is refused before
/// it is read; anything else (a device, a FIFO) is read header first, then
/// no more than the payload its header announces and one byte past it, so
/// /dev/zero is not read whole. Unwrap checks what was read.
absl::StatusOr<std::string> ReadKernelFileBytes(absl::string_view name) {
  const std::string path(name);
  struct stat info;
  // Missing, a directory, no permission: ReadFile's errors.
  if (::stat(path.c_str(), &info) != 0 || S_ISDIR(info.st_mode))
    return ReadFile(path);
  if (S_ISREG(info.st_mode)) {
    if (static_cast<uint64_t>(info.st_size) > kMaxKernelFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, " is ", info.st_size,
                       " bytes, more than a kernel file may be (",
                       kMaxKernelFileBytes, ")"));
    }
    return ReadFile(path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ReadFile(path);  // Its error: missing, no permission, ...
  auto read_up_to = [&](std::string& out, uint64_t bytes) {
    std::vector<char> chunk(1 << 16);
    while (bytes > 0 && in) {
      in.read(chunk.data(), static_cast<std::streamsize>(
                                std::min<uint64_t>(bytes, chunk.size())));
      out.append(chunk.data(), static_cast<size_t>(in.gcount()));
      bytes -= static_cast<uint64_t>(in.gcount());
    }
  };
  std::string bytes;
  read_up_to(bytes, kKernelFileHeaderBytes);
  if (bytes.size() < kKernelFileHeaderBytes ||
      bytes.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
    return bytes;
  }
  const uint64_t length = LoadLittleEndian(bytes, 16, 8);
  if (length > kMaxKernelFileBytes - kKernelFileHeaderBytes) {
    return absl::DataLossError(
        absl::StrCat(path, "'s header says ", length,
                     " payload bytes, more than a kernel file may hold"));
  }
  read_up_to(bytes, length + 1);
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return bytes;
}

/// Parses the kernel file `bytes` as a `Message`.
template <typename Message>
absl::StatusOr<Message> ParseMessage(absl::string_view bytes, PayloadKind kind,
                                     absl::string_view name) {
  TESSERA_ASSIGN_OR_RETURN(absl::string_view payload, Unwrap(bytes, kind, name));
  Message message;
  // Protobuf would log why it failed (e.g. a string that is not UTF-8) to
  // stderr before our error; the error below is the one message.
  google::protobuf::LogSilencer silence;
  if (!message.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError(
        absl::StrCat(name, " is corrupt: not a binary ",
                     Message::descriptor()->full_name(), " (", payload.size(),
                     " payload bytes; a field is malformed or a string is not "
                     "UTF-8)"));
  }
  return message;
}

/// `status` with "`name`: " before its message.
absl::Status Prefixed(const absl::Status& status, absl::string_view name) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
}

/// Serializes `message` as a kernel file.
template <typename Message>
absl::StatusOr<std::string> SerializeMessage(const Message& message, PayloadKind kind) {
  std::string payload;
  if (!message.SerializeToString(&payload)) {
    return absl::InternalError(
        absl::StrCat("cannot serialize ", Message::descriptor()->full_name()));
  }
  return Wrap(kind, payload);
}

}  // namespace

absl::StatusOr<std::string> SerializeBundle(const KernelBundle& bundle) {
  TESSERA_RETURN_IF_ERROR(ValidateBundle(bundle));
  return SerializeMessage(bundle, PayloadKind::kBundle);
}

absl::StatusOr<KernelBundle> ParseBundle(absl::string_view bytes, absl::string_view name) {
  TESSERA_ASSIGN_OR_RETURN(KernelBundle bundle,
                           ParseMessage<KernelBundle>(bytes, PayloadKind::kBundle, name));
  TESSERA_RETURN_IF_ERROR(Prefixed(ValidateBundle(bundle), name));
  return bundle;
}

absl::StatusOr<KernelBundle> ReadBundle(absl::string_view path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadKernelFileBytes(path));
  return ParseBundle(contents, path);
}

absl::Status WriteBundle(const KernelBundle& bundle, absl::string_view path) {
  absl::StatusOr<std::string> bytes = SerializeBundle(bundle);
  if (!bytes.ok()) return Prefixed(bytes.status(), absl::StrCat("cannot write ", path));
  return WriteFile(path, *bytes);
}

absl::StatusOr<CompiledKernel> ParseCompiledKernel(absl::string_view bytes,
                                                   absl::string_view name) {
  TESSERA_ASSIGN_OR_RETURN(CompiledKernel kernel,
                           ParseMessage<CompiledKernel>(bytes, PayloadKind::kKernel, name));
  TESSERA_RETURN_IF_ERROR(Prefixed(ValidateKernel(kernel), name));
  return kernel;
}

absl::StatusOr<CompiledKernel> ReadCompiledKernel(absl::string_view path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadKernelFileBytes(path));
  return ParseCompiledKernel(contents, path);
}

absl::StatusOr<KernelBundle> ReadKernelFile(absl::string_view path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadKernelFileBytes(path));
  // The header's kind field; Unwrap checks the rest of the header either way.
  if (contents.size() >= kKernelFileHeaderBytes &&
      LoadLittleEndian(contents, 12, 4) == static_cast<uint32_t>(PayloadKind::kKernel)) {
    TESSERA_ASSIGN_OR_RETURN(CompiledKernel kernel, ParseCompiledKernel(contents, path));
    KernelBundle bundle;
    *bundle.add_kernels() = std::move(kernel);
    return bundle;
  }
  return ParseBundle(contents, path);
}

absl::Status WriteCompiledKernel(const CompiledKernel& kernel, absl::string_view path) {
  if (absl::Status valid = ValidateKernel(kernel); !valid.ok())
    return Prefixed(valid, absl::StrCat("cannot write ", path));
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, SerializeMessage(kernel, PayloadKind::kKernel));
  return WriteFile(path, bytes);
}

absl::StatusOr<const CompiledKernel*> FindKernel(const KernelBundle& bundle,
                                                 absl::string_view entry) {
  std::vector<std::string> entries;
  for (const CompiledKernel& kernel : bundle.kernels()) {
    if (kernel.entry() == entry) return &kernel;
    entries.push_back(kernel.entry());
  }
  return absl::NotFoundError(absl::StrCat(
      "no kernel '", entry, "' in the bundle (it has: ",
      entries.empty() ? "none" : absl::StrJoin(entries, ", "), ")"));
}

}  // namespace tessera::runtime
