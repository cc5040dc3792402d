/*===- fast_launch.c - A cached launch's check and launch in C ----*- C -*-===//
 *
 * The CPython extension tessera._fast_launch: Kernel.__call__'s fast path, a
 * repeated call of an argument form launched before, without the Python
 * interpreter or ctypes between the tensors and the driver. One FormLaunch
 * holds a prepared launch and the form it was checked for (each tensor's
 * dtype, shape, device index and contiguity; each scalar's type and value, as
 * tessera._args.LaunchCache keys them). Called with the call's values and
 * stream, it compares them with the form in one pass, reading the tensors'
 * addresses as it goes, and launches through tessera_prepared_launch_at:
 * True. Any difference launches nothing: False, and the Python side takes the
 * checked path.
 *
 * KernelCall is the base of the Kernel class a Bundle makes where this module
 * loads: its call launches through the kernel's latest FormLaunch (its `_fast`)
 * without a Python frame, and hands any other call to `_call_uncached`.
 *
 * Built against the stable ABI (Py_LIMITED_API, Python 3.11 and later), so
 * one build serves every later interpreter. The bridge's launch function
 * comes as an address (ctypes gives it), so this module links no Tessera
 * library. The addresses live on this call's stack and the GIL is held from
 * the first comparison to the launch's return, so concurrent calls from
 * several threads cannot mix their addresses.
 *
 *===----------------------------------------------------------------------===*/

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <structmember.h>

/* tessera_prepared_launch_at (tessera_bridge.h). */
typedef int (*LaunchAtFunction)(void* prepared, const uint64_t* addresses, int num_addresses,
                                uint64_t stream);

enum { kStackAddresses = 32 };

typedef struct {
  PyObject ob_base; /* PyObject_HEAD */
  LaunchAtFunction launch_at;
  void* prepared_handle;
  PyObject* owner;         /* The Python Prepared: keeps the handle alive. */
  PyObject* form;          /* tuple: (dtype, shape, device, contiguous) or (type, value). */
  PyObject* tensor_types;  /* tuple of the exact types a tensor may have. */
  PyObject* stream_getter; /* device index -> raw CUstream (torch's current). */
  PyObject* device;        /* int: the device index the launch was prepared on. */
  PyObject* fail;          /* fail(code) raises tessera.Error for a failed launch. */
  Py_ssize_t num_tensors;
} FormLaunch;

static PyObject* kDtype;
static PyObject* kShape;
static PyObject* kGetDevice;
static PyObject* kIsContiguous;
static PyObject* kDataPtr;
static PyObject* kStream;
static PyObject* kCallUncached;
static PyObject* gFormLaunchType; /* FormLaunch, to recognize it in KernelCall. */

/* 1 when `value` is one of the exact types in `types`. */
static int IsOneOf(PyObject* value, PyObject* types) {
  Py_ssize_t count = PyTuple_Size(types);
  for (Py_ssize_t i = 0; i < count; ++i)
    if ((PyObject*)Py_TYPE(value) == PyTuple_GetItem(types, i)) return 1;
  return 0;
}

/* Reads the int `owned` (a new reference, released here; NULL when the call
 * that made it failed) as an unsigned 64-bit `*out`: 1, or -1 with an
 * exception set. */
static int TakeUnsigned64(PyObject* owned, uint64_t* out) {
  if (owned == NULL) return -1;
  *out = PyLong_AsUnsignedLongLong(owned);
  Py_DECREF(owned);
  return *out == (uint64_t)-1 && PyErr_Occurred() ? -1 : 1;
}

/* 1 when calling the method `name` of `value` with no arguments gives an
 * object equal to `expected`, 0 when not, -1 on an exception. */
static int MethodEquals(PyObject* value, PyObject* name, PyObject* expected) {
  PyObject* result = PyObject_CallMethodObjArgs(value, name, NULL);
  if (result == NULL) return -1;
  int equal = result == expected ? 1 : PyObject_RichCompareBool(result, expected, Py_EQ);
  Py_DECREF(result);
  return equal;
}

/* 1 when the tensor `value` matches the form part (dtype, shape, device,
 * contiguous) and writes its address, 0 when it does not, -1 on an exception. */
