// Mask ops: nonzero/argwhere, masked_fill (Scalar and 0-dim Tensor value), masked_select,
// masked_scatter. masked_fill_tensor is the primitive with a formula; masked_select and
// masked_scatter are composites over nonzero + index_select / index_copy (their gradients are
// index_add / index_select, the masked_scatter / masked_select pair of PyTorch).
//
// PyTorch overloads: masked_fill.Scalar -> masked_fill, masked_fill.Tensor -> masked_fill_tensor.
#include "ops/index/index_util.hpp"

namespace tsr::core {
namespace {

using namespace index_ops;

void require_bool_mask(const CArgs& a, const tsr::Tensor& mask) {
  if (mask.dtype() != TSR_BOOL)
    a.fail(TSR_INVALID_ARGUMENT,
           std::string("expected mask to be a bool tensor, got ") + dtype_name(mask.dtype()) + " " + shape_of(mask));
}

// ---- nonzero ------------------------------------------------------------------------------

tsr::Tensor nonzero_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  const int64_t n = self.numel() == 0 ? 0 : tsr::sum(tsr::ne(self, 0)).item<int64_t>();
  tsr::Tensor out = tsr::empty({n, self.dim()}, TSR_I64, self.device());
  if (out.numel() > 0) {
    tsr::Tensor x = self.is_contiguous() ? self : self.contiguous();
    tsr_value_t args[1] = {tensor_value(x)};
    launch_kernel(a, "nonzero", self.dtype(), args, 1, {x}, out);
  }
  return out;
}

tsr::Tensor argwhere_fn(CArgs& a) { return tsr::nonzero(a.tensor(0)); }

// Flat positions [n] of the true elements of mask broadcast to `shape`.
tsr::Tensor mask_positions(const tsr::Tensor& mask, const std::vector<int64_t>& shape) {
  tsr::Tensor m = mask.sizes() == shape ? mask : mask.expand(shape);
  tsr::Tensor nz = tsr::nonzero(m.reshape({numel_of(shape)}));
  return nz.reshape({nz.size(0)});
}

// ---- masked_fill --------------------------------------------------------------------------

tsr::Tensor masked_fill_tensor_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), mask = a.tensor(1), value = a.tensor(2);
  require_bool_mask(a, mask);
  if (value.dim() != 0)
    a.fail(TSR_INVALID_ARGUMENT, "only supports a 0-dimensional value tensor, but got tensor with " +
                                     std::to_string(value.dim()) + " dimension(s) " + shape_of(value));
  broadcast2(a, self.sizes(), mask.sizes());
  tsr::Tensor v = value.to(self.device(), self.dtype());
  return tsr::where(mask, v, self);
}

void masked_fill_tensor_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  const tsr::Tensor& mask = g.input(1);
  if (g.needs(0)) g.set(0, tsr::masked_fill(grad, mask, 0.0));
  if (g.needs(2)) g.set(2, tsr::sum(tsr::mul(grad, mask)));
}

tsr::Tensor masked_fill_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  static const tsr::Op op("masked_fill_tensor");
  return tsr::call(op, {self, a.tensor(1), a.scalar_tensor(2).to(self.dtype())});
}

// ---- masked_select / masked_scatter -------------------------------------------------------

tsr::Tensor masked_select_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), mask = a.tensor(1);
  require_bool_mask(a, mask);
  std::vector<int64_t> shape = broadcast2(a, self.sizes(), mask.sizes());
  tsr::Tensor pos = mask_positions(mask, shape);
  tsr::Tensor x = self.sizes() == shape ? self : self.expand(shape);
  return tsr::index_select(x.reshape({numel_of(shape)}), 0, pos);
}

tsr::Tensor masked_scatter_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), mask = a.tensor(1), source = a.tensor(2);
  require_bool_mask(a, mask);
  require_same_dtype(a, self, source, "source");
  std::vector<int64_t> shape = broadcast2(a, self.sizes(), mask.sizes());
  tsr::Tensor pos = mask_positions(mask, shape);
  const int64_t n = pos.numel();
  if (source.numel() < n)
    a.fail(TSR_INVALID_ARGUMENT, "expected source " + shape_of(source) + " to have at least " + std::to_string(n) +
                                     " elements (the number of true mask elements), got " +
                                     std::to_string(source.numel()));
  tsr::Tensor s = source.reshape({source.numel()}).narrow(0, 0, n);
  tsr::Tensor x = self.sizes() == shape ? self : self.expand(shape);
  return tsr::index_copy(x.reshape({numel_of(shape)}), 0, pos, s).reshape(shape);
}

}  // namespace

TSR_CORE_OPS(index_mask) {
  v.push_back({"nonzero(Tensor self) -> Tensor", composite<nonzero_fn>, nullptr, kSaveNothing});
  v.push_back(composite_op("argwhere(Tensor self) -> Tensor", composite<argwhere_fn>));
  v.push_back({"masked_fill_tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", composite<masked_fill_tensor_fn>,
               TSR_GRAD(masked_fill_tensor_backward), kSaveInputs});
  v.push_back(composite_op("masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor", composite<masked_fill_fn>));
  v.push_back(composite_op("masked_select(Tensor self, Tensor mask) -> Tensor", composite<masked_select_fn>));
  v.push_back(
      composite_op("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", composite<masked_scatter_fn>));
  v.push_back(inplace_op("masked_fill_(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)"));
  v.push_back(inplace_op("masked_fill_tensor_(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)"));
  v.push_back(inplace_op("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)"));
}

}  // namespace tsr::core
