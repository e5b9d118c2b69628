// Row kernels of the reduce family's internal ops (see core/ops/reduce/reduce_rows.cpp): every operand
// is contiguous and the op works along the last dim, so each kernel is a parallel loop over
// independent rows. Floating accumulations (prod, cumsum, cumprod, logcumsumexp) run in double
// for f32/f16/bf16 as well: PyTorch's CPU accumulate type for these scans is double, and the
// results then match a float64 reference to the output dtype's rounding.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "tessera/kernels/item_size.hpp"
#include "tessera/kernels/row_geometry.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

using kernels::Rows;
using kernels::rows_of;

template <class F>
void for_rows(const Rows& r, F&& f) {
  parallel_for(0, r.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, r.n)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// bool is stored as one byte; treat it as uint8 for ordering and arithmetic.
template <class T0>
using Elem = std::conditional_t<std::is_same<T0, bool>::value, uint8_t, T0>;

// Orders with NaN above everything (PyTorch's sort order).
template <class CT>
inline bool less_nan_last(CT a, CT b) {
  return !(a != a) && ((b != b) || a < b);
}

void sort_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool descending = c.arg_bool(1);
  const Rows r = rows_of(in);
  dispatch_all(c.dtype(), "sort", [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    using CT = C<T>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    for_rows(r, [&](int64_t row) {
      std::vector<std::pair<CT, int64_t>> v(static_cast<size_t>(r.n));
      const T* xr = x + row * r.n;
      for (int64_t j = 0; j < r.n; ++j) v[static_cast<size_t>(j)] = {CT(xr[j]), j};
      // Always stable: ties keep their input order, which is also a valid unstable result.
      if (descending)
        std::stable_sort(v.begin(), v.end(),
                         [](const auto& a, const auto& b) { return less_nan_last(b.first, a.first); });
      else
        std::stable_sort(v.begin(), v.end(),
                         [](const auto& a, const auto& b) { return less_nan_last(a.first, b.first); });
      for (int64_t j = 0; j < r.n; ++j) {
        y[row * r.n + j] = xr[v[static_cast<size_t>(j)].second];
        ix[row * r.n + j] = v[static_cast<size_t>(j)].second;
      }
    });
  });
}

// max/min along rows with the index of the first extreme; the first NaN wins (PyTorch).
void extreme_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool is_max = c.arg_bool(1);
  const Rows r = rows_of(in);
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    using CT = C<T>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    for_rows(r, [&](int64_t row) {
      const T* xr = x + row * r.n;
      CT best = CT(xr[0]);
      int64_t bi = 0;
      if (!(best != best)) {
        for (int64_t j = 1; j < r.n; ++j) {
          const CT v = CT(xr[j]);
          if (v != v) {
            best = v;
            bi = j;
            break;
          }
          if (is_max ? v > best : v < best) {
            best = v;
            bi = j;
          }
        }
      }
      y[row] = xr[bi];
      ix[row] = bi;
    });
  });
}

// The most frequent value of each row (the smallest among equally frequent ones) and the index
// of its last occurrence, as PyTorch's CPU mode scan over a sorted copy.
void mode_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const Rows r = rows_of(in);
  dispatch_all(c.dtype(), "mode", [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    using CT = C<T>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    for_rows(r, [&](int64_t row) {
      std::vector<std::pair<CT, int64_t>> v(static_cast<size_t>(r.n));
      const T* xr = x + row * r.n;
      for (int64_t j = 0; j < r.n; ++j) v[static_cast<size_t>(j)] = {CT(xr[j]), j};
      std::stable_sort(v.begin(), v.end(),
                       [](const auto& a, const auto& b) { return less_nan_last(a.first, b.first); });
      int64_t best = 0, best_count = 0, count = 0;
      for (size_t j = 0; j < v.size(); ++j) {
        count = (j > 0 && v[j].first == v[j - 1].first) ? count + 1 : 1;
        if (count > best_count) {
          best_count = count;
          best = v[j].second;
        }
      }
      y[row] = xr[best];
      ix[row] = best;
    });
  });
}

template <class T>
using Acc = std::conditional_t<is_float_type<T>::value, double, T>;

void prod_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const Rows r = rows_of(in);
  dispatch_numeric(c.dtype(), "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    for_rows(r, [&](int64_t row) {
      const T* xr = x + row * r.n;
      if constexpr (is_float_type<T>::value) {
        double acc = 1;
        for (int64_t j = 0; j < r.n; ++j) acc *= double(C<T>(xr[j]));
        y[row] = static_cast<T>(static_cast<C<T>>(acc));
      } else {
        T acc = 1;
        for (int64_t j = 0; j < r.n; ++j) acc = wrap_mul<T>(acc, xr[j]);
        y[row] = acc;
      }
    });
  });
}

