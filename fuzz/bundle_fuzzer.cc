//===- bundle_fuzzer.cc - Fuzzes reading kernel files ---------------------===//
//
// This file implements a libFuzzer target for kernel files (runtime/bundle.h).
// The first byte picks what the rest is: the bytes of a whole file, given to
// ParseBundle and ParseCompiledKernel as they are (damage must be refused),
// or a payload wrapped here in a correct header and checksum, so that the
// search reaches the protobuf parser and the validation instead of stopping
// at the checksum. A kernel that passes validation is then used as the
// runtime uses it: its signature printed, its grid evaluated.
//
// The first byte also picks a destination to write the bytes to through
// the runtime's writer (WriteFile, which writes bundles and extracted
// kernels): a missing path, a regular file, a symlink (to a file or
// dangling), a directory, a FIFO, a path whose PATH.tmp exists, or one in a
// missing directory. The writer must replace only a regular file or create
// a missing one, leave everything else as it was, and leave no temporary
// file behind; a breach traps.
//
//===----------------------------------------------------------------------===//

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/bundle.h"
#include "runtime/launch.h"

namespace {

using ::tessera::runtime::CompiledKernel;

/// `payload` behind a well-formed header of `kind` (1 bundle, 2 kernel).
std::string Wrap(absl::string_view payload, uint32_t kind) {
  std::string out("\x89TESSERA", 8);
  auto append = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
  };
  append(tessera::runtime::kKernelFileFormatVersion, 4);
  append(kind, 4);
  append(payload.size(), 8);
  append(tessera::runtime::Fnv1a64(payload), 8);
  out.append(payload.data(), payload.size());
  return out;
}

/// What the runtime does with a loaded kernel before any CUDA call.
void Use(const CompiledKernel& kernel) {
  (void)tessera::runtime::FormatSignature(kernel);
  int64_t dynamic_dims = 0;
  for (const auto& param : kernel.params())
    for (int64_t dim : param.shape()) dynamic_dims += dim == -1;
  for (int64_t value : {int64_t(1), int64_t(1000), int64_t(1) << 40}) {
    std::vector<int64_t> dims(dynamic_dims, value);
    for (const auto& extent : kernel.grid())
      (void)tessera::runtime::EvaluateExpr(extent, dims);
  }
}

/// A scratch directory of this process, emptied before each use.
const std::string& Scratch() {
  static const std::string* dir = [] {
    std::string pattern = "/tmp/tessera-bundle-fuzz.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return new std::string(pattern);
  }();
  DIR* listing = ::opendir(dir->c_str());
  if (listing == nullptr) std::abort();
  while (dirent* entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string path = *dir + "/" + name;
    if (::unlink(path.c_str()) != 0) ::rmdir(path.c_str());
  }
  ::closedir(listing);
  return *dir;
}

/// The file type at `path` (lstat: a symlink is itself), 0 if none.
mode_t TypeAt(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 ? (info.st_mode & S_IFMT) : 0;
}

/// How many entries the scratch directory holds.
int Entries(const std::string& dir) {
  int count = 0;
  DIR* listing = ::opendir(dir.c_str());
  while (dirent* entry = ::readdir(listing))
    count += std::string(entry->d_name) != "." && std::string(entry->d_name) != "..";
  ::closedir(listing);
  return count;
}

void Check(bool invariant) {
  if (!invariant) __builtin_trap();
}

/// Writes `bytes` to destination `kind` (1-8) in the scratch directory and
/// checks that the writer did only what it may.
void WriteTo(int kind, absl::string_view bytes) {
  const std::string dir = Scratch();
  const std::string path = dir + "/out.pb", other = dir + "/other";
  switch (kind) {
    case 2:  // a regular file of mode rw-r-----, replaced keeping its mode
      Check(tessera::runtime::WriteFile(path, "old").ok());
      ::chmod(path.c_str(), 0640);
      break;
    case 3:  // a symlink to a file
      Check(tessera::runtime::WriteFile(other, "other").ok());
      Check(::symlink(other.c_str(), path.c_str()) == 0);
      break;
    case 4:  // a dangling symlink
      Check(::symlink(other.c_str(), path.c_str()) == 0);
      break;
    case 5:
      Check(::mkdir(path.c_str(), 0755) == 0);
      break;
    case 6:
      Check(::mkfifo(path.c_str(), 0644) == 0);
      break;
    case 7:  // PATH.tmp exists (and must stay as it is)
      Check(tessera::runtime::WriteFile(path + ".tmp", "keep").ok());
      break;
    default:
      break;
  }
  const std::string target = kind == 8 ? dir + "/missing/out.pb" : path;
  const mode_t before = TypeAt(target);
  const int entries = Entries(dir);
  const absl::Status written = tessera::runtime::WriteFile(target, bytes);
  const bool replaceable = before == 0 || before == S_IFREG;
  if (kind == 8) {
    Check(written.code() == absl::StatusCode::kNotFound);
  } else if (replaceable) {
    Check(written.ok());
    absl::StatusOr<std::string> back = tessera::runtime::ReadFile(target);
    Check(back.ok() && *back == bytes);
    struct stat info;
    Check(::stat(target.c_str(), &info) == 0);
    Check((info.st_mode & 07777) == (kind == 2 ? 0640u : 0644u));
  } else {
    Check(!written.ok());
    Check(TypeAt(target) == before);
  }
  // Nothing else changed: no temporary file left, PATH.tmp and a symlink's
  // target as they were.
  Check(Entries(dir) == entries + (before == 0 && written.ok() ? 1 : 0));
  if (kind == 7) Check(*tessera::runtime::ReadFile(path + ".tmp") == "keep");
  if (kind == 3) Check(*tessera::runtime::ReadFile(other) == "other");
  if (kind == 4) Check(TypeAt(other) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  absl::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string bytes(rest);
  if (mode % 3 == 1) bytes = Wrap(rest, 1);
  if (mode % 3 == 2) bytes = Wrap(rest, 2);
  if (auto bundle = tessera::runtime::ParseBundle(bytes, "fuzz.pb"); bundle.ok()) {
    for (const CompiledKernel& kernel : bundle->kernels()) Use(kernel);
    (void)tessera::runtime::FindKernel(*bundle, "gemm");
  }
  if (auto kernel = tessera::runtime::ParseCompiledKernel(bytes, "fuzz.pb"); kernel.ok())
    Use(*kernel);
  if (int destination = (mode / 3) % 9; destination != 0) WriteTo(destination, bytes);
  return 0;
}
