// The pointwise parts of the LSTM and GRU steps as primitives (PyTorch's _thnn_fused_lstm_cell
// and _thnn_fused_gru_cell; the LSTM's biases are folded into its input projection), and one
// LSTM layer's whole recurrence (_lstm_layer, below). The LSTM cell:
//
//   lstm_cell_gates(gates [N, 4H], cx [N, H]) -> (hy [N, H], cy [N, H])
//     i, f, g, o = sigmoid(gates[:, 0:H]), sigmoid(gates[:, H:2H]), tanh(gates[:, 2H:3H]),
//                  sigmoid(gates[:, 3H:4H])          (PyTorch's gate order)
//     cy = f * cx + i * g;  hy = o * tanh(cy)
//
// Written with ops it is nine dispatches and nine autograd nodes per step forward and about
// twenty backward, each over a few thousand elements: the per-op cost, not the arithmetic, was
// most of a small LSTM's time. The primitive runs the kernels _nn_lstm_cell and
// _nn_lstm_cell_backward (backends/cpu/nn_rnn.cpp) where the device type has them, and the same
// formulas with SDK ops elsewhere (so every backend runs it; create_graph differentiates the
// composite backward). The backward recomputes the activations from the saved gates.
#include "autograd/engine.hpp"
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

// gates [N, 4H] and a state [N, H] of the same floating dtype and device.
void check_cell(const char* op, const Tensor& gates, const Tensor& cx) {
  nn::require_floating(op, "gates", gates);
  if (gates.dim() != 2 || gates.size(1) % 4 != 0)
    nn::fail(op, "gates must be [N, 4 * hidden], got " + nn::shp(gates));
  const int64_t N = gates.size(0), H = gates.size(1) / 4;
  if (cx.dim() != 2 || cx.size(0) != N || cx.size(1) != H)
    nn::fail(op, "cx must be [N, hidden] = [" + std::to_string(N) + ", " + std::to_string(H) + "] for gates " +
                     nn::shp(gates) + ", got " + nn::shp(cx));
  if (cx.dtype() != gates.dtype())
    nn::fail(op, std::string("cx dtype ") + tsr::dtype_name(cx.dtype()) + " does not match gates dtype " +
                     tsr::dtype_name(gates.dtype()));
  if (cx.device() != gates.device()) nn::fail(op, "cx and gates must be on the same device");
}

// The four activated gates, in float32 for f16/bf16 (the composite paths).
struct Acts {
  Tensor i, f, g, o;
};
Acts activate(const Tensor& gates) {
  const Tensor ga = gates.to(nn::acc_dtype(gates.dtype()));
  const int64_t H = ga.size(1) / 4;
  return {tsr::sigmoid(ga.narrow(1, 0, H)), tsr::sigmoid(ga.narrow(1, H, H)), tsr::tanh(ga.narrow(1, 2 * H, H)),
          tsr::sigmoid(ga.narrow(1, 3 * H, H))};
}

// The kernel's results where the device type has one for the dtype and it does not decline;
// nothing means: compose.
template <class F>
std::optional<std::vector<Tensor>> try_kernel(const tsr::Op& op, const Tensor& like, F&& call) {
  if (!nn::has_device_kernel(op, like, like.dtype())) return std::nullopt;
  return nn::declinable(std::forward<F>(call));
}

std::vector<Tensor> lstm_cell_fwd(CArgs& a) {
  const Tensor gates = a.tensor(0), cx = a.tensor(1);
  check_cell(a.op(), gates, cx);
  static const tsr::Op kernel("_nn_lstm_cell");
  if (auto r = try_kernel(kernel, gates, [&] { return tsr::call_multi(kernel, {gates, cx}); })) return *r;
  const Acts t = activate(gates);
  const tsr_dtype_t dt = gates.dtype();
  const Tensor cy = t.f * cx.to(nn::acc_dtype(dt)) + t.i * t.g;
  return {(t.o * tsr::tanh(cy)).to(dt), cy.to(dt)};
}

