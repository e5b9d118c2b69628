// Fused attention (the kernels of _nn_attention and _nn_attention_backward, core/ops/nn/
// nn_attention.cpp): each head's scores, softmax and products in one pass, in the compute type
// (float for f32/f16/bf16, double for f64). Only the probabilities leave a head; the composite
// writes and reads [N, L, S] scores four more times (the product, the scale, the bias, the
// softmax) and runs two bmm per direction on heads too small for a GEMM to pay off.
//
// Layout: the rows of a head go W at a time (W = the lanes of a 64-byte vector: 16 floats, 8
// doubles) into the lanes of vectors: a score "column" s_j holds score (i, j) for W rows i. The
// softmax then is vertical (max, exps, sum and 1 / sum across the S vectors, no horizontal step)
// and its long dependency chains are shared by W rows. Row-major, one row at a time, the
// per-row reductions and the exp's latency cost about 45 ns per 11-element row, 3-4x this
// kernel's whole time per row. The products are small_mm below: 4 output rows per pass, so that
// 4 multiply-add chains are in flight. That is GEMM work without a GEMM's register blocking: for
// large heads it is slower than the bmm path, so the kernels decline (UNIMPLEMENTED, nothing
// written) above kMaxHeadMacs and the core runs the composite.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

// Per-head multiply-adds (L * S * (E + Ev)) up to which the fused loops beat the bmm path.
// Measured at 1 thread on a 2-core AVX-512 Xeon (2026-12-07), f32, L = S, E = Ev, forward /
// backward of the kernels alone against bmm + softmax + bmm (and the formula's four bmm):
// 16x16x16 264/392 us vs 467/476, 48x48x16 197/263 vs 227/274, 32x32x64 132/241 vs 125/198,
// 64x64x16 188/249 vs 154/186, 128x128x64 419/721 vs 243/415: the crossover lies between 74k
// and 131k multiply-adds per head.
constexpr int64_t kMaxHeadMacs = int64_t(3) << 15;  // 98304

// 64-byte vectors of CT (GCC's vector extension, as small_gemm in matmul.cpp; each clone lowers
// them to its widest registers). Loads and stores take references: a vector argument or result
// would change the baseline clone's ABI.
template <class CT>
struct Vec {
  typedef CT type __attribute__((vector_size(64)));
  static constexpr int64_t W = 64 / int64_t(sizeof(CT));
  static void load(type& v, const CT* p) { std::memcpy(&v, p, sizeof(v)); }
  static void store(CT* p, const type& v) { std::memcpy(p, &v, sizeof(v)); }
};

inline int64_t pad_to(int64_t n, int64_t w) { return (n + w - 1) / w * w; }

struct Dims {
  int64_t N, L, S, E, Ev;
};

// out[a, 0, Cp) = (or +=) sum_{b < B} w[a * wa + b * wb] * x[b, 0, Cp) for a < A, x row-major with
// Cp a multiple of the vector width. Four rows of out per pass (the last pass repeats row A - 1).
template <bool ACCUMULATE, class CT>
inline void small_mm(int64_t A, int64_t B, int64_t Cp, const CT* w, int64_t wa, int64_t wb, const CT* x, CT* out) {
  using V = Vec<CT>;
  using VT = typename V::type;
  constexpr int64_t R = 4;
  for (int64_t a0 = 0; a0 < A; a0 += R) {
    const int64_t na = std::min(R, A - a0);
    const CT* wr[R];
    for (int64_t r = 0; r < R; ++r) wr[r] = w + (a0 + std::min(r, na - 1)) * wa;
    for (int64_t cb = 0; cb < Cp; cb += V::W) {
      VT acc[R] = {};
      for (int64_t b = 0; b < B; ++b) {
        VT xv;
        V::load(xv, x + b * Cp + cb);
        for (int64_t r = 0; r < R; ++r) acc[r] += wr[r][b * wb] * xv;
      }
      for (int64_t r = 0; r < na; ++r) {
        CT* o = out + (a0 + r) * Cp + cb;
        if constexpr (ACCUMULATE) {
          VT prev;
          V::load(prev, o);
          acc[r] += prev;
        }
        V::store(o, acc[r]);
      }
    }
  }
}

// rows [S, X] (T, row-major) into xp [S, Xp] in CT; the padding columns stay zero.
template <class T, class CT>
inline void pack_rows(const T* x, int64_t S, int64_t X, int64_t Xp, CT* xp) {
  for (int64_t j = 0; j < S; ++j)
    for (int64_t c = 0; c < X; ++c) xp[j * Xp + c] = CT(x[j * X + c]);
}

