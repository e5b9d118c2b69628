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
#include <type_traits>
#include <utility>
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

// rows [S, X] (T, row-major) as [S, Xp] rows in CT: x itself where that is what it already is,
// else copied into xp (whose padding columns stay zero).
template <class T, class CT>
inline const CT* rows_in_ct(const T* x, int64_t S, int64_t X, int64_t Xp, CT* xp) {
  if constexpr (std::is_same_v<T, CT>)
    if (X == Xp) return x;
  for (int64_t j = 0; j < S; ++j)
    for (int64_t c = 0; c < X; ++c) xp[j * Xp + c] = CT(x[j * X + c]);
  return xp;
}

// Where gradients of [rows, X] in T accumulate: the output itself when it is [rows, Xp] in CT,
// else the scratch (then copied out by rows_from_ct).
template <class T, class CT>
inline CT* ct_rows_of(T* out, int64_t X, int64_t Xp, CT* scratch) {
  if constexpr (std::is_same_v<T, CT>)
    if (X == Xp) return out;
  return scratch;
}
template <class T, class CT>
inline void rows_from_ct(const CT* x, int64_t rows, int64_t X, int64_t Xp, T* out) {
  if (static_cast<const void*>(x) == static_cast<const void*>(out)) return;
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t c = 0; c < X; ++c) out[j * X + c] = static_cast<T>(x[j * Xp + c]);
}

