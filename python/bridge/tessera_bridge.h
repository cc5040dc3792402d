/*===- tessera_bridge.h - The runtime behind a C ABI -------------*- C -*-===//
 *
 * The C interface of libtessera_bridge.so, which the Python package
 * (python/tessera) calls through ctypes: open a kernel file, describe its
 * kernels, check and launch them on caller-owned device memory on a
 * caller-given stream. A C ABI rather than a CPython extension so that the
 * runtime's whole interface builds once for every Python version; the one
 * CPython extension, python/bridge/fast_launch.c (stable ABI), only takes a
 * kernel's repeated calls to tessera_prepared_launch_at.
 *
 * Every call that can fail returns 0 on success, else the absl::StatusCode
 * of the failure (3 invalid argument, 5 not found, 9 failed precondition,
 * 14 unavailable, ...); tessera_last_error() then gives its message, which
 * names the kernel and the argument or the failing driver call.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TESSERA_PYTHON_BRIDGE_TESSERA_BRIDGE_H_
#define TESSERA_PYTHON_BRIDGE_TESSERA_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below changes; the Python side refuses a
 * library of another version. */
#define TESSERA_BRIDGE_ABI_VERSION 2

#define TESSERA_ARG_TENSOR 1
#define TESSERA_ARG_SCALAR 2

/* One launch argument. dtype is a tessera.runtime.DType number (kernel.proto).
 * A tensor gives address, rank and shape (row-major, contiguous); a scalar
 * gives int_value, or float_value when is_float is set. */
typedef struct TesseraArg {
  int32_t kind;
  int32_t dtype;
  int32_t rank;
  int32_t is_float;
  const int64_t* shape;
  uint64_t address;
  int64_t int_value;
  double float_value;
} TesseraArg;

typedef struct TesseraBundle TesseraBundle;
typedef struct TesseraPrepared TesseraPrepared;

int tessera_abi_version(void);

/* The message of this thread's last failed call ("" if none). */
const char* tessera_last_error(void);

/* Reads and validates a kernel file (a bundle or a single kernel). */
int tessera_bundle_open(const char* path, TesseraBundle** out);
void tessera_bundle_close(TesseraBundle* bundle);

/* The bundle's kernels as JSON: [{"entry", "target", "signature",
 * "params": [{"name", "kind": "tensor"|"scalar", "dtype", "shape",
 * "alignment"}]}]; -1 in a shape is a dynamic dimension. The string lives as
 * long as the bundle. */
const char* tessera_bundle_describe(const TesseraBundle* bundle);

/* Checks `args` against kernel `index` as a launch would (count, kinds,
 * dtypes, shapes, alignment, preconditions), without the GPU. */
int tessera_check(const TesseraBundle* bundle, int index, const TesseraArg* args, int num_args);

/* Checks, then launches kernel `index` on `stream` (a CUstream; 0 the
 * default stream) on the device that holds the tensors (all on one), loading
 * the kernel there on first use. Asynchronous. Launches with the same shapes
 * and scalars as an earlier one reuse its packed arguments. The calling
 * thread's current context is left as it was. A stream-K kernel's workspace
 * is one per kernel and device: launch such a kernel on one stream at a time. */
int tessera_launch(TesseraBundle* bundle, int index, const TesseraArg* args, int num_args,
                   uint64_t stream);

/* A launch checked and packed once: tessera_rebind points it at other
 * tensors of the same shapes (one address per tensor argument, in order),
 * tessera_prepared_launch launches it. The bundle must outlive it; one
 * prepared launch is used by one thread at a time. */
int tessera_prepare(TesseraBundle* bundle, int index, const TesseraArg* args, int num_args,
                    TesseraPrepared** out);
int tessera_rebind(TesseraPrepared* prepared, const uint64_t* addresses, int num_addresses);
int tessera_prepared_launch(TesseraPrepared* prepared, uint64_t stream);
/* tessera_rebind, then tessera_prepared_launch: the repeated launch of one
 * shape in one C call (what tessera.Kernel's cache of torch launches calls,
 * holding the GIL). The caller vouches that the tensors are on the device the
 * launch was prepared on; shapes and dtypes are those it was prepared with. */
int tessera_prepared_launch_at(TesseraPrepared* prepared, const uint64_t* addresses,
                               int num_addresses, uint64_t stream);
void tessera_prepared_free(TesseraPrepared* prepared);

/* The architecture of device `ordinal`: its compute capability as
 * major * 10 + minor (90 for an H100) in *capability. */
int tessera_device_capability(int ordinal, int* capability);

/* Waits for all work on device `ordinal`; a kernel fault surfaces here. */
int tessera_device_synchronize(int ordinal);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* TESSERA_PYTHON_BRIDGE_TESSERA_BRIDGE_H_ */
