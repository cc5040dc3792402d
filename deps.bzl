"""Repositories Tessera needs, for its own WORKSPACE and for embedders.

In another Bazel workspace (WORKSPACE mode):

    local_repository(name = "tessera", path = "/path/to/tessera")
    load("@tessera//:deps.bzl", "tessera_dependencies")
    tessera_dependencies(tessera_path = "/path/to/tessera")

then depend on @tessera//frontend (write kernels), @tessera//driver:compiler
(compile tile IR) or @tessera//runtime (load and launch; no LLVM, no MLIR);
a CompiledKernel is declared in runtime/kernel.pb.h of
@tessera//runtime:kernel_cc_proto. The repository may have any name: its
Bazel files refer to themselves through Label(). examples/embedding is a
complete downstream workspace (tools/test.sh builds and tests it).
"""

load("//third_party/python:headers.bzl", "python_headers")

def tessera_dependencies(tessera_path = "."):
    """Declares @llvm, @cuda and the offline stand-ins for Bazel's own rules.

    Args:
      tessera_path: where the Tessera checkout is, relative to the workspace
        root or absolute (the stand-in repositories live inside it).
    """

    # Stand-ins for repositories Bazel 4's WORKSPACE suffix would download.
    native.local_repository(
        name = "rules_cc",
        path = tessera_path + "/third_party/stubs/rules_cc",
    )
    native.local_repository(
        name = "rules_java",
        path = tessera_path + "/third_party/stubs/rules_java",
    )
    native.local_repository(
        name = "remote_coverage_tools",
        path = tessera_path + "/third_party/stubs/remote_coverage_tools",
    )

    # LLVM and MLIR 22 from Debian (llvm-22-dev, libmlir-22-dev, mlir-22-tools).
    native.new_local_repository(
        name = "llvm",
        build_file = str(Label("//third_party/llvm:llvm.BUILD")),
        path = "/usr/lib/llvm-22",
    )

    # The CUDA toolkit: cuda.h, ptxas and libdevice. libcuda is never linked;
    # the runtime opens it with dlopen.
    native.new_local_repository(
        name = "cuda",
        build_file = str(Label("//third_party/cuda:cuda.BUILD")),
        path = "/usr/local/cuda",
    )

    # The headers of the python3 on PATH (python3-dev), for the Python
    # bridge's CPython extension only.
    python_headers(name = "python_headers")
