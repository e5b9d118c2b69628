// The engine libraries the fabric plugin opens on first use (tessera_fabric_gloo.so,
// tessera_fabric_nccl.so in the fabric/ subdirectory beside the plugin, which the loader does
// not scan): a process that never needs an engine never maps it or what it links (Gloo's
// ibverbs, NCCL's 200 MB and the CUDA runtime).
#pragma once

#include <string>

namespace fabric {

// Opens `file` from the plugins' fabric/ subdirectory (never closed, like every plugin
// library) and looks up each of `symbols` (n names) into out[i]. Returns "" on success, else
// why not (which file, dlerror's text, or the missing entry point); out is then untouched.
std::string open_engine_library(const char* file, const char* const* symbols, void** out, int n);

}  // namespace fabric
