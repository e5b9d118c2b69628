/* Tessera C ABI: the core's function table.
 *
 * The core exports one entry point, tsr_get_api(TSR_ABI_VERSION), which returns a pointer to a
 * static, immutable table (never freed), or NULL when the requested major differs. A host that
 * dlopen()s libtessera needs this one dlsym; plugins receive the same table in init.
 *
 * The table only grows at its end: check TSR_HAS_FIELD(api, tsr_api_t, fn) before calling a
 * function added after the minor you were built against. Its members stay in the order they
 * were added (the ledger: abi/CHANGES.md), not by concept: each is declared with the function
 * type of its concept header, where it is documented (what it does, ownership, errors,
 * thread-safety, the minor it appeared in). The comment beside each member names that header
 * and the minor. Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_API_H
#define TESSERA_API_H

#include "tessera/status.h"
#include "tessera/runtime.h"
#include "tessera/device.h"
#include "tessera/tensor.h"
#include "tessera/stream.h"
#include "tessera/memory.h"
#include "tessera/op.h"
#include "tessera/kernel.h"
#include "tessera/autograd.h"
#include "tessera/io.h"
#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Since 1.0; append-only (tests/abi/abi_layouts_pinned.c pins every member). */
typedef struct tsr_api_t {
  size_t struct_size;   /* sizeof(tsr_api_t) as the core was built */
  uint32_t abi_version; /* the core's TSR_ABI_VERSION */
  uint32_t reserved;
  tsr_version_string_fn_t version_string; /* runtime.h, 1.0 */

  /* --- status --- */
  tsr_status_create_fn_t status_create;   /* status.h, 1.0 */
  tsr_status_code_fn_t status_code;       /* status.h, 1.0 */
  tsr_status_message_fn_t status_message; /* status.h, 1.0 */
  tsr_status_free_fn_t status_free;       /* status.h, 1.0 */

  /* --- runtime (plugin_count .. get_extension: the loader, plugin.h) --- */
  tsr_runtime_create_fn_t runtime_create;   /* runtime.h, 1.0 */
  tsr_runtime_destroy_fn_t runtime_destroy; /* runtime.h, 1.0 */
  tsr_runtime_default_fn_t runtime_default; /* runtime.h, 1.0 */
  tsr_manual_seed_fn_t manual_seed;         /* runtime.h, 1.0 */
  tsr_plugin_count_fn_t plugin_count;       /* plugin.h, 1.0 */
  tsr_plugin_record_fn_t plugin_record;     /* plugin.h, 1.0 */
  tsr_get_extension_fn_t get_extension;     /* plugin.h, 1.0 */
  tsr_log_fn_t log;                         /* runtime.h, 1.0 */

  /* --- devices --- */
  tsr_device_type_lookup_fn_t device_type_lookup; /* device.h, 1.0 */
  tsr_device_type_name_fn_t device_type_name;     /* device.h, 1.0 */
  tsr_device_type_count_fn_t device_type_count;   /* device.h, 1.0 */
  tsr_device_count_fn_t device_count;             /* device.h, 1.0 */
  tsr_device_synchronize_fn_t device_synchronize; /* device.h, 1.0 */
  tsr_device_parse_fn_t device_parse;             /* device.h, 1.0 */

  /* --- tensors: creation --- */
  tsr_tensor_empty_fn_t tensor_empty;         /* tensor.h, 1.0 */
  tsr_tensor_from_host_fn_t tensor_from_host; /* tensor.h, 1.0 */
  tsr_tensor_scalar_fn_t tensor_scalar;       /* tensor.h, 1.0 */
  tsr_tensor_retain_fn_t tensor_retain;       /* tensor.h, 1.0 */
  tsr_tensor_release_fn_t tensor_release;     /* tensor.h, 1.0 */

  /* --- tensors: inspection (borrowed results, valid while the tensor lives) --- */
  tsr_tensor_runtime_fn_t tensor_runtime;               /* tensor.h, 1.0 */
  tsr_tensor_dtype_fn_t tensor_dtype;                   /* tensor.h, 1.0 */
  tsr_tensor_device_fn_t tensor_device;                 /* tensor.h, 1.0 */
  tsr_tensor_ndim_fn_t tensor_ndim;                     /* tensor.h, 1.0 */
  tsr_tensor_sizes_fn_t tensor_sizes;                   /* tensor.h, 1.0 */
  tsr_tensor_strides_fn_t tensor_strides;               /* tensor.h, 1.0 */
  tsr_tensor_offset_fn_t tensor_offset;                 /* tensor.h, 1.0 */
  tsr_tensor_numel_fn_t tensor_numel;                   /* tensor.h, 1.0 */
  tsr_tensor_data_fn_t tensor_data;                     /* tensor.h, 1.0 */
  tsr_tensor_is_contiguous_fn_t tensor_is_contiguous;   /* tensor.h, 1.0 */
  tsr_tensor_shares_storage_fn_t tensor_shares_storage; /* tensor.h, 1.0 */
  tsr_tensor_copy_to_host_fn_t tensor_copy_to_host;     /* tensor.h, 1.0 */

  /* --- tensors: views (share storage; new reference in *out) and copies --- */
  tsr_tensor_as_strided_fn_t tensor_as_strided; /* tensor.h, 1.0 */
  tsr_tensor_view_fn_t tensor_view;             /* tensor.h, 1.0 */
  tsr_tensor_reshape_fn_t tensor_reshape;       /* tensor.h, 1.0 */
  tsr_tensor_transpose_fn_t tensor_transpose;   /* tensor.h, 1.0 */
  tsr_tensor_permute_fn_t tensor_permute;       /* tensor.h, 1.0 */
  tsr_tensor_expand_fn_t tensor_expand;         /* tensor.h, 1.0 */
  tsr_tensor_slice_fn_t tensor_slice;           /* tensor.h, 1.0 */
  tsr_tensor_select_fn_t tensor_select;         /* tensor.h, 1.0 */
  tsr_tensor_narrow_fn_t tensor_narrow;         /* tensor.h, 1.0 */
  tsr_tensor_squeeze_fn_t tensor_squeeze;       /* tensor.h, 1.0 */
  tsr_tensor_unsqueeze_fn_t tensor_unsqueeze;   /* tensor.h, 1.0 */
  tsr_tensor_contiguous_fn_t tensor_contiguous; /* tensor.h, 1.0 */
  tsr_tensor_to_fn_t tensor_to;                 /* tensor.h, 1.0 */
  tsr_tensor_copy__fn_t tensor_copy_;           /* tensor.h, 1.0 */

  /* --- ops --- */
  tsr_op_find_fn_t op_find;                 /* op.h, 1.0 */
  tsr_op_call_fn_t op_call;                 /* op.h, 1.0 */
  tsr_op_name_fn_t op_name;                 /* op.h, 1.0 */
  tsr_op_schema_fn_t op_schema;             /* op.h, 1.0 */
  tsr_op_num_outputs_fn_t op_num_outputs;   /* op.h, 1.0 */
  tsr_op_count_fn_t op_count;               /* op.h, 1.0 */
  tsr_op_at_fn_t op_at;                     /* op.h, 1.0 */
  tsr_op_kernel_count_fn_t op_kernel_count; /* op.h, 1.0 */
  tsr_op_kernel_info_fn_t op_kernel_info;   /* op.h, 1.0 */

  /* --- memory --- */
  tsr_memory_stats_fn_t memory_stats;       /* memory.h, 1.0 */
  tsr_memory_snapshot_fn_t memory_snapshot; /* memory.h, 1.0 */
  tsr_empty_cache_fn_t empty_cache;         /* memory.h, 1.0 */
  tsr_string_free_fn_t string_free;         /* memory.h, 1.0 */

  /* --- registration (only with the registrar handed to a plugin's init) --- */
  tsr_register_device_type_fn_t register_device_type; /* plugin.h, 1.0 */
  tsr_register_allocator_fn_t register_allocator;     /* plugin.h, 1.0 */
  tsr_register_op_fn_t register_op;                   /* plugin.h, 1.0 */
  tsr_register_kernel_fn_t register_kernel;           /* plugin.h, 1.0 */
  tsr_register_extension_fn_t register_extension;     /* plugin.h, 1.0 */

  /* --- added after the first draft of 1.0 (still 1.0) --- */
  tsr_runtime_serial_fn_t runtime_serial;               /* runtime.h, 1.0 */
  tsr_device_describe_fn_t device_describe;             /* device.h, 1.0 */
  tsr_device_allocator_name_fn_t device_allocator_name; /* memory.h, 1.0 */
  tsr_plugin_search_dir_fn_t plugin_search_dir;         /* plugin.h, 1.0 */

  /* --- 1.0: autograd --- */
  tsr_tensor_requires_grad_fn_t tensor_requires_grad;         /* autograd.h, 1.0 */
  tsr_tensor_set_requires_grad_fn_t tensor_set_requires_grad; /* autograd.h, 1.0 */
  tsr_tensor_is_leaf_fn_t tensor_is_leaf;                     /* autograd.h, 1.0 */
  tsr_tensor_grad_fn_t tensor_grad;                           /* autograd.h, 1.0 */
  tsr_tensor_set_grad_fn_t tensor_set_grad;                   /* autograd.h, 1.0 */
  tsr_tensor_grad_fn_name_fn_t tensor_grad_fn_name;           /* autograd.h, 1.0 */
  tsr_tensor_detach_fn_t tensor_detach;                       /* autograd.h, 1.0 */
  tsr_tensor_retain_grad_fn_t tensor_retain_grad;             /* autograd.h, 1.0 */
  tsr_tensor_register_hook_fn_t tensor_register_hook;         /* autograd.h, 1.0 */
  tsr_tensor_version_fn_t tensor_version;                     /* autograd.h, 1.0 */
  tsr_autograd_backward_fn_t autograd_backward;               /* autograd.h, 1.0 */
  tsr_autograd_grad_fn_t autograd_grad;                       /* autograd.h, 1.0 */
  tsr_grad_mode_enabled_fn_t grad_mode_enabled;               /* autograd.h, 1.0 */
  tsr_set_grad_mode_fn_t set_grad_mode;                       /* autograd.h, 1.0 */
  tsr_inference_mode_enabled_fn_t inference_mode_enabled;     /* autograd.h, 1.0 */
  tsr_set_inference_mode_fn_t set_inference_mode;             /* autograd.h, 1.0 */

  /* --- 1.1: random-number state --- */
  tsr_rng_get_state_fn_t rng_get_state; /* runtime.h, 1.1 */
  tsr_rng_set_state_fn_t rng_set_state; /* runtime.h, 1.1 */

  /* --- 1.1: safetensors files --- */
  tsr_safetensors_save_fn_t safetensors_save;                     /* io.h, 1.1 */
  tsr_safetensors_open_fn_t safetensors_open;                     /* io.h, 1.1 */
  tsr_safetensors_close_fn_t safetensors_close;                   /* io.h, 1.1 */
  tsr_safetensors_count_fn_t safetensors_count;                   /* io.h, 1.1 */
  tsr_safetensors_entry_fn_t safetensors_entry;                   /* io.h, 1.1 */
  tsr_safetensors_find_fn_t safetensors_find;                     /* io.h, 1.1 */
  tsr_safetensors_load_fn_t safetensors_load;                     /* io.h, 1.1 */
  tsr_safetensors_metadata_count_fn_t safetensors_metadata_count; /* io.h, 1.1 */
  tsr_safetensors_metadata_at_fn_t safetensors_metadata_at;       /* io.h, 1.1 */
  tsr_safetensors_metadata_get_fn_t safetensors_metadata_get;     /* io.h, 1.1 */

  /* --- 1.2: devices, streams and events --- */
  tsr_device_properties_fn_t device_properties;       /* device.h, 1.2 */
  tsr_device_get_current_fn_t device_get_current;     /* device.h, 1.2 */
  tsr_device_set_current_fn_t device_set_current;     /* device.h, 1.2 */
  tsr_stream_create_fn_t stream_create;               /* stream.h, 1.2 */
  tsr_stream_destroy_fn_t stream_destroy;             /* stream.h, 1.2 */
  tsr_stream_get_current_fn_t stream_get_current;     /* stream.h, 1.2 */
  tsr_stream_set_current_fn_t stream_set_current;     /* stream.h, 1.2 */
  tsr_stream_synchronize_fn_t stream_synchronize;     /* stream.h, 1.2 */
  tsr_stream_query_fn_t stream_query;                 /* stream.h, 1.2 */
  tsr_stream_wait_event_fn_t stream_wait_event;       /* stream.h, 1.2 */
  tsr_event_create_fn_t event_create;                 /* stream.h, 1.2 */
  tsr_event_destroy_fn_t event_destroy;               /* stream.h, 1.2 */
  tsr_event_record_fn_t event_record;                 /* stream.h, 1.2 */
  tsr_event_synchronize_fn_t event_synchronize;       /* stream.h, 1.2 */
  tsr_event_query_fn_t event_query;                   /* stream.h, 1.2 */
  tsr_event_elapsed_ms_fn_t event_elapsed_ms;         /* stream.h, 1.2 */
  tsr_tensor_record_stream_fn_t tensor_record_stream; /* stream.h, 1.2 */

  /* --- 1.2: allocator controls --- */
  tsr_memory_set_fraction_fn_t memory_set_fraction; /* memory.h, 1.2 */
  tsr_memory_pool_create_fn_t memory_pool_create;   /* memory.h, 1.2 */
  tsr_memory_pool_begin_fn_t memory_pool_begin;     /* memory.h, 1.2 */
  tsr_memory_pool_end_fn_t memory_pool_end;         /* memory.h, 1.2 */
  tsr_memory_pool_release_fn_t memory_pool_release; /* memory.h, 1.2 */

  /* --- 1.2: numerical precision settings --- */
  tsr_precision_set_fn_t precision_set; /* runtime.h, 1.2 */
  tsr_precision_get_fn_t precision_get; /* runtime.h, 1.2 */

  /* --- 1.2: tensors over foreign memory --- */
  tsr_tensor_from_blob_fn_t tensor_from_blob; /* tensor.h, 1.2 */

  /* --- 1.3: where ops come from --- */
  tsr_op_source_fn_t op_source; /* op.h, 1.3 */

  /* --- 1.4: schemas as data, DLPack exchange --- */
  tsr_op_num_args_fn_t op_num_args;                           /* op.h, 1.4 */
  tsr_op_arg_fn_t op_arg;                                     /* op.h, 1.4 */
  tsr_tensor_to_dlpack_fn_t tensor_to_dlpack;                 /* tensor.h, 1.4 */
  tsr_tensor_to_dlpack_legacy_fn_t tensor_to_dlpack_legacy;   /* tensor.h, 1.4 */
  tsr_tensor_from_dlpack_fn_t tensor_from_dlpack;             /* tensor.h, 1.4 */
  tsr_tensor_from_dlpack_legacy_fn_t tensor_from_dlpack_legacy; /* tensor.h, 1.4 */

  /* --- 1.5: gradient-complete hooks (data-parallel overlap) --- */
  tsr_tensor_register_post_accumulate_grad_hook_fn_t tensor_register_post_accumulate_grad_hook; /* autograd.h, 1.5 */
  tsr_tensor_remove_post_accumulate_grad_hook_fn_t tensor_remove_post_accumulate_grad_hook;     /* autograd.h, 1.5 */
} tsr_api_t;

/* The core's only entry point. NULL when the major of abi_version differs from the core's.
 * Since 1.0. */
TSR_EXTERN_C TSR_EXPORT const tsr_api_t* tsr_get_api(uint32_t abi_version);
typedef const tsr_api_t* (*tsr_get_api_fn_t)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_API_H */
