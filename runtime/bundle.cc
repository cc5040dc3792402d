//===- bundle.cc - Reading and writing kernel files -----------------------===//
//
// This file implements whole-file binary protobuf I/O for CompiledKernel and
// KernelBundle. Writes go to a temporary file renamed over the target, so a
// reader never sees a half-written bundle.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  const std::string temporary = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(absl::StrCat(
          "cannot write ", path, ": ", std::strerror(errno)));
    }
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return absl::DataLossError(absl::StrCat("cannot write ", path));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot rename ", temporary, " to ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

namespace {

/// Parses a whole file at `path` as a `Message`.
template <typename Message>
absl::StatusOr<Message> ReadMessage(absl::string_view path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  Message message;
  if (!message.ParseFromString(contents)) {
    return absl::DataLossError(
        absl::StrCat(path, " is corrupt: not a binary ",
                     Message::descriptor()->full_name(), " (",
                     contents.size(), " bytes)"));
  }
  return message;
}

/// Serializes `message` to `path`.
template <typename Message>
absl::Status WriteMessage(const Message& message, absl::string_view path) {
  std::string contents;
  if (!message.SerializeToString(&contents)) {
    return absl::InternalError(absl::StrCat(
        "cannot serialize ", Message::descriptor()->full_name(), " for ", path));
  }
  return WriteFile(path, contents);
}

}  // namespace

absl::StatusOr<KernelBundle> ReadBundle(absl::string_view path) {
  return ReadMessage<KernelBundle>(path);
}

absl::Status WriteBundle(const KernelBundle& bundle, absl::string_view path) {
  return WriteMessage(bundle, path);
}

absl::StatusOr<CompiledKernel> ReadCompiledKernel(absl::string_view path) {
  return ReadMessage<CompiledKernel>(path);
}

absl::Status WriteCompiledKernel(const CompiledKernel& kernel,
                                 absl::string_view path) {
  return WriteMessage(kernel, path);
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
