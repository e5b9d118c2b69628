// Helpers of the shape family's tests: inputs of every dtype and index-mapping references.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "op_test.hpp"

namespace tsr::optest {

inline std::vector<tsr_dtype_t> all_dtypes() {
  return {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I8, TSR_I16, TSR_I32, TSR_I64, TSR_U8, TSR_BOOL};
}

// Seeded values of any dtype (never all zeros): floats in [-2, 2), ints in [-50, 50) ([0, 100)
// for uint8), bools about half true.
inline Tensor sample(const Shape& shape, tsr_dtype_t dt, uint64_t seed) {
  if (dt == TSR_BOOL) return randmask(shape, seed);
  if (is_floating(dt)) return randu(shape, seed, -2.0, 2.0, dt);
  return randint(shape, seed, dt == TSR_U8 ? 0 : -50, dt == TSR_U8 ? 100 : 50, dt);
}

// Row-major values of an output of `out_shape` whose element at index i is x at the index that
// `map` rewrites i into, or `fill` where map returns false.
inline std::vector<double> ref_map(const Tensor& x, const Shape& out_shape,
                                   const std::function<bool(std::vector<int64_t>&)>& map, double fill = 0) {
  std::vector<double> xv = values(x);
  Shape xs = x.sizes();
  std::vector<double> out(static_cast<size_t>(numel_of(out_shape)));
  std::vector<int64_t> idx(out_shape.size());
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t r = static_cast<int64_t>(o);
    for (size_t d = out_shape.size(); d-- > 0;) {
      idx[d] = r % out_shape[d];
      r /= out_shape[d];
    }
    std::vector<int64_t> i = idx;
    if (!map(i)) {
      out[o] = fill;
      continue;
    }
    int64_t lin = 0;
    for (size_t d = 0; d < xs.size(); ++d) lin = lin * xs[d] + i[d];
    out[o] = xv[static_cast<size_t>(lin)];
  }
  return out;
}

// Concatenation of the tensors' values along dim (all have equal rank).
inline std::vector<double> ref_cat(const std::vector<Tensor>& ts, int64_t dim) {
  Shape s = ts[0].sizes();
  int64_t total = 0;
  for (const Tensor& t : ts) total += t.size(dim);
  s[static_cast<size_t>(dim)] = total;
  std::vector<double> out;
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= s[static_cast<size_t>(d)];
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ts) vals.push_back(values(t));
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < ts.size(); ++k) {
      int64_t block = ts[k].numel() / std::max<int64_t>(outer, 1);
      if (ts[k].numel() == 0) continue;
      out.insert(out.end(), vals[k].begin() + o * block, vals[k].begin() + (o + 1) * block);
    }
  return out;
}

}  // namespace tsr::optest
