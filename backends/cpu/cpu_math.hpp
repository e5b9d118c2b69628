// CPU-only row helpers (lane sums, row max, sums of exps: softmax, cross_entropy, logsumexp,
// layer_norm), plus the shared per-element math of tessera/kernels/math.hpp under tsr::cpu names.
#pragma once

#include <cmath>
#include <cstdint>
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

// a[0] = f over a[0, N) by halves, each step with a constant width: with the width a loop
// variable GCC kept the steps in a loop through the stack, a store-forwarding stall per step,
// which made the reductions cost more than a short row's whole pass (layer_norm over rows of 64,
// softmax over an attention's rows of 11).
template <int N, class CT, class F>
inline CT fold_lanes(CT* a, const F& f) {
  if constexpr (N > 1) {
    for (int j = 0; j < N / 2; ++j) a[j] = f(a[j], a[j + N / 2]);
    return fold_lanes<N / 2>(a, f);
  } else {
    return a[0];
  }
}
template <class CT>
inline CT plus_of(CT a, CT b) {
  return a + b;
}
template <class CT>
inline CT larger_of(CT a, CT b) {  // `b > a` is false for NaN: a stays
  return b > a ? b : a;
}

// The sum of f(i) over i in [0, n) in the compute type CT: accumulated in 64 lanes, so that the
// loop vectorizes (one accumulator is a serial dependency GCC does not reorder) and four vector
// additions are in flight (with one 16-lane vector, each step waited for the last: layer_norm's
// statistics ran at a quarter of the adder's rate), then added pairwise. Steps of 16 lanes
// after the 64-lane ones keep rows of 16-63 elements vectorized. layer_norm's statistics and
// softmax's backward.
template <class CT, class F>
inline CT lane_sum(int64_t n, const F& f) {
  constexpr int kLanes = 64, kStep = 16;
  CT s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += f(i + j);
  for (; i + kStep <= n; i += kStep)
    for (int j = 0; j < kStep; ++j) s[j] += f(i + j);
  CT tail = 0;
  for (; i < n; ++i) tail += f(i);
  return fold_lanes<kLanes>(s, plus_of<CT>) + tail;
}

// The maximum of x[0..n)'s non-NaN elements (-inf if it has none), in the compute type CT:
// the shift of softmax's, cross_entropy's and logsumexp's exps. NaNs need no tracking here (that
// cost a fifth of softmax's time): x - max is NaN for a NaN element, and so is the sum of exps
// each caller takes next. A caller that returns the max itself (logsumexp, when it is infinite)
// looks for NaN on that path. 64 lanes at a time (GCC makes `x > m ? x : m` one vmaxps per
// vector), the rest in padded 16-lane steps, so that short rows (an attention's [.., T, T]
// scores) run vectorized too. f16/bf16 are converted 256 at a time.
template <class CT>
inline CT max_of_numbers(const CT* x, int64_t n) {
  constexpr CT kNegInf = -std::numeric_limits<CT>::infinity();
  constexpr int kLanes = 64, kStep = 16;
  CT m[kLanes];
  for (int j = 0; j < kLanes; ++j) m[j] = kNegInf;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  for (; i < n; i += kStep) {
    CT xs[kStep];
    for (int j = 0; j < kStep; ++j) xs[j] = i + j < n ? x[i + j] : kNegInf;
    for (int j = 0; j < kStep; ++j) m[j] = xs[j] > m[j] ? xs[j] : m[j];
  }
  return fold_lanes<kLanes>(m, larger_of<CT>);
}
template <class CT, class T>
inline CT row_max(const T* x, int64_t n) {
  if constexpr (std::is_same<T, CT>::value) {
    return max_of_numbers<CT>(x, n);
  } else {
    CT mx = -std::numeric_limits<CT>::infinity();
    CT buf[256];
    for (int64_t b0 = 0; b0 < n; b0 += 256) {
      const int64_t len = n - b0 < 256 ? n - b0 : 256;
      for (int64_t j = 0; j < len; ++j) buf[j] = CT(x[b0 + j]);
      const CT m = max_of_numbers<CT>(buf, len);
      mx = m > mx ? m : mx;
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
// <= 0 and the exp needs no overflow handling) or NaN: softmax, log_softmax, cross_entropy,
// logsumexp. It also prefetches x[n..2n), the next row in every caller, one line per step: the
// next row's max pass then reads cache, not memory, while this pass computes. A row of 4 KiB is
// a page, where the hardware prefetcher stops (softmax [4096, 1024] at 1 thread: 2.24 -> 1.87
// ms; prefetch_row's burst before the loop: 1.56 ms against 1.18 with these, both with plain
// stores). A prefetch past the tensor's end is harmless: prefetches never fault.
template <bool STORE, class CT, class T>
inline CT row_exp_sum(const T* x, int64_t n, CT shift, CT* buf) {
  constexpr int kLanes = 16;
  CT s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    __builtin_prefetch(x + n + i, 0, 3);
    for (int j = 0; j < kLanes; ++j) {
      const CT e = exp_no_overflow_c<CT>(CT(x[i + j]) - shift);
      if constexpr (STORE) buf[i + j] = e;
      s[j] += e;
    }
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
  return fold_lanes<kLanes>(s, plus_of<CT>);
}

}  // namespace tsr::cpu
