"""@python_headers: the headers of the python3 on PATH, for the bridge's
CPython extension (python/bridge/fast_launch.c, built against the stable ABI
of Python 3.11 and later). tools/setup.sh installs them (python3-dev)."""

def _python_headers_impl(ctx):
    python = ctx.which("python3")
    if python == None:
        fail("python3 is not on PATH: the bridge's extension needs its headers " +
             "(tools/setup.sh installs python3-dev)")
    found = ctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
    include = found.stdout.strip()
    if found.return_code != 0 or not ctx.path(include + "/Python.h").exists:
        fail("no Python.h under '%s' (the include directory of %s): install python3-dev" %
             (include, python))
    ctx.symlink(include, "include")
    ctx.file("BUILD", """# The headers of %s (third_party/python/headers.bzl).
cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
    visibility = ["//visibility:public"],
)
""" % python)

python_headers = repository_rule(
    implementation = _python_headers_impl,
    environ = ["PATH"],
    local = True,
)