// The W rows of a block in lanes: xt[c, r] = x[min(r, nr - 1), c] for c < X (rows past nr repeat
// the last one, whose lanes are computed and never written out).
template <class T, class CT>
inline void rows_to_lanes(const T* x, int64_t nr, int64_t X, CT* xt) {
  constexpr int64_t W = Vec<CT>::W;
  for (int64_t r = 0; r < W; ++r) {
    const T* xr = x + std::min(r, nr - 1) * X;
    for (int64_t c = 0; c < X; ++c) xt[c * W + r] = CT(xr[c]);
  }
}

// [L, S] values (bias, probabilities, dropout mask) of the block's rows in lanes: xt[j, r].
template <class T, class CT>
inline void block_to_lanes(const T* x, int64_t i0, int64_t nr, int64_t S, CT* xt) {
  rows_to_lanes(x + i0 * S, nr, S, xt);
}

// Scratch per task (CT, zeroed): kp [S, Ep], vp [S, Evp], qt [E, W], st [S, W], bt [S, W],
// dt [S, W], acc [W, Evp].
template <class T>
TSR_CPU_MULTIVERSION void attention_heads(const Dims d, const T* q, const T* k, const T* v, const T* bias,
                                          bool bias_per_head, const T* drop, T* out, T* probs, double scale_d,
                                          int64_t n0, int64_t n1, compute_t<T>* kp, compute_t<T>* vp,
                                          compute_t<T>* qt, compute_t<T>* st, compute_t<T>* bt, compute_t<T>* dt,
                                          compute_t<T>* acc) {
  using CT = compute_t<T>;
  using V = Vec<CT>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  const int64_t L = d.L, S = d.S, E = d.E, Ev = d.Ev, Ep = pad_to(E, W), Evp = pad_to(Ev, W);
  const CT scale = CT(scale_d);
  for (int64_t n = n0; n < n1; ++n) {
    const T* bh = bias ? bias + (bias_per_head ? n * L * S : 0) : nullptr;
    const T* dh = drop ? drop + n * L * S : nullptr;
    T* ph = probs + n * L * S;
    pack_rows(k + n * S * E, S, E, Ep, kp);
    pack_rows(v + n * S * Ev, S, Ev, Evp, vp);
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      rows_to_lanes(q + (n * L + i0) * E, nr, E, qt);
      small_mm<false>(S, E, W, kp, Ep, 1, qt, st);  // st[j] = scores (i0.., j)
      if (bh) block_to_lanes(bh, i0, nr, S, bt);
      // The max of the numbers (`>` is false for NaN: a NaN score reaches every probability of
      // its row through the sum), the exps, their sum; a row of -inf only gives NaN, as the
      // composite's softmax.
      VT m = VT{} - std::numeric_limits<CT>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        VT x;
        V::load(x, st + j * W);
        x *= scale;
        if (bh) {
          VT b;
          V::load(b, bt + j * W);
          x += b;
        }
        V::store(st + j * W, x);
        m = x > m ? x : m;
      }
      VT sum = VT{};
      for (int64_t j = 0; j < S; ++j) {
        CT e[W];
        for (int64_t r = 0; r < W; ++r) e[r] = kernels::exp_no_overflow_c<CT>(st[j * W + r] - m[r]);
        VT ev;
        V::load(ev, e);
        V::store(st + j * W, ev);
        sum += ev;
      }
      const VT inv = CT(1) / sum;
      if (dh) block_to_lanes(dh, i0, nr, S, dt);
      for (int64_t j = 0; j < S; ++j) {
        VT p;
        V::load(p, st + j * W);
        p *= inv;
        for (int64_t r = 0; r < nr; ++r) ph[(i0 + r) * S + j] = static_cast<T>(p[r]);
        // As the composite: the probability in T, times the mask in T, times value.
        for (int64_t r = 0; r < W; ++r) {
          const CT pr = CT(static_cast<T>(p[r]));
          st[j * W + r] = dh ? CT(static_cast<T>(pr * dt[j * W + r])) : pr;
        }
      }
      small_mm<false>(nr, S, Evp, st, 1, W, vp, acc);  // acc[r] = sum_j w(r, j) v_j
      T* oh = out + (n * L + i0) * Ev;
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t c = 0; c < Ev; ++c) oh[r * Ev + c] = static_cast<T>(acc[r * Evp + c]);
    }
  }
}