// The cell's gradients (dgates, dcx) for dhy and/or dcy (undefined: zero; not both). With
// tc = tanh(cy) and dc = dcy + dhy * o * (1 - tc^2):
//   d(gates) = [dc * g * i(1-i), dc * cx * f(1-f), dc * i * (1-g^2), dhy * tc * o(1-o)],
//   d(cx) = dc * f.
// The kernel has no backward of its own: under create_graph (grad mode on while the backward
// runs) the differentiable formulas are used instead.
std::vector<Tensor> cell_backward(const Tensor& gates, const Tensor& cx, const Tensor& cy, const Tensor& dhy,
                                  const Tensor& dcy) {
  static const tsr::Op kernel("_nn_lstm_cell_backward");
  auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  if (!core::grad_mode())
    if (auto r = try_kernel(kernel, gates, [&] {
          return tsr::call_multi(kernel, {gates, cx, cy, nn::opt(opt(dhy)), nn::opt(opt(dcy))});
        }))
      return *r;
  const tsr_dtype_t acc = nn::acc_dtype(gates.dtype());
  const Acts t = activate(gates);
  const Tensor tc = tsr::tanh(cy.to(acc));
  Tensor dc, d_o;
  if (dhy.defined()) {
    const Tensor dh = dhy.to(acc);
    dc = dh * t.o * (1.0 - tc * tc);
    if (dcy.defined()) dc = dc + dcy.to(acc);
    d_o = dh * tc * t.o * (1.0 - t.o);
  } else {
    dc = dcy.to(acc);
    d_o = tsr::zeros(tc.sizes(), acc, tc.device());
  }
  const Tensor d_i = dc * t.g * t.i * (1.0 - t.i);
  const Tensor d_f = dc * cx.to(acc) * t.f * (1.0 - t.f);
  const Tensor d_g = dc * t.i * (1.0 - t.g * t.g);
  const tsr_dtype_t dt = gates.dtype();
  return {tsr::cat({d_i, d_f, d_g, d_o}, 1).to(dt), (dc * t.f).to(dt)};
}

void lstm_cell_bwd(GradCtx& c) {
  if (!c.grad(0).defined() && !c.grad(1).defined()) return;
  const std::vector<Tensor> r = cell_backward(c.input(0), c.input(1), c.output(1), c.grad(0), c.grad(1));
  if (c.needs(0)) c.set(0, r[0]);
  if (c.needs(1)) c.set(1, r[1]);
}

// ---- a whole layer's recurrence -----------------------------------------------------------------

// _lstm_layer(xp [T, N, 4H], h0 [N, H], c0 [N, H], w_hh [4H, H], reverse)
//   -> (out [T, N, H], c_n, gates [T, N, 4H], cells [T + 1, N, H])
// xp is the layer's input projection with both biases; steps run over t = 0..T-1 (T-1..0 when
// reverse). gates and cells are the backward's workspace, in processing order (cells[0] = c0).
// h_n is out's last step in processing order (the caller selects it: ops have at most 4 results).
// Recorded as one node: the per-step work is an addmm and the cell kernel, with no autograd
// bookkeeping per step, and the backward computes dW_hh with one GEMM over all steps instead of
// summing T per-step products into the weight's gradient (which was a third of an LSTM's time).
struct LayerDims {
  int64_t T, N, H;
};
// A layer's input projection [T, N, G * hidden] (G = 4 for LSTM, 3 for GRU) and the arguments
// that must match it: each (name, tensor, wanted shape) of the input's dtype and device.
using LayerArg = std::tuple<const char*, const Tensor*, std::vector<int64_t>>;
LayerDims layer_dims(const char* op, const char* what, const Tensor& xp, int64_t G) {
  nn::require_floating(op, what, xp);
  if (xp.dim() != 3 || xp.size(2) % G != 0)
    nn::fail(op, std::string(what) + " must be [T, N, " + std::to_string(G) + " * hidden], got " + nn::shp(xp));
  return {xp.size(0), xp.size(1), xp.size(2) / G};
}
void check_layer_args(const char* op, const char* what, const Tensor& xp, const std::vector<LayerArg>& args) {
  for (const auto& [name, t, want] : args) {
    if (t->sizes() != want)
      nn::fail(op, std::string(name) + " must be " + nn::shp(want) + " for " + what + " " + nn::shp(xp) + ", got " +
                       nn::shp(*t));
    if (t->dtype() != xp.dtype())
      nn::fail(op, std::string(name) + " dtype " + tsr::dtype_name(t->dtype()) + " does not match the input's " +
                       tsr::dtype_name(xp.dtype()));
    if (t->device() != xp.device()) nn::fail(op, std::string(name) + " must be on the input's device");
  }
}

