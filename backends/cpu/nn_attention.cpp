// Fused attention (the kernels of _nn_attention and _nn_attention_backward, core/ops/nn/
// nn_attention.cpp): each head's scores, softmax and products in one pass, in the compute type
// (float for f32/f16/bf16, double for f64). Only the probabilities leave a head; the composite
// writes and reads [B, H, L, S] scores four more times (the product, the scale, the bias, the
// softmax) and runs two bmm per direction on heads too small for a GEMM to pay off. Every
// tensor is a [B, H, rows, cols] view with a unit stride along cols (Heads below): a
// transformer's heads are read, and its merged-heads output and gradients written, in place.
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
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_simd.hpp"

namespace tsr::cpu {
namespace {

// Per-head multiply-adds (L * S * (E + Ev)) up to which the fused loops beat the bmm path.
// Measured at 1 thread on a 2-core AVX-512 Xeon (2026-12-07), f32, L = S, E = Ev, forward /
// backward of the kernels alone against bmm + softmax + bmm (and the formula's four bmm):
// 16x16x16 264/392 us vs 467/476, 48x48x16 197/263 vs 227/274, 32x32x64 132/241 vs 125/198,
// 64x64x16 188/249 vs 154/186, 128x128x64 419/721 vs 243/415: the crossover lies between 74k
// and 131k multiply-adds per head.
constexpr int64_t kMaxHeadMacs = int64_t(3) << 15;  // 98304

struct Dims {
  int64_t N, H, L, S, E, Ev;  // N = B * H heads
};

// A [B, H, rows, cols] view with a unit stride along cols (what the core passes: docs/kernel-
// contracts.md): head n = (b, h) starts at data + b * sb + h * sh, its rows ld apart. A batch dim
// of one element gets stride 0, so that a bias [1, 1, L, S] is one head for all.
template <class T>
struct Heads {
  T* data = nullptr;
  int64_t H = 1, sb = 0, sh = 0, ld = 0;
  T* head(int64_t n) const { return data + (n / H) * sb + (n % H) * sh; }
  bool shared() const { return sb == 0 && sh == 0; }
};
template <class T>
Heads<T> heads_of(const tsr_tensor_view_t& v) {
  Heads<T> h;
  h.data = static_cast<T*>(v.data);
  h.H = v.sizes[1];
  h.sb = v.sizes[0] == 1 ? 0 : v.strides[0];
  h.sh = v.sizes[1] == 1 ? 0 : v.strides[1];
  h.ld = v.strides[2];
  return h;
}

// Prefetches the rows of head n (rows x cols values, ld apart) into the cache: a head's rows are
// ld apart in a projection's output (each 64-byte row piece on its own line), where the hardware
// prefetcher does not follow, and they come from the last-level cache when the backward runs.
template <class T>
inline void prefetch_head(const Heads<T>& h, int64_t n, int64_t rows, int64_t cols) {
  const char* base = reinterpret_cast<const char*>(h.head(n));
  const int64_t row_bytes = cols * int64_t(sizeof(T)), ld_bytes = h.ld * int64_t(sizeof(T));
  for (int64_t r = 0; r < rows; ++r)
    prefetch_row(base + r * ld_bytes, row_bytes);
}

// out[a, 0, Cp) = (or +=) sum_{b < B} w[a * wa + b * wb] * x[b * xs, 0, Cp) for a < A, Cp a
// multiple of the vector width, out rows os apart. Four rows of out per pass (the last pass
// repeats row A - 1).
template <bool ACCUMULATE, class CT>
inline void small_mm(int64_t A, int64_t B, int64_t Cp, const CT* w, int64_t wa, int64_t wb, const CT* x, int64_t xs,
                     CT* out, int64_t os) {
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
        V::load(xv, x + b * xs + cb);
        for (int64_t r = 0; r < R; ++r) acc[r] += wr[r][b * wb] * xv;
      }
      for (int64_t r = 0; r < na; ++r) {
        CT* o = out + (a0 + r) * os + cb;
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

// Rows of X values (T, ld apart) as rows of Xp values in CT: {pointer, row stride}. x itself
// where it already is that (T the compute type, X a whole number of vectors), else copied into
// xp ([rows, Xp], padding columns zero).
template <class CT>
struct Rows {
  const CT* p;
  int64_t ld;
};
template <class T, class CT>
inline Rows<CT> rows_in_ct(const T* x, int64_t rows, int64_t X, int64_t Xp, int64_t ld, CT* xp) {
  if constexpr (std::is_same_v<T, CT>)
    if (X == Xp) return {x, ld};
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t c = 0; c < X; ++c) xp[j * Xp + c] = CT(x[j * ld + c]);
  return {xp, Xp};
}

// Where results of [rows, X] in T (rows ld apart) are accumulated: in the output itself when
// it holds CT and X is a whole number of vectors, else in the scratch [rows, Xp], copied out by
// rows_from_ct.
template <class CT>
struct OutRows {
  CT* p;
  int64_t ld;
  bool direct;
};
template <class T, class CT>
inline OutRows<CT> out_rows_of(T* out, int64_t X, int64_t Xp, int64_t ld, CT* scratch) {
  if constexpr (std::is_same_v<T, CT>)
    if (X == Xp) return {out, ld, true};
  return {scratch, Xp, false};
}
template <class T, class CT>
inline void rows_from_ct(const OutRows<CT>& r, int64_t rows, int64_t X, T* out, int64_t ld) {
  if (r.direct) return;
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t c = 0; c < X; ++c) out[j * ld + c] = static_cast<T>(r.p[j * r.ld + c]);
}
template <class CT>
inline void zero_rows(const OutRows<CT>& r, int64_t rows, int64_t Xp) {
  for (int64_t j = 0; j < rows; ++j) std::fill(r.p + j * r.ld, r.p + j * r.ld + Xp, CT(0));
}

// The W rows of a block in lanes: xt[c, r] = x[min(r, nr - 1), c] for c < X, x with row stride ld
// (rows past nr repeat the last one, whose lanes are computed and never written out). Whole
// tiles by transpose_tile where T is the compute type, the rest element by element (a variable
// length memcpy into a tile became `rep movs`, slower than the scalar moves).
template <class T, class CT>
inline void rows_to_lanes(const T* x, int64_t nr, int64_t X, int64_t ld, CT* xt) {
  using V = Vec<CT>;
  constexpr int64_t W = V::W;
  int64_t c0 = 0;
  if constexpr (std::is_same_v<T, CT>) {
    for (; c0 + W <= X; c0 += W) {
      typename V::type tile[W];
      for (int64_t r = 0; r < W; ++r) V::load(tile[r], x + std::min(r, nr - 1) * ld + c0);
      transpose_tile<CT>(tile);
      for (int64_t c = 0; c < W; ++c) V::store(xt + (c0 + c) * W, tile[c]);
    }
  }
  if (c0 < X)
    for (int64_t r = 0; r < W; ++r) {
      const T* xr = x + std::min(r, nr - 1) * ld;
      for (int64_t c = c0; c < X; ++c) xt[c * W + r] = CT(xr[c]);
    }
}

// The inverse for the first nr lanes: x[r * ld + c] = T(xt[c, r]) for r < nr, c < X.
template <class T, class CT>
inline void lanes_to_rows(const CT* xt, int64_t nr, int64_t X, T* x, int64_t ld) {
  using V = Vec<CT>;
  constexpr int64_t W = V::W;
  int64_t c0 = 0;
  if constexpr (std::is_same_v<T, CT>) {
    for (; c0 + W <= X; c0 += W) {
      typename V::type tile[W];
      for (int64_t c = 0; c < W; ++c) V::load(tile[c], xt + (c0 + c) * W);
      transpose_tile<CT>(tile);
      for (int64_t r = 0; r < nr; ++r) V::store(x + r * ld + c0, tile[r]);
    }
  }
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t c = c0; c < X; ++c) x[r * ld + c] = static_cast<T>(xt[c * W + r]);
}

