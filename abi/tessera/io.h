/* Tessera C ABI: files. Tensors saved to and loaded from safetensors files.
 *
 * The format (https://github.com/huggingface/safetensors): an 8-byte little-endian header
 * length N, N bytes of a JSON object {name: {"dtype": "F32", "shape": [2, 3],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}, then the data
 * section: row-major little-endian tensor bytes, offsets relative to its start.
 * Dtype names: BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64.
 * Everything here appeared in 1.1.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_IO_H
#define TESSERA_IO_H

#include "tessera/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open safetensors file (safetensors_open); immutable, owned by whoever opened it.
 * Since 1.1. */
typedef struct tsr_safetensors_s tsr_safetensors_t;

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* safetensors_save: writes n tensors (any device, any strides: copied to host in pieces of at
 * most 64 MiB, or of the TESSERA_SAVE_PIECE_BYTES environment variable, so the host memory it
 * needs does not grow with the largest tensor) under names
 * (unique, not "__metadata__"), in the given order, with nmeta metadata strings. It writes a
 * temporary file beside `path`, syncs it and renames it over `path`: a crash leaves either
 * the old file or the complete new one. Nothing is written when an argument is invalid. All
 * arguments are read during the call. Errors: INVALID_ARGUMENT (NULL, duplicate or reserved
 * names, strings that are not UTF-8), PERMISSION_DENIED / NOT_FOUND / UNAVAILABLE from the file
 * system, with the path. Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_save_fn_t)(tsr_runtime_t* runtime, const char* path, size_t n,
                                                  const char* const* names, tsr_tensor_t* const* tensors, size_t nmeta,
                                                  const char* const* meta_keys, const char* const* meta_values);
/* safetensors_open: opens a file for reading into *out: maps it and validates the whole header
 * before returning (header length within the file, a JSON object, known dtypes, non-negative
 * shapes whose byte size does not overflow, data_offsets inside the data section and matching
 * the shape, entries neither overlapping nor leaving holes, unique names without NUL
 * characters, metadata of strings only). A malformed file is DATA_LOSS (UNIMPLEMENTED for a
 * dtype safetensors defines but Tessera lacks, such as F8_E4M3) with a message naming the path
 * and the entry; it never crashes the process. Tensor bytes are only read by safetensors_load.
 * The handle is immutable: any thread may use it concurrently; close it once, after the last
 * use, and before destroying the runtime. The file must not be truncated while open (the
 * mapping would fault; save replaces files by rename, which is safe). Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_open_fn_t)(tsr_runtime_t* runtime, const char* path, tsr_safetensors_t** out);
/* safetensors_close: unmaps and frees the handle; NULL is a no-op. Since 1.1. */
typedef void (*tsr_safetensors_close_fn_t)(tsr_safetensors_t* file);
/* safetensors_count: entries in the order of the file's header (excluding __metadata__).
 * Since 1.1. */
typedef size_t (*tsr_safetensors_count_fn_t)(const tsr_safetensors_t* file);
/* safetensors_entry: name, dtype and shape of entry `index` without reading its data; any out
 * may be NULL. name and sizes are borrowed, valid until close. OUT_OF_RANGE past the end.
 * Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_entry_fn_t)(const tsr_safetensors_t* file, size_t index, const char** name,
                                                   tsr_dtype_t* dtype, int32_t* ndim, const int64_t** sizes);
/* safetensors_find: index of the entry called name into *index; NOT_FOUND naming it when
 * there is none. Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_find_fn_t)(const tsr_safetensors_t* file, const char* name, size_t* index);
/* safetensors_load: copies entry `index` out of the mapping into a new contiguous tensor on
 * `device` (the caller owns the reference; it outlives the handle). DATA_LOSS for a BOOL
 * entry holding a byte other than 0 or 1. Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_load_fn_t)(const tsr_safetensors_t* file, size_t index, tsr_device_t device,
                                                  tsr_tensor_t** out);
/* safetensors_metadata_count: the number of __metadata__ strings. Since 1.1. */
typedef size_t (*tsr_safetensors_metadata_count_fn_t)(const tsr_safetensors_t* file);
/* safetensors_metadata_at: the __metadata__ strings, in file order; key and value are
 * borrowed, valid until close. OUT_OF_RANGE past the end. Since 1.1. */
typedef tsr_status_t (*tsr_safetensors_metadata_at_fn_t)(const tsr_safetensors_t* file, size_t index, const char** key,
                                                         const char** value);
/* safetensors_metadata_get: the value of a metadata key (borrowed, valid until close), or
 * NULL when absent. Since 1.1. */
typedef const char* (*tsr_safetensors_metadata_get_fn_t)(const tsr_safetensors_t* file, const char* key);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_IO_H */
