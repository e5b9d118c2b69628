// A plugin whose init registers a device type, an op and kernels (for its own op and for the
// built-in "add"), then fails. None of it may become visible.
#include "tessera/plugin.hpp"

namespace {

tsr_status_t copy(void*, tsr_device_t, void*, tsr_device_t, const void*, size_t, tsr_stream_t*) { return nullptr; }
void meta(tsr::MetaCall&) {}
void kernel(tsr::KernelCall&) {}

tsr_status_t init(const tsr_api_t* api, tsr_runtime_t* rt, tsr_registrar_t* reg, void**) {
  tsr::Registrar r(api, rt, reg);
  tsr_device_type_def_t dt{};
  dt.name = "ghost";
  dt.device_count = 1;
  dt.copy = copy;
  int32_t type = r.device_type(dt);  // the SDK helpers throw on error; none expected here
  r.op("ghost::haunt(Tensor x) -> Tensor", TSR_META(meta));
  r.kernel("ghost::haunt", "ghost::haunt_kernel", type, 0, TSR_KERNEL(kernel));
  r.kernel("add", "ghost::add", type, 0, TSR_KERNEL(kernel));
  return api->status_create(TSR_FAILED_PRECONDITION, "ghost init failed on purpose (no ectoplasm)");
}

}  // namespace

TSR_DEFINE_PLUGIN("ghost", "0.0.1", "fails its init", nullptr, init, nullptr)
