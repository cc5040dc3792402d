//===- tessera_run.cc - Inspect kernel bundles and the device -------------===//
//
// This file implements tessera-run, a runtime-only tool (no LLVM, no MLIR):
//
//   tessera-run --bundle=FILE --list         print each kernel's signature
//   tessera-run [--bundle=FILE] --info       print the device; with a bundle,
//               [--device=N]                 also load each kernel on it
//   tessera-run --bundle=FILE --extract=DIR  write each kernel's PTX and cubin
//   tessera-run --bundle=FILE --add-variant=BASE:PTX --write=OUT
//                                            add a copy of kernel BASE whose
//                                            code is the (hand-edited) PTX
//                                            file, entry "BASE__..." as the
//                                            PTX's .entry names it: a tuning
//                                            candidate of BASE's family
//
// Errors print one line to stderr and exit non-zero (2 for usage errors).
//
//===----------------------------------------------------------------------===//

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"

namespace {

using ::tessera::runtime::CompiledKernel;
using ::tessera::runtime::KernelBundle;

constexpr char kUsage[] =
    "usage: tessera-run --bundle=FILE --list | [--bundle=FILE] --info "
    "[--device=N] | --bundle=FILE --extract=DIR | --bundle=FILE "
    "--add-variant=BASE:PTX_FILE --write=OUT";

/// Parsed command line.
struct Options {
  std::string bundle;
  bool list = false;
  bool info = false;
  int device = 0;
  /// --extract: write each kernel's PTX and cubin (for cuobjdump) here.
  std::string extract;
  /// --add-variant=BASE:PTX_FILE and --write=OUT.
  std::string addVariant, write;
};

/// Prints `status` as one line and returns the exit code 1.
int Fail(const absl::Status& status) {
  std::fprintf(stderr, "tessera-run: %s\n", status.ToString().c_str());
  return 1;
}

/// Prints a usage error and returns the exit code 2.
int Usage(const std::string& problem) {
  std::fprintf(stderr, "tessera-run: %s\n%s\n", problem.c_str(), kUsage);
  return 2;
}

/// --extract: DIR/<entry>.<target>.ptx and .cubin for each kernel. DIR
/// must exist (NotFound names it otherwise): a mistyped directory is not
/// created silently.
int Extract(const KernelBundle& bundle, const std::string& dir) {
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Fail(absl::NotFoundError(absl::StrCat(
        "--extract: the directory ", dir, " does not exist")));
  }
  for (const CompiledKernel& kernel : bundle.kernels()) {
    // The names become file names in DIR: no path separators, no hidden
    // or empty names (a crafted bundle must not write elsewhere). ReadBundle
    // already refuses such names; this keeps Extract safe on its own.
    for (const std::string* name : {&kernel.entry(), &kernel.target()}) {
      if (name->empty() || (*name)[0] == '.' || name->find('/') != std::string::npos) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "kernel name '", kernel.entry(), "' or target '", kernel.target(),
            "' is not a plain file name; nothing more extracted")));
      }
    }
    std::string base = absl::StrCat(dir, "/", kernel.entry(), ".", kernel.target());
    for (const auto& [suffix, bytes] :
         {std::pair<std::string, std::string>{".ptx", kernel.ptx()}, {".cubin", kernel.cubin()}}) {
      if (bytes.empty()) continue;
      if (absl::Status written = tessera::runtime::WriteFile(base + suffix, bytes); !written.ok())
        return Fail(written);
      std::printf("%s%s\n", base.c_str(), suffix.c_str());
    }
  }
  return 0;
}

/// --add-variant: a copy of kernel BASE with the PTX of a file (its cubin
/// dropped), named by the PTX's `.entry`, which must be "BASE__<knobs>".
int AddVariant(KernelBundle bundle, const std::string& spec, const std::string& out) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos) return Usage("--add-variant wants BASE:PTX_FILE");
  std::string base = spec.substr(0, colon), path = spec.substr(colon + 1);
  absl::StatusOr<const CompiledKernel*> found = tessera::runtime::FindKernel(bundle, base);
  if (!found.ok()) return Fail(found.status());
  absl::StatusOr<std::string> read = tessera::runtime::ReadFile(path);
  if (!read.ok()) return Fail(read.status());
  const std::string& ptx = *read;
  // The entry's name: the identifier after ".entry" (PTX ISA §4.4), outside
  // comments (a line's "//" tail; the code generators write no block comments).
  std::string entry;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    line = line.substr(0, line.find("//"));
    size_t at = line.find(".entry");
    if (at == absl::string_view::npos) continue;
    line.remove_prefix(at + 6);
    line = absl::StripLeadingAsciiWhitespace(line);
    size_t end = 0;
    while (end < line.size() && (absl::ascii_isalnum(line[end]) || line[end] == '_' ||
                                 line[end] == '$' || line[end] == '%'))
      ++end;
    entry = std::string(line.substr(0, end));
    break;
  }
  if (entry.empty())
    return Fail(absl::InvalidArgumentError(path + ": no .entry with a name in this PTX"));
  if (!absl::StartsWith(entry, base + "__")) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        path, ": the PTX's entry is '", entry, "'; a variant of ", base, " is named '", base,
        "__<knobs>'")));
  }
  if (tessera::runtime::FindKernel(bundle, entry).ok()) {
    return Fail(absl::AlreadyExistsError(
        absl::StrCat("the bundle already has a kernel '", entry, "'")));
  }
  CompiledKernel variant = **found;
  variant.set_entry(entry);
  variant.set_ptx(ptx);
  // What ptxas and the compiler said of the base's code is not this code's.
  variant.clear_cubin();
  variant.clear_registers();
  variant.clear_spill_bytes();
  variant.clear_compile_micros();
  *bundle.add_kernels() = std::move(variant);
  if (absl::Status s = tessera::runtime::WriteBundle(bundle, out); !s.ok()) return Fail(s);
  std::printf("%s: %d kernels (added %s)\n", out.c_str(), bundle.kernels_size(), entry.c_str());
  return 0;
}

