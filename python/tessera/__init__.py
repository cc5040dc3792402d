"""Tessera from Python: load kernel files, call kernels on PyTorch tensors,
compile tile IR for the GPU at hand.

    import tessera
    bundle = tessera.load("sm_90a.pb")          # or tessera.compile(tile_ir_text)
    bundle["gemm_f16"](a, b, c)                  # torch CUDA tensors, torch's stream

Kernels write into the tensors they are given (no copies); every argument is
checked before the launch, and a mistake raises tessera.Error naming the
kernel and the parameter. tessera.ops registers the examples' GEMM and
FlashAttention as torch.library custom operators.
"""

import ctypes
import json
import sys
import threading

from . import _args
from . import _bridge
from ._bridge import Error
from .compiler import CompileError, compile, compiler_path  # noqa: A004 (tessera.compile)

__all__ = ["Bundle", "CompileError", "Error", "Kernel", "Prepared", "compile", "compiler_path",
           "device_capability", "fast_launch_path", "load", "synchronize", "target_for_capability"]


def device_capability(device=0):
    """Compute capability of CUDA device `device` as major * 10 + minor (90 for an H100)."""
    lib = _bridge.library()
    capability = ctypes.c_int(0)
    _bridge.check(lib, lib.tessera_device_capability(int(device), ctypes.byref(capability)))
    return capability.value


def target_for_capability(capability):
    """The backend target whose kernels run best on a device of `capability`:
    sm_90a on compute capability 9.0 (its wgmma and TMA code runs there only),
    else the newest of sm_80, sm_70, sm_60 at or below it (PTX that the
    driver's JIT compiles for any newer GPU)."""
    if capability == 90:
        return "sm_90a"
    for floor, target in ((80, "sm_80"), (70, "sm_70"), (60, "sm_60")):
        if capability >= floor:
            return target
    raise Error(f"compute capability {capability // 10}.{capability % 10} is below sm_60, the "
                "oldest target Tessera builds for", "FAILED_PRECONDITION")


def fast_launch_path():
    """Which code takes repeated calls of a kernel: "C (<path>)" where the
    extension tessera._fast_launch is loaded, else "Python (<why not>)"."""
    return _bridge.fast_launch()[1]


def synchronize(device=0):
    """Waits for all work on `device`; a kernel fault surfaces here as an Error."""
    lib = _bridge.library()
    _bridge.check(lib, lib.tessera_device_synchronize(int(device)))


def _current_stream_getter():
    """torch's function from a device index to its current raw CUstream."""
    torch = sys.modules["torch"]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw else lambda index: torch.cuda.current_stream(index).cuda_stream


def _raw_stream(stream, infos, device):
    """The CUstream of a launch: `stream` as given (an int, or an object with
    .cuda_stream such as torch.cuda.Stream); by default torch's current stream
    of the tensors' device when they are torch tensors, else the default stream."""
    if stream is None:
        if infos and infos[0].is_torch:
            index = device if device is not None else sys.modules["torch"].cuda.current_device()
            return int(_current_stream_getter()(index))
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    handle = getattr(stream, "cuda_stream", None)
    if handle is None:
        raise Error(f"stream: expects an int (a CUstream) or an object with .cuda_stream, got "
                    f"{type(stream).__name__}")
    return int(handle)


class _Handle:
    """Owns a native bundle: closed when the last Bundle, Kernel or Prepared
    that uses it goes (they refer to it, not to each other: no cycle)."""

    __slots__ = ("lib", "ptr")

    def __init__(self, lib, ptr):
        self.lib = lib
        self.ptr = ptr

    def __del__(self):
        ptr, self.ptr = self.ptr, None
        if ptr:
            try:
                self.lib.tessera_bundle_close(ptr)
            except Exception:  # noqa: BLE001 (interpreter shutdown: nothing left to free into)
                pass