// dW_hh of a layer in one GEMM over all steps, from the gates' gradients dg [T, N, G * H] and the
// outputs out_p [T, N, H], both in processing order: the state before each step is h0, then the
// outputs but the last.
Tensor recurrent_weight_grad(const Tensor& dg, const Tensor& h0, const Tensor& out_p) {
  const int64_t T = dg.size(0), N = dg.size(1), H = h0.size(1);
  const Tensor h_prev = tsr::cat({h0.unsqueeze(0), out_p.narrow(0, 0, T - 1)}, 0);
  return tsr::mm(dg.reshape({T * N, dg.size(2)}).t(), h_prev.reshape({T * N, H}));
}

LayerDims check_layer(const char* op, const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w_hh) {
  const LayerDims d = layer_dims(op, "input projection", xp, 4);
  check_layer_args(op, "an input projection", xp,
                   {{"h0", &h0, {d.N, d.H}}, {"c0", &c0, {d.N, d.H}}, {"w_hh", &w_hh, {4 * d.H, d.H}}});
  return d;
}

std::vector<Tensor> lstm_layer_fwd(CArgs& a) {
  const Tensor xp = a.tensor(0), h0 = a.tensor(1), c0 = a.tensor(2), w_hh = a.tensor(3);
  const bool rev = a.bool_arg(4);
  const LayerDims d = check_layer(a.op(), xp, h0, c0, w_hh);
  const Tensor w_t = w_hh.t();
  std::vector<Tensor> outs(size_t(d.T)), gates(size_t(d.T)), cells{c0.clone()};
  Tensor h = h0, c = c0;
  for (int64_t s = 0; s < d.T; ++s) {
    const int64_t t = rev ? d.T - 1 - s : s;
    gates[size_t(s)] = tsr::addmm(xp.select(0, t), h, w_t);
    std::tie(h, c) = tsr::nn::lstm_cell_gates(gates[size_t(s)], c);
    outs[size_t(t)] = h;
    cells.push_back(c);
  }
  const tsr::Device dev = xp.device();
  Tensor out = d.T ? tsr::stack(outs, 0) : tsr::zeros({0, d.N, d.H}, xp.dtype(), dev);
  Tensor g = d.T ? tsr::stack(gates, 0) : tsr::zeros({0, d.N, 4 * d.H}, xp.dtype(), dev);
  return {out, d.T ? c : c0.clone(), g, tsr::stack(cells, 0)};
}

void lstm_layer_bwd(GradCtx& c) {
  // Gradients of out, c_n and of the workspace (gates, cells: they reach these only when a
  // create_graph backward used them, i.e. in a second derivative).
  const Tensor &d_out = c.grad(0), &d_cn = c.grad(1), &d_gates = c.grad(2), &d_cells = c.grad(3);
  if (!d_out.defined() && !d_cn.defined() && !d_gates.defined() && !d_cells.defined()) return;
  const Tensor &h0 = c.input(1), &w_hh = c.input(3);
  const Tensor &out = c.output(0), &gates = c.output(2), &cells = c.output(3);
  const bool rev = c.bool_arg(4);
  const int64_t T = gates.size(0), N = gates.size(1), H = gates.size(2) / 4;
  auto plus = [](const Tensor& acc, const Tensor& g) { return acc.defined() ? acc + g : g; };
  Tensor dh, dc = d_cn;  // the gradients reaching the state after step s (undefined: zero)
  std::vector<Tensor> dgates(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = rev ? T - 1 - s : s;
    if (d_out.defined()) dh = plus(dh, d_out.select(0, t));
    if (d_cells.defined()) dc = plus(dc, d_cells.select(0, s + 1));
    Tensor dg;
    if (dh.defined() || dc.defined()) {
      std::vector<Tensor> r = cell_backward(gates.select(0, s), cells.select(0, s), cells.select(0, s + 1), dh, dc);
      dg = r[0];
      dc = r[1];
    } else {
      dg = tsr::zeros({N, 4 * H}, gates.dtype(), gates.device());
    }
    if (d_gates.defined()) dg = dg + d_gates.select(0, s);
    dgates[static_cast<size_t>(s)] = dg;
    dh = tsr::mm(dg, w_hh);
  }
  if (d_cells.defined()) dc = plus(dc, d_cells.select(0, 0));
  if (c.needs(1) && dh.defined()) c.set(1, dh);
  if (c.needs(2) && dc.defined()) c.set(2, dc);
  if (T == 0) return;
  const Tensor dg = tsr::stack(dgates, 0);  // processing order
  if (c.needs(0)) c.set(0, rev ? tsr::flip(dg, {0}) : dg);
  if (c.needs(3)) c.set(3, recurrent_weight_grad(dg, h0, rev ? tsr::flip(out, {0}) : out));
}

