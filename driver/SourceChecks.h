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

#include <cstddef>
#include <optional>
#include <string>

namespace tessera::compiler {

/// The deepest nesting of (, [ and { a tool parses: MLIR's parser recurses
/// per level, and thousands overflow its stack.
inline constexpr int64_t kMaxSourceNesting = 256;

/// What in `text` MLIR's parser cannot read safely: the offset and a
/// message, or none. Outside strings and comments: nesting deeper than
/// kMaxSourceNesting; a dense array of anything but i1 to i64, f32 and f64
/// (`array<index: ...>`, or an alias of index, on which MLIR 22's parser
/// dereferences a null type).
struct UnsafeSource {
  size_t offset;
  std::string message;
};
std::optional<UnsafeSource> findUnsafeSource(llvm::StringRef text);

} // namespace tessera::compiler

#endif // TESSERA_DRIVER_SOURCECHECKS_H
