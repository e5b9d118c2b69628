/* Tessera C ABI: dtypes, devices, opaque handles, boxed values and kernel-side views.
 * All handles are opaque: their structs are defined only inside the core. */
#ifndef TESSERA_TYPES_H
#define TESSERA_TYPES_H

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Values are fixed forever; 0 is "undefined". Gaps are reserved:
 * 11..15 for 8- and 4-bit floats, 16..19 for complex, 20.. for later additions. */
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
  /* reserved: TSR_F8_E4M3FN = 11, TSR_F8_E5M2 = 12, TSR_F4_E2M1 = 13 */
  /* reserved: TSR_C64 = 16, TSR_C128 = 17 */
  TSR_DTYPE_LIMIT = 32 /* every dtype value is < this; dtype masks are 32-bit */
} tsr_dtype_t;

/* A bit per dtype, for kernel dtype constraints. */
#define TSR_DTYPE_BIT(dt) ((uint32_t)1u << (uint32_t)(dt))

/* Device type ids are handed out at run time by name (tsr_api_t.device_type_lookup).
 * The name "cpu" always receives id 0, so a zero-initialised tsr_device_t is cpu:0.
 * TSR_DEVICE_TYPE_HOST names plain host memory that no device owns (copy sources/targets). */
#define TSR_DEVICE_TYPE_CPU 0
#define TSR_DEVICE_TYPE_HOST (-1)

typedef struct tsr_device_t {
  int32_t type;  /* device type id */
  int32_t index; /* ordinal within the type */
} tsr_device_t;

/* Opaque handles. */
typedef struct tsr_runtime_s tsr_runtime_t;     /* owns devices, ops, allocators, plugins */
typedef struct tsr_tensor_s tsr_tensor_t;       /* ref-counted tensor (storage + view) */
typedef struct tsr_op_s tsr_op_t;               /* operator, looked up once by name */
typedef struct tsr_stream_s tsr_stream_t;       /* NULL means the device's default stream */
typedef struct tsr_event_s tsr_event_t;         /* marker recorded on a stream */
typedef struct tsr_registrar_s tsr_registrar_t; /* staging area of one plugin's init */

/* Event creation flags. */
#define TSR_EVENT_DEFAULT 0u
#define TSR_EVENT_TIMING 1u /* the event records a timestamp (event_elapsed_ms) */

/* Properties of one device (1.2). Strings are copied in; absent facts are 0. */
typedef struct tsr_device_properties_t {
  size_t struct_size;
  char name[256];        /* "NVIDIA H200", "cpu" */
  int32_t compute_major; /* compute capability (GPUs), else 0 */
  int32_t compute_minor;
  int64_t total_memory_bytes;   /* device memory (0 = unknown / host memory) */
  int32_t multiprocessor_count; /* SMs (GPUs), cores (CPUs) */
  int32_t max_threads_per_block;
  int32_t warp_size;
  int32_t async_engines; /* copy engines (0: copies are synchronous) */
  int64_t l2_cache_bytes;
  int32_t memory_bus_width_bits;
  int32_t integrated; /* 1: shares memory with the host */
  int32_t pci_bus_id;
  int32_t pci_device_id;
  int32_t pci_domain_id;
  int32_t reserved;
} tsr_device_properties_t;

/* Boxed op argument kinds. */
typedef enum tsr_value_tag_t {
  TSR_VALUE_NONE = 0,
  TSR_VALUE_TENSOR = 1,
  TSR_VALUE_INT = 2,
  TSR_VALUE_DOUBLE = 3,
  TSR_VALUE_BOOL = 4,
  TSR_VALUE_INT_LIST = 5,
  TSR_VALUE_DTYPE = 6,
  TSR_VALUE_STRING = 7,
  TSR_VALUE_DEVICE = 8,
  TSR_VALUE_TENSOR_LIST = 9 /* "Tensor[]" in a schema: u.tensors */
} tsr_value_tag_t;

/* A boxed argument. Borrowed: the caller keeps tensors, lists and strings alive for the call. */
typedef struct tsr_value_t {
  int32_t tag; /* tsr_value_tag_t */
  int32_t reserved;
  union {
    tsr_tensor_t* tensor;
    int64_t i;
    double d;
    int32_t b;
    struct {
      const int64_t* data;
      int64_t len;
    } ints;
    int32_t dtype; /* tsr_dtype_t */
    const char* str;
    tsr_device_t device;
    struct {
      tsr_tensor_t* const* data; /* no NULL entries */
      int64_t len;
    } tensors;
  } u;
} tsr_value_t;

/* Borrowed description of a tensor for kernels: strides are in ELEMENTS, data already includes
 * the storage offset. Valid for the duration of the kernel call. */
typedef struct tsr_tensor_view_t {
  void* data;
  int32_t dtype; /* tsr_dtype_t */
  int32_t ndim;
  tsr_device_t device;
  const int64_t* sizes;
  const int64_t* strides;
} tsr_tensor_view_t;

/* Canonical iteration for elementwise and reduction kernels (as ATen's TensorIterator).
 * Operands: outputs first, then inputs. Dims are ordered FASTEST FIRST (sizes[0] is the
 * innermost loop) and already coalesced; strides are in BYTES, per operand.
 * For reductions, the first `nreduce` dims are reduced: the output's strides there are 0.
 * `contiguous` is 1 when every operand is dense, in the same order, with its dtype's element
 * size as the innermost stride: then the kernel may treat each operand as a flat array of numel.
 */
typedef struct tsr_iter_t {
  size_t struct_size;
  int32_t ndim;
  int32_t noperands;
  int32_t noutputs;
  int32_t nreduce;
  int32_t contiguous;
  int32_t reserved;
  int64_t numel;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_ITER_MAX_OPERANDS][TSR_MAX_DIMS];
  char* data[TSR_ITER_MAX_OPERANDS];
  int32_t dtypes[TSR_ITER_MAX_OPERANDS];
} tsr_iter_t;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TYPES_H */
