"""The Python package without a GPU: kernel files, argument checks with the
runtime's own errors, tessera.compile and its cache, and (where torch is
installed) the ops' fake implementations. Runs in CI (python/tests/run.sh)."""

import ctypes
import os
import tempfile
import threading
import unittest

import tessera
import tessera._args
import tessera.compiler

HERE = os.path.dirname(os.path.abspath(__file__))
AXPY = open(os.path.join(HERE, "testdata", "axpy.mlir")).read()
# The ops bundles: where Bazel's runner puts them, else beside the package.
OPS_DIR = os.environ.get("TESSERA_OPS_DIR") or os.path.join(os.path.dirname(tessera.__file__),
                                                            "ops")
OPS_SM90 = os.path.join(OPS_DIR, "sm_90a.pb")

try:
    import torch
except ImportError:  # CI installs no torch: those cases say so and skip.
    torch = None


class Device:
    """A stand-in for a device array: only __cuda_array_interface__."""

    def __init__(self, shape, typestr="<f2", address=1 << 20, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (address, False), "strides": strides,
                                         "version": 3}


class Host:
    __array_interface__ = {"shape": (4,), "typestr": "<f4"}


class BundleTest(unittest.TestCase):
    def setUp(self):
        self.bundle = tessera.load(OPS_SM90)

    def test_describes_its_kernels(self):
        self.assertIn("gemm_f16", self.bundle.names())
        gemm = self.bundle["gemm_f16"]
        self.assertEqual(gemm.target, "sm_90a")
        self.assertEqual([p["name"] for p in gemm.params], ["A", "B", "C"])
        self.assertEqual(gemm.params[0]["shape"], [-1, -1])
        self.assertEqual(gemm.params[0]["dtype"], "f16")
        attention = self.bundle["flash_attention_bf16_d128_causal"]
        self.assertEqual(attention.params[5], {"name": "scale", "kind": "scalar", "dtype": "f32",
                                               "dtype_number": 3, "shape": [], "alignment": 0})

    def test_unknown_kernel_lists_the_entries(self):
        with self.assertRaises(tessera.Error) as caught:
            self.bundle["gemm_f32"]
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        self.assertIn("gemm_f16", str(caught.exception))

    def test_missing_and_damaged_files(self):
        with self.assertRaises(tessera.Error) as caught:
            tessera.load("/nonexistent/kernels.pb")
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        with tempfile.NamedTemporaryFile(suffix=".pb") as f:
            data = open(OPS_SM90, "rb").read()
            f.write(data[:40] + bytes([data[40] ^ 1]) + data[41:])
            f.flush()
            with self.assertRaises(tessera.Error) as caught:
                tessera.load(f.name)
            self.assertEqual(caught.exception.code, "DATA_LOSS")


