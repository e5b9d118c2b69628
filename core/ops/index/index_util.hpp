// Helpers shared by the index op family (ops/index/*.cpp): argument checks with messages that
// name the op and the shapes, index tensors normalized to contiguous int64, kernel launches
// from SDK-level implementations.
#pragma once

#include <string>
#include <vector>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::index_ops {

inline std::string shape_of(const tsr::Tensor& t) {
  std::vector<int64_t> s = t.sizes();
  return shape_str(s.data(), static_cast<int>(s.size()));
}
inline std::string shape_of(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }

// dim wrapped into [0, max(ndim, 1)) (a 0-dim tensor accepts dims 0 and -1, as in PyTorch).
inline int64_t norm_dim(const CArgs& a, int64_t dim, int64_t ndim) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    a.fail(TSR_INVALID_ARGUMENT, "dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
                                     std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

// An index argument as an int64 tensor on self's device (dense unless `dense` is false); int32
// is converted.
inline tsr::Tensor as_index(const CArgs& a, const tsr::Tensor& idx, const tsr::Tensor& self, const char* what = "index",
                            bool dense = true) {
  tsr_dtype_t dt = idx.dtype();
  if (dt != TSR_I64 && dt != TSR_I32)
    a.fail(TSR_INVALID_ARGUMENT,
           std::string(what) + " must be an int64 or int32 tensor, got " + dtype_name(dt) + " " + shape_of(idx));
  if (idx.device() != self.device())
    a.fail(TSR_INVALID_ARGUMENT, std::string(what) + " is on " + idx.device().str(idx.runtime()) + " but self is on " +
                                     self.device().str(self.runtime()));
  tsr::Tensor r = dt == TSR_I64 ? idx : idx.to(TSR_I64);
  return !dense || r.is_contiguous() ? r : r.contiguous();
}

inline void require_same_dtype(const CArgs& a, const tsr::Tensor& self, const tsr::Tensor& other, const char* what) {
  if (self.dtype() != other.dtype())
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected self and ") + what + " to have the same dtype, but got " +
                                     dtype_name(self.dtype()) + " and " + dtype_name(other.dtype()));
}

inline tsr_value_t int_value(int64_t v) {
  tsr_value_t r;
  r.tag = TSR_VALUE_INT;
  r.u.i = v;
  return r;
}
inline tsr_value_t tensor_value(const tsr::Tensor& t) {
  tsr_value_t r;
  r.tag = TSR_VALUE_TENSOR;
  r.u.tensor = t.get();
  return r;
}

// Runs op `op_name`'s kernel for (self's device, dtype) with explicit arguments and views.
inline void launch_kernel(const CArgs& a, const char* op_name, tsr_dtype_t dtype, const tsr_value_t* args, size_t nargs,
                          const std::vector<tsr::Tensor>& inputs, const tsr::Tensor& output) {
  Runtime* rt = a.ctx().rt;
  auto it = rt->op_by_name.find(op_name);
  if (it == rt->op_by_name.end()) a.fail(TSR_INTERNAL, std::string("no op '") + op_name + "'");
  Tensor* ins[kMaxArgs];
  for (size_t i = 0; i < inputs.size(); ++i) ins[i] = inputs[i].get();
  Tensor* out = output.get();
  tsr::check(launch_op(rt, it->second, out->device, dtype, args, nargs, ins, static_cast<int>(inputs.size()), &out, 1,
                       nullptr));
}

// Broadcast shape of two shapes (right-aligned), error naming both.
inline std::vector<int64_t> broadcast2(const CArgs& a, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  size_t n = std::max(x.size(), y.size());
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t sx = i < n - x.size() ? 1 : x[i - (n - x.size())];
    int64_t sy = i < n - y.size() ? 1 : y[i - (n - y.size())];
    if (sx != sy && sx != 1 && sy != 1)
      a.fail(TSR_INVALID_ARGUMENT, "shapes " + shape_of(x) + " and " + shape_of(y) + " cannot be broadcast together");
    r[i] = sx == 1 ? sy : sx;
  }
  return r;
}

inline int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace tsr::core::index_ops
