"""The ctypes binding of libtessera_bridge.so (python/bridge/tessera_bridge.h).

The library is found, in order, at $TESSERA_BRIDGE_LIBRARY, next to this
package, or in the Bazel output tree of the checkout this package sits in
(bazel-bin/python/), so `PYTHONPATH=python` works after
`bazel build //python:bridge`.
"""

import ctypes
import importlib.machinery
import importlib.util
import os
import threading

ABI_VERSION = 2
ARG_TENSOR = 1
ARG_SCALAR = 2

_LIBRARY_NAME = "libtessera_bridge.so"
# The CPython extension of Kernel.__call__'s fast path, beside the library.
_FAST_LAUNCH_NAME = "_fast_launch.abi3.so"

# absl::StatusCode numbers and their names.
_CODE_NAMES = {
    1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
    13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}


class Error(RuntimeError):
    """A failure reported by the Tessera runtime or compiler.

    `code` is the absl::StatusCode name ("INVALID_ARGUMENT", "NOT_FOUND",
    "UNAVAILABLE", ...); the message names the kernel, the argument or the
    failing driver call.
    """

    def __init__(self, message, code="INVALID_ARGUMENT"):
        super().__init__(message)
        self.code = code


class Arg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("is_float", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("address", ctypes.c_uint64),
        ("int_value", ctypes.c_int64),
        ("float_value", ctypes.c_double),
    ]


def _candidates():
    explicit = os.environ.get("TESSERA_BRIDGE_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))
    return [
        os.path.join(here, _LIBRARY_NAME),
        os.path.join(checkout, "bazel-bin", "python", _LIBRARY_NAME),
    ]


_lock = threading.Lock()
_library = None
_holding_library = None
_library_path = None
_fast_launch = None  # (module or None, a sentence saying which path calls take)


def library():
    """The loaded bridge library (loaded on first use)."""
    global _library, _holding_library, _library_path
    with _lock:
        if _library is not None:
            return _library
        tried = []
        for path in _candidates():
            if not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise Error(f"cannot load the Tessera bridge {path}: {e}", "UNAVAILABLE") from None
            _declare(lib)
            version = lib.tessera_abi_version()
            if version != ABI_VERSION:
                raise Error(
                    f"the Tessera bridge {path} has ABI version {version}; this package needs "
                    f"{ABI_VERSION} (rebuild it: bazel build //python:bridge)", "FAILED_PRECONDITION")
            holding = ctypes.PyDLL(path)
            _declare_holding(holding)
            _library, _holding_library, _library_path = lib, holding, path
            return lib
        raise Error("the Tessera bridge library was not found (looked at: " + ", ".join(tried) +
                    "); build it with `bazel build //python:bridge` or set TESSERA_BRIDGE_LIBRARY",
                    "NOT_FOUND")


def _declare(lib):
    c_int, c_void_p, c_char_p = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    args_p = ctypes.POINTER(Arg)
    signatures = {
        "tessera_abi_version": ([], c_int),
        "tessera_last_error": ([], c_char_p),
        "tessera_bundle_open": ([c_char_p, ctypes.POINTER(c_void_p)], c_int),
        "tessera_bundle_close": ([c_void_p], None),
        "tessera_bundle_describe": ([c_void_p], c_char_p),
        "tessera_check": ([c_void_p, c_int, args_p, c_int], c_int),
        "tessera_launch": ([c_void_p, c_int, args_p, c_int, ctypes.c_uint64], c_int),
        "tessera_prepare": ([c_void_p, c_int, args_p, c_int, ctypes.POINTER(c_void_p)], c_int),
        "tessera_rebind": ([c_void_p, ctypes.POINTER(ctypes.c_uint64), c_int], c_int),
        "tessera_prepared_launch": ([c_void_p, ctypes.c_uint64], c_int),
        "tessera_prepared_free": ([c_void_p], None),
        "tessera_device_capability": ([c_int, ctypes.POINTER(c_int)], c_int),
        "tessera_device_synchronize": ([c_int], c_int),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype


def holding_library():
    """The bridge library's launch calls that keep the GIL (ctypes.PyDLL):
    a launch takes microseconds, and PyTorch launches its own kernels the
    same way (holding the GIL)."""
    library()
    return _holding_library


def _declare_holding(lib):
    addresses_p = ctypes.POINTER(ctypes.c_uint64)
    signatures = {
        "tessera_prepared_launch": ([ctypes.c_void_p, ctypes.c_uint64], ctypes.c_int),
        "tessera_prepared_launch_at": (
            [ctypes.c_void_p, addresses_p, ctypes.c_int, ctypes.c_uint64], ctypes.c_int),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype


def fast_launch():
    """(module, description): tessera._fast_launch (python/bridge/fast_launch.c,
    found beside the bridge library) for Kernel.__call__'s repeated forms, or
    None where it is absent, cannot load, or TESSERA_FAST_LAUNCH=0 turns it
    off; calls then take the same path in Python. The description says which."""
    global _fast_launch
    library()
    with _lock:
        if _fast_launch is None:
            _fast_launch = _load_fast_launch()
        return _fast_launch


def _load_fast_launch():
    if os.environ.get("TESSERA_FAST_LAUNCH", "1") == "0":
        return None, "Python (TESSERA_FAST_LAUNCH=0)"
    path = os.path.join(os.path.dirname(os.path.abspath(_library_path)), _FAST_LAUNCH_NAME)
    if not os.path.exists(path):
        return None, f"Python ({path} is absent: bazel build //python:{_FAST_LAUNCH_NAME})"
    name = "tessera._fast_launch"
    try:
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        module = importlib.util.module_from_spec(
            importlib.util.spec_from_file_location(name, path, loader=loader))
        loader.exec_module(module)
    except (ImportError, OSError) as e:
        return None, f"Python ({path} does not load: {e})"
    return module, f"C ({path})"


def launch_at_address():
    """The address of tessera_prepared_launch_at, for tessera._fast_launch."""
    return ctypes.cast(holding_library().tessera_prepared_launch_at, ctypes.c_void_p).value


def check(lib, code):
    """Raises Error for a non-zero status code of a bridge call."""
    if code != 0:
        message = lib.tessera_last_error().decode("utf-8", "replace")
        raise Error(message, _CODE_NAMES.get(code, str(code)))
