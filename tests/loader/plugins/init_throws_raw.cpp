// A plugin that does not use the SDK's plugin macro and lets a C++ exception escape init
// (forbidden by the ABI): the loader must catch it and refuse the plugin.
#include <stdexcept>

#include "tessera/plugin.h"

namespace {
tsr_status_t init(const tsr_api_t*, tsr_runtime_t*, tsr_registrar_t*, void**) {
  throw std::runtime_error("boom from raw init");
}
}  // namespace

extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t) {
  static const tsr_plugin_t p = {
      sizeof(tsr_plugin_t), TSR_ABI_VERSION, 0, "thrower_raw", "0.1", "throws", nullptr, init, nullptr};
  return &p;
}