// ---- GRU ----------------------------------------------------------------------------------------

// gru_cell_gates(xg [N, 3H], hg [N, 3H], hx [N, H]) -> hy [N, H]: the pointwise part of a GRU
// step from the input and hidden projections (PyTorch's gate order r, z, n; hg includes b_hh, so
// n's hidden bias stays inside r * (...) as in PyTorch and cuDNN):
//   r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r * hn), hy = n + z * (hx - n).
void check_gru(const char* op, const Tensor& xg, const Tensor& hg, const Tensor& hx) {
  nn::require_floating(op, "input gates", xg);
  if (xg.dim() != 2 || xg.size(1) % 3 != 0) nn::fail(op, "input gates must be [N, 3 * hidden], got " + nn::shp(xg));
  const int64_t N = xg.size(0), H = xg.size(1) / 3;
  if (hg.sizes() != xg.sizes())
    nn::fail(op, "hidden gates must match the input gates " + nn::shp(xg) + ", got " + nn::shp(hg));
  if (hx.dim() != 2 || hx.size(0) != N || hx.size(1) != H)
    nn::fail(op, "hx must be [N, hidden] = [" + std::to_string(N) + ", " + std::to_string(H) + "] for gates " +
                     nn::shp(xg) + ", got " + nn::shp(hx));
  for (const Tensor* t : {&hg, &hx}) {
    if (t->dtype() != xg.dtype())
      nn::fail(op, std::string("dtype ") + tsr::dtype_name(t->dtype()) + " does not match the input gates' " +
                       tsr::dtype_name(xg.dtype()));
    if (t->device() != xg.device()) nn::fail(op, "all arguments must be on the input gates' device");
  }
}

Tensor gru_cell_fwd(CArgs& a) {
  const Tensor xg = a.tensor(0), hg = a.tensor(1), hx = a.tensor(2);
  check_gru(a.op(), xg, hg, hx);
  static const tsr::Op kernel("_nn_gru_cell");
  if (auto r = try_kernel(kernel, xg, [&] { return tsr::call_multi(kernel, {xg, hg, hx}); })) return (*r)[0];
  const tsr_dtype_t acc = nn::acc_dtype(xg.dtype());
  const Tensor x = xg.to(acc), h = hg.to(acc), h0 = hx.to(acc);
  const int64_t H = h0.size(1);
  const Tensor r = tsr::sigmoid(x.narrow(1, 0, H) + h.narrow(1, 0, H));
  const Tensor z = tsr::sigmoid(x.narrow(1, H, H) + h.narrow(1, H, H));
  const Tensor n = tsr::tanh(x.narrow(1, 2 * H, H) + r * h.narrow(1, 2 * H, H));
  return (n + z * (h0 - n)).to(xg.dtype());
}