inline double log_add_exp(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  const double m = std::max(a, b);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  if (m == std::numeric_limits<double>::infinity()) return m;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

void cumulative_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const int64_t kind = kernels::cumulative_kind(c);
  const Rows r = rows_of(in);
  dispatch_numeric(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    for_rows(r, [&](int64_t row) {
      const T* xr = x + row * r.n;
      T* yr = y + row * r.n;
      if constexpr (is_float_type<T>::value) {
        double acc = kind == 0 ? 0.0 : kind == 1 ? 1.0 : -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < r.n; ++j) {
          const double v = double(C<T>(xr[j]));
          acc = kind == 0 ? acc + v : kind == 1 ? acc * v : log_add_exp(acc, v);
          yr[j] = static_cast<T>(static_cast<C<T>>(acc));
        }
      } else {
        T acc = kind == 0 ? T(0) : T(1);
        for (int64_t j = 0; j < r.n; ++j) {
          acc = kind == 0 ? wrap_add<T>(acc, xr[j]) : wrap_mul<T>(acc, xr[j]);
          yr[j] = acc;
        }
      }
    });
  });
}

// cummax/cummin: ties move the index to the latest occurrence and a NaN sticks (PyTorch).
void cumextreme_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool is_max = c.arg_bool(1);
  const Rows r = rows_of(in);
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    using CT = C<T>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    for_rows(r, [&](int64_t row) {
      const T* xr = x + row * r.n;
      if (r.n == 0) return;
      CT best = CT(xr[0]);
      int64_t bi = 0;
      for (int64_t j = 0; j < r.n; ++j) {
        const CT v = CT(xr[j]);
        if ((v != v) || (!(best != best) && (is_max ? v >= best : v <= best))) {
          best = v;
          bi = j;
        }
        y[row * r.n + j] = xr[bi];
        ix[row * r.n + j] = bi;
      }
    });
  });
}

template <class U>
void gather_typed(const KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const Rows ri = rows_of(index);
  const int64_t n = rows_of(in).n;
  const U* x = static_cast<const U*>(in.data);
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  U* y = static_cast<U*>(c.output(0).data);
  for_rows(ri, [&](int64_t row) {
    for (int64_t j = 0; j < ri.n; ++j) {
      const int64_t k = idx[row * ri.n + j];
      // The core checked every index before the launch; exceptions cannot leave a parallel region.
      y[row * ri.n + j] = (k >= 0 && k < n) ? x[row * n + k] : U(0);
    }
  });
}

// By element size (tessera/kernels/item_size.hpp); any other size moves 8 bytes.
void gather_rows_kernel(KernelCall& c) {
  if (!kernels::with_uint_of_size(itemsize(c.dtype()), [&](auto w) { gather_typed<typename decltype(w)::type>(c); }))
    gather_typed<uint64_t>(c);
}

void scatter_add_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& src = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const Rows rs = rows_of(src);
  const Rows ro = rows_of(c.output(0));
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = static_cast<const T*>(src.data);
    const int64_t* idx = static_cast<const int64_t*>(index.data);
    T* y = static_cast<T*>(c.output(0).data);
    for_rows(ro, [&](int64_t row) {
      T* yr = y + row * ro.n;
      for (int64_t j = 0; j < ro.n; ++j) yr[j] = T(0);
      for (int64_t j = 0; j < rs.n; ++j) {
        const int64_t k = idx[row * rs.n + j];
        if (k < 0 || k >= ro.n) continue;  // checked by the core before the launch
        if constexpr (std::is_same<T, bool>::value)
          yr[k] = yr[k] || s[row * rs.n + j];
        else
          yr[k] = static_cast<T>(C<T>(yr[k]) + C<T>(s[row * rs.n + j]));
      }
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(reduce_rows) {
  r.kernel("_sort_rows", "cpu::sort_rows", device_type, kAllMask, TSR_KERNEL(sort_rows_kernel));
  r.kernel("_extreme_rows", "cpu::extreme_rows", device_type, kAllMask, TSR_KERNEL(extreme_rows_kernel));
  r.kernel("_mode_rows", "cpu::mode_rows", device_type, kAllMask, TSR_KERNEL(mode_rows_kernel));
  r.kernel("_prod_rows", "cpu::prod_rows", device_type, kNumericMask, TSR_KERNEL(prod_rows_kernel));
  r.kernel("_cumulative_rows", "cpu::cumulative_rows", device_type, kNumericMask, TSR_KERNEL(cumulative_rows_kernel));
  r.kernel("_cumextreme_rows", "cpu::cumextreme_rows", device_type, kAllMask, TSR_KERNEL(cumextreme_rows_kernel));
  r.kernel("_gather_rows", "cpu::gather_rows", device_type, kAllMask, TSR_KERNEL(gather_rows_kernel));
  r.kernel("_scatter_add_rows", "cpu::scatter_add_rows", device_type, kAllMask, TSR_KERNEL(scatter_add_rows_kernel));
}

}  // namespace tsr::cpu
