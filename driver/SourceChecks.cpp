//===- SourceChecks.cpp - Text MLIR's parser cannot read safely ----------===//

#include "driver/SourceChecks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>

namespace tessera::compiler {

namespace {

/// A character of an identifier, a dialect name or an alias (`!llvm.array`
/// and `%array` are not dense arrays).
bool isNamePart(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '!' || c == '$' || c == '#' || c == '%' ||
         c == '@' || c == '^';
}

/// The first line of `text` longer than kMaxSourceLineBytes.
std::optional<UnsafeSource> findLongLine(llvm::StringRef text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    if (end - start > kMaxSourceLineBytes)
      return UnsafeSource{start,
                          ("a line of " + llvm::Twine(end - start) + " bytes, longer than the " +
                           llvm::Twine(kMaxSourceLineBytes) + " Tessera parses")
                              .str()};
    start = end + 1;
  }
  return std::nullopt;
}

} // namespace

std::optional<UnsafeSource> findUnsafeSource(llvm::StringRef text) {
  if (std::optional<UnsafeSource> longLine = findLongLine(text))
    return longLine;
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

void printUnsafeSource(llvm::raw_ostream &os, llvm::StringRef name, llvm::StringRef text,
                       const UnsafeSource &unsafe) {
  size_t offset = std::min(unsafe.offset, text.size());
  size_t lineStart = text.rfind('\n', offset);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  size_t lineEnd = std::min(text.find('\n', offset), text.size());
  size_t line = 1 + text.take_front(lineStart).count('\n');
  size_t column = offset - lineStart;
  os << name << ":" << line << ":" << column + 1 << ": error: " << unsafe.message << "\n";
  // The line around the column: at most 40 bytes before it, 120 in all.
  constexpr size_t kBefore = 40, kShown = 120;
  size_t from = column > kBefore ? offset - kBefore : lineStart;
  size_t to = std::min(lineEnd, from + kShown);
  os << (from > lineStart ? "..." : "") << text.slice(from, to) << (to < lineEnd ? "..." : "")
     << "\n"
     << std::string((from > lineStart ? 3 : 0) + (offset - from), ' ') << "^\n";
}

} // namespace tessera::compiler
