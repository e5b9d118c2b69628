// A plugin whose header says it was built against ABI 2.0 (the manifest still says 1.0).
#include "tessera/plugin.h"

namespace {
tsr_status_t init(const tsr_api_t*, tsr_runtime_t*, tsr_registrar_t*, void**) { return nullptr; }
}  // namespace

extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t) {
  static const tsr_plugin_t p = {sizeof(tsr_plugin_t), (2u << 16) | 0u, 0,    "future", "9.0",
                                 "ABI 2 plugin",       nullptr,         init, nullptr};
  return &p;
}