// A W x W tile of vectors transposed in place: block-recursive, swapping the off-diagonal h x h
// blocks of every 2h x 2h block for h = W/2 .. 1, two two-source shuffles per pair of vectors and
// level (vpermt2ps with AVX-512): 64 shuffles for 16 floats against 256 scalar moves. The masks
// and the steps are compile-time constants, so the tile stays in registers.
template <class CT, int H, int... L>
inline void transpose_level(typename Vec<CT>::type* a, std::integer_sequence<int, L...>) {
  using I = std::conditional_t<sizeof(CT) == 4, int32_t, int64_t>;
  typedef I IV __attribute__((vector_size(64)));
  constexpr int W = int(Vec<CT>::W);
  const IV lo = {I((L & H) ? W + L - H : L)...};
  const IV hi = {I((L & H) ? W + L : L + H)...};
  for (int i = 0; i < W; ++i)
    if (!(i & H)) {
      const typename Vec<CT>::type x = __builtin_shuffle(a[i], a[i + H], lo);
      a[i + H] = __builtin_shuffle(a[i], a[i + H], hi);
      a[i] = x;
    }
}
template <class CT>
inline void transpose_tile(typename Vec<CT>::type* a) {
  constexpr int W = int(Vec<CT>::W);
  const auto lanes = std::make_integer_sequence<int, W>{};
  transpose_level<CT, W / 2>(a, lanes);
  transpose_level<CT, W / 4>(a, lanes);
  transpose_level<CT, W / 8>(a, lanes);
  if constexpr (W == 16) transpose_level<CT, 1>(a, lanes);
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

// [L, S] values (bias, probabilities, dropout mask) of the block's rows in lanes: xt[j, r].
template <class T, class CT>
inline void block_to_lanes(const T* x, int64_t i0, int64_t nr, int64_t S, CT* xt) {
  rows_to_lanes(x + i0 * S, nr, S, S, xt);
}

// Scratch per task (CT, zeroed): kp [S, Ep], vp [S, Evp], qt [E, W], st [S, W], bt [Lp, S]
// (Lp: L rounded up to W; the lanes of every row block of a shared bias, of one block otherwise),
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
  if (bias && !bias_per_head)  // one bias for every head (a causal mask): its lanes once
    for (int64_t i0 = 0; i0 < L; i0 += W) block_to_lanes(bias, i0, std::min(W, L - i0), S, bt + (i0 / W) * S * W);
  for (int64_t n = n0; n < n1; ++n) {
    const T* bh = bias ? bias + (bias_per_head ? n * L * S : 0) : nullptr;
    const T* dh = drop ? drop + n * L * S : nullptr;
    T* ph = probs + n * L * S;
    const CT* kh = rows_in_ct(k + n * S * E, S, E, Ep, kp);
    const CT* vh = rows_in_ct(v + n * S * Ev, S, Ev, Evp, vp);
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      rows_to_lanes(q + (n * L + i0) * E, nr, E, E, qt);
      small_mm<false>(S, E, W, kh, Ep, 1, qt, st);  // st[j] = scores (i0.., j)
      const CT* btb = bt + (bias_per_head ? 0 : (i0 / W) * S * W);  // a shared bias: lanes made once
      if (bh && bias_per_head) block_to_lanes(bh, i0, nr, S, bt);
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
      if (dh) block_to_lanes(dh, i0, nr, S, dt);
      for (int64_t j = 0; j < S; ++j) {
        VT p;
        V::load(p, st + j * W);
        V::store(st + j * W, p * inv);
      }
      lanes_to_rows(st, nr, S, ph + i0 * S, S);
      // The weights of value, as the composite: the probability in T, times the mask in T.
      if (!std::is_same_v<T, CT> || dh)
        for (int64_t j = 0; j < S; ++j)
          for (int64_t r = 0; r < W; ++r) {
            const CT pr = CT(static_cast<T>(st[j * W + r]));
            st[j * W + r] = dh ? CT(static_cast<T>(pr * dt[j * W + r])) : pr;
          }
      T* oh = out + (n * L + i0) * Ev;
      CT* ob = ct_rows_of(oh, Ev, Evp, acc);
      small_mm<false>(nr, S, Evp, st, 1, W, vh, ob);  // out_r = sum_j w(r, j) v_j
      rows_from_ct(ob, nr, Ev, Evp, oh);
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
    const CT* kh = rows_in_ct(k + n * S * E, S, E, Ep, kp);
    const CT* vh = rows_in_ct(v + n * S * Ev, S, Ev, Evp, vp);
    CT* dkh = ct_rows_of(gk + n * S * E, E, Ep, dk);
    CT* dvh = ct_rows_of(gv + n * S * Ev, Ev, Evp, dv);
    std::fill(dkh, dkh + S * Ep, CT(0));
    std::fill(dvh, dvh + S * Evp, CT(0));
    for (int64_t i0 = 0; i0 < L; i0 += W) {
      const int64_t nr = std::min(W, L - i0);
      const T* gb = g + (n * L + i0) * Ev;
      const T* qb = q + (n * L + i0) * E;
      rows_to_lanes(gb, nr, Ev, Ev, gt);
      const CT* gr = rows_in_ct(gb, nr, Ev, Evp, gp);
      const CT* qr = rows_in_ct(qb, nr, E, Ep, qp);
      small_mm<false>(S, Ev, W, vh, Evp, 1, gt, dpt);  // dpt[j] = (g v^T)(i0.., j)
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
      small_mm<true>(S, nr, Evp, dh ? pdt : pt, W, 1, gr, dvh);  // dv_j += sum_r pd(r, j) g_r
      small_mm<true>(S, nr, Ep, dpt, W, 1, qr, dkh);             // dk_j += sum_r ds(r, j) q_r
      T* gqb = gq + (n * L + i0) * E;
      CT* dqb = ct_rows_of(gqb, E, Ep, dq);
      small_mm<false>(nr, S, Ep, dpt, 1, W, kh, dqb);  // dq_r = sum_j ds(r, j) k_j
      rows_from_ct(dqb, nr, E, Ep, gqb);
    }
    rows_from_ct(dkh, S, E, Ep, gk + n * S * E);
    rows_from_ct(dvh, S, Ev, Evp, gv + n * S * Ev);
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
      std::vector<CT> kp(sz(d.S * Ep)), vp(sz(d.S * Evp)), qt(sz(d.E * W)), st(sz(d.S * W)), bt(sz(pad_to(d.L, W) * d.S)),
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
