// Fused row kernels: _nn_layer_norm (layer_norm / rms_norm forward: statistics and the affine
// map in one visit of each row, which stays in cache between the passes) and
// _nn_cross_entropy_rows (per-row log-sum-exp and the picked / smoothed loss without
// materializing log-probabilities). f16/bf16 compute in float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "cpu_simd.hpp"
#include "tessera/kernels/nn_fused_args.hpp"

namespace tsr::cpu {
namespace {

constexpr int kLanes = 16;

// The sum of (x - shift) or of its squares over a row.
template <class CT, class T>
inline CT row_sum(const T* x, int64_t n, CT shift, bool square) {
  return lane_sum<CT>(n, [&](int64_t i) {
    const CT d = CT(x[i]) - shift;
    return square ? d * d : d;
  });
}

template <class T>
TSR_CPU_MULTIVERSION void layer_norm_rows(const T* x, const T* w, const T* b, T* y, int64_t r0, int64_t r1, int64_t M,
                                          double eps, bool rms) {
  using CT = compute_t<T>;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * M;
    T* yr = y + r * M;
    prefetch_row(xr + M, M);  // the next row comes in while this one is worked on
    const CT mean = rms ? CT(0) : row_sum<CT>(xr, M, CT(0), false) / CT(M);
    const CT var = row_sum<CT>(xr, M, mean, true) / CT(M);
    const CT rstd = CT(1) / std::sqrt(var + CT(eps));
    if (w && b) {
      for (int64_t j = 0; j < M; ++j) yr[j] = static_cast<T>((CT(xr[j]) - mean) * rstd * CT(w[j]) + CT(b[j]));
    } else if (w) {
      for (int64_t j = 0; j < M; ++j) yr[j] = static_cast<T>((CT(xr[j]) - mean) * rstd * CT(w[j]));
    } else if (b) {
      for (int64_t j = 0; j < M; ++j) yr[j] = static_cast<T>((CT(xr[j]) - mean) * rstd + CT(b[j]));
    } else {
      for (int64_t j = 0; j < M; ++j) yr[j] = static_cast<T>((CT(xr[j]) - mean) * rstd);
    }
  }
}

// layer_norm over short rows (M a multiple of the vector width W, up to kBlockedMaxM, T the
// compute type): W rows at a time, each row's sums as one vector of partial sums, and the W rows'
// vectors reduced together by fold_rows. Row by row, each row's statistics are a chain of
// dependent reductions (mean, then variance, then 1/sqrt): rows of 64 floats cost about 33 ns
// forward and 70 ns backward per row that way, 3-6x a plain pass over them (a GPT of width 64
// normalizes rows of 64). Same formulas and operation order per element as the row path.
constexpr int64_t kBlockedMaxM = 256;

// For T its own compute type (the callers check that at compile time).
template <class T>
bool blocked_rows(int64_t M) {
  return M <= kBlockedMaxM && M % Vec<T>::W == 0;
}

// part[r] = sum over row r of f(x vector at j, j) for the block's W rows (rows past nr repeat the
// last), then the W sums in the lanes of the result. Columns outside, rows inside: the W sums
// are independent chains in flight together (row by row, each short row's sum was one chain of
// dependent adds, and the layer_norm backward of a GPT's 64-wide rows waited on it). Each row's
// terms are added in the same order either way.
template <class T, class F>
inline typename Vec<T>::type block_row_sums(const T* x, int64_t b0, int64_t nr, int64_t M, const F& f) {
  using V = Vec<T>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  VT part[W];
  for (int64_t r = 0; r < W; ++r) part[r] = VT{};
  for (int64_t j = 0; j < M; j += W)
    for (int64_t r = 0; r < W; ++r) {
      const int64_t row = b0 + std::min(r, nr - 1);
      VT v;
      V::load(v, x + row * M + j);
      part[r] += f(v, r, row, j);
    }
  fold_rows<T>(part, [](const VT& a, const VT& b) { return a + b; });
  return part[0];
}

// mean (0 for rms) and 1 / sqrt(var + eps) of the block's rows, in lanes.
template <class T>
inline void block_stats(const T* x, int64_t b0, int64_t nr, int64_t M, double eps, bool rms,
                        typename Vec<T>::type& mean, typename Vec<T>::type& rstd) {
  using VT = typename Vec<T>::type;
  const T inv_m = T(1) / T(M);
  mean = VT{};
  if (!rms) mean = block_row_sums<T>(x, b0, nr, M, [](const VT& v, int64_t, int64_t, int64_t) { return v; }) * inv_m;
  const VT mu = mean;
  const VT var = block_row_sums<T>(x, b0, nr, M, [&mu](const VT& v, int64_t r, int64_t, int64_t) {
                   const VT d = v - mu[r];
                   return d * d;
                 }) * inv_m;
  for (int64_t l = 0; l < Vec<T>::W; ++l) rstd[l] = T(1) / std::sqrt(var[l] + T(eps));
}

template <class T>
TSR_CPU_MULTIVERSION void layer_norm_rows_blocked(const T* x, const T* w, const T* b, T* y, int64_t r0, int64_t r1,
                                                  int64_t M, double eps, bool rms) {
  using V = Vec<T>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  for (int64_t b0 = r0; b0 < r1; b0 += W) {
    const int64_t nr = std::min(W, r1 - b0);
    VT mean, rstd;
    block_stats(x, b0, nr, M, eps, rms, mean, rstd);
    for (int64_t r = 0; r < nr; ++r) {
      const T mr = mean[r], sr = rstd[r];
      for (int64_t j = 0; j < M; j += W) {
        VT v;
        V::load(v, x + (b0 + r) * M + j);
        v = (v - mr) * sr;
        if (w) {
          VT wv;
          V::load(wv, w + j);
          v *= wv;
        }
        if (b) {
          VT bv;
          V::load(bv, b + j);
          v += bv;
        }
        V::store(y + (b0 + r) * M + j, v);
      }
    }
  }
}

// The backward of the same: part [2M] accumulates dweight's and dbias's column sums.
template <class T>
TSR_CPU_MULTIVERSION void layer_norm_backward_rows_blocked(const T* x, const T* w, const T* g, T* dx, T* part,
                                                           int64_t r0, int64_t r1, int64_t M, double eps, bool rms) {
  using V = Vec<T>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  const T inv_m = T(1) / T(M);
  for (int64_t b0 = r0; b0 < r1; b0 += W) {
    const int64_t nr = std::min(W, r1 - b0);
    VT mean, rstd;
    block_stats(x, b0, nr, M, eps, rms, mean, rstd);
    // dxhat = g * w; sa = sum(dxhat), sb = sum(dxhat * xhat)
    auto dxhat = [&](int64_t row, int64_t j) {
      VT gv;
      V::load(gv, g + row * M + j);
      if (w) {
        VT wv;
        V::load(wv, w + j);
        gv *= wv;
      }
      return gv;
    };
    auto xhat = [&](int64_t r, int64_t row, int64_t j) {
      VT v;
      V::load(v, x + row * M + j);
      return (v - mean[r]) * rstd[r];
    };
    const VT sa = rms ? VT{}
                      : block_row_sums<T>(x, b0, nr, M, [&](const VT&, int64_t, int64_t row, int64_t j) {
                          return dxhat(row, j);
                        });
    const VT sb = block_row_sums<T>(x, b0, nr, M, [&](const VT&, int64_t r, int64_t row, int64_t j) {
      return dxhat(row, j) * xhat(r, row, j);
    });
    const VT ma = sa * inv_m, mb = sb * inv_m;
    // Columns outside: dweight's and dbias's partial sums stay in registers over the block's
    // rows (row by row they went through memory, a store-to-load chain per row), added in the
    // same row order.
    for (int64_t j = 0; j < M; j += W) {
      VT pw, pb;
      V::load(pw, part + j);
      V::load(pb, part + M + j);
      for (int64_t r = 0; r < nr; ++r) {
        const int64_t row = b0 + r;
        VT gv;
        V::load(gv, g + row * M + j);
        const VT xh = xhat(r, row, j);
        pw += gv * xh;
        pb += gv;
        V::store(dx + row * M + j, rstd[r] * (dxhat(row, j) - ma[r] - xh * mb[r]));
      }
      V::store(part + j, pw);
      V::store(part + M + j, pb);
    }
  }
}

// args: input, weight?, bias?, int M, float eps, bool rms
void layer_norm_kernel(KernelCall& c) {
  const auto& out = c.output(0);
  const kernels::LayerNormArgs a = kernels::layer_norm_args(c, false);
  const int64_t M = a.M;
  if (M <= 0 || a.total == 0) return;
  const int64_t rows = a.rows();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(c.input(0).data);
    const T* w = static_cast<const T*>(a.weight);
    const T* b = static_cast<const T*>(a.bias);
    T* y = static_cast<T*>(out.data);
    parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / M), [&](int64_t r0, int64_t r1) {
      if constexpr (std::is_same_v<T, compute_t<T>>)
        if (blocked_rows<T>(M)) {
          layer_norm_rows_blocked<T>(x, w, b, y, r0, r1, M, a.eps, a.rms);
          return;
        }
      layer_norm_rows<T>(x, w, b, y, r0, r1, M, a.eps, a.rms);
    });
  });
}

