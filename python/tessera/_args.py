"""Turns Python launch arguments into the bridge's Arg records.

A tensor parameter takes a CUDA torch.Tensor or any object with
`__cuda_array_interface__` (CuPy, Numba, ...): contiguous, row-major, in
device memory. A scalar parameter takes a Python number. What the runtime
checks itself (dtypes, shapes, alignment, preconditions) it reports with its
own messages; what only Python can see (a CPU tensor, strides, a wrong kind
of value) is reported here, naming the kernel and the parameter.
"""

import ctypes
import numbers

from . import _bridge
from ._bridge import Error

# tessera.runtime.DType numbers (runtime/kernel.proto).
DTYPE_NUMBERS = {
    "f16": 1, "bf16": 2, "f32": 3, "f64": 4, "i32": 5, "i64": 6, "i8": 7,
    "f8e4m3": 8, "f8e5m2": 9, "u8": 10,
}
_TORCH_DTYPES = {
    "torch.float16": 1, "torch.bfloat16": 2, "torch.float32": 3, "torch.float64": 4,
    "torch.int32": 5, "torch.int64": 6, "torch.int8": 7, "torch.float8_e4m3fn": 8,
    "torch.float8_e5m2": 9, "torch.uint8": 10,
}
# __cuda_array_interface__ type strings (numpy's); bf16 and FP8 have none.
_TYPESTRS = {"<f2": 1, "<f4": 3, "<f8": 4, "<i4": 5, "<i8": 6, "|i1": 7, "|u1": 10}
_ITEMSIZES = {1: 2, 2: 2, 3: 4, 4: 8, 5: 4, 6: 8, 7: 1, 8: 1, 9: 1, 10: 1}
_FLOAT_DTYPES = {1, 2, 3, 4, 8, 9}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INT_RANGES = {5: (-(1 << 31), (1 << 31) - 1), 7: (-128, 127), 10: (0, 255)}


class TensorInfo:
    """What a launch needs of one tensor."""

    __slots__ = ("dtype", "shape", "address", "device", "is_torch")

    def __init__(self, dtype, shape, address, device, is_torch):
        self.dtype = dtype
        self.shape = shape
        self.address = address
        self.device = device
        self.is_torch = is_torch


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


def _is_torch_tensor(value):
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def tensor_info(value, where):
    """TensorInfo of `value` for the parameter described by `where`."""
    if _is_torch_tensor(value):
        if not value.is_cuda:
            raise Error(f"{where}: a tensor on {value.device}; Tessera kernels read GPU memory "
                        "(move it with .cuda())")
        dtype = _TORCH_DTYPES.get(str(value.dtype))
        if dtype is None:
            raise Error(f"{where}: dtype {value.dtype} has no Tessera equivalent")
        if not value.is_contiguous():
            raise Error(f"{where}: not contiguous (shape {tuple(value.shape)}, strides "
                        f"{tuple(value.stride())}); Tessera kernels read row-major tensors "
                        "(pass .contiguous())")
        return TensorInfo(dtype, tuple(value.shape), value.data_ptr(), value.device.index, True)
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        if hasattr(value, "__array_interface__") or hasattr(value, "__array__"):
            raise Error(f"{where}: a host array ({type(value).__name__}); Tessera kernels read "
                        "GPU memory")
        raise Error(f"{where}: expects a tensor (a CUDA torch.Tensor or an object with "
                    f"__cuda_array_interface__), got {type(value).__name__}")
    try:
        shape = tuple(int(d) for d in interface["shape"])
        typestr = interface["typestr"]
        address = int(interface["data"][0])
    except (KeyError, TypeError, ValueError, IndexError):
        raise Error(f"{where}: a malformed __cuda_array_interface__") from None
    dtype = _TYPESTRS.get(typestr)
    if dtype is None:
        raise Error(f"{where}: element type {typestr!r} has no Tessera equivalent")
    strides = interface.get("strides")
    # A stride of a dimension of extent 1 is never used: any value is contiguous.
    if strides is not None and any(
            d != 1 and s != c
            for d, s, c in zip(shape, strides, _contiguous_strides(shape, _ITEMSIZES[dtype]))):
        raise Error(f"{where}: not contiguous (shape {shape}, strides {tuple(strides)} bytes); "
                    "Tessera kernels read row-major tensors")
    return TensorInfo(dtype, shape, address, None, False)