class ArgumentTest(unittest.TestCase):
    """What a launch refuses, before the GPU: Kernel.check."""

    def setUp(self):
        self.gemm = tessera.load(OPS_SM90)["gemm_f16"]

    def refused(self, *args):
        with self.assertRaises(tessera.Error) as caught:
            self.gemm.check(*args)
        return str(caught.exception)

    def test_good_arguments_pass(self):
        self.gemm.check(Device((100, 64)), Device((64, 72)), Device((100, 72)))

    def test_shapes_dtypes_and_alignment_are_the_runtimes_errors(self):
        self.assertIn("dimension K: A.shape[1] has 64 but B.shape[0] has 65",
                      self.refused(Device((100, 64)), Device((65, 72)), Device((100, 72))))
        self.assertIn("expects element type f16, got f32",
                      self.refused(Device((100, 64), "<f4"), Device((64, 72)), Device((100, 72))))
        self.assertIn("not aligned to 16 bytes",
                      self.refused(Device((100, 64), address=(1 << 20) + 2), Device((64, 72)),
                                   Device((100, 72))))
        self.assertIn("rank", self.refused(Device((100,)), Device((64, 72)), Device((100, 72))))

    def test_python_side_refusals_name_the_parameter(self):
        self.assertIn("takes 3 arguments (A, B, C), got 1", self.refused(Device((100, 64))))
        self.assertIn("argument 'A': a host array",
                      self.refused(Host(), Device((64, 72)), Device((100, 72))))
        self.assertIn("argument 'B': not contiguous",
                      self.refused(Device((100, 64)), Device((64, 72), strides=(2, 128)),
                                   Device((100, 72))))
        self.assertIn("argument 'A': expects a tensor",
                      self.refused(1.5, Device((64, 72)), Device((100, 72))))
        self.assertIn("element type '<c8'",
                      self.refused(Device((100, 64), "<c8"), Device((64, 72)), Device((100, 72))))

    def test_strides_of_unit_dimensions_do_not_matter(self):
        self.gemm.check(Device((1, 64), strides=(0, 2)), Device((64, 72)), Device((1, 72)))

    def test_integer_scalars_out_of_range_are_refused(self):
        for value in (2**63, -(2**63) - 1):
            with self.assertRaises(tessera.Error) as caught:
                tessera._args.scalar_arg(value, {"dtype": "i64", "dtype_number": 6}, "k: 'n'")
            self.assertEqual(caught.exception.code, "OUT_OF_RANGE")
        with self.assertRaisesRegex(tessera.Error, r"300 is out of the range of i8 \[-128, 127\]"):
            tessera._args.scalar_arg(300, {"dtype": "i8", "dtype_number": 7}, "k: 'n'")
        self.assertEqual(
            tessera._args.scalar_arg(2**31 - 1, {"dtype": "i32", "dtype_number": 5}, "").int_value,
            2**31 - 1)

    def test_size_arguments_size_the_grid_and_are_refused_when_negative(self):
        varlen = tessera.load(OPS_SM90)["flash_attention_varlen_f16_d64"]
        args = [Device((500, 8, 64)), Device((420, 2, 64)), Device((420, 2, 64)),
                Device((500, 8, 64)), Device((8, 500), "<f4"), Device((4,), "<i4"),
                Device((4,), "<i4")]
        varlen.check(*args, 300, 0.125)
        with self.assertRaisesRegex(tessera.Error,
                                    "size argument max_seqlen_q is -1; the grid needs it at "
                                    "least 0"):
            varlen.check(*args, -1, 0.125)
        with self.assertRaisesRegex(tessera.Error, "dimension B1: CuQ has 4 but CuK has 3"):
            varlen.check(*args[:6], Device((3,), "<i4"), 300, 0.125)

    def test_launch_without_a_gpu_is_an_error_not_a_crash(self):
        with self.assertRaises(tessera.Error) as caught:
            self.gemm(Device((100, 64)), Device((64, 72)), Device((100, 72)))
        self.assertTrue(caught.exception.code in ("FAILED_PRECONDITION", "UNAVAILABLE",
                                                  "INVALID_ARGUMENT"), caught.exception.code)

    def test_bad_stream_is_refused(self):
        with self.assertRaises(tessera.Error) as caught:
            self.gemm(Device((100, 64)), Device((64, 72)), Device((100, 72)), stream="s")
        self.assertIn("stream", str(caught.exception))


class FakeTorchTensor:
    """What LaunchCache and tensor_info read of a torch tensor (its module's
    name starts with "torch", as theirs does)."""

    __module__ = "torch_stand_in"

    class Device:
        def __init__(self, index):
            self.index = index

        def __repr__(self):
            return "cpu" if self.index is None else f"cuda:{self.index}"

    def __init__(self, shape, address, cuda=True, contiguous=True, dtype="torch.float16",
                 device=0):
        self.shape, self._address, self.is_cuda, self._contiguous = shape, address, cuda, contiguous
        self.dtype = dtype
        self.device = self.Device(device if cuda else None)

    def get_device(self):
        return -1 if self.device.index is None else self.device.index

    def is_contiguous(self):
        return self._contiguous

    def stride(self):
        return (1,) * len(self.shape)

    def data_ptr(self):
        return self._address


