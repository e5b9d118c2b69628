// @NAME@: an op library for Tessera, built against the SDK alone. It defines one new op,
//
//   @NAME@::scale_add(Tensor x, Tensor y, float alpha=1.0) -> Tensor     out = alpha * x + y
//
// with the three pieces every op has: a meta function (validation, output shape and dtype), a
// kernel per device type (here cpu, float32 and float64), and a backward formula written with
// SDK ops (so the gradient runs on every device and is differentiable again).
// The core does the rest: schema parsing and defaults, argument and device checks, output
// allocation or out= checking, kernel selection, errors as statuses.
#include <string>

#include "tessera/plugin.hpp"
#include "tessera/plugin_backward.hpp"

#ifndef @NAME_UPPER@_VERSION
#define @NAME_UPPER@_VERSION "0.1.0"
#endif

namespace {

constexpr const char* kOpName = "@NAME@::scale_add";
constexpr const char* kSchema = "@NAME@::scale_add(Tensor x, Tensor y, float alpha=1.0) -> Tensor";
enum : size_t { kArgX = 0, kArgY = 1, kArgAlpha = 2 };  // argument positions in the schema

std::string shape_str(int32_t ndim, const int64_t* sizes) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(sizes[d]);
  return s + "]";
}

// ---- meta: every check a kernel must not repeat, with messages naming op and shapes -----------

void scale_add_meta(tsr::MetaCall& c) {
  const int32_t nd = c.tensor_ndim(kArgX);
  const std::string xs = shape_str(nd, c.tensor_sizes(kArgX));
  const std::string ys = shape_str(c.tensor_ndim(kArgY), c.tensor_sizes(kArgY));
  TSR_CHECK(xs == ys, TSR_INVALID_ARGUMENT, c.op_name(), ": x ", xs, " and y ", ys, " must have the same shape");
  const tsr_dtype_t dt = c.tensor_dtype(kArgX);
  TSR_CHECK(c.tensor_dtype(kArgY) == dt, TSR_INVALID_ARGUMENT, c.op_name(), ": x is ", tsr::dtype_name(dt),
            " but y is ", tsr::dtype_name(c.tensor_dtype(kArgY)), " (same dtype required)");
  TSR_CHECK(tsr::is_floating(dt), TSR_INVALID_ARGUMENT, c.op_name(), ": expected a floating dtype, got ",
            tsr::dtype_name(dt));
  c.set_output(0, dt, c.tensor_device(kArgX), nd, c.tensor_sizes(kArgX));
  c.set_dispatch_dtype(dt);  // the dtype the kernel is chosen for
}

// ---- the cpu kernel: any strides (views hold strides in elements) -----------------------------

template <class T>
void scale_add_typed(tsr::KernelCall& c) {
  const tsr_tensor_view_t& x = c.input(kArgX);
  const tsr_tensor_view_t& y = c.input(kArgY);
  const tsr_tensor_view_t& out = c.output(0);
  const T alpha = static_cast<T>(c.arg_double(kArgAlpha));
  int64_t n = 1;
  for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
  int64_t idx[TSR_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; ++i) {
    int64_t ox = 0, oy = 0, oo = 0;
    for (int32_t d = 0; d < out.ndim; ++d) {
      ox += idx[d] * x.strides[d];
      oy += idx[d] * y.strides[d];
      oo += idx[d] * out.strides[d];
    }
    static_cast<T*>(out.data)[oo] = alpha * static_cast<const T*>(x.data)[ox] + static_cast<const T*>(y.data)[oy];
    for (int32_t d = out.ndim - 1; d >= 0 && ++idx[d] == out.sizes[d]; --d) idx[d] = 0;  // next index
  }
}

void scale_add_cpu(tsr::KernelCall& c) {
  tsr::dispatch_mask<TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64)>(
      c.dtype(), c.op_name(), [&](auto tag) { scale_add_typed<typename decltype(tag)::type>(c); });
}

// ---- backward: d/dx = alpha * grad, d/dy = grad, written with ops --------------------------------

void scale_add_backward(tsr::BackwardCall& c) {
  const tsr::Tensor grad = c.grad(0);
  if (!grad.defined()) return;  // no gradient reached the result
  if (c.needs(kArgX)) c.set(kArgX, grad * c.arg_double(kArgAlpha));
  if (c.needs(kArgY)) c.set(kArgY, grad);
}

// ---- registration ---------------------------------------------------------------------------------

void plugin_init(tsr::Registrar& r) {
  // "cpu" is defined by the cpu plugin (our manifest depends on it, so it is loaded first).
  int32_t cpu = -1;
  tsr::check(r.api(), r.api()->device_type_lookup(r.runtime(), "cpu", &cpu));
  r.op(kSchema, TSR_META(scale_add_meta), TSR_BACKWARD(scale_add_backward));
  r.kernel(kOpName, "@NAME@::scale_add_cpu", cpu, TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64),
           TSR_KERNEL(scale_add_cpu));
}

}  // namespace

// The plugin's only exported symbol. The name must equal the manifest's "name".
TSR_DEFINE_PLUGIN("@NAME@", @NAME_UPPER@_VERSION, "@NAME@ op library: @NAME@::scale_add", nullptr, plugin_init,
                  nullptr)
