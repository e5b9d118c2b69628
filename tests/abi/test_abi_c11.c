/* Compiled as C11 with -Wall -Wextra -Werror -pedantic: every ABI header must be plain C, and
 * the layouts below are promises to every plugin ever built (changing one is a MAJOR change). */
#include "tessera/tessera.h"
#include "tessera/ext_graphs.h"
#include "tessera/ext_pinned_host.h"
#include "tessera/ext_dispatch_trace.h"
#include "tessera/ext_collectives.h"
#include "tessera/ext_model.h"
#include "tessera/ext_peer_topology.h"

#include <stddef.h>

#define ABI_ASSERT(cond) _Static_assert(cond, #cond)

/* The version packs major.minor. */
ABI_ASSERT(TSR_ABI_VERSION_MAJOR(TSR_ABI_VERSION) == TSR_ABI_MAJOR);
ABI_ASSERT(TSR_ABI_VERSION_MINOR(TSR_ABI_VERSION) == TSR_ABI_MINOR);

/* Fixed dtype values. */
ABI_ASSERT(TSR_BOOL == 1 && TSR_U8 == 2 && TSR_I8 == 3 && TSR_I16 == 4 && TSR_I32 == 5);
ABI_ASSERT(TSR_I64 == 6 && TSR_F16 == 7 && TSR_BF16 == 8 && TSR_F32 == 9 && TSR_F64 == 10);
ABI_ASSERT(TSR_DTYPE_LIMIT == 32);

/* Fixed status codes. */
ABI_ASSERT(TSR_OK == 0 && TSR_INVALID_ARGUMENT == 3 && TSR_NOT_FOUND == 5);
ABI_ASSERT(TSR_RESOURCE_EXHAUSTED == 8 && TSR_UNIMPLEMENTED == 12 && TSR_INTERNAL == 13);

/* Status is pointer-sized; success is NULL. */
ABI_ASSERT(sizeof(tsr_status_t) == sizeof(void*));

/* Device and value layouts. */
ABI_ASSERT(sizeof(tsr_device_t) == 8);
ABI_ASSERT(offsetof(tsr_device_t, type) == 0 && offsetof(tsr_device_t, index) == 4);
ABI_ASSERT(sizeof(tsr_value_t) == 24);
ABI_ASSERT(offsetof(tsr_value_t, tag) == 0 && offsetof(tsr_value_t, u) == 8);

/* Tensor view for kernels. */
ABI_ASSERT(offsetof(tsr_tensor_view_t, data) == 0);
ABI_ASSERT(offsetof(tsr_tensor_view_t, dtype) == 8);
ABI_ASSERT(offsetof(tsr_tensor_view_t, ndim) == 12);
ABI_ASSERT(offsetof(tsr_tensor_view_t, device) == 16);
ABI_ASSERT(offsetof(tsr_tensor_view_t, sizes) == 24);
ABI_ASSERT(offsetof(tsr_tensor_view_t, strides) == 32);

/* Every growable struct starts with struct_size. */
ABI_ASSERT(offsetof(tsr_iter_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_kernel_call_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_kernel_def_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_op_def_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_meta_call_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_raw_allocator_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_device_type_def_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_plugin_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_runtime_options_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_plugin_record_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_kernel_info_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_memory_stats_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_api_t, struct_size) == 0);

/* The iteration layout (kernels compiled for other devices index it directly). */
ABI_ASSERT(offsetof(tsr_iter_t, ndim) == 8);
ABI_ASSERT(offsetof(tsr_iter_t, numel) == 32);
ABI_ASSERT(offsetof(tsr_iter_t, sizes) == 40);
ABI_ASSERT(offsetof(tsr_iter_t, strides) == 40 + 8 * TSR_MAX_DIMS);

/* Plugin header: fields a v1.0 loader reads, in this order. */
ABI_ASSERT(offsetof(tsr_plugin_t, abi_version) == 8);
ABI_ASSERT(offsetof(tsr_plugin_t, name) == 16);
ABI_ASSERT(offsetof(tsr_plugin_t, version) == 24);
ABI_ASSERT(offsetof(tsr_plugin_t, description) == 32);
ABI_ASSERT(offsetof(tsr_plugin_t, score) == 40);
ABI_ASSERT(offsetof(tsr_plugin_t, init) == 48);
ABI_ASSERT(offsetof(tsr_plugin_t, shutdown) == 56);

