// A well-behaved plugin: its own device type (TOY_NAME, 2 devices, host memory behind it), a raw
// allocator, an op TOY_NAME::axpb(Tensor x, float a=2.0, float b=1.0) -> Tensor with a meta
// function, and its float32 kernel. Built under several names for the loader's cases.
#include <cstdlib>
#include <cstring>

#include "tessera/plugin.hpp"
#include "test_log.hpp"

#ifndef TOY_NAME
#define TOY_NAME "toy"
#endif

namespace {

constexpr const char* kOp = TOY_NAME "::axpb";

tsr_status_t toy_copy(void*, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t n, tsr_stream_t*) {
  std::memcpy(dst, src, n);
  return nullptr;
}

void toy_describe(void*, tsr_device_t d, char* buf, size_t len) {
  std::snprintf(buf, len, "%s test device %d", TOY_NAME, d.index);
}

const tsr_api_t* g_api = nullptr;

[[maybe_unused]] tsr_status_t toy_alloc(void*, tsr_device_t, size_t n, void** out) {
  *out = std::aligned_alloc(64, (n + 63) / 64 * 64);
  if (!*out) return g_api->status_create(TSR_RESOURCE_EXHAUSTED, TOY_NAME ": out of memory");
  return nullptr;
}

[[maybe_unused]] void toy_free(void*, tsr_device_t, void* p, size_t) { std::free(p); }

void axpb_meta(tsr::MetaCall& m) {
  TSR_CHECK(m.tensor_dtype(0) == TSR_F32, TSR_INVALID_ARGUMENT, m.op_name(), ": expected a float32 tensor, got ",
            tsr::dtype_name(m.tensor_dtype(0)));
  m.set_output(0, TSR_F32, m.tensor_device(0), m.tensor_ndim(0), m.tensor_sizes(0));
  m.set_dispatch_dtype(TSR_F32);
}

void axpb_kernel(tsr::KernelCall& k) {
  const double a = k.arg_double(1), b = k.arg_double(2);
  const tsr_tensor_view_t& x = k.input(0);
  const tsr_tensor_view_t& y = k.output(0);
  int64_t n = 1;
  for (int32_t d = 0; d < x.ndim; ++d) n *= x.sizes[d];
  // Inputs here are dense (the tests create them so); outputs always are.
  const float* xp = static_cast<const float*>(x.data);
  float* yp = static_cast<float*>(y.data);
  for (int64_t i = 0; i < n; ++i) yp[i] = static_cast<float>(a * xp[i] + b);
}

void* toy_init(tsr::Registrar& r) {
  g_api = r.api();
  tsr_device_type_def_t dt{};
  dt.name = TOY_NAME;
  dt.device_count = 2;
  dt.copy = toy_copy;
  dt.describe = toy_describe;
  int32_t type = r.device_type(dt);
#ifndef TOY_NO_ALLOCATOR  // the no_allocator case: a device type every op on which fails
  tsr_raw_allocator_t al{};
  al.name = TOY_NAME "_malloc";
  al.device_type = type;
  al.alloc = toy_alloc;
  al.free = toy_free;
  r.allocator(al);
#endif
  r.op(TOY_NAME "::axpb(Tensor x, float a=2.0, float b=1.0) -> Tensor", TSR_META(axpb_meta));
  r.kernel(kOp, TOY_NAME "::axpb_f32", type, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(axpb_kernel));
  return loader_test::log_init(TOY_NAME);
}

}  // namespace

TSR_DEFINE_PLUGIN(TOY_NAME, "1.2.3", "loader test plugin", nullptr, toy_init, loader_test::log_shutdown)
