// Advanced indexing: index(self, indices) is PyTorch's x[i, j, ...] with index tensors for the
// leading dims, and index_put(self, indices, values, accumulate) its assignment. Both reduce
// to one dim: the indexed leading dims are flattened and the index tensors combined into one
// linear index, then index_select / index_add / index_copy do the work (and give autograd).
//
// Skipping dims: the op itself indexes leading dims only; the SDK's tsr::index(x, {i}, first_dim)
// moves the indexed dims to the front first (the equivalent of leading `:` slices).
// Registry names: index (aten::index.Tensor), index_put (aten::index_put), index_put_.
#include "ops/index/index_util.hpp"

namespace tsr::core {
namespace {

using namespace index_ops;

struct Linear {
  tsr::Tensor lin;              // int64, shape = broadcast shape of the indices
  int64_t k = 0;                // leading dims consumed
  std::vector<int64_t> bshape;  // broadcast shape of the indices
};

// Bool masks (and uint8 ones, which PyTorch 1.13 still takes as masks) become their nonzero()
// columns; every index is checked against its dim's size
// (the op, the bad value, the dim and its size in the message) before anything is computed.
Linear linear_index(const CArgs& a, const tsr::Tensor& self, const std::vector<tsr::Tensor>& indices) {
  std::vector<tsr::Tensor> cols;
  int64_t d = 0;
  for (size_t k = 0; k < indices.size(); ++k) {
    const tsr::Tensor& t = indices[k];
    if (t.dtype() == TSR_BOOL || t.dtype() == TSR_U8) {
      if (t.dim() == 0)
        a.fail(TSR_INVALID_ARGUMENT, std::string("0-dim ") + dtype_name(t.dtype()) +
                                         " indices are not supported (index " + std::to_string(k) + ")");
      bool ok = d + t.dim() <= self.dim();
      for (int64_t j = 0; ok && j < t.dim(); ++j) ok = t.size(j) == self.size(d + j);
      if (!ok)
        a.fail(TSR_INVALID_ARGUMENT, "the shape of the mask " + shape_of(t) + " at index " + std::to_string(k) +
                                         " does not match the shape of self " + shape_of(self) +
                                         " starting at dimension " + std::to_string(d));
      if (t.device() != self.device())
        a.fail(TSR_INVALID_ARGUMENT, "mask at index " + std::to_string(k) + " is not on self's device");
      tsr::Tensor nz = tsr::nonzero(t);
      for (int64_t j = 0; j < t.dim(); ++j) cols.push_back(nz.select(1, j));
      d += t.dim();
    } else {
      cols.push_back(as_index(a, t, self, "indices"));
      d += 1;
    }
    if (d > self.dim())
      a.fail(TSR_INVALID_ARGUMENT,
             "too many indices for tensor " + shape_of(self) + " of dimension " + std::to_string(self.dim()));
  }
  Linear r;
  r.k = d;
  for (const tsr::Tensor& c : cols) r.bshape = broadcast2(a, r.bshape, c.sizes());
  const int64_t n = numel_of(r.bshape);
  int64_t stride = 1;
  for (int64_t j = d - 1; j >= 0; --j) {
    tsr::Tensor c = cols[static_cast<size_t>(j)];
    const int64_t size = self.size(j);
    if (c.numel() > 0 && n > 0) {
      const int64_t hi = tsr::amax(c).item<int64_t>(), lo = tsr::amin(c).item<int64_t>();
      if (hi >= size || lo < -size)
        a.fail(TSR_OUT_OF_RANGE, "index " + std::to_string(hi >= size ? hi : lo) + " is out of bounds for dimension " +
                                     std::to_string(j) + " with size " + std::to_string(size));
      if (lo < 0) c = tsr::where(tsr::lt(c, 0), tsr::add(c, size), c);
    }
    tsr::Tensor term = stride == 1 ? c : tsr::mul(c, stride);
    r.lin = r.lin.defined() ? tsr::add(r.lin, term) : term;
    stride *= size;
  }
  if (!r.lin.defined()) r.lin = tsr::zeros({}, TSR_I64, self.device());
  r.lin = r.lin.sizes() == r.bshape ? r.lin : r.lin.expand(r.bshape);
  r.lin = r.lin.contiguous().reshape({n});
  return r;
}

// self viewed as [prod(leading k sizes), rest...].
std::vector<int64_t> flat_shape(const tsr::Tensor& self, int64_t k, std::vector<int64_t>* rest) {
  std::vector<int64_t> s = self.sizes();
  int64_t lead = 1;
  for (int64_t j = 0; j < k; ++j) lead *= s[static_cast<size_t>(j)];
  rest->assign(s.begin() + k, s.end());
  std::vector<int64_t> f{lead};
  f.insert(f.end(), rest->begin(), rest->end());
  return f;
}

tsr::Tensor index_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  Linear li = linear_index(a, self, a.tensors(1));
  std::vector<int64_t> rest;
  tsr::Tensor flat = self.reshape(flat_shape(self, li.k, &rest));
  std::vector<int64_t> out = li.bshape;
  out.insert(out.end(), rest.begin(), rest.end());
  return tsr::index_select(flat, 0, li.lin).reshape(out);
}

tsr::Tensor index_put_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), values = a.tensor(2);
  require_same_dtype(a, self, values, "values");
  Linear li = linear_index(a, self, a.tensors(1));
  std::vector<int64_t> rest;
  tsr::Tensor flat = self.reshape(flat_shape(self, li.k, &rest));
  std::vector<int64_t> target = li.bshape;
  target.insert(target.end(), rest.begin(), rest.end());
  bool ok = values.dim() <= static_cast<int64_t>(target.size());
  for (int64_t j = 0; ok && j < values.dim(); ++j) {
    const int64_t vs = values.size(values.dim() - 1 - j), ts = target[target.size() - 1 - static_cast<size_t>(j)];
    ok = vs == ts || vs == 1;
  }
  if (!ok)
    a.fail(TSR_INVALID_ARGUMENT, "shape mismatch: value tensor of shape " + shape_of(values) +
                                     " cannot be broadcast to indexing result of shape " + shape_of(target));
  std::vector<int64_t> vshape{li.lin.numel()};
  vshape.insert(vshape.end(), rest.begin(), rest.end());
  tsr::Tensor v = (values.sizes() == target ? values : values.expand(target)).reshape(vshape);
  tsr::Tensor r = a.bool_arg(3) ? tsr::index_add(flat, 0, li.lin, v) : tsr::index_copy(flat, 0, li.lin, v);
  return r.reshape(self.sizes());
}

}  // namespace

TSR_CORE_OPS(index_advanced) {
  v.push_back(composite_op("index(Tensor self, Tensor[] indices) -> Tensor", composite<index_fn>));
  v.push_back(composite_op("index_put(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor",
                           composite<index_put_fn>));
  v.push_back(
      inplace_op("index_put_(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)"));
}

}  // namespace tsr::core