class FakeSubclass(FakeTorchTensor):
    pass


LAUNCH_AT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                             ctypes.c_int, ctypes.c_uint64)


class LaunchCacheTest(unittest.TestCase):
    """Repeated calls of one form share a key whatever their addresses;
    anything that differs in what a launch checks gets another; refused
    calls are never kept."""

    def setUp(self):
        self.cache = tessera._args.LaunchCache()
        self.cache.tensor_types = (FakeTorchTensor, FakeTorchTensor)

    def key(self, x, y, n=3):
        return self.cache.key([x, y, n])

    def test_addresses_do_not_change_the_key(self):
        self.assertEqual(
            self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512)),
            self.key(FakeTorchTensor((4, 8), 1024), FakeTorchTensor((8,), 2048)))

    def test_what_a_launch_checks_changes_the_key(self):
        base = self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512))
        others = [
            self.key(FakeTorchTensor((4, 9), 256), FakeTorchTensor((8,), 512)),
            self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512), 4),
            self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512), 3.0),
            self.key(FakeTorchTensor((4, 8), 256, dtype="torch.bfloat16"),
                     FakeTorchTensor((8,), 512)),
            self.key(FakeTorchTensor((4, 8), 256, contiguous=False), FakeTorchTensor((8,), 512)),
            self.key(FakeTorchTensor((4, 8), 256, device=1), FakeTorchTensor((8,), 512)),
            self.key(FakeTorchTensor((4, 8), 256, cuda=False), FakeTorchTensor((8,), 512)),
        ]
        for other in others:
            self.assertIsNotNone(other)
            self.assertNotEqual(base, other)
        self.assertEqual(len(set(others)), len(others))

    def test_other_types_take_the_checked_path(self):
        self.assertIsNone(self.key(FakeSubclass((4, 8), 256), FakeTorchTensor((8,), 512)))
        self.assertIsNone(self.key(Device((4, 8)), FakeTorchTensor((8,), 512)))
        self.assertIsNone(self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512),
                                   True))

    # Calls of another form than (FakeTorchTensor (4, 8), FakeTorchTensor (8,), 3).
    OTHER_FORMS = [
        [FakeTorchTensor((4, 9), 64), FakeTorchTensor((8,), 96), 3],
        [FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96), 4],
        [FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96), 3.0],
        [FakeTorchTensor((4, 8), 64, contiguous=False), FakeTorchTensor((8,), 96), 3],
        [FakeTorchTensor((4, 8), 64, device=1), FakeTorchTensor((8,), 96), 3],
        [FakeTorchTensor((4, 8), 64, dtype="torch.bfloat16"), FakeTorchTensor((8,), 96), 3],
        [FakeSubclass((4, 8), 64), FakeTorchTensor((8,), 96), 3],
        [FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96)],
        [FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96), 3, 3],
        [FakeTorchTensor((4, 8), 64), 3, FakeTorchTensor((8,), 96)],
    ]

    def form(self):
        return self.key(FakeTorchTensor((4, 8), 256), FakeTorchTensor((8,), 512))

    def python_launch(self, launched):
        """Kernel.__call__'s fast path in Python, launching into `launched`."""
        launch = tessera.Prepared.__new__(tessera.Prepared)
        launch._handle = None
        launch._tensor_types = self.cache.tensor_types
        launch._form = self.form()
        launch._addresses = (ctypes.c_uint64 * 2)()
        launch._lock = threading.Lock()
        # The addresses are written and launched under the launch's lock.
        launch._launch_at = lambda handle, addresses, count, stream: launched.append(
            (list(addresses)[:count], stream, launch._lock.locked())) or 0
        launch._current_stream, launch._device, launch._infos = (lambda device: 7 + device), 0, ()
        return lambda values, stream: launch._launch_if_taken(values, stream)

    def c_launch(self, launched, code=0, fail=None):
        """The same path in C (tessera._fast_launch), over a C function that
        records its arguments and returns `code`."""
        module, path = tessera._bridge.fast_launch()
        self.assertIsNotNone(module, path)

        def record(handle, addresses, count, stream):
            launched.append(([addresses[i] for i in range(count)], stream, handle == 1234))
            return code

        self.callback = LAUNCH_AT(record)  # Kept alive while the launch is used.
        address = ctypes.cast(self.callback, ctypes.c_void_p).value
        return module.FormLaunch(self, address, 1234, self.form(), self.cache.tensor_types,
                                 lambda device: 7 + device, 0, fail or self.fail_launch)

    def fail_launch(self, code):
        raise tessera.Error(f"status {code}")

    def test_the_extension_takes_repeated_calls(self):
        self.assertTrue(tessera.fast_launch_path().startswith("C ("),
                        tessera.fast_launch_path())

    def test_the_latest_launch_takes_its_own_form_only(self):
        for name in ("python", "c"):
            launched = []
            launch = self.python_launch(launched) if name == "python" else self.c_launch(launched)
            with self.subTest(path=name):
                self.assertTrue(launch((FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96),
                                        3), None))
                self.assertEqual(launched, [([64, 96], 7, True)])
                for values in self.OTHER_FORMS:
                    self.assertFalse(launch(tuple(values), None))
                self.assertEqual(len(launched), 1)
                # A stream given as an int goes to the launch as it is.
                self.assertTrue(launch((FakeTorchTensor((4, 8), 1 << 40),
                                        FakeTorchTensor((8,), 32), 3), 99))
                self.assertEqual(launched[1], ([1 << 40, 32], 99, True))

    def test_the_c_path_reports_failures_and_errors(self):
        launched = []
        launch = self.c_launch(launched, code=3)
        values = (FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96), 3)
        with self.assertRaisesRegex(tessera.Error, "status 3"):
            launch(values, None)
        self.assertEqual(len(launched), 1)
        # A fail that does not raise still makes the failed launch an error.
        with self.assertRaisesRegex(RuntimeError, "failed with status 3"):
            self.c_launch(launched, code=3, fail=lambda code: None)(values, None)
        # Streams of other types are left to the Python path.
        self.assertFalse(self.c_launch(launched)(values, True))
        self.assertFalse(self.c_launch(launched)(values, object()))
        # An accessor's exception propagates, and nothing launches.
        broken = FakeTorchTensor((8,), 96)
        broken.data_ptr = lambda: 1 // 0
        with self.assertRaises(ZeroDivisionError):
            self.c_launch(launched)((values[0], broken, 3), None)
        self.assertEqual(len(launched), 2)
        module, _ = tessera._bridge.fast_launch()
        for bad in ((self, 0, 1234, self.form(), (), len, 0, len),
                    (self, 1, 1234, ((1, 2, 3),), (), len, 0, len),
                    (self, 1, 1234, self.form(), (), 7, 0, len)):
            with self.assertRaises(ValueError):
                module.FormLaunch(*bad)
        with self.assertRaises(TypeError):
            module.FormLaunch(self, 1, 1234, [], (), len, 0, len)
        with self.assertRaises(TypeError):
            launch([values], None)
        with self.assertRaisesRegex(TypeError, "initialized once"):
            launch.__init__(self, 1, 1234, self.form(), (), len, 0, len)
        # An uninitialized one refuses calls instead of reading null fields.
        with self.assertRaises(ValueError):
            module.FormLaunch.__new__(module.FormLaunch)(values, None)

    def kernels(self):
        """A Bundle's kernel (over KernelCall, the call in C) and a plain
        Kernel (the call in Python), each with its uncached calls recorded."""
        module, _ = tessera._bridge.fast_launch()
        c_kernel = tessera.load(OPS_SM90)["gemm_f16"]
        self.assertIsInstance(c_kernel, tessera.Kernel)
        self.assertIsInstance(c_kernel, module.KernelCall)
        python_kernel = tessera.Kernel.__new__(tessera.Kernel)
        python_kernel._fast = None
        self.assertNotIsInstance(python_kernel, module.KernelCall)
        for kernel in (c_kernel, python_kernel):
            kernel.uncached = []
            kernel._call_uncached = lambda *v, _k=kernel, **kw: _k.uncached.append((v, kw))
        return (("c", c_kernel), ("python", python_kernel))

    def test_kernel_calls_take_the_latest_form_or_the_uncached_path(self):
        x, y = FakeTorchTensor((4, 8), 64), FakeTorchTensor((8,), 96)
        for name, kernel in self.kernels():
            with self.subTest(path=name):
                launched = []
                self.assertIsNone(kernel(x, y, 3))  # No cached form yet.
                kernel._fast = self.c_launch(launched)
                self.assertIsNone(kernel(x, y, 3))
                self.assertIsNone(kernel(x, y, 3, stream=99))
                self.assertEqual(launched, [([64, 96], 7, True), ([64, 96], 99, True)])
                for values in self.OTHER_FORMS:
                    kernel(*values)
                kernel(x, y, 3, stream=True)
                self.assertEqual(len(launched), 2)
                self.assertEqual(len(kernel.uncached), 1 + len(self.OTHER_FORMS) + 1)
                self.assertEqual(kernel.uncached[0][0], (x, y, 3))
                self.assertIsNone(kernel.uncached[0][1].get("stream"))
                self.assertEqual(kernel.uncached[-1], ((x, y, 3), {"stream": True}))
                # Any callable may be the cached form's launch.
                kernel._fast = lambda values, stream: launched.append((values, stream)) or True
                kernel(x, stream=5)
                self.assertEqual(launched[-1], ((x,), 5))
                kernel._fast = lambda values, stream: 1 // 0
                with self.assertRaises(ZeroDivisionError):
                    kernel(x)
                # The launch is held through the call: an accessor that
                # drops the kernel's last reference to it breaks nothing.
                kernel._fast = self.c_launch(launched)
                dropping = FakeTorchTensor((8,), 96)
                dropping.data_ptr = lambda: setattr(kernel, "_fast", None) or 128
                kernel(x, dropping, 3)
                self.assertEqual(launched[-1], ([64, 128], 7, True))
                self.assertIsNone(kernel._fast)

    def test_a_bundles_kernel_refuses_unknown_keywords(self):
        gemm = tessera.load(OPS_SM90)["gemm_f16"]
        for kwargs in ({"other": 1}, {"stream": None, "other": 1}):
            with self.assertRaises(TypeError):
                gemm(Device((100, 64)), Device((64, 72)), Device((100, 72)), **kwargs)
        self.assertIs(type(gemm).__call__, tessera._bridge.fast_launch()[0].KernelCall.__call__)

    def test_refused_calls_are_not_kept(self):
        gemm = tessera.load(OPS_SM90)["gemm_f16"]
        gemm._cache.tensor_types = (FakeTorchTensor, FakeTorchTensor)
        calls = [
            ("argument 'A': a tensor on cpu",
             [FakeTorchTensor((100, 64), 1 << 20, cuda=False), FakeTorchTensor((64, 72), 1 << 20),
              FakeTorchTensor((100, 72), 1 << 20)]),
            ("argument 'B': not contiguous",
             [FakeTorchTensor((100, 64), 1 << 20), FakeTorchTensor((64, 72), 1 << 20,
                                                                   contiguous=False),
              FakeTorchTensor((100, 72), 1 << 20)]),
            # Well-formed: refused here only because this machine has no GPU.
            ("", [FakeTorchTensor((100, 64), 1 << 20), FakeTorchTensor((64, 72), 1 << 20),
                  FakeTorchTensor((100, 72), 1 << 20)]),
        ]
        for _ in range(2):
            for message, values in calls:
                with self.assertRaisesRegex(tessera.Error, message):
                    gemm(*values)
                self.assertEqual(gemm._cache.entries, {})
                self.assertIsNone(gemm._fast)

    def test_launches_keep_the_gil(self):
        holding = tessera._bridge.holding_library()
        self.assertIsInstance(holding, ctypes.PyDLL)
        self.assertEqual(holding.tessera_prepared_launch_at.restype, ctypes.c_int)

    def test_prepared_calls_refuse_null_handles(self):
        lib, holding = tessera._bridge.library(), tessera._bridge.holding_library()
        addresses = (ctypes.c_uint64 * 1)(256)
        for code in (holding.tessera_prepared_launch_at(None, addresses, 1, 0),
                     holding.tessera_prepared_launch_at(None, None, 1, 0),
                     holding.tessera_prepared_launch(None, 0),
                     lib.tessera_rebind(None, addresses, 1)):
            self.assertEqual(code, 3)
            self.assertIn("null prepared launch", lib.tessera_last_error().decode())


