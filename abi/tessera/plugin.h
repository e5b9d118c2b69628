/* Tessera C ABI: the plugin contract.
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
 */
#ifndef TESSERA_PLUGIN_H
#define TESSERA_PLUGIN_H

#include "tessera/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tsr_api_t;

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

typedef const tsr_plugin_t* (*tsr_plugin_query_fn_t)(uint32_t host_abi_version);

#define TSR_PLUGIN_QUERY_SYMBOL "tsr_plugin_query"

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_H */
