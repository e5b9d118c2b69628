// _nn_lstm_cell, _nn_gru_cell and their backwards: the pointwise part of an LSTM or GRU step in
// one pass over the gates (contracts and formulas in core/ops/nn/nn_rnn.cpp). Dense [N, 4H] gates, [N, H]
// states; f16/bf16 computed in float and rounded once. Rows are split across threads; each row's
// loops run over the hidden units with unit stride, so they vectorize (the clones of
// TSR_CPU_MULTIVERSION give the exps AVX-512 / AVX2 widths).
#include <algorithm>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

using kernels::tanh_c;

// One row: g = the row's 4H gates. The operands never overlap (the core allocates the outputs);
// __restrict on the row pointers, with the gates indexed from one base, is what GCC needs to
// vectorize these loops (it gave up with a restrict pointer per gate declared in the row loop).
template <class T>
inline void lstm_row(const T* __restrict g, const T* __restrict c0, T* __restrict h1, T* __restrict c1, int64_t H) {
  using CT = compute_t<T>;
  for (int64_t j = 0; j < H; ++j) {
    const CT c = sigmoid_c<CT>(CT(g[H + j])) * CT(c0[j]) + sigmoid_c<CT>(CT(g[j])) * tanh_c<CT>(CT(g[2 * H + j]));
    c1[j] = static_cast<T>(c);
    h1[j] = static_cast<T>(sigmoid_c<CT>(CT(g[3 * H + j])) * tanh_c<CT>(c));
  }
}

template <class T>
TSR_CPU_MULTIVERSION void lstm_rows(const T* gates, const T* cx, T* hy, T* cy, int64_t r0, int64_t r1, int64_t H) {
  for (int64_t r = r0; r < r1; ++r) lstm_row<T>(gates + r * 4 * H, cx + r * H, hy + r * H, cy + r * H, H);
}

// dc = dcy + dhy * o * (1 - tanh(cy)^2); d(gates) = [dc g i(1-i), dc cx f(1-f), dc i (1-g^2),
// dhy tanh(cy) o(1-o)]; d(cx) = dc f. A missing gradient is zero (DH / DC false: no loads, no
// branch in the loop).
template <class T, bool DH, bool DC>
inline void lstm_backward_row(const T* __restrict g, const T* __restrict c0, const T* __restrict c1,
                              const T* __restrict dh, const T* __restrict dc1, T* __restrict dg, T* __restrict dc0,
                              int64_t H) {
  using CT = compute_t<T>;
  for (int64_t j = 0; j < H; ++j) {
    const CT i = sigmoid_c<CT>(CT(g[j])), f = sigmoid_c<CT>(CT(g[H + j])), gg = tanh_c<CT>(CT(g[2 * H + j])),
             o = sigmoid_c<CT>(CT(g[3 * H + j]));
    const CT tc = tanh_c<CT>(CT(c1[j]));
    CT h = 0, dc = 0;
    if constexpr (DH) h = CT(dh[j]);
    if constexpr (DC) dc = CT(dc1[j]);
    dc += h * o * (CT(1) - tc * tc);
    dg[j] = static_cast<T>(dc * gg * i * (CT(1) - i));
    dg[H + j] = static_cast<T>(dc * CT(c0[j]) * f * (CT(1) - f));
    dg[2 * H + j] = static_cast<T>(dc * i * (CT(1) - gg * gg));
    dg[3 * H + j] = static_cast<T>(h * tc * o * (CT(1) - o));
    dc0[j] = static_cast<T>(dc * f);
  }
}

template <class T, bool DH, bool DC>
TSR_CPU_MULTIVERSION void lstm_backward_rows(const T* gates, const T* cx, const T* cy, const T* dhy, const T* dcy,
                                             T* dgates, T* dcx, int64_t r0, int64_t r1, int64_t H) {
  for (int64_t r = r0; r < r1; ++r)
    lstm_backward_row<T, DH, DC>(gates + r * 4 * H, cx + r * H, cy + r * H, DH ? dhy + r * H : nullptr,
                                 DC ? dcy + r * H : nullptr, dgates + r * 4 * H, dcx + r * H, H);
}

// GRU: r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r hn), hy = n + z (hx - n);
// x and h are one row's [3H] input and hidden gates.
template <class T>
inline void gru_row(const T* __restrict x, const T* __restrict h, const T* __restrict h0, T* __restrict hy,
                    int64_t H) {
  using CT = compute_t<T>;
  for (int64_t j = 0; j < H; ++j) {
    const CT r = sigmoid_c<CT>(CT(x[j]) + CT(h[j]));
    const CT z = sigmoid_c<CT>(CT(x[H + j]) + CT(h[H + j]));
    const CT n = tanh_c<CT>(CT(x[2 * H + j]) + r * CT(h[2 * H + j]));
    hy[j] = static_cast<T>(n + z * (CT(h0[j]) - n));
  }
}

template <class T>
TSR_CPU_MULTIVERSION void gru_rows(const T* xg, const T* hg, const T* hx, T* hy, int64_t r0, int64_t r1, int64_t H) {
  for (int64_t r = r0; r < r1; ++r) gru_row<T>(xg + r * 3 * H, hg + r * 3 * H, hx + r * H, hy + r * H, H);
}

