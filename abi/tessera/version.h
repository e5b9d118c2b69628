/* Tessera C ABI: versioning, export macros and the compatibility rules.
 *
 * Rules (what is a MAJOR vs a MINOR change):
 *  - MINOR (compatible): appending a field at the END of a struct that starts with
 *    `size_t struct_size`; appending a function pointer at the END of a function table;
 *    adding a new enum value, a new op, a new device type, a new status code.
 *    Readers must check `struct_size` (TSR_HAS_FIELD) before touching a field that was added
 *    after the version they were built against; writers always set struct_size = sizeof(their
 *    struct). A plugin built against an older minor loads into a newer core; a newer plugin
 *    loads into an older core provided it only uses what the core's tables report.
 *  - MAJOR (incompatible): removing or reordering a field or a table entry, changing a type,
 *    the meaning of a value, a calling convention or ownership rule. The loader refuses a
 *    plugin whose major differs from the core's.
 *  - Enum values are fixed forever once released; new ones only take unused values.
 * Every change is recorded in abi/CHANGES.md (what each minor added, and how to add one); each
 * declaration says the minor it appeared in ("Since 1.2."). Conventions: tessera/tessera.h.
 */
#ifndef TESSERA_VERSION_H
#define TESSERA_VERSION_H

#include <stddef.h>
#include <stdint.h>

#define TSR_ABI_MAJOR 1
#define TSR_ABI_MINOR 6
/* One 32-bit number: major in the high 16 bits, minor in the low 16 bits. */
#define TSR_ABI_VERSION ((uint32_t)((TSR_ABI_MAJOR << 16) | TSR_ABI_MINOR))
#define TSR_ABI_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define TSR_ABI_VERSION_MINOR(v) ((uint32_t)(v)&0xFFFFu)

/* Size of a growable struct as the writer knows it. */
#define TSR_STRUCT_SIZE(type) ((size_t)sizeof(type))
/* True when a struct whose size field says `size` contains `field` of `type`. */
#define TSR_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

#if defined(_WIN32)
#define TSR_EXPORT __declspec(dllexport)
#else
#define TSR_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define TSR_EXTERN_C extern "C"
#else
#define TSR_EXTERN_C
#endif

/* Hard limits of the ABI (shared by every implementation). */
#define TSR_MAX_DIMS 16         /* dimensions of one tensor */
#define TSR_ITER_MAX_OPERANDS 8 /* operands of one elementwise/reduction iteration */

#endif /* TESSERA_VERSION_H */