/// --list: one signature per kernel.
int List(const KernelBundle& bundle) {
  for (const CompiledKernel& kernel : bundle.kernels()) {
    std::printf("%s\n", tessera::runtime::FormatSignature(kernel).c_str());
  }
  return 0;
}

/// --info: the device and, for a bundle, whether each kernel loads on it.
int Info(const Options& options, const KernelBundle* bundle) {
  absl::StatusOr<tessera::runtime::Device> device =
      tessera::runtime::Device::Open(options.device);
  if (!device.ok()) return Fail(device.status());
  std::printf("%s\n", device->Describe().c_str());
  if (bundle == nullptr) return 0;
  int failures = 0;
  for (const CompiledKernel& kernel : bundle->kernels()) {
    absl::StatusOr<tessera::runtime::LoadedKernel> loaded =
        tessera::runtime::LoadedKernel::Load(kernel);
    if (loaded.ok()) {
      std::printf("  %s (%s): loaded from %s, %d registers\n",
                  kernel.entry().c_str(), kernel.target().c_str(),
                  loaded->from_cubin() ? "cubin" : "PTX", loaded->registers());
    } else {
      ++failures;
      std::printf("  %s (%s): %s\n", kernel.entry().c_str(),
                  kernel.target().c_str(), loaded.status().ToString().c_str());
    }
  }
  if (failures == 0) return 0;
  return Fail(absl::InternalError(
      absl::StrCat(failures, " kernel(s) failed to load")));
}

}  // namespace

int Run(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--bundle=")) {
      options.bundle = arg.substr(9);
      if (options.bundle.empty()) return Usage("--bundle needs a file name");
    } else if (arg == "--list") {
      options.list = true;
    } else if (arg == "--info") {
      options.info = true;
    } else if (absl::StartsWith(arg, "--device=")) {
      if (!absl::SimpleAtoi(arg.substr(9), &options.device)) {
        return Usage(absl::StrCat("bad device ordinal in ", arg));
      }
    } else if (absl::StartsWith(arg, "--add-variant=")) {
      options.addVariant = arg.substr(14);
    } else if (absl::StartsWith(arg, "--write=")) {
      options.write = arg.substr(8);
    } else if (absl::StartsWith(arg, "--extract=")) {
      options.extract = arg.substr(10);
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else {
      return Usage(absl::StrCat("unknown argument ", arg));
    }
  }
  if (!options.extract.empty()) {
    if (options.bundle.empty()) return Usage("--extract needs --bundle");
    absl::StatusOr<KernelBundle> read = tessera::runtime::ReadBundle(options.bundle);
    if (!read.ok()) return Fail(read.status());
    return Extract(*read, options.extract);
  }
  if (!options.addVariant.empty()) {
    if (options.bundle.empty() || options.write.empty())
      return Usage("--add-variant needs --bundle and --write");
    absl::StatusOr<KernelBundle> read = tessera::runtime::ReadBundle(options.bundle);
    if (!read.ok()) return Fail(read.status());
    return AddVariant(*std::move(read), options.addVariant, options.write);
  }
  if (options.list == options.info) return Usage("give one of --list, --info");
  if (options.list && options.bundle.empty()) return Usage("--list needs --bundle");

  KernelBundle bundle;
  if (!options.bundle.empty()) {
    absl::StatusOr<KernelBundle> read = tessera::runtime::ReadBundle(options.bundle);
    if (!read.ok()) return Fail(read.status());
    bundle = *std::move(read);
  }
  if (options.list) return List(bundle);
  return Info(options, options.bundle.empty() ? nullptr : &bundle);
}

int main(int argc, char** argv) {
  const int status = Run(argc, argv);
  // What --list and --info printed must have reached stdout (a full disk,
  // a closed pipe): otherwise the run failed.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "tessera-run: cannot write standard output: %s\n",
                 std::strerror(errno));
    return status != 0 ? status : 1;
  }
  return status;
}
