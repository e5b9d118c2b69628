// randperm and multinomial from the Philox stream. Both draw 53-bit uniforms the way rand f64
// does (uniform number u uses block offset + u/2, lanes 2*(u%2) and 2*(u%2)+1), so any backend
// reproduces them; the orderings below are total (ties broken by index) for the same reason.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "cpu_common.hpp"
#include "tessera/philox.h"

namespace tsr::cpu {
namespace {

// The 53-bit key of uniform number u (as an integer, to sort exactly).
inline uint64_t key53(uint64_t seed, uint64_t offset, uint64_t u) {
  const tsr_philox4x32_t r = tsr_philox_block(seed, offset + u / 2);
  const int l = int(u % 2) * 2;
  return ((uint64_t(r.v[l]) << 32) | uint64_t(r.v[l + 1])) >> 11;
}
inline double uniform53(uint64_t seed, uint64_t offset, uint64_t u) {
  return double(key53(seed, offset, u)) * 1.1102230246251565404236316680908203125e-16;
}

// randperm(n): indices sorted by (key of uniform i, i).
void randperm_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t n = out.sizes[0];
  if (n == 0) return;
  const uint64_t seed = uint64_t(c.arg_int(3)), offset = uint64_t(c.arg_int(4));
  std::vector<std::pair<uint64_t, int64_t>> keys(static_cast<size_t>(n));
  parallel_for(0, n, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) keys[size_t(i)] = {key53(seed, offset, uint64_t(i)), i};
  });
  std::sort(keys.begin(), keys.end());
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(out.data);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(keys[size_t(i)].second);
  });
}

// multinomial over float64 probabilities [rows, cats] (dense).
//  with replacement: sample s of row r uses uniform r*ns + s: the first category whose
//    cumulative weight exceeds u * total;
//  without: category k of row r gets the exponential key -log(1 - u_(r*cats + k)) / p_k and the
//    ns smallest keys (ties by index) are the samples, in increasing key order (equivalent to
//    drawing one at a time without replacement).
void multinomial_kernel(KernelCall& c) {
  const tsr_tensor_view_t& P = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  const int64_t cats = P.sizes[P.ndim - 1];
  const int64_t rows = P.ndim == 2 ? P.sizes[0] : 1;
  const int64_t ns = c.arg_int(1);
  const bool replacement = c.arg_bool(2);
  const uint64_t seed = uint64_t(c.arg_int(3)), offset = uint64_t(c.arg_int(4));
  const double* p = static_cast<const double*>(P.data);
  int64_t* out = static_cast<int64_t*>(O.data);
  std::vector<double> cum(static_cast<size_t>(cats));
  std::vector<std::pair<double, int64_t>> keys;
  for (int64_t r = 0; r < rows; ++r) {
    const double* pr = p + r * cats;
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t k = 0; k < cats; ++k) {
      const double w = pr[k];
      if (!(w >= 0) || std::isinf(w))
        fail(TSR_INVALID_ARGUMENT, c.op_name(), ": probability tensor contains either inf, nan or element < 0 (row ", r,
             ", category ", k, " = ", w, ")");
      total += w;
      nonzero += w > 0;
      cum[size_t(k)] = total;
    }
    if (!(total > 0))
      fail(TSR_INVALID_ARGUMENT, c.op_name(), ": invalid multinomial distribution (sum of probabilities <= 0) in row ",
           r);
    if (!replacement && nonzero < ns)
      fail(TSR_INVALID_ARGUMENT, c.op_name(),
           ": invalid multinomial distribution (with replacement=False, not enough non-zero "
           "categories to sample): row ",
           r, " has ", nonzero, " for ", ns, " samples");
    int64_t* orow = out + r * ns;
    if (replacement) {
      int64_t last = cats - 1;
      while (last > 0 && pr[last] == 0) --last;
      for (int64_t s = 0; s < ns; ++s) {
        const double t = uniform53(seed, offset, uint64_t(r * ns + s)) * total;
        const int64_t k = std::upper_bound(cum.begin(), cum.end(), t) - cum.begin();
        orow[s] = std::min(k, last);
      }
    } else {
      keys.clear();
      for (int64_t k = 0; k < cats; ++k) {
        if (pr[k] == 0) continue;
        const double u = uniform53(seed, offset, uint64_t(r * cats + k));
        keys.emplace_back(-std::log1p(-u) / pr[k], k);
      }
      std::partial_sort(keys.begin(), keys.begin() + ns, keys.end());
      for (int64_t s = 0; s < ns; ++s) orow[s] = keys[size_t(s)].second;
    }
  }
}

}  // namespace

TSR_CPU_KERNELS(random_extra) {
  r.kernel("randperm", "cpu::randperm", device_type, kNumericMask, TSR_KERNEL(randperm_kernel));
  r.kernel("multinomial", "cpu::multinomial", device_type, TSR_DTYPE_BIT(TSR_F64), TSR_KERNEL(multinomial_kernel));
}

}  // namespace tsr::cpu
