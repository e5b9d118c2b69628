/* Tessera C ABI: status handles.
 *
 * Every fallible call returns tsr_status_t. Success is NULL (test with `if (st)`).
 * A non-NULL status owns a canonical code and a message; it is created by the core
 * (tsr_api_t.status_create, also for plugins, so memory is freed by the side that made it)
 * and must be released exactly once with tsr_api_t.status_free by whoever receives it.
 * Status handles are not shared between threads while in use but may be passed to another.
 */
#ifndef TESSERA_STATUS_H
#define TESSERA_STATUS_H

#include "tessera/version.h"

typedef struct tsr_status_s* tsr_status_t;

/* Canonical codes (values fixed; same meaning as absl/gRPC canonical codes). */
typedef enum tsr_code_t {
  TSR_OK = 0,
  TSR_CANCELLED = 1,
  TSR_UNKNOWN = 2,
  TSR_INVALID_ARGUMENT = 3,
  TSR_DEADLINE_EXCEEDED = 4,
  TSR_NOT_FOUND = 5,
  TSR_ALREADY_EXISTS = 6,
  TSR_PERMISSION_DENIED = 7,
  TSR_RESOURCE_EXHAUSTED = 8, /* out of memory is reported with this code */
  TSR_FAILED_PRECONDITION = 9,
  TSR_ABORTED = 10,
  TSR_OUT_OF_RANGE = 11,
  TSR_UNIMPLEMENTED = 12,
  TSR_INTERNAL = 13,
  TSR_UNAVAILABLE = 14,
  TSR_DATA_LOSS = 15
} tsr_code_t;

#define TSR_OUT_OF_MEMORY TSR_RESOURCE_EXHAUSTED

#endif /* TESSERA_STATUS_H */