class CompileTest(unittest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp()

    def test_compiles_and_checks_scalars(self):
        axpy = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)["axpy"]
        self.assertEqual(axpy.target, "sm_80")
        axpy.check(Device((1000,), "<f4"), Device((1000,), "<f4"), 2.0)
        axpy.check(Device((1000,), "<f4"), Device((1000,), "<f4"), 2)
        with self.assertRaises(tessera.Error) as caught:
            axpy.check(Device((1000,), "<f4"), Device((1000,), "<f4"), True)
        self.assertIn("argument 'alpha': a scalar f32 parameter takes a number, got bool",
                      str(caught.exception))
        axpy.check(Device((1000,), "<f4"), Device((1000,), "<f4"), 10**30)  # A float, not wrapped.
        with self.assertRaises(tessera.Error) as caught:
            axpy.check(Device((1000,), "<f4"), Device((1001,), "<f4"), 2.0)
        self.assertIn("dimension N: X has 1000 but Y has 1001", str(caught.exception))

    def test_cache_is_keyed_by_source_target_and_options(self):
        before = dict(tessera.compiler.stats)
        first = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        again = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        self.assertEqual(first.path, again.path)
        other = tessera.compile(AXPY, target="sm_70", cache_directory=self.cache)
        exact = tessera.compile(AXPY, target="sm_80", fast_math=False, cache_directory=self.cache)
        edited = tessera.compile(AXPY.replace("arith.addf %m, %v", "arith.subf %m, %v"),
                                 target="sm_80", cache_directory=self.cache)
        self.assertEqual(len({first.path, other.path, exact.path, edited.path}), 4)
        self.assertEqual(other["axpy"].target, "sm_70")
        self.assertEqual(tessera.compiler.stats["compiles"] - before["compiles"], 4)
        self.assertEqual(tessera.compiler.stats["hits"] - before["hits"], 1)

    def test_compiled_bundle_is_returned_again_without_loading(self):
        first = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        real_load, loads = tessera.load, []

        def counting_load(path):
            loads.append(path)
            return real_load(path)

        tessera.load = counting_load
        try:
            again = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        finally:
            tessera.load = real_load
        self.assertIs(again, first)
        self.assertEqual(loads, [])

    def test_damaged_cache_entry_is_compiled_again(self):
        first = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        with open(first.path, "r+b") as f:
            f.seek(50)
            f.write(b"\xff\xff")
        again = tessera.compile(AXPY, target="sm_80", cache_directory=self.cache)
        self.assertEqual(again["axpy"].entry, "axpy")

    def test_bad_ir_gives_located_diagnostics(self):
        with self.assertRaises(tessera.CompileError) as caught:
            tessera.compile(AXPY.replace("arith.mulf %alpha, %u", "arith.mulf %alpha, %nope"),
                            target="sm_80", cache_directory=self.cache)
        self.assertRegex(str(caught.exception), r"<stdin>:15:\d+: error: use of undeclared SSA value")
        with self.assertRaises(tessera.CompileError) as caught:
            tessera.compile(AXPY, target="sm_42", cache_directory=self.cache)
        self.assertIn("sm_42", caught.exception.diagnostics)
        with self.assertRaises(tessera.Error):
            tessera.compile(42, target="sm_80", cache_directory=self.cache)


