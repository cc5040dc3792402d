# -*- Python -*-
#===- lit.cfg.py - The compiler's FileCheck suite --------------------------===#
#
# Configures lit for tests/lit: `.mlir` files run through tessera-opt and
# tessera-compile (and bundles through tessera-run --list) and are checked
# with FileCheck. Under Bazel, run_lit.sh
# passes every path as a lit parameter; run by hand, the defaults find the
# tools in bazel-bin and FileCheck in /usr/lib/llvm-22/bin:
#
#   bazel build //tools:tessera-opt //tools:tessera-compile //tools:tessera-run
#   /usr/lib/llvm-22/bin/lit -v tests/lit
#
#===------------------------------------------------------------------------===#

import os
import tempfile

import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# Inputs/ holds files that tests read, not tests.
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

# lit writes its temporary files (%t) outside the source tree: into the
# test's tmpdir under Bazel, into the system's temp directory by hand.
config.test_exec_root = lit_config.params.get(
    "test_exec_root",
    os.environ.get("TEST_TMPDIR", os.path.join(tempfile.gettempdir(), "tessera-lit")))

repo_root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))


def tool_path(param, default):
    """A tool named by a lit parameter, else by its default path; must exist."""
    path = lit_config.params.get(param, default)
    if not os.path.isfile(path):
        lit_config.fatal("%s not found at '%s' (pass --param %s=PATH or build it)" %
                         (param, path, param))
    return os.path.abspath(path)


tessera_opt = tool_path("tessera_opt", os.path.join(repo_root, "bazel-bin/tools/tessera-opt"))
tessera_compile = tool_path("tessera_compile",
                            os.path.join(repo_root, "bazel-bin/tools/tessera-compile"))
llvm_tools_dir = lit_config.params.get("llvm_tools_dir", "/usr/lib/llvm-22/bin")
for tool in ("FileCheck", "not"):
    if not os.path.isfile(os.path.join(llvm_tools_dir, tool)):
        lit_config.fatal("%s not found in llvm_tools_dir '%s'" % (tool, llvm_tools_dir))

tessera_run = tool_path("tessera_run", os.path.join(repo_root, "bazel-bin/tools/tessera-run"))
config.substitutions.append(("%tessera-opt", tessera_opt))
config.substitutions.append(("%tessera-run", tessera_run))
config.substitutions.append(("%tessera-compile", tessera_compile))

# FileCheck and not come from LLVM 22's bin directory, first on PATH.
config.environment["PATH"] = os.pathsep.join(
    [llvm_tools_dir, os.environ.get("PATH", "/usr/bin:/bin")])
# The test suite verifies the IR after every MLIR pass (.bazelrc).
if "TESSERA_VERIFY_EACH" in os.environ:
    config.environment["TESSERA_VERIFY_EACH"] = os.environ["TESSERA_VERIFY_EACH"]
# The compiler finds libdevice and ptxas through CUDA_HOME when it needs them.
if "CUDA_HOME" in os.environ:
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]
