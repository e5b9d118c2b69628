// Dependency-order case, the dependent (its file sorts first, its manifest depends on
// "provider"): registers a kernel for provider::twice on provdev, which only works when the
// provider's init ran first.
#include "tessera/plugin.hpp"
#include "test_log.hpp"

namespace {
void kernel(tsr::KernelCall&) {}
void* init(tsr::Registrar& r) {
  int32_t type = -1;
  tsr::check(r.api(), r.api()->device_type_lookup(r.runtime(), "provdev", &type));
  r.kernel("provider::twice", "consumer::twice", type, 0, TSR_KERNEL(kernel));
  return loader_test::log_init("consumer");
}
}  // namespace

TSR_DEFINE_PLUGIN("consumer", "1.0", "uses the provider's op", nullptr, init, loader_test::log_shutdown)