// Scratch per task (CT, zeroed): kp [S, Ep], vp [S, Evp], qt [E, W], st [S, W], bt [Lp, S]
// (Lp: L rounded up to W; the lanes of every row block of a shared bias, of one block otherwise),
// dt [S, W], acc [W, Evp].
template <class T>
TSR_CPU_MULTIVERSION void attention_heads(const Dims d, const Heads<const T> q, const Heads<const T> k,
                                          const Heads<const T> v, const Heads<const T> bias, const Heads<const T> drop,
                                          const Heads<T> out, const Heads<T> probs, double scale_d, int64_t n0,
                                          int64_t n1, compute_t<T>* kp, compute_t<T>* vp, compute_t<T>* qt,
                                          compute_t<T>* st, compute_t<T>* bt, compute_t<T>* dt, compute_t<T>* acc) {
  using CT = compute_t<T>;
  using V = Vec<CT>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  const int64_t L = d.L, S = d.S, E = d.E, Ev = d.Ev, Ep = pad_to(E, W), Evp = pad_to(Ev, W);
  const CT scale = CT(scale_d);
  const bool shared_bias = bias.data && bias.shared();
  if (shared_bias)  // one bias for every head (a causal mask): its lanes once
    for (int64_t i0 = 0; i0 < L; i0 += W)
      rows_to_lanes(bias.data + i0 * bias.ld, std::min(W, L - i0), S, bias.ld, bt + (i0 / W) * S * W);
  for (int64_t n = n0; n < n1; ++n) {
    if (n + 1 < n1) {  // the next head comes in while this one is computed
      prefetch_head(q, n + 1, L, E);
      prefetch_head(k, n + 1, S, E);
      prefetch_head(v, n + 1, S, Ev);
    }
    const T* qh = q.head(n);
    const T* bh = bias.data ? bias.head(n) : nullptr;
    const T* dh = drop.data ? drop.head(n) : nullptr;
    T* ph = probs.head(n);
    T* oh = out.head(n);
    const Rows<CT> kr = rows_in_ct(k.head(n), S, E, Ep, k.ld, kp);
    const Rows<CT> vr = rows_in_ct(v.head(n), S, Ev, Evp, v.ld, vp);
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      rows_to_lanes(qh + i0 * q.ld, nr, E, q.ld, qt);
      small_mm<false>(S, E, W, kr.p, kr.ld, 1, qt, W, st, W);  // st[j] = scores (i0.., j)
      const CT* btb = shared_bias ? bt + (i0 / W) * S * W : bt;
      if (bh && !shared_bias) rows_to_lanes(bh + i0 * bias.ld, nr, S, bias.ld, bt);
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
          V::load(b, btb + j * W);
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
      for (int64_t j = 0; j < S; ++j) {
        VT p;
        V::load(p, st + j * W);
        V::store(st + j * W, p * inv);
      }
      lanes_to_rows(st, nr, S, ph + i0 * probs.ld, probs.ld);
      // The weights of value, as the composite: the probability in T, times the mask in T.
      if (dh) rows_to_lanes(dh + i0 * drop.ld, nr, S, drop.ld, dt);
      if (!std::is_same_v<T, CT> || dh)
        for (int64_t j = 0; j < S; ++j)
          for (int64_t r = 0; r < W; ++r) {
            const CT pr = CT(static_cast<T>(st[j * W + r]));
            st[j * W + r] = dh ? CT(static_cast<T>(pr * dt[j * W + r])) : pr;
          }
      T* ob = oh + i0 * out.ld;
      const OutRows<CT> o = out_rows_of(ob, Ev, Evp, out.ld, acc);
      small_mm<false>(nr, S, Evp, st, 1, W, vr.p, vr.ld, o.p, o.ld);  // out_r = sum_j w(r, j) v_j
      rows_from_ct(o, nr, Ev, ob, out.ld);
    }
  }
}

