"""tessera.compile: tile IR text to a loaded Bundle, through tessera-compile,
cached on disk.

The compiler runs as a process (tools/tessera-compile, the same binary and
options as on the command line), so this package carries no LLVM or MLIR.
Compiled kernel files are cached under $TESSERA_CACHE_DIR (default
~/.cache/tessera), keyed by the IR text, the target, the options and the
compiler binary's SHA-256: a rebuilt compiler never serves stale kernels.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading

from ._bridge import Error

# Counts of this process's compile calls, by outcome (the tests read them).
stats = {"hits": 0, "compiles": 0}

_CACHE_FORMAT = "tessera-compile-cache-v1"
_identities = {}
_identities_lock = threading.Lock()
# Bundles this process compiled or loaded from the cache, by the cache
# entry's path and modification time: a repeated compile returns the loaded
# kernels instead of loading them again.
_loaded = {}


class CompileError(Error):
    """tessera-compile refused the IR; `diagnostics` holds its whole output
    (located MLIR diagnostics such as `<stdin>:4:7: error: ...`)."""

    def __init__(self, message, diagnostics):
        super().__init__(message, "INVALID_ARGUMENT")
        self.diagnostics = diagnostics


def compiler_path():
    """The tessera-compile binary: $TESSERA_COMPILE, else next to this
    package, else the checkout's bazel-bin/tools/, else on PATH."""
    explicit = os.environ.get("TESSERA_COMPILE")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))
    for path in (os.path.join(here, "tessera-compile"),
                 os.path.join(checkout, "bazel-bin", "tools", "tessera-compile")):
        if os.path.exists(path):
            return path
    found = shutil.which("tessera-compile")
    if found:
        return found
    raise Error("tessera-compile was not found (build it with `bazel build //tools:tessera-compile`"
                " or set TESSERA_COMPILE)", "NOT_FOUND")


def cache_dir():
    """Where compiled kernels are kept: $TESSERA_CACHE_DIR, else
    $XDG_CACHE_HOME/tessera, else ~/.cache/tessera."""
    explicit = os.environ.get("TESSERA_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tessera")


def _compiler_identity(path):
    """The SHA-256 of the compiler binary, hashed once per (file, size, mtime)."""
    real = os.path.realpath(path)
    info = os.stat(real)
    key = (real, info.st_size, info.st_mtime_ns)
    with _identities_lock:
        if key not in _identities:
            digest = hashlib.sha256()
            with open(real, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            _identities[key] = digest.hexdigest()
        return _identities[key]


def _stamp(path):
    """The key of a cache entry's loaded bundle: its path and modification
    time, so an entry replaced on disk is loaded again."""
    return (path, os.stat(path).st_mtime_ns)


def _flags(target, fast_math, opt_level, assemble, llvm_pipeline, ptxas, libdevice):
    flags = [f"--target={target}"]
    if fast_math is not None:
        flags.append(f"--fast-math={'true' if fast_math else 'false'}")
    if opt_level is not None:
        flags.append(f"-O={int(opt_level)}")
    if assemble:
        flags.append("--assemble")
    if llvm_pipeline:
        flags.append(f"--llvm-pipeline={llvm_pipeline}")
    if ptxas:
        flags.append(f"--ptxas={ptxas}")
    if libdevice:
        flags.append(f"--libdevice={libdevice}")
    return flags


def compile(source, target=None, *, fast_math=None, opt_level=None, assemble=False,  # noqa: A001
            llvm_pipeline=None, ptxas=None, libdevice=None, device=0, cache=True,
            cache_directory=None, compiler=None):
    """Compiles tile IR text (a module of tile.kernel ops) for `target`
    (default: the target of CUDA device `device`, see
    tessera.target_for_capability) and returns the loaded tessera.Bundle.

    The options are tessera-compile's: fast_math (--fast-math), opt_level
    (-O), assemble (--assemble: a cubin from ptxas beside the PTX),
    llvm_pipeline, ptxas, libdevice. Raises CompileError with the compiler's
    located diagnostics when the IR is refused.
    """
    from . import load, target_for_capability, device_capability

    if isinstance(source, bytes):
        source = source.decode("utf-8")
    if not isinstance(source, str):
        raise Error(f"compile: expects tile IR text, got {type(source).__name__}")
    if target is None:
        target = target_for_capability(device_capability(device))
    compiler = compiler or compiler_path()
    flags = _flags(target, fast_math, opt_level, assemble, llvm_pipeline, ptxas, libdevice)
    key = hashlib.sha256("\0".join([_CACHE_FORMAT, _compiler_identity(compiler),
                                    json.dumps(flags), source]).encode()).hexdigest()
    directory = os.path.join(cache_directory or cache_dir(), "kernels", key[:2])
    path = os.path.join(directory, key + ".pb")
    if cache and os.path.exists(path):
        stamp = _stamp(path)
        bundle = _loaded.get(stamp)
        if bundle is None:
            try:
                bundle = load(path)
            except Error:
                bundle = None  # A damaged entry: compiled again and replaced below.
        if bundle is not None:
            _loaded[stamp] = bundle
            stats["hits"] += 1
            return bundle
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=key[:16], suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        result = subprocess.run([compiler, "-", f"--bundle={temporary}", "-o", os.devnull] + flags,
                                input=source.encode(), capture_output=True)
        stats["compiles"] += 1
        diagnostics = result.stderr.decode("utf-8", "replace").strip()
        if result.returncode < 0:
            raise Error(f"tessera-compile ({target}) was killed by signal {-result.returncode}"
                        + (f": {diagnostics.splitlines()[-1]}" if diagnostics else ""), "INTERNAL")
        if result.returncode != 0:
            first = diagnostics.splitlines()[0] if diagnostics else "no diagnostics"
            raise CompileError(f"tessera-compile ({target}) refused the IR: {first}", diagnostics)
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the entry from other users.
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    bundle = load(path)
    _loaded[_stamp(path)] = bundle
    return bundle
