"""A thin macro: C++ code for one .proto through the system protoc."""

def tessera_cc_proto(name, src, deps = [], visibility = None):
    """Runs /usr/bin/protoc on `src` and wraps the result in a cc_library.

    Args:
      name: the cc_library's name.
      src: one .proto file in this package.
      deps: further cc_library dependencies.
      visibility: the library's visibility.
    """
    base = src[:-len(".proto")]
    native.genrule(
        name = name + "_gen",
        srcs = [src],
        outs = [base + ".pb.h", base + ".pb.cc"],
        cmd = "/usr/bin/protoc --cpp_out=$(GENDIR) $(location %s)" % src,
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        deps = ["//third_party/protobuf"] + deps,
        visibility = visibility,
    )