// Scratch per task (CT, zeroed): kp [S, Ep], vp [S, Evp], gt [Ev, W], gp [W, Evp], qp [W, Ep],
// pt [S, W], dpt [S, W], pdt [S, W], dt [S, W], dq [W, Ep], dk [S, Ep], dv [S, Evp].
template <class T>
TSR_CPU_MULTIVERSION void attention_backward_heads(const Dims d, const Heads<const T> g, const Heads<const T> q,
                                                   const Heads<const T> k, const Heads<const T> v,
                                                   const Heads<const T> probs, const Heads<const T> drop,
                                                   const Heads<T> gq, const Heads<T> gk, const Heads<T> gv,
                                                   double scale_d, int64_t n0, int64_t n1,
                                                   compute_t<T>* const* scratch) {
  using CT = compute_t<T>;
  using V = Vec<CT>;
  using VT = typename V::type;
  constexpr int64_t W = V::W;
  CT *kp = scratch[0], *vp = scratch[1], *gt = scratch[2], *gp = scratch[3], *qp = scratch[4], *pt = scratch[5],
     *dpt = scratch[6], *pdt = scratch[7], *dt = scratch[8], *dq = scratch[9], *dk = scratch[10], *dv = scratch[11];
  const int64_t L = d.L, S = d.S, E = d.E, Ev = d.Ev, Ep = pad_to(E, W), Evp = pad_to(Ev, W);
  const CT scale = CT(scale_d);
  for (int64_t n = n0; n < n1; ++n) {
    if (n + 1 < n1) {  // the next head comes in while this one is computed
      prefetch_head(g, n + 1, L, Ev);
      prefetch_head(q, n + 1, L, E);
      prefetch_head(k, n + 1, S, E);
      prefetch_head(v, n + 1, S, Ev);
      prefetch_head(probs, n + 1, L, S);
    }
    const T* gh = g.head(n);
    const T* qh = q.head(n);
    const T* ph = probs.head(n);
    const T* dh = drop.data ? drop.head(n) : nullptr;
    T* gkh = gk.head(n);
    T* gvh = gv.head(n);
    T* gqh = gq.head(n);
    const Rows<CT> kr = rows_in_ct(k.head(n), S, E, Ep, k.ld, kp);
    const Rows<CT> vr = rows_in_ct(v.head(n), S, Ev, Evp, v.ld, vp);
    const OutRows<CT> dkr = out_rows_of(gkh, E, Ep, gk.ld, dk);
    const OutRows<CT> dvr = out_rows_of(gvh, Ev, Evp, gv.ld, dv);
    zero_rows(dkr, S, Ep);
    zero_rows(dvr, S, Evp);
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      const T* gb = gh + i0 * g.ld;
      rows_to_lanes(gb, nr, Ev, g.ld, gt);
      const Rows<CT> gr = rows_in_ct(gb, nr, Ev, Evp, g.ld, gp);
      const Rows<CT> qr = rows_in_ct(qh + i0 * q.ld, nr, E, Ep, q.ld, qp);
      small_mm<false>(S, Ev, W, vr.p, vr.ld, 1, gt, W, dpt, W);  // dpt[j] = (g v^T)(i0.., j)
      rows_to_lanes(ph + i0 * probs.ld, nr, S, probs.ld, pt);
      if (dh) rows_to_lanes(dh + i0 * drop.ld, nr, S, drop.ld, dt);
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
      small_mm<true>(S, nr, Evp, dh ? pdt : pt, W, 1, gr.p, gr.ld, dvr.p, dvr.ld);  // dv_j += sum_r pd(r, j) g_r
      small_mm<true>(S, nr, Ep, dpt, W, 1, qr.p, qr.ld, dkr.p, dkr.ld);             // dk_j += sum_r ds(r, j) q_r
      T* gqb = gqh + i0 * gq.ld;
      const OutRows<CT> dqr = out_rows_of(gqb, E, Ep, gq.ld, dq);
      small_mm<false>(nr, S, Ep, dpt, 1, W, kr.p, kr.ld, dqr.p, dqr.ld);  // dq_r = sum_j ds(r, j) k_j
      rows_from_ct(dqr, nr, E, gqb, gq.ld);
    }
    rows_from_ct(dkr, S, E, gkh, gk.ld);
    rows_from_ct(dvr, S, Ev, gvh, gv.ld);
  }
}