// With dn = g (1 - z) (1 - n^2), dr = dn hn r (1 - r), dz = g (hx - n) z (1 - z):
//   d(xg) = [dr, dz, dn], d(hg) = [dr, dz, dn r], d(hx) = g z.
// The kernel has no backward of its own: under create_graph the formulas run as SDK ops.
// (grad_xg, grad_hg, grad_hx) of one step for the gradient g of hy.
std::vector<Tensor> gru_cell_backward(const Tensor& xg, const Tensor& hg, const Tensor& hx, const Tensor& g) {
  static const tsr::Op kernel("_nn_gru_cell_backward");
  std::optional<std::vector<Tensor>> res;
  if (!core::grad_mode()) res = try_kernel(kernel, xg, [&] { return tsr::call_multi(kernel, {xg, hg, hx, g}); });
  if (!res) {
    const tsr_dtype_t acc = nn::acc_dtype(xg.dtype()), dt = xg.dtype();
    const Tensor x = xg.to(acc), h = hg.to(acc), h0 = hx.to(acc), ga = g.to(acc);
    const int64_t H = h0.size(1);
    const Tensor hn = h.narrow(1, 2 * H, H);
    const Tensor r = tsr::sigmoid(x.narrow(1, 0, H) + h.narrow(1, 0, H));
    const Tensor z = tsr::sigmoid(x.narrow(1, H, H) + h.narrow(1, H, H));
    const Tensor n = tsr::tanh(x.narrow(1, 2 * H, H) + r * hn);
    const Tensor dn = ga * (1.0 - z) * (1.0 - n * n);
    const Tensor dr = dn * hn * r * (1.0 - r);
    const Tensor dz = ga * (h0 - n) * z * (1.0 - z);
    res = std::vector<Tensor>{tsr::cat({dr, dz, dn}, 1).to(dt), tsr::cat({dr, dz, dn * r}, 1).to(dt), (ga * z).to(dt)};
  }
  return *res;
}

void gru_cell_bwd(GradCtx& c) {
  const Tensor& g = c.grad(0);
  if (!g.defined()) return;
  const std::vector<Tensor> r = gru_cell_backward(c.input(0), c.input(1), c.input(2), g);
  for (size_t i = 0; i < 3; ++i)
    if (c.needs(i)) c.set(i, r[i]);
}

// _gru_layer(xg [T, N, 3H], h0 [N, H], w_hh [3H, H], b_hh? [3H], reverse) -> (out [T, N, H],
// hidden_gates [T, N, 3H]): a GRU layer's whole recurrence as one node, as _lstm_layer. xg is the
// layer's input projection with b_ih; each step is hg = h w_hh^T + b_hh (one linear) and the cell
// kernel. hidden_gates is the backward's workspace, in processing order; h_n is out's last step
// in processing order (the caller selects it). The backward computes dW_hh (and db_hh) with one
// GEMM (one sum) over all steps instead of adding T per-step products into the weight's gradient.
LayerDims check_gru_layer(const char* op, const Tensor& xg, const Tensor& h0, const Tensor& w_hh,
                          const std::optional<Tensor>& b_hh) {
  const LayerDims d = layer_dims(op, "input gates", xg, 3);
  std::vector<LayerArg> args{{"h0", &h0, {d.N, d.H}}, {"w_hh", &w_hh, {3 * d.H, d.H}}};
  if (b_hh) args.emplace_back("b_hh", &*b_hh, std::vector<int64_t>{3 * d.H});
  check_layer_args(op, "input gates", xg, args);
  return d;
}

std::vector<Tensor> gru_layer_fwd(CArgs& a) {
  const Tensor xg = a.tensor(0), h0 = a.tensor(1), w_hh = a.tensor(2);
  const std::optional<Tensor> b_hh = a.opt_tensor(3);
  const bool rev = a.bool_arg(4);
  const LayerDims d = check_gru_layer(a.op(), xg, h0, w_hh, b_hh);
  std::vector<Tensor> outs(size_t(d.T)), hgs(size_t(d.T));
  Tensor h = h0;
  for (int64_t s = 0; s < d.T; ++s) {
    const int64_t t = rev ? d.T - 1 - s : s;
    hgs[size_t(s)] = tsr::linear(h, w_hh, b_hh);
    h = tsr::nn::gru_cell_gates(xg.select(0, t), hgs[size_t(s)], h);
    outs[size_t(t)] = h;
  }
  const tsr::Device dev = xg.device();
  if (d.T == 0) return {tsr::zeros({0, d.N, d.H}, xg.dtype(), dev), tsr::zeros({0, d.N, 3 * d.H}, xg.dtype(), dev)};
  return {tsr::stack(outs, 0), tsr::stack(hgs, 0)};
}

