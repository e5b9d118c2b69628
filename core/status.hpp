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

inline tsr_status_t make_status(tsr_code_t code, std::string message) {
  return new (std::nothrow) tsr_status_s{code, std::move(message)};
}

// "a, b, c" -> used by messages that print shapes.
std::string shape_str(const int64_t* sizes, int ndim);

}  // namespace tsr::core

// Propagate a non-NULL status.
#define TSR_RETURN_IF_ERROR(expr)          \
  do {                                     \
    tsr_status_t tsr_st_ = (expr);         \
    if (tsr_st_ != nullptr) return tsr_st_; \
  } while (0)