// Scratch per task (CT, zeroed): kp [S, Ep], vp [S, Evp], gt [Ev, W], gp [W, Evp], qp [W, Ep],
// pt [S, W], dpt [S, W], pdt [S, W], dt [S, W], dq [W, Ep], dk [S, Ep], dv [S, Evp].
template <class T>
TSR_CPU_MULTIVERSION void attention_backward_heads(const Dims d, const T* g, const T* q, const T* k, const T* v,
                                                   const T* probs, const T* drop, T* gq, T* gk, T* gv, double scale_d,
                                                   int64_t n0, int64_t n1, compute_t<T>* const* scratch) {
  using CT = compute_t<T>;
  using V = Vec<CT>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  CT *kp = scratch[0], *vp = scratch[1], *gt = scratch[2], *gp = scratch[3], *qp = scratch[4], *pt = scratch[5],
     *dpt = scratch[6], *pdt = scratch[7], *dt = scratch[8], *dq = scratch[9], *dk = scratch[10], *dv = scratch[11];
  const int64_t L = d.L, S = d.S, E = d.E, Ev = d.Ev, Ep = pad_to(E, W), Evp = pad_to(Ev, W);
  const CT scale = CT(scale_d);
  for (int64_t n = n0; n < n1; ++n) {
    const T* ph = probs + n * L * S;
    const T* dh = drop ? drop + n * L * S : nullptr;
    pack_rows(k + n * S * E, S, E, Ep, kp);
    pack_rows(v + n * S * Ev, S, Ev, Evp, vp);
    std::fill(dk, dk + S * Ep, CT(0));
    std::fill(dv, dv + S * Evp, CT(0));
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      const T* gb = g + (n * L + i0) * Ev;
      const T* qb = q + (n * L + i0) * E;
      rows_to_lanes(gb, nr, Ev, gt);
      pack_rows(gb, nr, Ev, Evp, gp);
      pack_rows(qb, nr, E, Ep, qp);
      small_mm<false>(S, Ev, W, vp, Evp, 1, gt, dpt);  // dpt[j] = (g v^T)(i0.., j)
      block_to_lanes(ph, i0, nr, S, pt);
      if (dh) block_to_lanes(dh, i0, nr, S, dt);
      // dp *= mask; pd = p * mask (in T, as the composite); dot = sum_j p_j dp_j
      VT dot = VT{};
      for (int64_t j = 0; j < S; ++j) {
        VT p, dp;
        V::load(p, pt + j * W);
        V::load(dp, dpt + j * W);
        if (dh) {
          VT mk;
          V::load(mk, dt + j * W);
          dp *= mk;
          VT pd = p * mk;
          for (int64_t r = 0; r < W; ++r) pd[r] = CT(static_cast<T>(pd[r]));
          V::store(pdt + j * W, pd);
        }
        V::store(dpt + j * W, dp);
        dot += p * dp;
      }
      // ds = p (dp - dot) scale, over dpt in place
      for (int64_t j = 0; j < S; ++j) {
        VT p, dp;
        V::load(p, pt + j * W);
        V::load(dp, dpt + j * W);
        V::store(dpt + j * W, p * (dp - dot) * scale);
      }
      // Rows past nr hold copies of the last row: the products over rows stop at nr.
      small_mm<true>(S, nr, Evp, dh ? pdt : pt, W, 1, gp, dv);  // dv_j += sum_r pd(r, j) g_r
      small_mm<true>(S, nr, Ep, dpt, W, 1, qp, dk);             // dk_j += sum_r ds(r, j) q_r
      small_mm<false>(nr, S, Ep, dpt, 1, W, kp, dq);            // dq_r = sum_j ds(r, j) k_j
      T* gqb = gq + (n * L + i0) * E;
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t e = 0; e < E; ++e) gqb[r * E + e] = static_cast<T>(dq[r * Ep + e]);
    }
    for (int64_t j = 0; j < S; ++j) {
      for (int64_t e = 0; e < E; ++e) gk[(n * S + j) * E + e] = static_cast<T>(dk[j * Ep + e]);
      for (int64_t c = 0; c < Ev; ++c) gv[(n * S + j) * Ev + c] = static_cast<T>(dv[j * Evp + c]);
    }
  }
}

Dims dims_of(const tsr_tensor_view_t& q, const tsr_tensor_view_t& k, const tsr_tensor_view_t& v) {
  return Dims{q.sizes[0], q.sizes[1], k.sizes[1], q.sizes[2], v.sizes[2]};
}

