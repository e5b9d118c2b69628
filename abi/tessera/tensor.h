/* Tessera C ABI: dtypes and tensors (creation, inspection, views, copies, foreign memory).
 * A tensor is a reference-counted view (sizes, strides in elements, offset) of a storage on
 * one device. Gradients and hooks: autograd.h; streams a tensor is used on: stream.h.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_TENSOR_H
#define TESSERA_TENSOR_H

#include "tessera/device.h"
#include "tessera/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Values are fixed forever; 0 is "undefined". Gaps are reserved: 15 for another
 * 8- or 4-bit float, 16..19 for complex, 20.. for later additions. Since 1.0.
 * The low-precision floats (since 1.6) are PyTorch's, with its names and semantics
 * (docs/low-precision.md):
 *  - TSR_F8_E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity, NaN is S.1111.111,
 *    largest finite 448.
 *  - TSR_F8_E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like, with inf and NaN.
 *  - TSR_F8_E8M0FNU: 8 exponent bits (bias 127), no sign, no mantissa, no zero: 2^(e-127) for
 *    e < 255, NaN for 255. The scale type of MX formats.
 *  - TSR_F4_E2M1FN_X2: one byte holding TWO e2m1 values (sign, 2 exponent, 1 mantissa bits:
 *    0, 0.5, 1, 1.5, 2, 3, 4, 6), the element of even index in the low 4 bits. Sizes count
 *    bytes, as for PyTorch's float4_e2m1fn_x2: a [M, K/2] tensor holds M x K values.
 * Few ops accept them (copies, fill, views, the quantization ops, scaled_mm); no promotion
 * rule mixes them with another dtype. */
typedef enum tsr_dtype_t {
  TSR_DTYPE_UNDEFINED = 0,
  TSR_BOOL = 1,
  TSR_U8 = 2,
  TSR_I8 = 3,
  TSR_I16 = 4,
  TSR_I32 = 5,
  TSR_I64 = 6,
  TSR_F16 = 7,
  TSR_BF16 = 8,
  TSR_F32 = 9,
  TSR_F64 = 10,
  TSR_F8_E4M3FN = 11,    /* since 1.6 */
  TSR_F8_E5M2 = 12,      /* since 1.6 */
  TSR_F4_E2M1FN_X2 = 13, /* since 1.6 */
  TSR_F8_E8M0FNU = 14,   /* since 1.6 */
  /* reserved: TSR_C64 = 16, TSR_C128 = 17 */
  TSR_DTYPE_LIMIT = 32 /* every dtype value is < this; dtype masks are 32-bit */
} tsr_dtype_t;

/* A bit per dtype, for kernel dtype constraints. Since 1.0. */
#define TSR_DTYPE_BIT(dt) ((uint32_t)1u << (uint32_t)(dt))

/* Ref-counted tensor (storage + view). Opaque. Since 1.0. */
typedef struct tsr_tensor_s tsr_tensor_t;

/* A `dim` argument that means every dimension (tensor_squeeze). Since 1.0. */
#define TSR_ALL_DIMS INT64_MIN

struct tsr_value_t; /* op.h */

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* Creation. Each returns one new reference in *out. Errors: INVALID_ARGUMENT (NULL runtime or
 * out, ndim outside [0, TSR_MAX_DIMS], a negative size, an unknown dtype or device),
 * RESOURCE_EXHAUSTED (device memory), and whatever the backend's copy reports. */
/* tensor_empty: a new contiguous tensor, uninitialised. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_empty_fn_t)(tsr_runtime_t* runtime, int32_t ndim, const int64_t* sizes,
                                              tsr_dtype_t dtype, tsr_device_t device, tsr_tensor_t** out);
/* tensor_from_host: copies nbytes = numel*itemsize from host memory `data` (row-major, read
 * during the call) into a new tensor; returns once the copy is done (an asynchronous device
 * waits for its current stream). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_from_host_fn_t)(tsr_runtime_t* runtime, const void* data, int32_t ndim,
                                                  const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                                                  tsr_tensor_t** out);
/* tensor_scalar: a 0-dim tensor holding `value` (INT, DOUBLE or BOOL; read during the call).
 * `wrapped`=1 marks it as a wrapped number (a C++/Python scalar) for type promotion. dtype
 * UNDEFINED infers i64/f64/bool from the tag. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_scalar_fn_t)(tsr_runtime_t* runtime, const struct tsr_value_t* value,
                                               tsr_dtype_t dtype, tsr_device_t device, int32_t wrapped,
                                               tsr_tensor_t** out);
/* tensor_from_blob: a tensor viewing memory the caller owns (PyTorch's from_blob): `data` is
 * the first element on `device`, strides in elements (NULL: contiguous). When the last
 * reference to the tensor and its views is released, deleter(ctx, data) is called (deleter may
 * be NULL: the memory must then outlive every view). The memory is not counted in
 * memory_stats. On error the deleter is NOT called (the caller still owns the memory).
 * Since 1.2. */
