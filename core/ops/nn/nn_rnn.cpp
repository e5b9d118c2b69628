// The pointwise part of an LSTM step as one primitive (PyTorch's _thnn_fused_lstm_cell without
// the biases, which tsr::nn::LSTM folds into its input projection):
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

// UNIMPLEMENTED from every kernel (a backend without one for this dtype) means: compose.
template <class F>
std::optional<std::vector<Tensor>> try_kernel(const tsr::Op& op, const Tensor& like, F&& call) {
  if (!nn::has_device_kernel(op, like, like.dtype())) return std::nullopt;
  try {
    return call();
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
    return std::nullopt;
  }
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

// With tc = tanh(cy) and dc = dcy + dhy * o * (1 - tc^2):
//   d(gates) = [dc * g * i(1-i), dc * cx * f(1-f), dc * i * (1-g^2), dhy * tc * o(1-o)],
//   d(cx) = dc * f.
void lstm_cell_bwd(GradCtx& c) {
  const Tensor& dhy = c.grad(0);
  const Tensor& dcy = c.grad(1);
  if (!dhy.defined() && !dcy.defined()) return;
  const Tensor& gates = c.input(0);
  const Tensor& cx = c.input(1);
  const Tensor& cy = c.output(1);
  static const tsr::Op kernel("_nn_lstm_cell_backward");
  auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  std::optional<std::vector<Tensor>> r;
  // The kernel has no backward of its own: under create_graph (grad mode on while the backward
  // runs) the differentiable formulas below are used instead.
  if (!core::grad_mode())
    r = try_kernel(kernel, gates, [&] {
      return tsr::call_multi(kernel, {gates, cx, cy, nn::opt(opt(dhy)), nn::opt(opt(dcy))});
    });
  if (!r) {
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
    r = std::vector<Tensor>{tsr::cat({d_i, d_f, d_g, d_o}, 1), dc * t.f};
  }
  if (c.needs(0)) c.set(0, (*r)[0]);
  if (c.needs(1)) c.set(1, (*r)[1]);
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

}  // namespace

TSR_CORE_OPS(nn_rnn) {
  v.push_back(nn::prim("lstm_cell_gates(Tensor gates, Tensor cx) -> (Tensor, Tensor)", composite_multi<lstm_cell_fwd>,
                       TSR_GRAD(lstm_cell_bwd), kSaveAll));
  v.push_back({"_nn_lstm_cell(Tensor gates, Tensor cx) -> (Tensor, Tensor)", nn::kernel_op_impl<lstm_cell_shape>});
  v.push_back({"_nn_lstm_cell_backward(Tensor gates, Tensor cx, Tensor cy, Tensor? grad_hy, Tensor? grad_cy) -> "
               "(Tensor, Tensor)",
               nn::kernel_op_impl<lstm_cell_backward_shape>});
}

}  // namespace tsr::core
