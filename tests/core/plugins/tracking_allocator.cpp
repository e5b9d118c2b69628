// Test plugin: a replacement raw allocator "tracking" for cpu that counts its calls in a
// process-wide table (the test reads it through the "tracking.counters" extension), to prove
// that TESSERA_ALLOC_CONF selects plugin allocators per device type.
#include <atomic>
#include <cstdlib>

#include "tessera/plugin.hpp"

namespace {

struct Counters {
  std::atomic<long> allocs{0};
  std::atomic<long> frees{0};
};
Counters g_counters;

tsr_status_t tracking_alloc(void* self, tsr_device_t, size_t nbytes, void** out) {
  void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (!p) return nullptr;  // unreachable in the test; a real allocator returns a status
  static_cast<Counters*>(self)->allocs++;
  *out = p;
  return nullptr;
}

void tracking_free(void* self, tsr_device_t, void* ptr, size_t) {
  static_cast<Counters*>(self)->frees++;
  std::free(ptr);
}

// test::only_f32(Tensor a) -> Tensor: a kernel for float32 only, to exercise the dispatcher's
// "no kernel" report.
void only_f32_meta(tsr::MetaCall& m) {
  m.set_output(0, m.tensor_dtype(0), m.tensor_device(0), m.tensor_ndim(0), m.tensor_sizes(0));
  m.set_dispatch_dtype(m.tensor_dtype(0));
}

void only_f32_kernel(tsr::KernelCall& k) {
  const tsr_tensor_view_t& in = k.input(0);
  const tsr_tensor_view_t& out = k.output(0);
  int64_t n = 1;
  for (int d = 0; d < in.ndim; ++d) n *= in.sizes[d];
  // the meta keeps the shape; the core hands contiguous outputs; inputs here are contiguous
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(out.data)[i] = 2 * static_cast<const float*>(in.data)[i];
}

void init(tsr::Registrar& r) {
  r.op("test::only_f32(Tensor a) -> Tensor", TSR_META(only_f32_meta));
  r.kernel("test::only_f32", "tracking::only_f32", TSR_DEVICE_TYPE_CPU, TSR_DTYPE_BIT(TSR_F32),
           TSR_KERNEL(only_f32_kernel));
  tsr_raw_allocator_t a{};
  a.name = "tracking";
  a.device_type = TSR_DEVICE_TYPE_CPU;
  a.flags = TSR_ALLOCATOR_CACHES_ITSELF;  // every tensor goes straight to us
  a.self = &g_counters;
  a.alloc = tracking_alloc;
  a.free = tracking_free;
  r.allocator(a);
  r.extension("tracking.counters", &g_counters);
}

}  // namespace

TSR_DEFINE_PLUGIN("tracking_allocator", "1.0", "counts allocations (test plugin)", nullptr, init, nullptr)