/* The function table is append-only: the first entries never move. */
ABI_ASSERT(offsetof(tsr_api_t, abi_version) == 8);
ABI_ASSERT(offsetof(tsr_api_t, version_string) == 16);
ABI_ASSERT(offsetof(tsr_api_t, status_create) == 24);
ABI_ASSERT(offsetof(tsr_api_t, status_code) == 32);
ABI_ASSERT(offsetof(tsr_api_t, status_message) == 40);
ABI_ASSERT(offsetof(tsr_api_t, status_free) == 48);
ABI_ASSERT(offsetof(tsr_api_t, runtime_create) == 56);
/* 1.1 appended after the last 1.0 entry, in this order. */
ABI_ASSERT(TSR_ABI_MINOR >= 1);
ABI_ASSERT(offsetof(tsr_api_t, rng_get_state) == offsetof(tsr_api_t, set_inference_mode) + sizeof(void*));
ABI_ASSERT(offsetof(tsr_api_t, safetensors_save) == offsetof(tsr_api_t, rng_get_state) + 2 * sizeof(void*));
ABI_ASSERT(offsetof(tsr_api_t, safetensors_metadata_get) == offsetof(tsr_api_t, safetensors_save) + 9 * sizeof(void*));

/* 1.2 appended after the last 1.1 entry, in this order. */
ABI_ASSERT(TSR_ABI_MINOR >= 2);
ABI_ASSERT(offsetof(tsr_api_t, device_properties) == offsetof(tsr_api_t, safetensors_metadata_get) + sizeof(void*));
ABI_ASSERT(offsetof(tsr_api_t, tensor_record_stream) == offsetof(tsr_api_t, device_properties) + 16 * sizeof(void*));
ABI_ASSERT(offsetof(tsr_api_t, precision_get) == offsetof(tsr_api_t, tensor_record_stream) + 7 * sizeof(void*));
ABI_ASSERT(offsetof(tsr_api_t, tensor_from_blob) == offsetof(tsr_api_t, precision_get) + sizeof(void*));
ABI_ASSERT(offsetof(tsr_device_type_def_t, properties) == offsetof(tsr_device_type_def_t, describe) + sizeof(void*));
ABI_ASSERT(offsetof(tsr_device_type_def_t, event_elapsed_ms) ==
           offsetof(tsr_device_type_def_t, properties) + 11 * sizeof(void*));
ABI_ASSERT(offsetof(tsr_raw_allocator_t, alloc_async) == offsetof(tsr_raw_allocator_t, free) + sizeof(void*));
ABI_ASSERT(offsetof(tsr_device_properties_t, struct_size) == 0);
ABI_ASSERT(offsetof(tsr_device_properties_t, name) == 8);
ABI_ASSERT(offsetof(tsr_device_properties_t, compute_major) == 264);
ABI_ASSERT(TSR_PRECISION_MATMUL_ALLOW_TF32 == 1 && TSR_PRECISION_CONV_ALLOW_TF32 == 2);
ABI_ASSERT(TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION == 3);
ABI_ASSERT(TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION == 4);
ABI_ASSERT(TSR_EVENT_TIMING == 1u);

/* Extension tables start with struct_size, then flags. */
ABI_ASSERT(offsetof(tsr_pinned_host_t, struct_size) == 0 && offsetof(tsr_pinned_host_t, alloc) == 16);
ABI_ASSERT(offsetof(tsr_graphs_t, struct_size) == 0 && offsetof(tsr_graphs_t, capture_begin) == 16);
ABI_ASSERT(offsetof(tsr_graphs_t, graph_release) == offsetof(tsr_graphs_t, capture_begin) + 6 * sizeof(void*));
ABI_ASSERT(offsetof(tsr_peer_topology_t, struct_size) == 0 && offsetof(tsr_peer_topology_t, query) == 16);
ABI_ASSERT(offsetof(tsr_peer_link_t, struct_size) == 0 && offsetof(tsr_peer_link_t, can_access) == 8);
ABI_ASSERT(sizeof(tsr_peer_link_t) == 32);
ABI_ASSERT(TSR_PEER_LINK_NONE == 0 && TSR_PEER_LINK_SAME_DEVICE == 1 && TSR_PEER_LINK_PCIE == 2);
ABI_ASSERT(TSR_PEER_LINK_NVLINK == 3 && TSR_PEER_LINK_UNKNOWN == 4);

int main(void) {
  /* TSR_HAS_FIELD works on a struct whose writer knew fewer fields. */
  tsr_plugin_t p = {0};
  p.struct_size = offsetof(tsr_plugin_t, shutdown);
  if (TSR_HAS_FIELD(&p, tsr_plugin_t, shutdown)) return 1;
  p.struct_size = sizeof(tsr_plugin_t);
  if (!TSR_HAS_FIELD(&p, tsr_plugin_t, shutdown)) return 1;
  return 0;
}