class TargetTest(unittest.TestCase):
    def test_capabilities_map_to_targets(self):
        self.assertEqual(tessera.target_for_capability(90), "sm_90a")
        self.assertEqual(tessera.target_for_capability(89), "sm_80")
        self.assertEqual(tessera.target_for_capability(100), "sm_80")
        self.assertEqual(tessera.target_for_capability(75), "sm_70")
        self.assertEqual(tessera.target_for_capability(61), "sm_60")
        with self.assertRaises(tessera.Error):
            tessera.target_for_capability(52)


@unittest.skipIf(torch is None, "torch is not installed here: the ops' fake implementations "
                 "are tested where it is (the GPU machine runs this file too)")
class FakeTest(unittest.TestCase):
    def test_fake_implementations_give_shapes_and_check_inputs(self):
        import tessera.ops  # noqa: F401 (registers the ops)
        a = torch.empty(100, 64, dtype=torch.float16, device="meta")
        b = torch.empty(64, 72, dtype=torch.float16, device="meta")
        self.assertEqual(torch.ops.tessera.gemm(a, b).shape, (100, 72))
        with self.assertRaisesRegex(RuntimeError, "a's columns must equal b's rows"):
            torch.ops.tessera.gemm(a, a)
        q = torch.empty(2, 300, 8, 128, dtype=torch.bfloat16, device="meta")
        k = torch.empty(2, 333, 2, 128, dtype=torch.bfloat16, device="meta")
        o, lse = torch.ops.tessera.flash_attention(q, k, k)
        self.assertEqual((o.shape, lse.shape, lse.dtype), (q.shape, (2, 8, 300), torch.float32))
        with self.assertRaisesRegex(RuntimeError, "head dim 96 has no kernel"):
            q96 = torch.empty(1, 4, 2, 96, dtype=torch.float16, device="meta")
            torch.ops.tessera.flash_attention(q96, q96, q96)

    def test_varlen_fake_gives_packed_shapes_and_checks_inputs(self):
        import tessera.ops  # noqa: F401 (registers the ops)
        q = torch.empty(500, 8, 64, dtype=torch.float16, device="meta")
        k = torch.empty(420, 2, 64, dtype=torch.float16, device="meta")
        cu = torch.empty(4, dtype=torch.int32, device="meta")
        o, lse = torch.ops.tessera.flash_attention_varlen(q, k, k, cu, cu, 300, 200)
        self.assertEqual((o.shape, lse.shape, lse.dtype), (q.shape, (8, 500), torch.float32))
        with self.assertRaisesRegex(RuntimeError, "cumulative lengths must be int32"):
            torch.ops.tessera.flash_attention_varlen(q, k, k, cu.long(), cu.long(), 1, 1)
        with self.assertRaisesRegex(RuntimeError, "batch \\+ 1 entries each"):
            torch.ops.tessera.flash_attention_varlen(q, k, k, cu, cu[:3], 1, 1)
        with self.assertRaisesRegex(RuntimeError, "expects q \\[Tq, H, D\\]"):
            torch.ops.tessera.flash_attention_varlen(q[None], k, k, cu, cu, 1, 1)
        with self.assertRaisesRegex(RuntimeError, "8 query heads do not share 3 key heads"):
            k3 = torch.empty(420, 3, 64, dtype=torch.float16, device="meta")
            torch.ops.tessera.flash_attention_varlen(q, k3, k3, cu, cu, 1, 1)

    def test_cpu_tensors_are_refused(self):
        a = torch.randn(16, 16).half()
        with self.assertRaisesRegex(tessera.Error, "argument 'A': a tensor on cpu"):
            tessera.load(OPS_SM90)["gemm_f16"](a, a, a)


if __name__ == "__main__":
    unittest.main(verbosity=2)