void gru_layer_bwd(GradCtx& c) {
  // Gradients of out and of the workspace (it gets one only from a create_graph backward).
  const Tensor &d_out = c.grad(0), &d_hg = c.grad(1);
  if (!d_out.defined() && !d_hg.defined()) return;
  const Tensor &xg = c.input(0), &h0 = c.input(1), &w_hh = c.input(2);
  const Tensor &out = c.output(0), &hg = c.output(1);
  const bool rev = c.bool_arg(4);
  const int64_t T = hg.size(0), N = hg.size(1), H = hg.size(2) / 3;
  const Tensor out_p = rev ? tsr::flip(out, {0}) : out;  // processing order
  Tensor dh;  // the gradient reaching the state after step s (undefined: zero)
  std::vector<Tensor> dxg(static_cast<size_t>(T)), dhg(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = rev ? T - 1 - s : s;
    if (d_out.defined()) dh = dh.defined() ? dh + d_out.select(0, t) : d_out.select(0, t);
    const Tensor h_prev = s == 0 ? h0 : out_p.select(0, s - 1);
    Tensor dx, dg, dhx;
    if (dh.defined()) {
      const std::vector<Tensor> r = gru_cell_backward(xg.select(0, t), hg.select(0, s), h_prev, dh);
      dx = r[0];
      dg = r[1];
      dhx = r[2];
    } else {
      dx = tsr::zeros({N, 3 * H}, hg.dtype(), hg.device());
      dg = tsr::zeros({N, 3 * H}, hg.dtype(), hg.device());
    }
    if (d_hg.defined()) dg = dg + d_hg.select(0, s);
    dxg[static_cast<size_t>(t)] = dx;
    dhg[static_cast<size_t>(s)] = dg;
    const Tensor back = tsr::mm(dg, w_hh);
    dh = dhx.defined() ? dhx + back : back;
  }
  if (c.needs(1) && dh.defined()) c.set(1, dh);
  if (T == 0) return;
  if (c.needs(0)) c.set(0, tsr::stack(dxg, 0));
  const Tensor dg = tsr::stack(dhg, 0);  // processing order
  if (c.needs(2)) c.set(2, recurrent_weight_grad(dg, h0, out_p));
  if (c.needs(3)) c.set(3, tsr::sum(dg, {0, 1}));
}

// ---- the kernels' contracts ---------------------------------------------------------------------

// gates [N, 4H] floating; argument `state` [N, H] of gates' dtype. Returns H.
int64_t cell_geometry(CallCtx& ctx, const core::Tensor* gates, size_t state) {
  nn::krequire(ctx, gates->sizes[1] % 4 == 0, "gates " + shape_str(gates->sizes, 2) + " must be [N, 4 * hidden]");
  const int64_t H = gates->sizes[1] / 4;
  const core::Tensor* s = nn::kfloat(ctx, state, 2, gates);
  nn::krequire(ctx, s->sizes[0] == gates->sizes[0] && s->sizes[1] == H,
               "argument '" + ctx.op->schema.args[state].name + "' " + shape_str(s->sizes, 2) + " must be [" +
                   std::to_string(gates->sizes[0]) + ", " + std::to_string(H) + "]");
  return H;
}

// _nn_lstm_cell(gates [N, 4H], cx [N, H]) -> (hy [N, H], cy [N, H])
tsr_dtype_t lstm_cell_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* gates = nn::kfloat(ctx, 0, 2);
  const int64_t H = cell_geometry(ctx, gates, 1);
  outs.push_back({{gates->sizes[0], H}, gates->dtype});
  outs.push_back({{gates->sizes[0], H}, gates->dtype});
  return gates->dtype;
}

// _nn_lstm_cell_backward(gates, cx, cy, grad_hy?, grad_cy?) -> (grad_gates [N, 4H], grad_cx [N, H])
tsr_dtype_t lstm_cell_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* gates = nn::kfloat(ctx, 0, 2);
  const int64_t H = cell_geometry(ctx, gates, 1);
  cell_geometry(ctx, gates, 2);
  for (size_t i : {size_t(3), size_t(4)})
    if (nn::kfloat(ctx, i, 2, gates)) cell_geometry(ctx, gates, i);
  outs.push_back({{gates->sizes[0], 4 * H}, gates->dtype});
  outs.push_back({{gates->sizes[0], H}, gates->dtype});
  return gates->dtype;
}

