// What every C entry of the core does at its boundary: check its pointers, and turn whatever
// C++ throws into a status naming the entry (tessera/status.h), so nothing unwinds into C.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "runtime/status.hpp"

// Runs the statements after `where` (which return a status; braces and commas allowed);
// bad_alloc becomes RESOURCE_EXHAUSTED, any other exception INTERNAL, both naming `where`.
#define TSR_GUARD(where, ...)                                                                            \
  try {                                                                                                  \
    __VA_ARGS__                                                                                          \
  } catch (const std::bad_alloc&) {                                                                      \
    return ::tsr::core::make_status(TSR_RESOURCE_EXHAUSTED, std::string(where) + ": out of host memory"); \
  } catch (const std::exception& e) {                                                                    \
    return ::tsr::core::make_status(TSR_INTERNAL, std::string(where) + ": " + e.what());                  \
  }

// INVALID_ARGUMENT "where: what" unless cond holds.
#define TSR_CHECK_ARG(cond, where, what) \
  if (!(cond)) return ::tsr::core::make_status(TSR_INVALID_ARGUMENT, std::string(where) + ": " + what)