static int MatchTensor(PyObject* value, PyObject* part, uint64_t* address) {
  PyObject* dtype = PyObject_GetAttr(value, kDtype);
  if (dtype == NULL) return -1;
  int same = dtype == PyTuple_GetItem(part, 0);
  Py_DECREF(dtype);
  if (!same) return 0;
  PyObject* shape = PyObject_GetAttr(value, kShape);
  if (shape == NULL) return -1;
  int equal = PyObject_RichCompareBool(shape, PyTuple_GetItem(part, 1), Py_EQ);
  Py_DECREF(shape);
  if (equal != 1) return equal;
  if ((equal = MethodEquals(value, kGetDevice, PyTuple_GetItem(part, 2))) != 1) return equal;
  if ((equal = MethodEquals(value, kIsContiguous, Py_True)) != 1) return equal;
  return TakeUnsigned64(PyObject_CallMethodObjArgs(value, kDataPtr, NULL), address);
}

/* 1 when every value matches its form part (writing the tensors' addresses in
 * order), 0 when one does not, -1 on an exception. */
static int MatchForm(FormLaunch* self, PyObject* values, uint64_t* addresses) {
  Py_ssize_t count = PyTuple_Size(values), tensor = 0;
  if (count != PyTuple_Size(self->form)) return 0;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* value = PyTuple_GetItem(values, i);
    PyObject* part = PyTuple_GetItem(self->form, i);
    if (PyTuple_Size(part) == 2) { /* A scalar: (type, value). */
      if ((PyObject*)Py_TYPE(value) != PyTuple_GetItem(part, 0)) return 0;
      int equal = PyObject_RichCompareBool(value, PyTuple_GetItem(part, 1), Py_EQ);
      if (equal != 1) return equal;
      continue;
    }
    if (tensor == self->num_tensors || !IsOneOf(value, self->tensor_types)) return 0;
    int match = MatchTensor(value, part, &addresses[tensor]);
    if (match != 1) return match;
    ++tensor;
  }
  return tensor == self->num_tensors;
}

/* The raw stream of a call into *raw: torch's current stream of the launch's
 * device when `stream` is None, an int as given (1); 0 for any other object
 * (the Python side reads those); -1 with an exception set on failure. */
static int CallStream(FormLaunch* self, PyObject* stream, uint64_t* raw) {
  if (stream == Py_None)
    return TakeUnsigned64(PyObject_CallFunctionObjArgs(self->stream_getter, self->device, NULL),
                          raw);
  if (!PyLong_CheckExact(stream)) return 0;
  Py_INCREF(stream);
  return TakeUnsigned64(stream, raw);
}

/* Launches `self` on `values` (a tuple) if they have its form: 1 launched, 0
 * not taken (nothing launched), -1 with an exception set. */
static int FormLaunchRun(FormLaunch* self, PyObject* values, PyObject* stream) {
  if (self->form == NULL) {
    PyErr_SetString(PyExc_ValueError, "FormLaunch is not initialized");
    return -1;
  }
  uint64_t stack[kStackAddresses];
  uint64_t* addresses = stack;
  if (self->num_tensors > kStackAddresses) {
    addresses = PyMem_Malloc(sizeof(uint64_t) * (size_t)self->num_tensors);
    if (addresses == NULL) {
      PyErr_NoMemory();
      return -1;
    }
  }
  uint64_t raw = 0;
  int code = 0;
  int taken = MatchForm(self, values, addresses);
  if (taken == 1) taken = CallStream(self, stream, &raw);
  if (taken == 1)
    code = self->launch_at(self->prepared_handle, addresses, (int)self->num_tensors, raw);
  if (addresses != stack) PyMem_Free(addresses);
  if (taken != 1 || code == 0) return taken;
  PyObject* code_object = PyLong_FromLong(code);
  if (code_object == NULL) return -1;
  /* fail raises; should it return, the launch still failed. */
  PyObject* result = PyObject_CallFunctionObjArgs(self->fail, code_object, NULL);
  Py_DECREF(code_object);
  Py_XDECREF(result);
  if (result != NULL)
    PyErr_Format(PyExc_RuntimeError, "tessera_prepared_launch_at failed with status %d", code);
  return -1;
}

/* FormLaunch(values: tuple, stream) -> bool. */
static PyObject* FormLaunchCall(PyObject* object, PyObject* args, PyObject* kwargs) {
  PyObject *values, *stream;
  if (kwargs != NULL && PyObject_Length(kwargs) > 0) {
    PyErr_SetString(PyExc_TypeError, "FormLaunch takes (values, stream)");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &values, &stream)) return NULL;
  int taken = FormLaunchRun((FormLaunch*)object, values, stream);
  if (taken == -1) return NULL;
  return PyBool_FromLong(taken);
}

