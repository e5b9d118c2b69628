// The engines that live in libraries of their own (gloo, mpi): the plugin opens
// fabric/tessera_fabric_<engine>.so beside its own file on the first group that needs it, so a
// process that never uses an engine never maps it or what it links. gloo_proxy.cpp and
// mpi_proxy.cpp use this one mechanism; each keeps its own table of entry points.
#pragma once

#include <string>
#include <vector>

#include "group.hpp"

namespace fabric {

// Opens `file` from the fabric/ subdirectory beside the plugin (once per process, never closed,
// like every plugin library) and resolves `names` into *fns, in order. On failure returns false
// with *error saying why ("cannot load the <engine> engine PATH: ...", or "PATH lacks the
// engine's entry points"), and *fns empty. Not thread-safe: callers load under a std::call_once.
bool load_engine_library(const std::string& engine, const std::string& file, const std::vector<const char*>& names,
                         std::vector<void*>* fns, std::string* error);

// Throws the status an engine library returned (and frees it), as a Failure.
[[noreturn]] void rethrow(tsr_status_t st);

}  // namespace fabric
