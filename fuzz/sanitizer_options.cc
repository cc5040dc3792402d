//===- sanitizer_options.cc - AddressSanitizer defaults for the fuzzers ---===//
//
// This file gives the fuzzers AddressSanitizer defaults that fit a program
// whose LLVM and MLIR come from uninstrumented system libraries:
//  - allow_user_poisoning=0: LLVM's headers poison and unpoison allocator
//    memory (BumpPtrAllocator) when the includer is built with ASan, but the
//    library's own copies of that code do not, so memory the library reuses
//    would read as poisoned (a false use-after-poison);
//  - detect_leaks=0: MLIR and LLVM keep registries for the life of the
//    process;
//  - detect_odr_violation=0: globals defined in both a header-only template
//    and the shared libraries are not a violation here.
// ASAN_OPTIONS in the environment still overrides them.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0:detect_odr_violation=0";
}