void decline_large(const KernelCall& c, const Dims& d) {
  const int64_t macs = d.L * d.S * (d.E + d.Ev);
  if (macs > kMaxHeadMacs)
    fail(TSR_UNIMPLEMENTED, c.op_name(), ": heads of ", d.L, " x ", d.S, " x (", d.E, " + ", d.Ev,
         ") multiply-adds are left to the bmm path");
}

size_t sz(int64_t n) { return static_cast<size_t>(std::max<int64_t>(1, n)); }

// Heads per task: about kParallelGrain multiply-adds.
int64_t head_grain(const Dims& d) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, d.L * d.S * (d.E + d.Ev)));
}

// args: query, key, value, bias?, dropout_mask?, float scale; outputs: out, probs
void attention_kernel(KernelCall& c) {
  const Dims d = dims_of(c.input(0), c.input(1), c.input(2));
  decline_large(c, d);
  size_t next = 3;
  const tsr_tensor_view_t* bias = c.arg_is_none(3) ? nullptr : &c.input(next++);
  const tsr_tensor_view_t* drop = c.arg_is_none(4) ? nullptr : &c.input(next);
  const double scale = c.arg_double(5);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    T* out = static_cast<T*>(c.output(0).data);
    if (d.S == 0) {  // softmax over nothing: no probabilities, an output of zeros
      std::fill(out, out + d.N * d.L * d.Ev, T(0));
      return;
    }
    constexpr int64_t W = Vec<CT>::W;
    const int64_t Ep = pad_to(d.E, W), Evp = pad_to(d.Ev, W);
    parallel_for(0, d.N, head_grain(d), [&](int64_t n0, int64_t n1) {
      std::vector<CT> kp(sz(d.S * Ep)), vp(sz(d.S * Evp)), qt(sz(d.E * W)), st(sz(d.S * W)), bt(sz(d.S * W)),
          dt(sz(d.S * W)), acc(sz(W * Evp));
      attention_heads<T>(d, static_cast<const T*>(c.input(0).data), static_cast<const T*>(c.input(1).data),
                         static_cast<const T*>(c.input(2).data), bias ? static_cast<const T*>(bias->data) : nullptr,
                         bias && bias->sizes[0] != 1, drop ? static_cast<const T*>(drop->data) : nullptr, out,
                         static_cast<T*>(c.output(1).data), scale, n0, n1, kp.data(), vp.data(), qt.data(), st.data(),
                         bt.data(), dt.data(), acc.data());
    });
  });
}

// args: grad, query, key, value, probs, dropout_mask?, float scale; outputs: dq, dk, dv
void attention_backward_kernel(KernelCall& c) {
  const Dims d = dims_of(c.input(1), c.input(2), c.input(3));
  decline_large(c, d);
  const tsr_tensor_view_t* drop = c.arg_is_none(5) ? nullptr : &c.input(5);
  const double scale = c.arg_double(6);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    T* gq = static_cast<T*>(c.output(0).data);
    if (d.S == 0) {  // no keys: dq is zero, dk and dv are empty
      std::fill(gq, gq + d.N * d.L * d.E, T(0));
      return;
    }
    constexpr int64_t W = Vec<CT>::W;
    const int64_t Ep = pad_to(d.E, W), Evp = pad_to(d.Ev, W);
    parallel_for(0, d.N, head_grain(d), [&](int64_t n0, int64_t n1) {
      const int64_t sizes[12] = {d.S * Ep, d.S * Evp, d.Ev * W, W * Evp, W * Ep, d.S * W,
                                 d.S * W,  d.S * W,   d.S * W,  W * Ep,  d.S * Ep, d.S * Evp};
      std::vector<CT> buf[12];
      CT* scratch[12];
      for (int i = 0; i < 12; ++i) {
        buf[i].resize(sz(sizes[i]));
        scratch[i] = buf[i].data();
      }
      attention_backward_heads<T>(d, static_cast<const T*>(c.input(0).data), static_cast<const T*>(c.input(1).data),
                                  static_cast<const T*>(c.input(2).data), static_cast<const T*>(c.input(3).data),
                                  static_cast<const T*>(c.input(4).data),
                                  drop ? static_cast<const T*>(drop->data) : nullptr, gq,
                                  static_cast<T*>(c.output(1).data), static_cast<T*>(c.output(2).data), scale, n0, n1,
                                  scratch);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_attention) {
  r.kernel("_nn_attention", "cpu::nn_attention", device_type, kFloatingMask, TSR_KERNEL(attention_kernel));
  r.kernel("_nn_attention_backward", "cpu::nn_attention_backward", device_type, kFloatingMask,
           TSR_KERNEL(attention_backward_kernel));
}

}  // namespace tsr::cpu
