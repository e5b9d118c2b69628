// Dependency-order case, the dependency: defines device type "provdev" and the op
// provider::twice (no kernel of its own).
#include <cstring>

#include "tessera/plugin.hpp"
#include "test_log.hpp"

namespace {
tsr_status_t copy(void*, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t n, tsr_stream_t*) {
  std::memcpy(dst, src, n);
  return nullptr;
}
void meta(tsr::MetaCall& m) {
  m.set_output(0, m.tensor_dtype(0), m.tensor_device(0), m.tensor_ndim(0), m.tensor_sizes(0));
}
void* init(tsr::Registrar& r) {
  tsr_device_type_def_t dt{};
  dt.name = "provdev";
  dt.device_count = 1;
  dt.copy = copy;
  r.device_type(dt);
  r.op("provider::twice(Tensor x) -> Tensor", TSR_META(meta));
  return loader_test::log_init("provider");
}
}  // namespace

TSR_DEFINE_PLUGIN("provider", "1.0", "defines an op", nullptr, init, loader_test::log_shutdown)
