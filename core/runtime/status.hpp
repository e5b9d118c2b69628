// Status objects behind tsr_status_t, and helpers to build them with formatted messages.
#pragma once

#include <new>
#include <string>
#include <utility>

#include "tessera/status.h"

struct tsr_status_s {
  tsr_code_t code;
  std::string message;
};

namespace tsr::core {

// When even the status cannot be allocated, this static one is returned instead of NULL
// (which would read as success); free_status never deletes it.
tsr_status_t out_of_host_memory_status();

inline tsr_status_t make_status(tsr_code_t code, std::string message) {
  try {
    return new tsr_status_s{code, std::move(message)};
  } catch (const std::bad_alloc&) {
    return out_of_host_memory_status();
  }
}

// Prepends "prefix: " to a status message (in place); returns st.
inline tsr_status_t prefix_status(tsr_status_t st, const std::string& prefix) {
  if (st && st != out_of_host_memory_status()) st->message = prefix + ": " + st->message;
  return st;
}

inline void free_status(tsr_status_t st) {
  if (st != out_of_host_memory_status()) delete st;
}

// "a, b, c" -> used by messages that print shapes.
std::string shape_str(const int64_t* sizes, int ndim);

}  // namespace tsr::core

// Propagate a non-NULL status.
#define TSR_RETURN_IF_ERROR(expr)           \
  do {                                      \
    tsr_status_t tsr_st_ = (expr);          \
    if (tsr_st_ != nullptr) return tsr_st_; \
  } while (0)