Dims dims_of(const tsr_tensor_view_t& q, const tsr_tensor_view_t& k, const tsr_tensor_view_t& v) {
  return Dims{q.sizes[0] * q.sizes[1], q.sizes[1], q.sizes[2], k.sizes[2], q.sizes[3], v.sizes[3]};
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

// Every head's rows x cols values set to 0 (the outputs of a problem without keys).
template <class T>
void zero_heads(const Heads<T>& h, int64_t N, int64_t rows, int64_t cols) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < rows; ++i) std::fill(h.head(n) + i * h.ld, h.head(n) + i * h.ld + cols, T(0));
}

// args: query, key, value, bias?, dropout_mask?, float scale; outputs: out, probs. All
// [B, H, rows, cols] with a unit stride along cols, any other strides.
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
    const Heads<T> out = heads_of<T>(c.output(0));
    if (d.S == 0) return zero_heads(out, d.N, d.L, d.Ev);  // softmax over nothing: an output of zeros
    constexpr int64_t W = Vec<CT>::W;
    const int64_t Ep = pad_to(d.E, W), Evp = pad_to(d.Ev, W);
    parallel_for(0, d.N, head_grain(d), [&](int64_t n0, int64_t n1) {
      std::vector<CT> kp(sz(d.S * Ep)), vp(sz(d.S * Evp)), qt(sz(d.E * W)), st(sz(d.S * W)),
          bt(sz(pad_to(d.L, W) * d.S)), dt(sz(d.S * W)), acc(sz(W * Evp));
      attention_heads<T>(d, heads_of<const T>(c.input(0)), heads_of<const T>(c.input(1)),
                         heads_of<const T>(c.input(2)), bias ? heads_of<const T>(*bias) : Heads<const T>{},
                         drop ? heads_of<const T>(*drop) : Heads<const T>{}, out, heads_of<T>(c.output(1)), scale,
                         n0, n1, kp.data(), vp.data(), qt.data(), st.data(), bt.data(), dt.data(), acc.data());
    });
  });
}

// args: grad, query, key, value, probs, dropout_mask?, float scale; outputs: dq, dk, dv (views as
// attention_kernel's)
void attention_backward_kernel(KernelCall& c) {
  const Dims d = dims_of(c.input(1), c.input(2), c.input(3));
  decline_large(c, d);
  const tsr_tensor_view_t* drop = c.arg_is_none(5) ? nullptr : &c.input(5);
  const double scale = c.arg_double(6);
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    const Heads<T> gq = heads_of<T>(c.output(0));
    if (d.S == 0) return zero_heads(gq, d.N, d.L, d.E);  // no keys: dq is zero, dk and dv are empty
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
      attention_backward_heads<T>(d, heads_of<const T>(c.input(0)), heads_of<const T>(c.input(1)),
                                  heads_of<const T>(c.input(2)), heads_of<const T>(c.input(3)),
                                  heads_of<const T>(c.input(4)),
                                  drop ? heads_of<const T>(*drop) : Heads<const T>{}, gq, heads_of<T>(c.output(1)),
                                  heads_of<T>(c.output(2)), scale, n0, n1, scratch);
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
