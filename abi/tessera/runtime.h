/* Tessera C ABI: the runtime (plugins loaded, devices, ops, allocators, random state,
 * precision switches), logging and the core's version.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_RUNTIME_H
#define TESSERA_RUNTIME_H

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Owns devices, ops, allocators and plugins. Opaque. Since 1.0. */
typedef struct tsr_runtime_s tsr_runtime_t;
/* Staging area of one plugin's init: registrations made through it are committed when init
 * succeeds (plugin.h). Owned by the core, valid only during init. Since 1.0. */
typedef struct tsr_registrar_s tsr_registrar_t;

/* Since 1.0. */
typedef enum tsr_log_level_t {
  TSR_LOG_ERROR = 0,
  TSR_LOG_WARN = 1,
  TSR_LOG_INFO = 2,
  TSR_LOG_DEBUG = 3
} tsr_log_level_t;

/* Options of runtime_create. Zero/NULL fields take the documented defaults. Since 1.0. */
typedef struct tsr_runtime_options_t {
  size_t struct_size;
  /* Colon-separated plugin directories searched first (default: $TESSERA_PLUGIN_PATH). */
  const char* plugin_path;
  /* Nonzero: do not search the plugins/ directory installed beside the core. */
  int32_t no_default_plugins;
  int32_t reserved;
  /* Allocator configuration (default: $TESSERA_ALLOC_CONF). */
  const char* alloc_conf;
} tsr_runtime_options_t;

/* Numerical precision switches (precision_set / precision_get). Values are fixed forever.
 * Since 1.2. */
typedef enum tsr_precision_setting_t {
  TSR_PRECISION_MATMUL_ALLOW_TF32 = 1,            /* f32 GEMMs may use TF32 tensor cores */
  TSR_PRECISION_CONV_ALLOW_TF32 = 2,              /* f32 convolutions may use TF32 */
  TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION = 3, /* f16 GEMMs may accumulate in f16 */
  TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION = 4 /* bf16 GEMMs may reduce in bf16 */
} tsr_precision_setting_t;

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* version_string: the core's version ("0.1.0"), static. Since 1.0. */
typedef const char* (*tsr_version_string_fn_t)(void);

/* runtime_create: a new runtime in *out, owned by the caller, with plugins loaded per
 * `options` (NULL: all defaults). A plugin that fails to load is refused and recorded
 * (plugin_record), not an error. Destroy it with runtime_destroy after releasing all its
 * tensors, streams, events and files. Errors: INVALID_ARGUMENT (NULL out, a malformed
 * alloc_conf), NOT_FOUND (alloc_conf names an allocator no plugin registered), RESOURCE_EXHAUSTED. Since 1.0. */
typedef tsr_status_t (*tsr_runtime_create_fn_t)(const tsr_runtime_options_t* options, tsr_runtime_t** out);
/* runtime_destroy: waits for the devices, shuts plugins down (reverse load order) and frees
 * the runtime; NULL is a no-op. Not concurrently with other calls on the same runtime.
 * Since 1.0. */
typedef void (*tsr_runtime_destroy_fn_t)(tsr_runtime_t* runtime);
/* runtime_default: the process-wide runtime, created on first use from the environment and
 * never destroyed (borrowed: do not pass it to runtime_destroy). Every call after a failed
 * creation returns a copy of that first error. Since 1.0. */
typedef tsr_status_t (*tsr_runtime_default_fn_t)(tsr_runtime_t** out);
/* manual_seed: sets the seed of the runtime's random stream and resets its offset to 0
 * (see rng_get_state). The runtime must not be NULL (a NULL runtime is ignored; debug builds
 * assert). Since 1.0. */
typedef void (*tsr_manual_seed_fn_t)(tsr_runtime_t* runtime, uint64_t seed);
/* log: writes `message` (NULL reads as "") through the core's logger at `level`. Since 1.0. */
typedef void (*tsr_log_fn_t)(tsr_log_level_t level, const char* message);
/* runtime_serial: a number unique to this runtime within the process (never reused, unlike
 * its address): caches keyed by runtime use it to notice a destroyed-and-recreated runtime.
 * 0 for NULL. Since 1.0 (added after the first draft of 1.0). */
typedef uint64_t (*tsr_runtime_serial_fn_t)(const tsr_runtime_t* runtime);

/* Random-number state. Random ops draw from a counter-based Philox stream: (seed, offset) is
 * the whole state of a runtime's generator (manual_seed sets seed and resets offset to 0;
 * every random op advances offset by the counter blocks it used). Saving and restoring the
 * pair replays the same numbers, which is what a resumed training run needs. The pair is read
 * and written as two atomics: a random op running concurrently in another thread may see a
 * mix, as with manual_seed. Errors: INVALID_ARGUMENT for a NULL runtime or out pointer. */
/* rng_get_state: the generator's (seed, offset) into *seed and *offset. Since 1.1. */
typedef tsr_status_t (*tsr_rng_get_state_fn_t)(tsr_runtime_t* runtime, uint64_t* seed, uint64_t* offset);
/* rng_set_state: restores a pair read by rng_get_state. Since 1.1. */
typedef tsr_status_t (*tsr_rng_set_state_fn_t)(tsr_runtime_t* runtime, uint64_t seed, uint64_t offset);

/* Numerical precision settings: runtime-wide switches that backends read on every call (one
 * atomic load), as PyTorch's torch.backends.cuda.matmul.allow_tf32 and friends. Defaults
 * follow PyTorch: matmul TF32 off, convolution TF32 on, reduced-precision reductions in f16
 * and bf16 GEMMs on. Also set from the environment at runtime creation:
 * TESSERA_ALLOW_TF32=0|1 sets both TF32 switches. */
/* precision_set: turns a switch on (enabled != 0) or off. INVALID_ARGUMENT for an unknown
 * setting. Since 1.2. */
typedef tsr_status_t (*tsr_precision_set_fn_t)(tsr_runtime_t* runtime, tsr_precision_setting_t setting,
                                               int32_t enabled);
/* precision_get: 1 when the switch is on, else 0 (also for an unknown setting or a NULL
 * runtime). Since 1.2. */
typedef int32_t (*tsr_precision_get_fn_t)(tsr_runtime_t* runtime, tsr_precision_setting_t setting);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_RUNTIME_H */
