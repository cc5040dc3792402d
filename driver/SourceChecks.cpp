//===- SourceChecks.cpp - Text MLIR's parser cannot read safely ----------===//

#include "driver/SourceChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

namespace tessera::compiler {

std::optional<UnsafeSource> findUnsafeSource(llvm::StringRef text) {
  int64_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // A string: to its closing quote, skipping escapes.
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxSourceNesting)
        return UnsafeSource{i, ("nesting deeper than " + llvm::Twine(kMaxSourceNesting) +
                                " levels of (, [ and {, the most Tessera parses")
                                   .str()};
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == 'a' && text.substr(i).starts_with("array<") &&
               (i == 0 || !llvm::isAlnum(text[i - 1]))) {
      llvm::StringRef element = text.substr(i + 6).ltrim();
      if (element.starts_with("index") &&
          (element.size() == 5 || !llvm::isAlnum(element[5]) && element[5] != '_'))
        return UnsafeSource{i, "a dense array of index elements, which MLIR's parser cannot "
                               "read; use i64"};
    }
  }
  return std::nullopt;
}

} // namespace tessera::compiler