template <class T>
TSR_CPU_MULTIVERSION void ce_rows(const T* x, const int64_t* t, const T* w, T* loss, T* wsum, int64_t r0, int64_t r1,
                                  int64_t C, int64_t ignore, double ls, int64_t* bad) {
  using CT = compute_t<T>;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * C;
    const int64_t tr = t[r];
    if (tr == ignore) {
      loss[r] = T(0);
      wsum[r] = T(0);
      continue;
    }
    if (tr < 0 || tr >= C) {
      *bad = tr;
      loss[r] = wsum[r] = T(0);
      continue;
    }
    const CT mx = row_max<CT>(xr, C);
    const CT lse = mx + std::log(row_exp_sum<false, CT>(xr, C, mx, nullptr));
    const CT wt = w ? CT(w[tr]) : CT(1);
    CT l = wt * (lse - CT(xr[tr]));
    if (ls > 0) {
      CT smooth = 0;
      if (w) {
        for (int64_t k = 0; k < C; ++k) smooth += CT(w[k]) * (lse - CT(xr[k]));
      } else {
        for (int64_t k = 0; k < C; ++k) smooth += lse - CT(xr[k]);
      }
      l = CT(1 - ls) * l + CT(ls / double(C)) * smooth;
    }
    loss[r] = static_cast<T>(l);
    wsum[r] = static_cast<T>(wt);
  }
}

