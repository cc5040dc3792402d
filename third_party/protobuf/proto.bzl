"""A thin macro: C++ code for one .proto through the system protoc."""

def tessera_cc_proto(name, src, deps = [], visibility = None):
    """Runs /usr/bin/protoc on `src` and wraps the result in a cc_library.

    protoc runs from the execution root, where this repository's files lie
    under its workspace root (`external/<name>` when another workspace
    embeds it, empty in its own). The import path and the output directory
    are both rooted there, so the generated files include each other as
    `runtime/kernel.pb.h` whatever the repository is called.

    Args:
      name: the cc_library's name.
      src: one .proto file in this package.
      deps: further cc_library dependencies.
      visibility: the library's visibility.
    """
    base = src[:-len(".proto")]
    root = Label("//:BUILD").workspace_root or "."
    native.genrule(
        name = name + "_gen",
        srcs = [src],
        outs = [base + ".pb.h", base + ".pb.cc"],
        cmd = "/usr/bin/protoc --proto_path=%s --cpp_out=$(GENDIR)/%s $(location %s)" % (root, root, src),
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        deps = [Label("//third_party/protobuf")] + deps,
        visibility = visibility,
    )