def scalar_arg(value, param, where):
    """An Arg for scalar parameter `param` (a dict from the description)."""
    dtype = param["dtype_number"]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Error(f"{where}: a scalar {param['dtype']} parameter takes a number, got "
                    f"{type(value).__name__}")
    arg = _bridge.Arg(kind=_bridge.ARG_SCALAR, dtype=dtype)
    if isinstance(value, numbers.Integral) and not (dtype in _FLOAT_DTYPES and
                                                    not _INT64_MIN <= int(value) <= _INT64_MAX):
        low, high = _INT_RANGES.get(dtype, (_INT64_MIN, _INT64_MAX))
        if not low <= int(value) <= high:
            raise Error(f"{where}: {value} is out of the range of {param['dtype']} "
                        f"[{low}, {high}]", "OUT_OF_RANGE")
        arg.int_value = int(value)
    elif dtype in _FLOAT_DTYPES:
        arg.is_float = 1
        arg.float_value = float(value)
    else:
        raise Error(f"{where}: an integer {param['dtype']} parameter takes an int, got {value!r}")
    return arg


def build(kernel_name, params, values):
    """The Arg array for `values`, the shape arrays it points into (kept
    alive by the caller), the TensorInfos and the device of the tensors."""
    if len(values) != len(params):
        names = ", ".join(p["name"] for p in params)
        raise Error(f"{kernel_name}: takes {len(params)} arguments ({names}), got {len(values)}")
    args = (_bridge.Arg * len(values))()
    keep, infos = [], []
    device = None
    for i, (value, param) in enumerate(zip(values, params)):
        where = f"{kernel_name}: argument '{param['name']}'"
        if param["kind"] == "scalar":
            args[i] = scalar_arg(value, param, where)
            continue
        info = tensor_info(value, where)
        if info.device is not None:
            if device is not None and info.device != device:
                raise Error(f"{where} is on cuda:{info.device}, an earlier one on cuda:{device}; "
                            "one launch runs on one device")
            device = info.device
        shape = (ctypes.c_int64 * len(info.shape))(*info.shape)
        keep.append(shape)
        infos.append(info)
        args[i] = _bridge.Arg(kind=_bridge.ARG_TENSOR, dtype=info.dtype, rank=len(info.shape),
                              shape=ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                              address=info.address)
    return args, keep, infos, device


class LaunchCache:
    """The prepared launches of a kernel's recent argument forms, for
    repeated calls on torch tensors. A call whose tensors have the dtypes,
    shapes, devices and contiguity of an earlier one (and whose scalars are
    equal) takes that call's prepared launch with the new addresses: one C
    call, no checks repeated. Anything else is checked in full first, and
    only a launch that passed is kept, so a cached form was checked before.

    Keys read each tensor's dtype, shape, device index and contiguity, the
    cheapest of torch's accessors; a tensor of another type (a subclass, a
    CuPy array) or a scalar of another type (bool, numpy) gives no key."""

    _LIMIT = 64

    def __init__(self):
        self.entries = {}
        # The exact types that take a key (torch.Tensor, torch.nn.Parameter),
        # known once torch is imported.
        self.tensor_types = None

    def key(self, values):
        """The cache key of `values`, or None."""
        tensor_types = self.tensor_types
        if tensor_types is None:
            torch = _torch_module()
            if torch is None:
                return None
            tensor_types = self.tensor_types = (torch.Tensor, torch.nn.Parameter)
        tensor, parameter = tensor_types
        parts = []
        for value in values:
            kind = type(value)
            if kind is tensor or kind is parameter:
                parts.append((value.dtype, value.shape, value.get_device(), value.is_contiguous()))
            elif kind is int or kind is float:
                parts.append((kind, value))
            else:
                return None
        return tuple(parts)

    def store(self, key, launch):
        if len(self.entries) >= self._LIMIT:
            self.entries.clear()
        self.entries[key] = launch


def _torch_module():
    import sys

    return sys.modules.get("torch")