typedef tsr_status_t (*tsr_tensor_from_blob_fn_t)(tsr_runtime_t* runtime, void* data, int32_t ndim,
                                                  const int64_t* sizes, const int64_t* strides, tsr_dtype_t dtype,
                                                  tsr_device_t device, void (*deleter)(void* ctx, void* data),
                                                  void* ctx, tsr_tensor_t** out);
/* DLPack exchange (dlpack.h), zero-copy both ways. Devices: cpu (kDLCPU; every virtual cpu
 * device exports as kDLCPU device 0, and kDLCPU / kDLCUDAHost import as cpu:0) and a device
 * type named "cuda" (kDLCUDA, device_id = index). Dtypes: bool (kDLBool, 8 bits), uint8,
 * int8..int64, float16/32/64 and bfloat16, with lanes 1.
 *
 * tensor_to_dlpack: a new DLManagedTensorVersioned (version 1.0, flags 0) viewing `t`'s
 * elements with t's sizes and strides; it holds a reference to t, which its deleter drops (the
 * caller owns *out and calls (*out)->deleter once). data points at the first element and
 * byte_offset is 0. Exporting does not synchronize: the consumer orders its reads after the
 * tensor's stream (stream.h) as the Python array API's stream argument does. UNIMPLEMENTED for
 * a device type DLPack cannot name; INVALID_ARGUMENT for NULL arguments. Thread-safe.
 * Since 1.4. */
typedef tsr_status_t (*tsr_tensor_to_dlpack_fn_t)(tsr_tensor_t* t, DLManagedTensorVersioned** out);
/* tensor_to_dlpack_legacy: the same as a pre-1.0 DLManagedTensor (what PyTorch 1.x and NumPy
 * 1.2x consume). Since 1.4. */
typedef tsr_status_t (*tsr_tensor_to_dlpack_legacy_fn_t)(tsr_tensor_t* t, DLManagedTensor** out);
/* tensor_from_dlpack: a tensor viewing `src`'s memory. On success the tensor owns `src`: its
 * deleter is called once, when the last view of the memory is released (the producer's memory
 * stays alive until then). On error nothing is taken: the caller still owns `src`.
 * INVALID_ARGUMENT (naming the field) for a major version other than 1, a read-only tensor
 * (DLPACK_FLAG_BITMASK_READ_ONLY: Tessera tensors are writable; copy it first), lanes other
 * than 1, a dtype or device listed nowhere above, negative strides, or a device that is not
 * loaded (NOT_FOUND for a "cuda" device type that is not registered). Thread-safe. Since 1.4. */
typedef tsr_status_t (*tsr_tensor_from_dlpack_fn_t)(tsr_runtime_t* runtime, DLManagedTensorVersioned* src,
                                                    tsr_tensor_t** out);
/* tensor_from_dlpack_legacy: the same for a pre-1.0 DLManagedTensor. Since 1.4. */
typedef tsr_status_t (*tsr_tensor_from_dlpack_legacy_fn_t)(tsr_runtime_t* runtime, DLManagedTensor* src,
                                                           tsr_tensor_t** out);
/* tensor_retain: adds a reference (NULL is a no-op). Since 1.0. */
typedef void (*tsr_tensor_retain_fn_t)(tsr_tensor_t* tensor);
/* tensor_release: drops a reference; the last one frees the view, and the storage once no
 * view shares it (NULL is a no-op). Since 1.0. */
typedef void (*tsr_tensor_release_fn_t)(tsr_tensor_t* tensor);

/* Inspection. Never fail; the tensor must be valid (not NULL). Returned pointers are
 * borrowed, valid while the tensor lives. */
/* tensor_runtime: the runtime that made the tensor. Since 1.0. */
typedef tsr_runtime_t* (*tsr_tensor_runtime_fn_t)(const tsr_tensor_t* tensor);
/* tensor_dtype: its element type. Since 1.0. */
typedef tsr_dtype_t (*tsr_tensor_dtype_fn_t)(const tsr_tensor_t* tensor);
/* tensor_device: the device its storage is on. Since 1.0. */
typedef tsr_device_t (*tsr_tensor_device_fn_t)(const tsr_tensor_t* tensor);
/* tensor_ndim: its number of dimensions (0 for a scalar). Since 1.0. */
typedef int32_t (*tsr_tensor_ndim_fn_t)(const tsr_tensor_t* tensor);
/* tensor_sizes: sizes[ndim]. Since 1.0. */
typedef const int64_t* (*tsr_tensor_sizes_fn_t)(const tsr_tensor_t* tensor);
/* tensor_strides: strides[ndim], in elements. Since 1.0. */
typedef const int64_t* (*tsr_tensor_strides_fn_t)(const tsr_tensor_t* tensor);
/* tensor_offset: the offset of the first element in its storage, in elements. Since 1.0. */
typedef int64_t (*tsr_tensor_offset_fn_t)(const tsr_tensor_t* tensor);
/* tensor_numel: the product of its sizes. Since 1.0. */
typedef int64_t (*tsr_tensor_numel_fn_t)(const tsr_tensor_t* tensor);
/* tensor_data: the address of its first element (device memory; offset applied). Since 1.0. */
typedef void* (*tsr_tensor_data_fn_t)(const tsr_tensor_t* tensor);
/* tensor_is_contiguous: 1 when row-major dense. Since 1.0. */
typedef int32_t (*tsr_tensor_is_contiguous_fn_t)(const tsr_tensor_t* tensor);
/* tensor_shares_storage: 1 when a and b view the same storage (0 if either is NULL).
 * Since 1.0. */
