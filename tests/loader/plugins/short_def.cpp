// A plugin whose init registers one broken definition through the raw API (the SDK helpers
// always fill struct_size): SHORT_DEF picks which. The registration must fail with a message
// naming the plugin and the op or allocator; init passes that failure on (the SDK turns the
// exception into init's status), so the plugin is refused. Accepted, a zero struct_size kernel
// would sit in the table with fn == NULL and the next call would jump to address 0.
#include <cstddef>

#include "tessera/plugin.hpp"

#ifndef SHORT_DEF
#error "define SHORT_DEF"
#endif
#ifndef SHORT_NAME
#error "define SHORT_NAME"
#endif

namespace {

// The faults SHORT_DEF can select.
#define SHORT_KERNEL_SIZE0 1  // a kernel definition with struct_size 0
#define SHORT_KERNEL_CUT 2    // struct_size ending just before fn
#define SHORT_KERNEL_NOFN 3   // a full struct with fn == NULL
#define SHORT_ALLOC_SIZE0 4   // an allocator definition with struct_size 0

tsr_status_t copy(void*, tsr_device_t, void*, tsr_device_t, const void*, size_t, tsr_stream_t*) { return nullptr; }
[[maybe_unused]] tsr_status_t alloc(void*, tsr_device_t, size_t, void** out) {
  *out = nullptr;
  return nullptr;
}
[[maybe_unused]] void release(void*, tsr_device_t, void*, size_t) {}
void meta(tsr::MetaCall&) {}
[[maybe_unused]] void kernel(tsr::KernelCall&) {}

void* init(tsr::Registrar& r) {
  tsr_device_type_def_t dt{};
  dt.name = SHORT_NAME;
  dt.device_count = 1;
  dt.copy = copy;
  int32_t type = r.device_type(dt);
  r.op(SHORT_NAME "::op(Tensor x) -> Tensor", TSR_META(meta));
#if SHORT_DEF == SHORT_ALLOC_SIZE0
  tsr_raw_allocator_t al{};
  al.struct_size = 0;
  al.name = SHORT_NAME "_alloc";
  al.device_type = type;
  al.alloc = alloc;
  al.free = release;
  tsr::check(r.api(), r.api()->register_allocator(r.raw(), &al));
#else
  tsr_kernel_def_t k{};
  k.struct_size = sizeof(tsr_kernel_def_t);
  k.op_name = SHORT_NAME "::op";
  k.kernel_name = SHORT_NAME "::op_kernel";
  k.device_type = type;
  k.fn = TSR_KERNEL(kernel);
#if SHORT_DEF == SHORT_KERNEL_SIZE0
  k.struct_size = 0;
#elif SHORT_DEF == SHORT_KERNEL_CUT
  k.struct_size = offsetof(tsr_kernel_def_t, fn);
#elif SHORT_DEF == SHORT_KERNEL_NOFN
  k.fn = nullptr;
#endif
  tsr::check(r.api(), r.api()->register_kernel(r.raw(), &k));
#endif
  return nullptr;
}

}  // namespace

TSR_DEFINE_PLUGIN(SHORT_NAME, "0.1", "registers a broken definition", nullptr, init, nullptr)