// args: input [N, C], target [N] int64, weight? [C], int ignore_index, float label_smoothing
void ce_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const kernels::CrossEntropyArgs a = kernels::cross_entropy_args(c, false);
  const int64_t N = a.N, C = a.C;
  if (N == 0) return;
  const int64_t* t = a.target;
  int64_t bad = std::numeric_limits<int64_t>::min();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    T* loss = static_cast<T*>(c.output(0).data);
    T* wsum = static_cast<T*>(c.output(1).data);
    parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, C)), [&](int64_t r0, int64_t r1) {
      int64_t local = std::numeric_limits<int64_t>::min();
      ce_rows<T>(x, t, static_cast<const T*>(a.weight), loss, wsum, r0, r1, C, a.ignore_index, a.label_smoothing,
                 &local);
      if (local != std::numeric_limits<int64_t>::min()) {
#pragma omp critical(tsr_nn_ce_bad)
        bad = local;
      }
    });
  });
  if (bad != std::numeric_limits<int64_t>::min())
    fail(TSR_INVALID_ARGUMENT, "cross_entropy: target ", bad, " is out of bounds for ", C, " classes");
}

// Rows [r0, r1) of the layer/rms norm backward: dx, and this block's column sums of g * xhat
// (dw) and g (db) in `part` ([2, M]).
template <class T>
TSR_CPU_MULTIVERSION void layer_norm_backward_rows(const T* x, const T* w, const T* g, T* dx, compute_t<T>* part,
                                                   int64_t r0, int64_t r1, int64_t M, double eps, bool rms) {
  using CT = compute_t<T>;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * M;
    const T* gr = g + r * M;
    T* dr = dx + r * M;
    const CT mean = rms ? CT(0) : row_sum<CT>(xr, M, CT(0), false) / CT(M);
    const CT rstd = CT(1) / std::sqrt(row_sum<CT>(xr, M, mean, true) / CT(M) + CT(eps));
    // Sums of dxhat and dxhat * xhat in 16 lanes, so that the loop vectorizes (a single float
    // accumulator is a serial dependency GCC may not reorder: 2x slower on rows of 64).
    CT la[kLanes] = {}, lb[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= M; j += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const CT xh = (CT(xr[j + l]) - mean) * rstd;
        const CT gv = CT(gr[j + l]);
        const CT dxh = w ? gv * CT(w[j + l]) : gv;
        la[l] += dxh;
        lb[l] += dxh * xh;
        part[j + l] += gv * xh;
        part[M + j + l] += gv;
      }
    CT sa = 0, sb = 0;
    for (; j < M; ++j) {
      const CT xh = (CT(xr[j]) - mean) * rstd;
      const CT dxh = w ? CT(gr[j]) * CT(w[j]) : CT(gr[j]);
      sa += dxh;
      sb += dxh * xh;
      part[j] += CT(gr[j]) * xh;
      part[M + j] += CT(gr[j]);
    }
    for (int h = kLanes / 2; h > 0; h /= 2)  // pairwise, as lane_sum (cpu_math.hpp)
      for (int l = 0; l < h; ++l) {
        la[l] += la[l + h];
        lb[l] += lb[l + h];
      }
    sa += la[0];
    sb += lb[0];
    const CT ma = rms ? CT(0) : sa / CT(M), mb = sb / CT(M);
    for (int64_t j = 0; j < M; ++j) {
      const CT xh = (CT(xr[j]) - mean) * rstd;
      const CT dxh = w ? CT(gr[j]) * CT(w[j]) : CT(gr[j]);
      dr[j] = static_cast<T>(rstd * (dxh - ma - xh * mb));
    }
  }
}

