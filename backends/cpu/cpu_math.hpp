// CPU-only vector helpers (maxmin_contig), plus the shared per-element math of
// tessera/kernels/math.hpp under tsr::cpu names.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/kernels/math.hpp"

namespace tsr::cpu {

// The per-element math lives in the SDK (tessera/kernels/math.hpp), shared with the CUDA
// backend; these names keep the CPU files short.
using kernels::exp_c;
using kernels::exp_f32;
using kernels::exp_no_overflow_c;
using kernels::max_nan;
using kernels::min_nan;
using kernels::sigmoid_c;

// max (MAX) or min of p[0..n) and `init`, NaN-propagating for floating C. Written with GCC
// vector extensions (GCC does not vectorize a NaN-aware select reduction on its own): 32-byte
// vectors, AVX2/AVX-512 in x86-64-v3/v4 clones. Call it only from multiversioned code (the row
// kernels, reduce.cpp's maxmin_contig_mv): compiled for baseline x86-64, GCC splits the vector
// selects into scalar moves through the stack, 16x slower than a sum.
template <bool MAX, class C>
inline C maxmin_contig(const C* p, int64_t n, C init) {
  C r = init;
  bool nan = false;
  int64_t i = 0;
#if defined(__GNUC__) && !defined(__CUDACC__)
  constexpr int W = 32 / int(sizeof(C));
  typedef C V __attribute__((vector_size(32)));
  V m0, m1, m2, m3;
  for (int k = 0; k < W; ++k) m0[k] = init;
  m1 = m2 = m3 = m0;
  using M = decltype(m0 != m0);
  M nan0 = m0 != m0, nan1 = nan0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V x0, x1, x2, x3;
    std::memcpy(&x0, p + i, sizeof(V));
    std::memcpy(&x1, p + i + W, sizeof(V));
    std::memcpy(&x2, p + i + 2 * W, sizeof(V));
    std::memcpy(&x3, p + i + 3 * W, sizeof(V));
    if constexpr (MAX) {
      m0 = x0 > m0 ? x0 : m0;
      m1 = x1 > m1 ? x1 : m1;
      m2 = x2 > m2 ? x2 : m2;
      m3 = x3 > m3 ? x3 : m3;
    } else {
      m0 = x0 < m0 ? x0 : m0;
      m1 = x1 < m1 ? x1 : m1;
      m2 = x2 < m2 ? x2 : m2;
      m3 = x3 < m3 ? x3 : m3;
    }
    if constexpr (std::is_floating_point<C>::value) {
      nan0 |= (x0 != x0) | (x1 != x1);
      nan1 |= (x2 != x2) | (x3 != x3);
    }
  }
  for (int k = 0; k < W; ++k) {
    const C v[4] = {m0[k], m1[k], m2[k], m3[k]};
    for (C x : v) r = MAX ? (x > r ? x : r) : (x < r ? x : r);
    nan |= (nan0[k] | nan1[k]) != 0;
  }
#endif
  for (; i < n; ++i) {
    const C x = p[i];
    nan |= x != x;
    r = MAX ? (x > r ? x : r) : (x < r ? x : r);
  }
  if constexpr (std::is_floating_point<C>::value) {
    if (nan || r != r) return std::numeric_limits<C>::quiet_NaN();
  }
  return r;
}

// The sum of f(i) over i in [0, n) in the compute type CT: accumulated in 16 lanes, so that the
// loop vectorizes (one accumulator is a serial dependency GCC does not reorder), then added
// pairwise. layer_norm's statistics and softmax's backward.
template <class CT, class F>
inline CT lane_sum(int64_t n, const F& f) {
  constexpr int kLanes = 16;
  CT s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += f(i + j);
  CT tail = 0;
  for (; i < n; ++i) tail += f(i);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) s[j] += s[j + w];
  return s[0] + tail;
}

// The NaN-propagating maximum of a row x[0..n), in the compute type CT (float for f16/bf16,
// converted 256 at a time so maxmin_contig's vectors see CT): softmax and cross_entropy.
template <class CT, class T>
inline CT row_max(const T* x, int64_t n) {
  if (n < 64) {
    // Short rows (an attention's [.., T, T] scores), below maxmin_contig's 4-vector step that
    // would leave them to its scalar remainder: 16 lanes at a time, padded with -inf. (A padded
    // remainder step inside maxmin_contig, with its GCC vectors, measured 1.5-1.8x slower on
    // rows of 11: GCC builds the partial vector through the stack.)
    constexpr int kLanes = 16;
    CT m[kLanes];
    for (int j = 0; j < kLanes; ++j) m[j] = -std::numeric_limits<CT>::infinity();
    for (int64_t i = 0; i < n; i += kLanes) {
      CT xs[kLanes];
      for (int j = 0; j < kLanes; ++j) xs[j] = i + j < n ? CT(x[i + j]) : -std::numeric_limits<CT>::infinity();
      for (int j = 0; j < kLanes; ++j) m[j] = max_nan<CT>(m[j], xs[j]);
    }
    CT r = m[0];
    for (int j = 1; j < kLanes; ++j) r = max_nan<CT>(r, m[j]);
    return r;
  }
  if constexpr (std::is_same<T, CT>::value) {
    return maxmin_contig<true, CT>(x, n, -std::numeric_limits<CT>::infinity());
  } else {
    CT mx = -std::numeric_limits<CT>::infinity();
    CT buf[256];
    for (int64_t b0 = 0; b0 < n; b0 += 256) {
      const int64_t len = n - b0 < 256 ? n - b0 : 256;
      for (int64_t j = 0; j < len; ++j) buf[j] = CT(x[b0 + j]);
      mx = max_nan<CT>(mx, maxmin_contig<true, CT>(buf, len, -std::numeric_limits<CT>::infinity()));
    }
    return mx;
  }
}

// Rows of up to this many compute-type elements keep e^(x - max) in a stack buffer (16 KiB, in
// L1/L2) between the sum and the write that needs it: one exp per element. Longer rows compute
// the exp twice.
template <class CT>
constexpr int64_t kRowBuf = int64_t(16 << 10) / int64_t(sizeof(CT));

// The sum over x[0..n) of e^(x[k] - shift) in the compute type CT (16 lanes, so it
// vectorizes), also stored in buf[k] when STORE. shift is the row's maximum (so every argument is
// <= 0 and the exp needs no overflow handling) or NaN: softmax, log_softmax, cross_entropy.
template <bool STORE, class CT, class T>
inline CT row_exp_sum(const T* x, int64_t n, CT shift, CT* buf) {
  constexpr int kLanes = 16;
  CT s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const CT e = exp_no_overflow_c<CT>(CT(x[i + j]) - shift);
      if constexpr (STORE) buf[i + j] = e;
      s[j] += e;
    }
  if (i < n) {  // the remainder as one more vector step, padded with -inf (whose exp is 0)
    const int64_t rem = n - i;
    CT xs[kLanes], es[kLanes];
    for (int j = 0; j < kLanes; ++j) xs[j] = j < rem ? CT(x[i + j]) : -std::numeric_limits<CT>::infinity();
    for (int j = 0; j < kLanes; ++j) {
      es[j] = exp_no_overflow_c<CT>(xs[j] - shift);
      s[j] += es[j];
    }
    if constexpr (STORE)
      for (int64_t j = 0; j < rem; ++j) buf[i + j] = es[j];
  }
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) s[j] += s[j + w];
  return s[0];
}

}  // namespace tsr::cpu