// dn = g (1 - z) (1 - n^2), dr = dn hn r (1 - r), dz = g (hx - n) z (1 - z):
// d(xg) = [dr, dz, dn], d(hg) = [dr, dz, dn r], d(hx) = g z.
template <class T>
inline void gru_backward_row(const T* __restrict x, const T* __restrict h, const T* __restrict h0,
                             const T* __restrict g, T* __restrict dx, T* __restrict dh, T* __restrict dh0,
                             int64_t H) {
  using CT = compute_t<T>;
  for (int64_t j = 0; j < H; ++j) {
    const CT hn = CT(h[2 * H + j]);
    const CT r = sigmoid_c<CT>(CT(x[j]) + CT(h[j]));
    const CT z = sigmoid_c<CT>(CT(x[H + j]) + CT(h[H + j]));
    const CT n = tanh_c<CT>(CT(x[2 * H + j]) + r * hn);
    const CT gj = CT(g[j]);
    const CT dn = gj * (CT(1) - z) * (CT(1) - n * n);
    const CT dr = dn * hn * r * (CT(1) - r);
    const CT dz = gj * (CT(h0[j]) - n) * z * (CT(1) - z);
    dx[j] = dh[j] = static_cast<T>(dr);
    dx[H + j] = dh[H + j] = static_cast<T>(dz);
    dx[2 * H + j] = static_cast<T>(dn);
    dh[2 * H + j] = static_cast<T>(dn * r);
    dh0[j] = static_cast<T>(gj * z);
  }
}

template <class T>
TSR_CPU_MULTIVERSION void gru_backward_rows(const T* xg, const T* hg, const T* hx, const T* g, T* dxg, T* dhg,
                                            T* dhx, int64_t r0, int64_t r1, int64_t H) {
  for (int64_t r = r0; r < r1; ++r)
    gru_backward_row<T>(xg + r * 3 * H, hg + r * 3 * H, hx + r * H, g + r * H, dxg + r * 3 * H, dhg + r * 3 * H,
                        dhx + r * H, H);
}

// The shared frame of the four kernels: input 0 is [N, G * H] gates; rows(tag, in, out, r0, r1,
// H) runs rows [r0, r1) with in(i) / out(i) the typed data of input / output i, in tasks of about
// kParallelGrain gate elements (small batches stay on one thread).
template <int G, class Rows>
void over_rows(KernelCall& c, Rows&& rows) {
  const int64_t N = c.input(0).sizes[0], H = c.input(0).sizes[1] / G;
  if (N == 0 || H == 0) return;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto in = [&](size_t i) { return static_cast<const T*>(c.input(i).data); };
    auto out = [&](size_t i) { return static_cast<T*>(c.output(i).data); };
    parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / (G * H)),
                 [&](int64_t r0, int64_t r1) { rows(tag, in, out, r0, r1, H); });
  });
}

void lstm_cell_kernel(KernelCall& c) {
  over_rows<4>(c, [](auto tag, auto in, auto out, int64_t r0, int64_t r1, int64_t H) {
    lstm_rows<typename decltype(tag)::type>(in(0), in(1), out(0), out(1), r0, r1, H);
  });
}

// args: gates, cx, cy, grad_hy?, grad_cy? (the present tensors are the inputs, in order).
void lstm_cell_backward_kernel(KernelCall& c) {
  const bool dh = !c.arg_is_none(3), dc = !c.arg_is_none(4);
  const size_t dc_at = dh ? 4 : 3;
  over_rows<4>(c, [&](auto tag, auto in, auto out, int64_t r0, int64_t r1, int64_t H) {
    using T = typename decltype(tag)::type;
    if (dh && dc)
      lstm_backward_rows<T, true, true>(in(0), in(1), in(2), in(3), in(4), out(0), out(1), r0, r1, H);
    else if (dh)
      lstm_backward_rows<T, true, false>(in(0), in(1), in(2), in(3), nullptr, out(0), out(1), r0, r1, H);
    else if (dc)
      lstm_backward_rows<T, false, true>(in(0), in(1), in(2), nullptr, in(dc_at), out(0), out(1), r0, r1, H);
    else {  // no gradient reaches the cell: zeros
      std::fill(out(0) + r0 * 4 * H, out(0) + r1 * 4 * H, T(0));
      std::fill(out(1) + r0 * H, out(1) + r1 * H, T(0));
    }
  });
}

void gru_cell_kernel(KernelCall& c) {
  over_rows<3>(c, [](auto tag, auto in, auto out, int64_t r0, int64_t r1, int64_t H) {
    gru_rows<typename decltype(tag)::type>(in(0), in(1), in(2), out(0), r0, r1, H);
  });
}

void gru_cell_backward_kernel(KernelCall& c) {
  over_rows<3>(c, [](auto tag, auto in, auto out, int64_t r0, int64_t r1, int64_t H) {
    gru_backward_rows<typename decltype(tag)::type>(in(0), in(1), in(2), in(3), out(0), out(1), out(2), r0, r1, H);
  });
}

}  // namespace

TSR_CPU_KERNELS(nn_rnn) {
  r.kernel("_nn_lstm_cell", "cpu::nn_lstm_cell", device_type, kFloatingMask, TSR_KERNEL(lstm_cell_kernel));
  r.kernel("_nn_lstm_cell_backward", "cpu::nn_lstm_cell_backward", device_type, kFloatingMask,
           TSR_KERNEL(lstm_cell_backward_kernel));
  r.kernel("_nn_gru_cell", "cpu::nn_gru_cell", device_type, kFloatingMask, TSR_KERNEL(gru_cell_kernel));
  r.kernel("_nn_gru_cell_backward", "cpu::nn_gru_cell_backward", device_type, kFloatingMask,
           TSR_KERNEL(gru_cell_backward_kernel));
}

}  // namespace tsr::cpu
