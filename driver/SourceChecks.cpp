//===- SourceChecks.cpp - Text MLIR's parser cannot read safely ----------===//

#include "driver/SourceChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

namespace tessera::compiler {

namespace {

/// A character of an identifier, a dialect name or an alias (`!llvm.array`
/// and `%array` are not dense arrays).
bool isNamePart(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '!' || c == '$' || c == '#' || c == '%' ||
         c == '@' || c == '^';
}

} // namespace

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
    } else if (c == 'a' && text.substr(i).starts_with("array") &&
               (i == 0 || !isNamePart(text[i - 1]))) {
      // A dense array: `array`, `<`, its element type. MLIR's parser takes
      // only i1 to i64, f32 and f64 safely; it crashes on index and on an
      // alias it resolves to index, so anything else is refused here.
      llvm::StringRef rest = text.substr(i + 5).ltrim();
      if (rest.consume_front("<")) {
        llvm::StringRef element = rest.ltrim();
        size_t length = 0;
        while (length < element.size() && isNamePart(element[length]))
          ++length;
        llvm::StringRef name = element.take_front(length);
        bool safe = llvm::is_contained({"i1", "i8", "i16", "i32", "i64", "f32", "f64"}, name);
        if (!safe)
          return UnsafeSource{i, ("a dense array of '" + name +
                                  "' elements; MLIR's parser "
                                  "reads i1, i8, i16, i32, i64, f32 and f64 arrays safely")
                                     .str()};
      }
    }
  }
  return std::nullopt;
}

} // namespace tessera::compiler
