/* Tessera C ABI: plugins. The contract a plugin's shared object fulfils (manifest, query,
 * score, init, shutdown), the registration entries it calls during init, and the loader's
 * records of what it loaded or refused.
 *
 * A plugin is a shared object that exports exactly one entry symbol:
 *
 *   TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t host_abi_version);
 *
 * It returns a pointer to static data (never freed), or NULL when it cannot work with that host
 * ABI. Beside `NAME.so` lives `NAME.json`, the manifest the loader reads before opening it:
 *   {"name": "cpu", "version": "0.1.0", "abi": "1.0", "depends": []}
 * Lifecycle per runtime: query -> score -> init (registrations are staged and committed only
 * when init returns NULL) -> ... -> shutdown (reverse load order, when the runtime is destroyed).
 * No C++ exception may leave score/init/shutdown (the SDK's plugin macro catches them).
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_PLUGIN_H
#define TESSERA_PLUGIN_H

#include "tessera/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tsr_api_t;

/* What tsr_plugin_query returns. Since 1.0. */
typedef struct tsr_plugin_t {
  size_t struct_size;
  uint32_t abi_version; /* TSR_ABI_VERSION the plugin was built against */
  uint32_t reserved;
  const char* name;    /* must match the manifest's name */
  const char* version; /* the plugin's own version */
  const char* description;
  /* 0 = cannot run on this machine (write why into reason); higher = better variant. */
  int32_t (*score)(const struct tsr_api_t* api, char* reason, size_t reason_len);
  /* Register device types, allocators, ops and kernels through `reg`. *state is handed back
   * to shutdown. A non-NULL status discards everything staged. */
  tsr_status_t (*init)(const struct tsr_api_t* api, tsr_runtime_t* runtime, tsr_registrar_t* reg, void** state);
  void (*shutdown)(const struct tsr_api_t* api, void* state); /* optional */
} tsr_plugin_t;

/* Since 1.0. */
typedef const tsr_plugin_t* (*tsr_plugin_query_fn_t)(uint32_t host_abi_version);

#define TSR_PLUGIN_QUERY_SYMBOL "tsr_plugin_query"

/* One loaded or refused plugin, as the loader recorded it. Strings live as long as the runtime.
 * Since 1.0. */
typedef struct tsr_plugin_record_t {
  size_t struct_size;
  const char* name;
  const char* version;
  const char* path;
  int32_t loaded; /* 1 loaded, 0 refused */
  int32_t score;
  const char* reason; /* why it was refused or shadowed ("" when loaded) */
} tsr_plugin_record_t;

/* ---- Entries of tsr_api_t (api.h): what the loader did ---------------------------------- */

/* plugin_count: plugins seen by the loader, loaded and refused (0 for a NULL runtime). Since 1.0. */
typedef size_t (*tsr_plugin_count_fn_t)(tsr_runtime_t* runtime);
/* plugin_record: record number `index` into *out, in the order the loader decided on them
 * (refusals found while scanning directories come before any load). Set out->struct_size
 * first (tessera/tessera.h, growable structs). INVALID_ARGUMENT past plugin_count or for a
 * NULL runtime or out. Since 1.0. */
typedef tsr_status_t (*tsr_plugin_record_fn_t)(tsr_runtime_t* runtime, size_t index, tsr_plugin_record_t* out);
/* plugin_search_dir: the plugin directories this runtime searched, in order (borrowed, lives
 * as long as the runtime; NULL past the end). Since 1.0 (added after the first draft of 1.0). */
typedef const char* (*tsr_plugin_search_dir_fn_t)(tsr_runtime_t* runtime, size_t index);
/* get_extension: the named extension table a plugin published (e.g. "tessera.graphs.cuda",
 * ext_*.h); static storage of the plugin, valid as long as the runtime. NULL if none.
 * Since 1.0. */
typedef const void* (*tsr_get_extension_fn_t)(tsr_runtime_t* runtime, const char* name);

/* ---- Entries of tsr_api_t (api.h): registration -----------------------------------------
 * Only with the registrar handed to a plugin's init, during init. Each call
 * stages a registration; nothing is visible before init returns NULL. The core copies the def
 * structs and their strings (what they point to stays the plugin's: see each struct).
 * Errors: INVALID_ARGUMENT (missing required fields, a bad name or schema), ALREADY_EXISTS (a
 * name already registered), NOT_FOUND (a kernel or allocator for an unknown op or device
 * type), RESOURCE_EXHAUSTED. */
/* register_device_type: a new device type (device.h); its id into *type_out (may be NULL).
 * "cpu" always receives id 0. Since 1.0. */
typedef tsr_status_t (*tsr_register_device_type_fn_t)(tsr_registrar_t* reg, const tsr_device_type_def_t* def,
                                                      int32_t* type_out);
/* register_allocator: a raw allocator for a device type (memory.h). Since 1.0. */
typedef tsr_status_t (*tsr_register_allocator_fn_t)(tsr_registrar_t* reg, const tsr_raw_allocator_t* def);
/* register_op: a new op from its schema and meta function (op.h). Since 1.0. */
typedef tsr_status_t (*tsr_register_op_fn_t)(tsr_registrar_t* reg, const tsr_op_def_t* def);
/* register_kernel: a kernel for an op on a device type (kernel.h). Since 1.0. */
typedef tsr_status_t (*tsr_register_kernel_fn_t)(tsr_registrar_t* reg, const tsr_kernel_def_t* def);
/* register_extension: publishes a named extension table (static storage owned by the plugin;
 * the name is copied). Since 1.0. */
typedef tsr_status_t (*tsr_register_extension_fn_t)(tsr_registrar_t* reg, const char* name, const void* table);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_H */
