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

// Rows per task: about kParallelGrain gate elements, so small batches stay on one thread.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, 4 * H)); }

void lstm_cell_kernel(KernelCall& c) {
  const int64_t N = c.input(0).sizes[0], H = c.input(0).sizes[1] / 4;
  if (N == 0 || H == 0) return;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gates = static_cast<const T*>(c.input(0).data);
    const T* cx = static_cast<const T*>(c.input(1).data);
    T* hy = static_cast<T*>(c.output(0).data);
    T* cy = static_cast<T*>(c.output(1).data);
    parallel_for(0, N, row_grain(H), [&](int64_t r0, int64_t r1) { lstm_rows<T>(gates, cx, hy, cy, r0, r1, H); });
  });
}

// args: gates, cx, cy, grad_hy?, grad_cy? (the present tensors are the inputs, in order).
void lstm_cell_backward_kernel(KernelCall& c) {
  const int64_t N = c.input(0).sizes[0], H = c.input(0).sizes[1] / 4;
  if (N == 0 || H == 0) return;
  size_t next = 3;
  const void* dhy = c.arg_is_none(3) ? nullptr : c.input(next++).data;
  const void* dcy = c.arg_is_none(4) ? nullptr : c.input(next++).data;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gates = static_cast<const T*>(c.input(0).data);
    const T* cx = static_cast<const T*>(c.input(1).data);
    const T* cy = static_cast<const T*>(c.input(2).data);
    T* dgates = static_cast<T*>(c.output(0).data);
    T* dcx = static_cast<T*>(c.output(1).data);
    const T* dh = static_cast<const T*>(dhy);
    const T* dc = static_cast<const T*>(dcy);
    if (!dh && !dc) {  // no gradient reaches the cell: zeros
      std::fill(dgates, dgates + N * 4 * H, T(0));
      std::fill(dcx, dcx + N * H, T(0));
      return;
    }
    parallel_for(0, N, row_grain(H), [&](int64_t r0, int64_t r1) {
      if (dh && dc)
        lstm_backward_rows<T, true, true>(gates, cx, cy, dh, dc, dgates, dcx, r0, r1, H);
      else if (dh)
        lstm_backward_rows<T, true, false>(gates, cx, cy, dh, dc, dgates, dcx, r0, r1, H);
      else
        lstm_backward_rows<T, false, true>(gates, cx, cy, dh, dc, dgates, dcx, r0, r1, H);
    });
  });
}

void gru_cell_kernel(KernelCall& c) {
  const int64_t N = c.input(0).sizes[0], H = c.input(0).sizes[1] / 3;
  if (N == 0 || H == 0) return;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xg = static_cast<const T*>(c.input(0).data);
    const T* hg = static_cast<const T*>(c.input(1).data);
    const T* hx = static_cast<const T*>(c.input(2).data);
    T* hy = static_cast<T*>(c.output(0).data);
    parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / (3 * H)),
                 [&](int64_t r0, int64_t r1) { gru_rows<T>(xg, hg, hx, hy, r0, r1, H); });
  });
}

void gru_cell_backward_kernel(KernelCall& c) {
  const int64_t N = c.input(0).sizes[0], H = c.input(0).sizes[1] / 3;
  if (N == 0 || H == 0) return;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xg = static_cast<const T*>(c.input(0).data);
    const T* hg = static_cast<const T*>(c.input(1).data);
    const T* hx = static_cast<const T*>(c.input(2).data);
    const T* g = static_cast<const T*>(c.input(3).data);
    T* dxg = static_cast<T*>(c.output(0).data);
    T* dhg = static_cast<T*>(c.output(1).data);
    T* dhx = static_cast<T*>(c.output(2).data);
    parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / (3 * H)), [&](int64_t r0, int64_t r1) {
      gru_backward_rows<T>(xg, hg, hx, g, dxg, dhg, dhx, r0, r1, H);
    });
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