// args: input, weight?, grad, int M, float eps, bool rms -> (dx, dweight [M], dbias [M])
void layer_norm_backward_kernel(KernelCall& c) {
  const kernels::LayerNormArgs a = kernels::layer_norm_args(c, true);
  const int64_t M = a.M;
  const auto& in = c.input(0);
  const int64_t total = a.total;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    T* dw = static_cast<T*>(c.output(1).data);
    T* db = static_cast<T*>(c.output(2).data);
    if (M <= 0) return;
    const int64_t rows = total / M;
    // Row blocks, each with its own column sums for dw/db: at most 64, of at least 4096 elements,
    // and split across threads only from kParallelGrain elements in all. Before, any norm of 2+
    // rows woke the thread team (about 60 us under passive waiting on the 2-core development VM:
    // [8, 64] forward + backward took 59 us at 2 threads, 3.8 us now).
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>({rows, int64_t(64), total / 4096}));
    const int64_t block_grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, total / blocks));
    std::vector<CT> part(static_cast<size_t>(blocks * 2 * M), CT(0));
    const T* x = static_cast<const T*>(in.data);
    const T* w = static_cast<const T*>(a.weight);
    const T* g = static_cast<const T*>(a.grad);
    T* dx = static_cast<T*>(c.output(0).data);
    parallel_for(0, blocks, block_grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t r0 = rows * b / blocks, r1 = rows * (b + 1) / blocks;
        CT* pb = part.data() + b * 2 * M;
        if constexpr (std::is_same_v<T, CT>)
          if (blocked_rows<T>(M)) {
            layer_norm_backward_rows_blocked<T>(x, w, g, dx, pb, r0, r1, M, a.eps, a.rms);
            continue;
          }
        layer_norm_backward_rows<T>(x, w, g, dx, pb, r0, r1, M, a.eps, a.rms);
      }
    });
    for (int64_t j = 0; j < 2 * M; ++j) {
      CT acc = 0;
      for (int64_t b = 0; b < blocks; ++b) acc += part[static_cast<size_t>(b * 2 * M + j)];
      if (j < M)
        dw[j] = static_cast<T>(acc);
      else
        db[j - M] = static_cast<T>(acc);
    }
  });
}