/* FormLaunch(owner, launch_at, handle, form, tensor_types, stream_getter,
 *            device, fail). */
static int FormLaunchInit(PyObject* object, PyObject* args, PyObject* kwargs) {
  FormLaunch* self = (FormLaunch*)object;
  PyObject *owner, *form, *tensor_types, *getter, *device, *fail;
  unsigned long long launch_at, handle;
  if (kwargs != NULL && PyObject_Length(kwargs) > 0) {
    PyErr_SetString(PyExc_TypeError, "FormLaunch takes positional arguments only");
    return -1;
  }
  /* Its fields are read without a lock while callbacks may switch threads:
   * they never change after the first initialization. */
  if (self->form != NULL) {
    PyErr_SetString(PyExc_TypeError, "FormLaunch is initialized once");
    return -1;
  }
  if (!PyArg_ParseTuple(args, "OKKO!O!OO!O", &owner, &launch_at, &handle, &PyTuple_Type, &form,
                        &PyTuple_Type, &tensor_types, &getter, &PyLong_Type, &device, &fail))
    return -1;
  if (launch_at == 0 || handle == 0 || !PyCallable_Check(getter) || !PyCallable_Check(fail)) {
    PyErr_SetString(PyExc_ValueError,
                    "FormLaunch needs a launch function, a prepared launch and two callables");
    return -1;
  }
  Py_ssize_t tensors = 0, parts = PyTuple_Size(form);
  for (Py_ssize_t i = 0; i < parts; ++i) {
    PyObject* part = PyTuple_GetItem(form, i);
    Py_ssize_t size = PyTuple_Check(part) ? PyTuple_Size(part) : -1;
    if (size != 2 && size != 4) {
      PyErr_Format(PyExc_ValueError,
                   "FormLaunch: form part %zd is not a scalar's (type, value) "
                   "or a tensor's (dtype, shape, device, contiguous)",
                   i);
      return -1;
    }
    tensors += size == 4;
  }
  self->launch_at = (LaunchAtFunction)(uintptr_t)launch_at;
  self->prepared_handle = (void*)(uintptr_t)handle;
  self->num_tensors = tensors;
  PyObject** fields[] = {&self->owner,         &self->form,   &self->tensor_types,
                         &self->stream_getter, &self->device, &self->fail};
  PyObject* given[] = {owner, form, tensor_types, getter, device, fail};
  for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); ++i) {
    Py_INCREF(given[i]);
    *fields[i] = given[i];
  }
  return 0;
}

/* Frees an object of a heap type (its tp_free) and drops the reference
 * the object held to its type. */
static void FreeHeapObject(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_object(object);
  Py_DECREF(type);
}

static void FormLaunchDealloc(PyObject* object) {
  FormLaunch* self = (FormLaunch*)object;
  Py_CLEAR(self->owner);
  Py_CLEAR(self->form);
  Py_CLEAR(self->tensor_types);
  Py_CLEAR(self->stream_getter);
  Py_CLEAR(self->device);
  Py_CLEAR(self->fail);
  FreeHeapObject(object);
}