class Kernel:
    """One kernel of a Bundle. Call it with one value per parameter, in order."""

    def __init__(self, handle, index, description):
        self._handle = handle
        self._index = index
        self.entry = description["entry"]
        self.target = description["target"]
        self.signature = description["signature"]
        self.params = description["params"]
        self._cache = _args.LaunchCache()
        # The latest call's cached form: fast(values, stream) launches and
        # gives True when the call has that form, else False.
        self._fast = None

    def __repr__(self):
        return f"<tessera.Kernel {self.signature.split(' grid ')[0]} {self.target}>"

    def _build(self, values):
        return _args.build(self.entry, self.params, values)

    def check(self, *values):
        """Checks `values` as a launch would (dtypes, shapes, alignment,
        preconditions) without the GPU; raises Error on a mismatch."""
        args, _keep, _infos, _device = self._build(values)
        lib = _bridge.library()
        _bridge.check(lib, lib.tessera_check(self._handle.ptr, self._index, args, len(args)))

    def __call__(self, *values, stream=None):
        """Launches on `stream` (asynchronous): see _raw_stream for the default.
        Calls on torch tensors of a form launched before (dtypes, shapes,
        devices, scalars) reuse that launch, prepared then. (Where the
        extension tessera._fast_launch loads, a Bundle's kernels take this
        path in C: see _kernel_type.)"""
        fast = self._fast
        if fast is not None and fast(values, stream):
            return
        self._call_uncached(*values, stream=stream)

    def _call_uncached(self, *values, stream=None):
        """A call that the latest form's launch did not take: another cached
        form's, or a call checked in full."""
        key = self._cache.key(values)
        if key is not None:
            entry = self._cache.entries.get(key)
            if entry is not None:
                prepared, self._fast = entry
                prepared._launch_values(values, stream)
                return
        self._call_checked(values, stream, key)

    def _call_checked(self, values, stream, key):
        """A call checked in full; kept as a prepared launch under `key`."""
        args, _keep, infos, device = self._build(values)
        lib = _bridge.library()
        if key is None:
            raw = _raw_stream(stream, infos, device)
            _bridge.check(lib, lib.tessera_launch(self._handle.ptr, self._index, args, len(args),
                                                  raw))
            return
        prepared = self._prepare_built(args, infos, device)
        fast = prepared._form_launch(key, self._cache.tensor_types)
        self._cache.store(key, (prepared, fast))
        self._fast = fast
        prepared._launch_values(values, stream)

    def prepare(self, *values):
        """A Prepared launch of these arguments: checked and packed once,
        launched many times, pointed at other tensors of the same shapes."""
        args, _keep, infos, device = self._build(values)
        return self._prepare_built(args, infos, device)

    def _prepare_built(self, args, infos, device):
        lib = _bridge.library()
        handle = ctypes.c_void_p()
        _bridge.check(lib, lib.tessera_prepare(self._handle.ptr, self._index, args, len(args),
                                               ctypes.byref(handle)))
        return Prepared(self, handle, infos, device)


class Prepared:
    """A launch checked and packed once (Kernel.prepare)."""

    def __init__(self, kernel, handle, infos, device):
        # The native bundle stays open while this launch lives; the Kernel is
        # not referred to (its cache holds Prepared launches: no cycle).
        self._bundle = kernel._handle
        self._entry = kernel.entry
        self._params = kernel.params
        self._handle = handle
        self._lib = _bridge.library()
        holding = _bridge.holding_library()
        self._launch = holding.tessera_prepared_launch
        self._launch_at = holding.tessera_prepared_launch_at
        self._tensors = [i for i, p in enumerate(self._params) if p["kind"] == "tensor"]
        self._slots = tuple(enumerate(self._tensors))
        self._infos = infos
        self._device = device
        self._addresses = (ctypes.c_uint64 * len(self._tensors))()
        # Held from writing the addresses to the launch that reads them: the
        # Kernel's cached launches are shared by every thread that calls it,
        # and the interpreter may switch threads between two Python lines.
        self._lock = threading.Lock()
        # torch's current stream of the tensors' device, the default stream.
        self._current_stream = None
        # Its cache key and the cache's tensor types, when Kernel's cache holds it.
        self._form, self._tensor_types = (), ()
        if infos and infos[0].is_torch and device is not None:
            self._current_stream = _current_stream_getter()

    def rebind(self, *tensors):
        """Points the launch at other tensors (one per tensor parameter, in
        order) of the same shapes and dtypes as those it was prepared with."""
        if len(tensors) != len(self._tensors):
            raise Error(f"{self._entry}: rebind takes {len(self._tensors)} tensors, got "
                        f"{len(tensors)}")
        for slot, (value, old) in enumerate(zip(tensors, self._infos)):
            name = self._params[self._tensors[slot]]["name"]
            info = _args.tensor_info(value, f"{self._entry}: argument '{name}'")
            if info.shape != old.shape or info.dtype != old.dtype or info.device != old.device:
                raise Error(f"{self._entry}: argument '{name}': shape {info.shape}, "
                            f"dtype number {info.dtype}, device {info.device} differ from the "
                            f"prepared {old.shape}, {old.dtype}, {old.device}")
            self._addresses[slot] = info.address
        _bridge.check(self._lib, self._lib.tessera_rebind(self._handle, self._addresses,
                                                          len(self._tensors)))

    def _stream(self, stream):
        getter = self._current_stream
        if stream is None and getter is not None:
            return getter(self._device)
        return _raw_stream(stream, self._infos, self._device)

    def __call__(self, stream=None):
        code = self._launch(self._handle, self._stream(stream))
        if code:
            _bridge.check(self._lib, code)

    def _form_launch(self, form, tensor_types):
        """This launch as Kernel.__call__'s fast path for calls of `form` (its
        cache key, whose tensors are of `tensor_types`): a FormLaunch of
        tessera._fast_launch where it is built, else _launch_if_taken."""
        self._form, self._tensor_types = form, tensor_types
        module, _path = _bridge.fast_launch()
        if module is None or self._current_stream is None or not isinstance(self._device, int):
            return self._launch_if_taken
        return module.FormLaunch(self, _bridge.launch_at_address(), self._handle.value, form,
                                 tensor_types, self._current_stream, self._device, self._fail)

    def _fail(self, code):
        _bridge.check(self._lib, code)

    def _launch_if_taken(self, values, stream):
        """Launches on `values` if they have this cached launch's form (its
        cache key, compared without building one), reading each tensor's
        address as it goes; False, launching nothing, if not. Kernel.__call__'s
        fast path: one pass over the arguments and one C call."""
        form = self._form
        if len(values) != len(form):
            return False
        tensor_types, addresses, i = self._tensor_types, self._addresses, 0
        with self._lock:
            for value, part in zip(values, form):
                if len(part) == 2:  # A scalar: (type, value).
                    if type(value) is not part[0] or value != part[1]:
                        return False
                elif (type(value) in tensor_types and value.dtype is part[0] and
                      value.shape == part[1] and value.get_device() == part[2] and
                      value.is_contiguous()):
                    addresses[i] = value.data_ptr()
                    i += 1
                else:
                    return False
            code = self._launch_at(self._handle, addresses, i, self._stream(stream))
        if code:
            _bridge.check(self._lib, code)
        return True

    def _launch_values(self, values, stream):
        """Launches on the tensors of `values` (a call of the prepared form,
        which Kernel's cache has matched): their addresses and one C call."""
        addresses, raw = self._addresses, self._stream(stream)
        with self._lock:
            for i, slot in self._slots:
                addresses[i] = values[slot].data_ptr()
            code = self._launch_at(self._handle, addresses, len(addresses), raw)
        if code:
            _bridge.check(self._lib, code)

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            try:
                self._lib.tessera_prepared_free(handle)
            except Exception:  # noqa: BLE001 (interpreter shutdown)
                pass