// dx[r, c] = (softmax[r, c] * sum_c q[r, c] - q[r, c]) * g[r], q the smoothed weighted one-hot.
template <class T>
TSR_CPU_MULTIVERSION void ce_backward_rows(const T* x, const int64_t* t, const T* w, const T* g, T* dx, int64_t r0,
                                           int64_t r1, int64_t C, int64_t ignore, double ls, double wsum_all,
                                           bool stream) {
  using CT = compute_t<T>;
  alignas(64) CT buf[kRowBuf<CT>];
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * C;
    T* dr = dx + r * C;
    const int64_t tr = t[r];
    if (tr == ignore || tr < 0 || tr >= C) {
      write_row(dr, C, stream, [](int64_t) { return T(0); });
      continue;
    }
    const CT mx = row_max<CT>(xr, C);
    // e^(x - max) kept for the write when the row fits the buffer (one exp per element).
    const bool keep = C <= kRowBuf<CT>;
    const CT inv = CT(1) / (keep ? row_exp_sum<true, CT>(xr, C, mx, buf) : row_exp_sum<false, CT>(xr, C, mx, nullptr));
    const CT gr = CT(g[r]);
    const CT wt = w ? CT(w[tr]) : CT(1);
    const CT scale = inv * (CT(1 - ls) * wt + CT(ls / double(C) * wsum_all)) * gr;  // softmax * sum_q * g
    const CT smooth = CT(ls / double(C)) * gr;
    const CT picked = CT(1 - ls) * wt * gr;
    write_row(dr, C, stream, [&](int64_t k) {
      const CT e = keep ? buf[k] : exp_no_overflow_c<CT>(CT(xr[k]) - mx);
      const CT q = smooth * (w ? CT(w[k]) : CT(1)) + (k == tr ? picked : CT(0));
      return static_cast<T>(e * scale - q);
    });
  }
}

// args: input [N, C], target [N], weight? [C], grad [N], int ignore_index, float label_smoothing
void ce_backward_kernel(KernelCall& c) {
  const auto& in = c.input(0);
  const kernels::CrossEntropyArgs a = kernels::cross_entropy_args(c, true);
  const int64_t N = a.N, C = a.C;
  const int64_t* t = a.target;
  // As the forward: a target outside [0, C) (other than ignore_index) is an error, not a zero row.
  for (int64_t r = 0; r < N; ++r)
    if (t[r] != a.ignore_index && (t[r] < 0 || t[r] >= C))
      fail(TSR_INVALID_ARGUMENT, "cross_entropy: target ", t[r], " is out of bounds for ", C, " classes");
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* w = static_cast<const T*>(a.weight);
    double wsum_all = double(C);
    if (w) {
      wsum_all = 0;
      for (int64_t k = 0; k < C; ++k) wsum_all += double(w[k]);
    }
    const bool stream = N * C * int64_t(sizeof(T)) >= stream_store_bytes();
    parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, C)), [&](int64_t r0, int64_t r1) {
      ce_backward_rows<T>(static_cast<const T*>(in.data), t, w, static_cast<const T*>(a.grad),
                          static_cast<T*>(c.output(0).data), r0, r1, C, a.ignore_index, a.label_smoothing, wsum_all,
                          stream);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_fused) {
  r.kernel("_nn_layer_norm_backward", "cpu::nn_layer_norm_backward", device_type, kFloatingMask,
           TSR_KERNEL(layer_norm_backward_kernel));
  r.kernel("_nn_cross_entropy_rows_backward", "cpu::nn_cross_entropy_rows_backward", device_type, kFloatingMask,
           TSR_KERNEL(ce_backward_kernel));
  r.kernel("_nn_layer_norm", "cpu::nn_layer_norm", device_type, kFloatingMask, TSR_KERNEL(layer_norm_kernel));
  r.kernel("_nn_cross_entropy_rows", "cpu::nn_cross_entropy_rows", device_type, kFloatingMask, TSR_KERNEL(ce_kernel));
}

}  // namespace tsr::cpu