static PyType_Slot kFormLaunchSlots[] = {
    {Py_tp_doc, (void*)"A cached launch of one argument form: call it with (values, stream)."},
    {Py_tp_init, (void*)FormLaunchInit},
    {Py_tp_call, (void*)FormLaunchCall},
    {Py_tp_dealloc, (void*)FormLaunchDealloc},
    {Py_tp_new, (void*)PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec kFormLaunchSpec = {
    "tessera._fast_launch.FormLaunch", sizeof(FormLaunch), 0, Py_TPFLAGS_DEFAULT, kFormLaunchSlots,
};

/* The base of a Bundle's Kernel class: one call through `_fast`. */
typedef struct {
  PyObject ob_base; /* PyObject_HEAD */
  /* The latest call's cached launch: a FormLaunch, or any callable taking
   * (values, stream) and giving whether it launched; None or NULL when none.
   * It refers to a Prepared launch, never back to the Kernel: no cycle. */
  PyObject* fast;
} KernelCall;

/* The cached launch's answer for this call: 1 launched, 0 not taken, -1 on an
 * exception. `fast` is held for the call: the accessors it calls may run code
 * that replaces the kernel's `_fast`. */
static int TryFast(PyObject* fast, PyObject* values, PyObject* stream) {
  if (fast == NULL || fast == Py_None) return 0;
  Py_INCREF(fast);
  int taken;
  if ((PyObject*)Py_TYPE(fast) == gFormLaunchType) {
    taken = FormLaunchRun((FormLaunch*)fast, values, stream);
  } else {
    PyObject* result = PyObject_CallFunctionObjArgs(fast, values, stream, NULL);
    taken = result == NULL ? -1 : PyObject_IsTrue(result);
    Py_XDECREF(result);
  }
  Py_DECREF(fast);
  return taken;
}

/* kernel(*values, stream=None): the cached form's launch, else
 * kernel._call_uncached(*values, **kwargs). */
static PyObject* KernelCallCall(PyObject* object, PyObject* args, PyObject* kwargs) {
  PyObject* stream = Py_None;
  int plain = 1; /* No keyword but `stream`. */
  Py_ssize_t keywords = kwargs == NULL ? 0 : PyDict_Size(kwargs);
  if (keywords > 0) {
    stream = PyDict_GetItemWithError(kwargs, kStream);
    if (stream == NULL && PyErr_Occurred()) return NULL;
    plain = stream != NULL && keywords == 1;
  }
  if (plain) {
    int taken = TryFast(((KernelCall*)object)->fast, args, stream);
    if (taken == -1) return NULL;
    if (taken == 1) Py_RETURN_NONE;
  }
  PyObject* uncached = PyObject_GetAttr(object, kCallUncached);
  if (uncached == NULL) return NULL;
  PyObject* result = PyObject_Call(uncached, args, kwargs);
  Py_DECREF(uncached);
  return result;
}

static void KernelCallDealloc(PyObject* object) {
  Py_CLEAR(((KernelCall*)object)->fast);
  FreeHeapObject(object);
}

static PyMemberDef kKernelCallMembers[] = {
    {"_fast", T_OBJECT, offsetof(KernelCall, fast), 0, "The latest call's cached launch, or None."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot kKernelCallSlots[] = {
    {Py_tp_doc, (void*)"The base of tessera.Kernel's C call path (see fast_launch.c)."},
    {Py_tp_call, (void*)KernelCallCall},
    {Py_tp_dealloc, (void*)KernelCallDealloc},
    {Py_tp_members, (void*)kKernelCallMembers},
    {Py_tp_new, (void*)PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec kKernelCallSpec = {
    "tessera._fast_launch.KernelCall",        sizeof(KernelCall), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kKernelCallSlots,
};

static struct PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "tessera._fast_launch",
    "Kernel.__call__'s fast path in C (see python/bridge/fast_launch.c).",
    -1,
    NULL,
};

PyMODINIT_FUNC PyInit__fast_launch(void) {
  struct {
    PyObject** slot;
    const char* text;
  } names[] = {{&kDtype, "dtype"},
               {&kShape, "shape"},
               {&kGetDevice, "get_device"},
               {&kIsContiguous, "is_contiguous"},
               {&kDataPtr, "data_ptr"},
               {&kStream, "stream"},
               {&kCallUncached, "_call_uncached"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (*names[i].slot == NULL &&
        (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
      return NULL;
  PyObject* module = PyModule_Create(&kModule);
  if (module == NULL) return NULL;
  PyObject* form_launch = PyType_FromSpec(&kFormLaunchSpec);
  PyObject* kernel_call = PyType_FromSpec(&kKernelCallSpec);
  if (form_launch == NULL || kernel_call == NULL ||
      PyModule_AddObjectRef(module, "FormLaunch", form_launch) < 0 ||
      PyModule_AddObjectRef(module, "KernelCall", kernel_call) < 0) {
    Py_XDECREF(form_launch);
    Py_XDECREF(kernel_call);
    Py_DECREF(module);
    return NULL;
  }
  Py_DECREF(kernel_call);
  /* Kept for the process's life: KernelCall's calls compare types with it
   * (a FormLaunch of an earlier load of this file still works, called as any
   * callable). */
  PyObject* earlier = gFormLaunchType;
  gFormLaunchType = form_launch;
  Py_XDECREF(earlier);
  return module;
}