typedef int32_t (*tsr_tensor_shares_storage_fn_t)(const tsr_tensor_t* a, const tsr_tensor_t* b);
/* tensor_copy_to_host: copies the tensor's elements in row-major order into host memory dst
 * (nbytes must equal numel*itemsize: INVALID_ARGUMENT otherwise). Synchronizes the device
 * (its current stream). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_copy_to_host_fn_t)(const tsr_tensor_t* tensor, void* dst, size_t nbytes);

/* Views and copies. Views share storage with `t`; each returns one new reference in *out.
 * Dims may be negative (counted from the end). Errors: INVALID_ARGUMENT (NULL t or out, a dim
 * out of range, sizes that do not fit the tensor), and for a tensor that requires grad the
 * autograd errors of recording the view (autograd.h). */
/* tensor_as_strided: a view with explicit sizes, strides (elements) and storage offset.
 * Since 1.0. */
typedef tsr_status_t (*tsr_tensor_as_strided_fn_t)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes,
                                                   const int64_t* strides, int64_t offset, tsr_tensor_t** out);
/* tensor_view: never copies; fails when the strides cannot express the shape. -1 infers a
 * size. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_view_fn_t)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, tsr_tensor_t** out);
/* tensor_reshape: a view when possible, otherwise a contiguous copy. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_reshape_fn_t)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes,
                                                tsr_tensor_t** out);
/* tensor_transpose: swaps two dims. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_transpose_fn_t)(tsr_tensor_t* t, int64_t dim0, int64_t dim1, tsr_tensor_t** out);
/* tensor_permute: reorders dims (dims is a permutation of 0..ndim-1). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_permute_fn_t)(tsr_tensor_t* t, int32_t ndim, const int64_t* dims, tsr_tensor_t** out);
/* tensor_expand: broadcasts size-1 dims to `sizes` (stride 0; -1 keeps a size). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_expand_fn_t)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, tsr_tensor_t** out);
/* tensor_slice: Python-style slice along dim: start/end clamped, negative wrap, step >= 1.
 * Since 1.0. */
typedef tsr_status_t (*tsr_tensor_slice_fn_t)(tsr_tensor_t* t, int64_t dim, int64_t start, int64_t end, int64_t step,
                                              tsr_tensor_t** out);
/* tensor_select: index `index` of dim, which is removed. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_select_fn_t)(tsr_tensor_t* t, int64_t dim, int64_t index, tsr_tensor_t** out);
/* tensor_narrow: `length` elements of dim from `start`. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_narrow_fn_t)(tsr_tensor_t* t, int64_t dim, int64_t start, int64_t length,
                                               tsr_tensor_t** out);
/* tensor_squeeze: removes dim if its size is 1; dim = TSR_ALL_DIMS squeezes every size-1 dim.
 * Since 1.0. */
typedef tsr_status_t (*tsr_tensor_squeeze_fn_t)(tsr_tensor_t* t, int64_t dim, tsr_tensor_t** out);
/* tensor_unsqueeze: inserts a size-1 dim at `dim`. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_unsqueeze_fn_t)(tsr_tensor_t* t, int64_t dim, tsr_tensor_t** out);
/* tensor_contiguous: the same tensor (new reference) when already contiguous, else a
 * contiguous copy. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_contiguous_fn_t)(tsr_tensor_t* t, tsr_tensor_t** out);
/* tensor_to: copy to dtype/device (a new tensor, or a new reference to `t` when nothing
 * changes and copy == 0). dtype UNDEFINED keeps the dtype. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_to_fn_t)(tsr_tensor_t* t, tsr_dtype_t dtype, tsr_device_t device, int32_t copy,
                                           tsr_tensor_t** out);
/* tensor_copy_: dst[...] = src with broadcasting, dtype conversion and cross-device copy
 * (dst keeps its references; nothing is returned). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_copy__fn_t)(tsr_tensor_t* dst, tsr_tensor_t* src);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TENSOR_H */
