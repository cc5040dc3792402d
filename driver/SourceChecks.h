//===- SourceChecks.h - Text MLIR's parser cannot read safely ---*- C++ -*-===//
//
// Checks a tile module's text, before MLIR's parser sees it, for the inputs
// on which that parser (MLIR 22) does not return an error but recurses out
// of its stack or crashes, so that the tools can answer with a located
// error instead.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DRIVER_SOURCECHECKS_H
#define TESSERA_DRIVER_SOURCECHECKS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <optional>
#include <string>

namespace tessera::compiler {

/// The deepest nesting of (, [ and { a tool parses: MLIR's parser recurses
/// per level, and thousands overflow its stack.
inline constexpr int64_t kMaxSourceNesting = 256;

/// The longest line a tool parses. A diagnostic echoes its line, so an error
/// on a longer one would print all of it; no tile module needs such lines.
inline constexpr size_t kMaxSourceLineBytes = size_t(64) << 10;

/// What in `text` MLIR's parser cannot read safely: the offset and a
/// message, or none. A line longer than kMaxSourceLineBytes; outside strings
/// and comments: nesting deeper than
/// kMaxSourceNesting; a dense array of anything but i1 to i64, f32 and f64
/// (`array<index: ...>`, or an alias of index, on which MLIR 22's parser
/// dereferences a null type).
struct UnsafeSource {
  size_t offset;
  std::string message;
};
std::optional<UnsafeSource> findUnsafeSource(llvm::StringRef text);

/// Prints `unsafe` as a located error, `name:line:col: error: message`, and
/// at most 120 columns of its line around the column with a caret (the
/// offending line may be long).
void printUnsafeSource(llvm::raw_ostream &os, llvm::StringRef name, llvm::StringRef text,
                       const UnsafeSource &unsafe);

} // namespace tessera::compiler

#endif // TESSERA_DRIVER_SOURCECHECKS_H