// _nn_gru_cell(xg [N, 3H], hg [N, 3H], hx [N, H]) -> hy [N, H]; the backward takes grad [N, H]
// after hx and returns (grad_xg, grad_hg, grad_hx).
int64_t gru_geometry(CallCtx& ctx, const core::Tensor* xg) {
  nn::krequire(ctx, xg->sizes[1] % 3 == 0, "input gates " + shape_str(xg->sizes, 2) + " must be [N, 3 * hidden]");
  const core::Tensor* hg = nn::kfloat(ctx, 1, 2, xg);
  nn::krequire(ctx, hg->sizes[0] == xg->sizes[0] && hg->sizes[1] == xg->sizes[1],
               "hidden gates " + shape_str(hg->sizes, 2) + " must match the input gates " + shape_str(xg->sizes, 2));
  const int64_t H = xg->sizes[1] / 3;
  for (size_t i : {size_t(2), size_t(3)}) {
    if (i >= ctx.op->schema.args.size()) break;
    const core::Tensor* t = nn::kfloat(ctx, i, 2, xg);
    nn::krequire(ctx, t->sizes[0] == xg->sizes[0] && t->sizes[1] == H,
                 "argument '" + ctx.op->schema.args[i].name + "' " + shape_str(t->sizes, 2) + " must be [" +
                     std::to_string(xg->sizes[0]) + ", " + std::to_string(H) + "]");
  }
  return H;
}

tsr_dtype_t gru_cell_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* xg = nn::kfloat(ctx, 0, 2);
  outs.push_back({{xg->sizes[0], gru_geometry(ctx, xg)}, xg->dtype});
  return xg->dtype;
}

tsr_dtype_t gru_cell_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* xg = nn::kfloat(ctx, 0, 2);
  const int64_t H = gru_geometry(ctx, xg);
  outs.push_back({{xg->sizes[0], 3 * H}, xg->dtype});
  outs.push_back({{xg->sizes[0], 3 * H}, xg->dtype});
  outs.push_back({{xg->sizes[0], H}, xg->dtype});
  return xg->dtype;
}

}  // namespace

TSR_CORE_OPS(nn_rnn) {
  v.push_back(nn::prim("lstm_cell_gates(Tensor gates, Tensor cx) -> (Tensor, Tensor)", composite_multi<lstm_cell_fwd>,
                       TSR_GRAD(lstm_cell_bwd), kSaveAll));
  v.push_back(nn::prim("_lstm_layer(Tensor xp, Tensor h0, Tensor c0, Tensor w_hh, bool reverse=False) -> (Tensor, "
                       "Tensor, Tensor, Tensor)",
                       composite_multi<lstm_layer_fwd>, TSR_GRAD(lstm_layer_bwd), kSaveAll));
  v.push_back(nn::prim("gru_cell_gates(Tensor input_gates, Tensor hidden_gates, Tensor hx) -> Tensor",
                       composite<gru_cell_fwd>, TSR_GRAD(gru_cell_bwd), kSaveInputs));
  v.push_back(nn::prim("_gru_layer(Tensor xg, Tensor h0, Tensor w_hh, Tensor? b_hh, bool reverse=False) -> (Tensor, "
                       "Tensor)",
                       composite_multi<gru_layer_fwd>, TSR_GRAD(gru_layer_bwd), kSaveAll));
  v.push_back({"_nn_gru_cell(Tensor xg, Tensor hg, Tensor hx) -> Tensor", nn::kernel_op_impl<gru_cell_shape>});
  v.push_back({"_nn_gru_cell_backward(Tensor xg, Tensor hg, Tensor hx, Tensor grad) -> (Tensor, Tensor, Tensor)",
               nn::kernel_op_impl<gru_cell_backward_shape>});
  v.push_back({"_nn_lstm_cell(Tensor gates, Tensor cx) -> (Tensor, Tensor)", nn::kernel_op_impl<lstm_cell_shape>});
  v.push_back({"_nn_lstm_cell_backward(Tensor gates, Tensor cx, Tensor cy, Tensor? grad_hy, Tensor? grad_cy) -> "
               "(Tensor, Tensor)",
               nn::kernel_op_impl<lstm_cell_backward_shape>});
}

}  // namespace tsr::core
