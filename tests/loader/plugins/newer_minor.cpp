// A plugin built against a newer minor of ABI 1: its header has fields appended after
// `shutdown` (struct_size says so). An older core must load it and ignore the extras.
#include "tessera/plugin.hpp"
#include "test_log.hpp"

namespace {

struct plugin_v1_7 {
  tsr_plugin_t base;
  // Appended in the (imaginary) minor 7.
  const char* homepage;
  uint64_t capabilities;
  void (*on_idle)(void*);
};

tsr_status_t init(const tsr_api_t*, tsr_runtime_t*, tsr_registrar_t*, void** state) {
  *state = loader_test::log_init("newer");
  return nullptr;
}
void shutdown(const tsr_api_t*, void* state) { loader_test::log_shutdown(state); }

}  // namespace

extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t host) {
  if (TSR_ABI_VERSION_MAJOR(host) != 1) return nullptr;
  static const plugin_v1_7 p = {
      {sizeof(plugin_v1_7), (1u << 16) | 7u, 0, "newer", "1.7.0", "built against ABI 1.7", nullptr, init, shutdown},
      "https://example.invalid",
      0xFFu,
      nullptr};
  return &p.base;
}