_kernel_types = {}  # tessera._fast_launch module -> its Kernel class
_kernel_types_lock = threading.Lock()


def _kernel_type():
    """The class of a Bundle's kernels: Kernel, over tessera._fast_launch's
    KernelCall where that extension loads. KernelCall's call launches a
    cached form through the kernel's `_fast` with no Python frame between the
    caller and C, and hands other calls to Kernel._call_uncached."""
    module, _path = _bridge.fast_launch()
    if module is None:
        return Kernel
    with _kernel_types_lock:
        kind = _kernel_types.get(module)
        if kind is None:
            kind = type("Kernel", (Kernel, module.KernelCall), {
                "__call__": module.KernelCall.__call__, "__doc__": Kernel.__doc__,
                "__module__": __name__, "__qualname__": "Kernel"})
            _kernel_types[module] = kind
        return kind


class Bundle:
    """The kernels of one kernel file. Index it by entry name."""

    def __init__(self, path):
        lib = _bridge.library()
        handle = ctypes.c_void_p()
        _bridge.check(lib, lib.tessera_bundle_open(str(path).encode(), ctypes.byref(handle)))
        self._handle = _Handle(lib, handle.value)
        self.path = str(path)
        described = json.loads(lib.tessera_bundle_describe(handle).decode())
        # A file may hold one entry built for several targets: those are
        # "entry@target"; a unique entry is also its plain name.
        kernel_type = _kernel_type()
        kernels = [kernel_type(self._handle, i, d) for i, d in enumerate(described)]
        counts = {}
        for k in kernels:
            counts[k.entry] = counts.get(k.entry, 0) + 1
        self._kernels = {}
        for k in kernels:
            self._kernels[k.entry if counts[k.entry] == 1 else f"{k.entry}@{k.target}"] = k

    def names(self):
        """The kernels' entry names, in file order."""
        return list(self._kernels)

    def __contains__(self, name):
        return name in self._kernels

    def __getitem__(self, name):
        kernel = self._kernels.get(name)
        if kernel is None:
            raise Error(f"{self.path} has no kernel '{name}' (it has: {', '.join(self._kernels)})",
                        "NOT_FOUND")
        return kernel

    def __iter__(self):
        return iter(self._kernels.values())

    def __len__(self):
        return len(self._kernels)

    def __repr__(self):
        return f"<tessera.Bundle {self.path}: {len(self)} kernels>"


def load(path):
    """Reads and validates a kernel file (a bundle or one kernel): a Bundle."""
    return Bundle(path)
