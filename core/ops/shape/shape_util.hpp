// Helpers shared by the shape family's op files (ops/shape/*.cpp) only.
#pragma once

#include <string>
#include <vector>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::shape_ops {

inline std::string shp(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }
inline std::string shp(const tsr::Tensor& t) { return shp(t.sizes()); }

// Wraps dim into [0, ndim) (ndim 0 accepts -1 and 0, as PyTorch's scalar rule); throws naming op.
inline int64_t wrap(const CArgs& a, int64_t dim, int64_t ndim) {
  int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    a.fail(TSR_INVALID_ARGUMENT, "dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
                                     std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

// Factories in the runtime of the call (tsr::empty uses the process default runtime).
inline tsr::Tensor new_empty(const CArgs& a, const std::vector<int64_t>& sizes, tsr_dtype_t dt, tsr::Device dev) {
  tsr_tensor_t* out = nullptr;
  tsr::check(tsr::api()->tensor_empty(a.runtime(), static_cast<int32_t>(sizes.size()), sizes.data(), dt, dev.d, &out));
  return tsr::Tensor::adopt(out);
}
inline tsr::Tensor new_full(const CArgs& a, const std::vector<int64_t>& sizes, tsr_dtype_t dt, tsr::Device dev,
                            const tsr::Arg& value) {
  tsr::Tensor t = new_empty(a, sizes, dt, dev);
  if (t.numel() > 0) {
    static const tsr::Op fill("_fill");
    tsr::call_multi(fill, {t, value}, {t});
  }
  return t;
}

// Runs this op's kernel with one input view and one (dense) output view; args as given.
inline void launch_kernel(const CArgs& a, const tsr::Tensor& in, const tsr::Tensor& out, const tsr_value_t* args,
                          size_t nargs) {
  if (out.numel() == 0) return;
  CallCtx& c = a.ctx();
  Tensor* ins[1] = {in.get()};
  Tensor* outs[1] = {out.get()};
  tsr::check(launch_op(c.rt, c.op, out.get()->device, out.get()->dtype, args, nargs, ins, 1, outs, 1, nullptr));
}

// A view of t's diagonal (offset, dim1, dim2 already wrapped): the other dims in order, then
// the diagonal, as torch.diagonal.
inline tsr::Tensor diagonal_view(const tsr::Tensor& t, int64_t offset, int64_t d1, int64_t d2) {
  std::vector<int64_t> sz = t.sizes(), st = t.strides();
  int64_t off = t.storage_offset();
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(sz[d1], sz[d2] - offset), 0);
    if (len > 0) off += offset * st[d2];
  } else {
    len = std::max<int64_t>(std::min(sz[d1] + offset, sz[d2]), 0);
    if (len > 0) off -= offset * st[d1];
  }
  std::vector<int64_t> vs, vst;
  for (int64_t d = 0; d < static_cast<int64_t>(sz.size()); ++d)
    if (d != d1 && d != d2) {
      vs.push_back(sz[d]);
      vst.push_back(st[d]);
    }
  vs.push_back(len);
  vst.push_back(st[d1] + st[d2]);
  return t.as_strided(vs, vst, off);
}

}  // namespace tsr::core::shape_ops
