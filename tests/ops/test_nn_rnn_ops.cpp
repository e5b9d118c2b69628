// The recurrent ops: lstm_cell_gates and gru_cell_gates (the fused pointwise parts of an LSTM and
// a GRU step) against float64 equations written here with plain loops: every floating dtype, odd
// and empty shapes, non-contiguous operands, gradients through each result, the composite
// backward (taken under create_graph) against the kernel's, second derivatives by finite
// differences, and argument errors; _lstm_layer and _gru_layer against the step-by-step
// composition.
#include <cmath>
#include <vector>

#include "op_test.hpp"
#include "tessera/nn/rnn.hpp"

namespace tsr {
namespace {

using namespace tsr::optest;
using Vec = std::vector<double>;

double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct CellRef {
  Vec hy, cy, dgates, dcx;
};

// The step and its gradient for cotangents a (of hy) and b (of cy), either may be empty (zero).
CellRef cell_ref(const Vec& gates, const Vec& cx, int64_t N, int64_t H, const Vec& a, const Vec& b) {
  CellRef r;
  r.hy.resize(size_t(N * H));
  r.cy.resize(size_t(N * H));
  r.dgates.resize(size_t(N * 4 * H));
  r.dcx.resize(size_t(N * H));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < H; ++j) {
      const double* g = &gates[size_t(n * 4 * H)];
      const double i = sig(g[j]), f = sig(g[H + j]), gg = std::tanh(g[2 * H + j]), o = sig(g[3 * H + j]);
      const size_t k = size_t(n * H + j);
      const double c = f * cx[k] + i * gg, tc = std::tanh(c);
      r.cy[k] = c;
      r.hy[k] = o * tc;
      const double dh = a.empty() ? 0 : a[k];
      const double dc = (b.empty() ? 0 : b[k]) + dh * o * (1 - tc * tc);
      double* d = &r.dgates[size_t(n * 4 * H)];
      d[j] = dc * gg * i * (1 - i);
      d[H + j] = dc * cx[k] * f * (1 - f);
      d[2 * H + j] = dc * i * (1 - gg * gg);
      d[3 * H + j] = dh * tc * o * (1 - o);
      r.dcx[k] = dc * f;
    }
  return r;
}

// (rtol, atol) for results of `dt` computed in float and rounded once (f16/bf16) or natively.
std::pair<double, double> cell_tol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F64:
      return {1e-12, 1e-12};
    case TSR_F32:
      return {2e-6, 2e-6};
    case TSR_F16:
      return {2e-3, 2e-3};
    default:
      return {1e-2, 1e-2};
  }
}

TEST(NNOpsLstmCell, ValuesAndGradientsEveryDtype) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
    for (auto [N, H] : {std::pair<int64_t, int64_t>{3, 5}, {1, 1}, {7, 33}, {64, 256}, {0, 4}, {2, 0}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " N " + std::to_string(N) + " H " + std::to_string(H));
      Tensor gates = randu({N, 4 * H}, uint64_t(10 + N + H), -4, 4).to(dt).requires_grad_();
      Tensor cx = randu({N, H}, uint64_t(20 + N + H), -2, 2).to(dt).requires_grad_();
      Tensor a = randu({N, H}, 30, -1, 1).to(dt), b = randu({N, H}, 31, -1, 1).to(dt);
      const CellRef ref = cell_ref(values(gates), values(cx), N, H, values(a), values(b));
      auto [hy, cy] = nn::lstm_cell_gates(gates, cx);
      const auto [rtol, atol] = cell_tol(dt);
      EXPECT_TRUE(close(hy, ref.hy, {N, H}, rtol, atol));
      EXPECT_TRUE(close(cy, ref.cy, {N, H}, rtol, atol));
      EXPECT_EQ(hy.dtype(), dt);
      (sum(hy * a) + sum(cy * b)).backward();
      EXPECT_TRUE(close(gates.grad(), ref.dgates, {N, 4 * H}, rtol, atol));
      EXPECT_TRUE(close(cx.grad(), ref.dcx, {N, H}, rtol, atol));
    }
  }
}

// Only one of the results reaches the loss: the other's gradient is absent (not zeros).
TEST(NNOpsLstmCell, GradientThroughOneResult) {
  const int64_t N = 4, H = 9;
  Tensor g0 = randu({N, 4 * H}, 40, -3, 3), c0 = randu({N, H}, 41);
  Tensor a = randu({N, H}, 42, -1, 1);
  for (int which : {0, 1}) {
    SCOPED_TRACE(which == 0 ? "hy only" : "cy only");
    Tensor gates = g0.clone().requires_grad_(), cx = c0.clone().requires_grad_();
    auto [hy, cy] = nn::lstm_cell_gates(gates, cx);
    sum((which == 0 ? hy : cy) * a).backward();
    const CellRef ref = cell_ref(values(g0), values(c0), N, H, which == 0 ? values(a) : Vec{},
                                 which == 1 ? values(a) : Vec{});
    EXPECT_TRUE(close(gates.grad(), ref.dgates, {N, 4 * H}, 1e-12, 1e-12));
    EXPECT_TRUE(close(cx.grad(), ref.dcx, {N, H}, 1e-12, 1e-12));
  }
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        auto [hy, cy] = nn::lstm_cell_gates(in[0], in[1]);
        return cat(std::vector<Tensor>{hy, cy}, 1);
      },
      {g0, c0}));
}

// Strided gates (columns of a wider tensor) and a transposed state give the dense results.
TEST(NNOpsLstmCell, NonContiguousOperands) {
  const int64_t N = 5, H = 6;
  Tensor wide = randu({N, 4 * H + 3}, 50, -3, 3), ct = randu({H, N}, 51);
  Tensor gates = wide.narrow(1, 2, 4 * H), cx = ct.t();
  ASSERT_FALSE(gates.is_contiguous());
  ASSERT_FALSE(cx.is_contiguous());
  auto [hy, cy] = nn::lstm_cell_gates(gates, cx);
  const CellRef ref = cell_ref(values(gates), values(cx), N, H, {}, {});
  EXPECT_TRUE(close(hy, ref.hy, {N, H}, 1e-12, 1e-12));
  EXPECT_TRUE(close(cy, ref.cy, {N, H}, 1e-12, 1e-12));
}

// Under create_graph the backward is written with differentiable ops (the kernel has no
// backward): its first derivatives must equal the kernel's, and its second derivatives the
// finite differences of the kernel's first.
TEST(NNOpsLstmCell, CreateGraphMatchesKernelAndSecondDerivatives) {
  const int64_t N = 3, H = 4;
  Tensor g0 = randu({N, 4 * H}, 60, -3, 3), c0 = randu({N, H}, 61);
  Tensor a = randu({N, H}, 62, -1, 1), b = randu({N, H}, 63, -1, 1), v = randu({N, 4 * H}, 64, -1, 1);
  // First derivative w.r.t. the gates of <a, hy> + <b, cy> at gates g.
  auto first = [&](const Tensor& g, bool create_graph) {
    Tensor gates = g.detach().clone().requires_grad_(), cx = c0.clone().requires_grad_();
    auto [hy, cy] = nn::lstm_cell_gates(gates, cx);
    Tensor loss = sum(hy * a) + sum(cy * b);
    std::vector<Tensor> d = autograd::grad({loss}, {gates, cx}, {}, create_graph, create_graph);
    return std::make_pair(gates, d);
  };
  auto [leaf, composite] = first(g0, true);
  auto [unused, kernel] = first(g0, false);
  EXPECT_TRUE(close(composite[0], kernel[0], 1e-12, 1e-12));
  EXPECT_TRUE(close(composite[1], kernel[1], 1e-12, 1e-12));
  // H v by double backward against (g(x + e v) - g(x - e v)) / 2e with the kernel's g.
  Tensor hv = autograd::grad({sum(composite[0] * v)}, {leaf})[0];
  const double e = 1e-6;
  const Vec gp = values(first(g0 + v * e, false).second[0]), gm = values(first(g0 - v * e, false).second[0]);
  Vec fd(gp.size());
  for (size_t i = 0; i < fd.size(); ++i) fd[i] = (gp[i] - gm[i]) / (2 * e);
  EXPECT_TRUE(close(hv, fd, {N, 4 * H}, 1e-5, 1e-7));
}

TEST(NNOpsLstmCell, BadArguments) {
  Tensor g = randu({3, 8}, 70), c = randu({3, 2}, 71);
  EXPECT_TRUE(throws_with([&] { nn::lstm_cell_gates(randu({3, 10}, 72), c); },
                          {"lstm_cell_gates", "[N, 4 * hidden]", "[3, 10]"}));
  EXPECT_TRUE(throws_with([&] { nn::lstm_cell_gates(g, randu({3, 3}, 73)); }, {"lstm_cell_gates", "[3, 2]", "[3, 3]"}));
  EXPECT_TRUE(throws_with([&] { nn::lstm_cell_gates(g, c.to(TSR_F32)); }, {"lstm_cell_gates", "float32", "float64"}));
  EXPECT_TRUE(throws_with([&] { nn::lstm_cell_gates(g.to(TSR_I64), c.to(TSR_I64)); }, {"lstm_cell_gates", "gates"}));
  EXPECT_TRUE(throws_with([&] { nn::lstm_cell_gates(randu({8}, 74), c); }, {"lstm_cell_gates", "[8]"}));
}

// ---- _lstm_layer: the whole recurrence of one layer as one node -----------------------------

// A layer's gradients against the step-by-step composition's: equal where the composition has
// one, absent or zero where no path leads from that input to the loss.
void expect_same_gradients(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("gradient of input " + std::to_string(i));
    if (!want[i].defined()) {
      EXPECT_TRUE(!got[i].defined() || values(got[i]) == std::vector<double>(size_t(got[i].numel()), 0.0));
      continue;
    }
    ASSERT_TRUE(got[i].defined());
    EXPECT_TRUE(close(got[i], want[i], 1e-12, 1e-12));
  }
}

struct Layer {
  Tensor out, hn, cn;
};
Layer run_layer(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w, bool rev) {
  auto [out, hn, cn] = nn::seq_detail::lstm_layer(xp, h0, c0, w, rev);
  return {out, hn, cn};
}
// The same recurrence step by step (addmm + lstm_cell_gates, each step its own nodes).
Layer run_steps(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w, bool rev) {
  const int64_t T = xp.size(0);
  std::vector<Tensor> outs(static_cast<size_t>(T));
  Tensor h = h0, c = c0;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = rev ? T - 1 - s : s;
    std::tie(h, c) = nn::lstm_cell_gates(addmm(xp.select(0, t), h, w.t()), c);
    outs[size_t(t)] = h;
  }
  return {T ? stack(outs, 0) : zeros({0, xp.size(1), h0.size(1)}, xp.dtype()), h, c};
}

// Values and every gradient against the step-by-step composition, forwards and reversed, with
// the loss reaching all three results or only some (the others' gradients absent).
TEST(NNOpsLstmLayer, MatchesStepByStep) {
  const int64_t N = 3, H = 4;
  for (bool rev : {false, true})
    for (int64_t T : {0, 1, 5})
      for (int mask : {7, 1, 4, 6}) {  // bits: out, h_n, c_n in the loss
        SCOPED_TRACE(std::string(rev ? "reverse" : "forward") + " T " + std::to_string(T) + " mask " +
                     std::to_string(mask));
        Tensor xp = randu({T, N, 4 * H}, uint64_t(80 + T), -2, 2), h0 = randu({N, H}, 81), c0 = randu({N, H}, 82);
        Tensor w = randu({4 * H, H}, 83, -0.5, 0.5);
        Tensor a = randu({T, N, H}, 84), b = randu({N, H}, 85), k = randu({N, H}, 86);
        std::vector<std::vector<Tensor>> grads;
        std::vector<Layer> results;
        for (bool fused : {true, false}) {
          std::vector<Tensor> in{xp.clone().requires_grad_(), h0.clone().requires_grad_(), c0.clone().requires_grad_(),
                                 w.clone().requires_grad_()};
          Layer r = (fused ? run_layer : run_steps)(in[0], in[1], in[2], in[3], rev);
          Tensor loss = sum(in[3]) * 0.0;  // requires grad even when the loss's results are empty
          if (mask & 1) loss = loss + sum(r.out * a);
          if (mask & 2) loss = loss + sum(r.hn * b);
          if (mask & 4) loss = loss + sum(r.cn * k);
          grads.push_back(autograd::grad({loss}, in, {}, false, false, true));
          results.push_back(r);
        }
        EXPECT_TRUE(close(results[0].out, results[1].out, 1e-12, 1e-12));
        EXPECT_TRUE(close(results[0].hn, results[1].hn, 1e-12, 1e-12));
        EXPECT_TRUE(close(results[0].cn, results[1].cn, 1e-12, 1e-12));
        expect_same_gradients(grads[0], grads[1]);
      }
}

TEST(NNOpsLstmLayer, GradcheckAndCreateGraph) {
  const int64_t T = 3, N = 2, H = 3;
  Tensor xp = randu({T, N, 4 * H}, 90), h0 = randu({N, H}, 91), c0 = randu({N, H}, 92);
  Tensor w = randu({4 * H, H}, 93, -0.5, 0.5);
  for (bool rev : {false, true}) {
    EXPECT_TRUE(gradcheck(
        [rev](const std::vector<Tensor>& in) {
          Layer r = run_layer(in[0], in[1], in[2], in[3], rev);
          return cat(std::vector<Tensor>{r.out.reshape({-1}), r.hn.reshape({-1}), r.cn.reshape({-1})}, 0);
        },
        {xp, h0, c0, w}));
    // Under create_graph the backward is recorded op by op: the same first derivatives, and
    // differentiable again (compared with the step-by-step composition's second derivatives).
    std::vector<std::vector<Tensor>> second;
    for (bool fused : {true, false}) {
      std::vector<Tensor> in{xp.clone().requires_grad_(), h0.clone().requires_grad_(), c0.clone().requires_grad_(),
                             w.clone().requires_grad_()};
      Layer r = (fused ? run_layer : run_steps)(in[0], in[1], in[2], in[3], rev);
      Tensor loss = sum(r.out * r.out) + sum(r.cn);
      std::vector<Tensor> g = autograd::grad({loss}, in, {}, true, true);
      second.push_back(autograd::grad({sum(g[3] * g[3]) + sum(g[0])}, in, {}, false, false, true));
    }
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE(std::string(rev ? "reverse" : "forward") + " input " + std::to_string(i));
      ASSERT_TRUE(second[0][i].defined() && second[1][i].defined());
      EXPECT_TRUE(close(second[0][i], second[1][i], 1e-10, 1e-12));
    }
  }
}

TEST(NNOpsLstmLayer, BadArguments) {
  Tensor xp = randu({2, 3, 8}, 95), s = randu({3, 2}, 96), w = randu({8, 2}, 97);
  auto call_layer = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) {
    call_multi(Op("_lstm_layer"), {a, b, c, d, false});
  };
  EXPECT_TRUE(throws_with([&] { call_layer(randu({2, 3, 7}, 98), s, s, w); }, {"_lstm_layer", "[2, 3, 7]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xp, randu({3, 3}, 99), s, w); }, {"_lstm_layer", "h0", "[3, 2]", "[3, 3]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xp, s, s, randu({2, 8}, 100)); }, {"_lstm_layer", "w_hh", "[8, 2]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xp, s, s.to(TSR_F32), w); }, {"_lstm_layer", "c0", "float32"}));
}

// ---- gru_cell_gates ---------------------------------------------------------------------------

struct GruRef {
  Vec hy, dxg, dhg, dhx;
};
GruRef gru_ref(const Vec& xg, const Vec& hg, const Vec& hx, int64_t N, int64_t H, const Vec& g) {
  GruRef r;
  r.hy.resize(size_t(N * H));
  r.dxg.resize(size_t(N * 3 * H));
  r.dhg.resize(size_t(N * 3 * H));
  r.dhx.resize(size_t(N * H));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < H; ++j) {
      const double* x = &xg[size_t(n * 3 * H)];
      const double* h = &hg[size_t(n * 3 * H)];
      const size_t k = size_t(n * H + j);
      const double rr = sig(x[j] + h[j]), z = sig(x[H + j] + h[H + j]);
      const double nn = std::tanh(x[2 * H + j] + rr * h[2 * H + j]);
      r.hy[k] = nn + z * (hx[k] - nn);
      const double dn = g[k] * (1 - z) * (1 - nn * nn), dr = dn * h[2 * H + j] * rr * (1 - rr);
      const double dz = g[k] * (hx[k] - nn) * z * (1 - z);
      double* dx = &r.dxg[size_t(n * 3 * H)];
      double* dh = &r.dhg[size_t(n * 3 * H)];
      dx[j] = dh[j] = dr;
      dx[H + j] = dh[H + j] = dz;
      dx[2 * H + j] = dn;
      dh[2 * H + j] = dn * rr;
      r.dhx[k] = g[k] * z;
    }
  return r;
}

TEST(NNOpsGruCell, ValuesAndGradientsEveryDtype) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16}) {
    for (auto [N, H] : {std::pair<int64_t, int64_t>{3, 5}, {1, 1}, {7, 33}, {64, 256}, {0, 4}, {2, 0}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " N " + std::to_string(N) + " H " + std::to_string(H));
      Tensor xg = randu({N, 3 * H}, uint64_t(110 + N + H), -3, 3).to(dt).requires_grad_();
      Tensor hg = randu({N, 3 * H}, uint64_t(120 + N + H), -3, 3).to(dt).requires_grad_();
      Tensor hx = randu({N, H}, uint64_t(130 + N + H)).to(dt).requires_grad_();
      Tensor a = randu({N, H}, 131, -1, 1).to(dt);
      const GruRef ref = gru_ref(values(xg), values(hg), values(hx), N, H, values(a));
      Tensor hy = nn::gru_cell_gates(xg, hg, hx);
      const auto [rtol, atol] = cell_tol(dt);
      EXPECT_TRUE(close(hy, ref.hy, {N, H}, rtol, atol));
      EXPECT_EQ(hy.dtype(), dt);
      sum(hy * a).backward();
      EXPECT_TRUE(close(xg.grad(), ref.dxg, {N, 3 * H}, rtol, atol));
      EXPECT_TRUE(close(hg.grad(), ref.dhg, {N, 3 * H}, rtol, atol));
      EXPECT_TRUE(close(hx.grad(), ref.dhx, {N, H}, rtol, atol));
    }
  }
}

TEST(NNOpsGruCell, NonContiguousCreateGraphAndGradcheck) {
  const int64_t N = 4, H = 5;
  Tensor wide = randu({N, 3 * H + 2}, 140, -3, 3), ht = randu({3 * H, N}, 141, -3, 3), h0 = randu({H, N}, 142);
  Tensor xg = wide.narrow(1, 1, 3 * H), hg = ht.t(), hx = h0.t();
  ASSERT_FALSE(xg.is_contiguous() || hg.is_contiguous() || hx.is_contiguous());
  const GruRef ref = gru_ref(values(xg), values(hg), values(hx), N, H, Vec(size_t(N * H), 1.0));
  EXPECT_TRUE(close(nn::gru_cell_gates(xg, hg, hx), ref.hy, {N, H}, 1e-12, 1e-12));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return nn::gru_cell_gates(in[0], in[1], in[2]); },
                        {xg, hg, hx}));
  // The composite backward (create_graph) equals the kernel's, and differentiates again: its
  // second derivatives against finite differences of the kernel's first.
  Tensor a = randu({N, H}, 143, -1, 1), v = randu({N, 3 * H}, 144, -1, 1);
  auto first = [&](const Tensor& x, bool create_graph) {
    Tensor in = x.detach().clone().requires_grad_();
    Tensor loss = sum(nn::gru_cell_gates(in, hg, hx) * a);
    return std::make_pair(in, autograd::grad({loss}, {in}, {}, create_graph, create_graph)[0]);
  };
  auto [leaf, composite] = first(xg.contiguous(), true);
  EXPECT_TRUE(close(composite, first(xg.contiguous(), false).second, 1e-12, 1e-12));
  Tensor hv = autograd::grad({sum(composite * v)}, {leaf})[0];
  const double e = 1e-6;
  const Vec gp = values(first(xg + v * e, false).second), gm = values(first(xg - v * e, false).second);
  Vec fd(gp.size());
  for (size_t i = 0; i < fd.size(); ++i) fd[i] = (gp[i] - gm[i]) / (2 * e);
  EXPECT_TRUE(close(hv, fd, {N, 3 * H}, 1e-5, 1e-7));
}

TEST(NNOpsGruCell, BadArguments) {
  Tensor x = randu({3, 6}, 150), h = randu({3, 2}, 151);
  EXPECT_TRUE(throws_with([&] { nn::gru_cell_gates(randu({3, 7}, 152), randu({3, 7}, 153), h); },
                          {"gru_cell_gates", "[N, 3 * hidden]", "[3, 7]"}));
  EXPECT_TRUE(throws_with([&] { nn::gru_cell_gates(x, randu({3, 9}, 154), h); }, {"gru_cell_gates", "[3, 9]"}));
  EXPECT_TRUE(throws_with([&] { nn::gru_cell_gates(x, x, randu({2, 2}, 155)); }, {"gru_cell_gates", "[3, 2]"}));
  EXPECT_TRUE(throws_with([&] { nn::gru_cell_gates(x, x.to(TSR_F32), h); }, {"gru_cell_gates", "float32"}));
}

// ---- _gru_layer: the whole recurrence of one GRU layer as one node ----------------------------

struct GruLayer {
  Tensor out, hn;
};
GruLayer run_gru_layer(const Tensor& xg, const Tensor& h0, const Tensor& w, const Tensor& b, bool rev) {
  auto [out, hn] = nn::seq_detail::gru_layer(xg, h0, w, b, rev);
  return {out, hn};
}
// The same recurrence step by step (linear + gru_cell_gates, each step its own nodes).
GruLayer run_gru_steps(const Tensor& xg, const Tensor& h0, const Tensor& w, const Tensor& b, bool rev) {
  const int64_t T = xg.size(0);
  std::vector<Tensor> outs(static_cast<size_t>(T));
  Tensor h = h0;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = rev ? T - 1 - s : s;
    h = nn::seq_detail::gru_step(xg.select(0, t), h, w, b);
    outs[size_t(t)] = h;
  }
  return {T ? stack(outs, 0) : zeros({0, xg.size(1), h0.size(1)}, xg.dtype()), h};
}

// Values and every gradient (input gates, h0, w_hh, b_hh) against the step-by-step composition,
// forwards and reversed, with and without the hidden bias, the loss reaching out, h_n or both.
TEST(NNOpsGruLayer, MatchesStepByStep) {
  const int64_t N = 3, H = 4;
  for (bool rev : {false, true})
    for (bool bias : {true, false})
      for (int64_t T : {0, 1, 5})
        for (int mask : {3, 1, 2}) {  // bits: out, h_n in the loss
          SCOPED_TRACE(std::string(rev ? "reverse" : "forward") + (bias ? " bias" : " no bias") + " T " +
                       std::to_string(T) + " mask " + std::to_string(mask));
          Tensor xg = randu({T, N, 3 * H}, uint64_t(160 + T), -2, 2), h0 = randu({N, H}, 161);
          Tensor w = randu({3 * H, H}, 162, -0.5, 0.5), b = randu({3 * H}, 163, -0.5, 0.5);
          Tensor a = randu({T, N, H}, 164), k = randu({N, H}, 165);
          std::vector<std::vector<Tensor>> grads;
          std::vector<GruLayer> results;
          for (bool fused : {true, false}) {
            std::vector<Tensor> in{xg.clone().requires_grad_(), h0.clone().requires_grad_(), w.clone().requires_grad_(),
                                   b.clone().requires_grad_()};
            GruLayer r = (fused ? run_gru_layer : run_gru_steps)(in[0], in[1], in[2], bias ? in[3] : Tensor(), rev);
            Tensor loss = sum(in[2]) * 0.0;
            if (mask & 1) loss = loss + sum(r.out * a);
            if (mask & 2) loss = loss + sum(r.hn * k);
            grads.push_back(autograd::grad({loss}, in, {}, false, false, true));
            results.push_back(r);
          }
          EXPECT_TRUE(close(results[0].out, results[1].out, 1e-12, 1e-12));
          EXPECT_TRUE(close(results[0].hn, results[1].hn, 1e-12, 1e-12));
          expect_same_gradients(grads[0], grads[1]);
        }
}

TEST(NNOpsGruLayer, GradcheckCreateGraphAndLowPrecision) {
  const int64_t T = 3, N = 2, H = 3;
  Tensor xg = randu({T, N, 3 * H}, 170), h0 = randu({N, H}, 171);
  Tensor w = randu({3 * H, H}, 172, -0.5, 0.5), b = randu({3 * H}, 173, -0.5, 0.5);
  for (bool rev : {false, true}) {
    EXPECT_TRUE(gradcheck(
        [rev](const std::vector<Tensor>& in) {
          GruLayer r = run_gru_layer(in[0], in[1], in[2], in[3], rev);
          return cat(std::vector<Tensor>{r.out.reshape({-1}), r.hn.reshape({-1})}, 0);
        },
        {xg, h0, w, b}));
    // Second derivatives through the recorded backward against the step-by-step composition's.
    std::vector<std::vector<Tensor>> second;
    for (bool fused : {true, false}) {
      std::vector<Tensor> in{xg.clone().requires_grad_(), h0.clone().requires_grad_(), w.clone().requires_grad_(),
                             b.clone().requires_grad_()};
      GruLayer r = (fused ? run_gru_layer : run_gru_steps)(in[0], in[1], in[2], in[3], rev);
      Tensor loss = sum(r.out * r.out) + sum(r.hn);
      std::vector<Tensor> g = autograd::grad({loss}, in, {}, true, true);
      second.push_back(autograd::grad({sum(g[2] * g[2]) + sum(g[0]) + sum(g[3] * g[3])}, in, {}, false, false, true));
    }
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE(std::string(rev ? "reverse" : "forward") + " input " + std::to_string(i));
      ASSERT_TRUE(second[0][i].defined() && second[1][i].defined());
      EXPECT_TRUE(close(second[0][i], second[1][i], 1e-10, 1e-12));
    }
  }
  // float32 and bfloat16 against the float64 layer (the kernels compute in float, round once per
  // step).
  GruLayer ref = run_gru_layer(xg, h0, w, b, false);
  for (tsr_dtype_t dt : {TSR_F32, TSR_BF16}) {
    GruLayer r = run_gru_layer(xg.to(dt), h0.to(dt), w.to(dt), b.to(dt), false);
    EXPECT_EQ(r.out.dtype(), dt);
    const double tol = dt == TSR_F32 ? 1e-5 : 5e-2;
    EXPECT_TRUE(close(r.out, values(ref.out), ref.out.sizes(), tol, tol)) << dtype_name(dt);
  }
}

TEST(NNOpsGruLayer, BadArguments) {
  Tensor xg = randu({2, 3, 6}, 175), s = randu({3, 2}, 176), w = randu({6, 2}, 177), b = randu({6}, 178);
  auto call_layer = [](const Tensor& a, const Tensor& h, const Tensor& ww, const Arg& bb) {
    call_multi(Op("_gru_layer"), {a, h, ww, bb, false});
  };
  EXPECT_TRUE(throws_with([&] { call_layer(randu({2, 3, 7}, 179), s, w, b); }, {"_gru_layer", "[2, 3, 7]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xg, randu({3, 3}, 180), w, b); }, {"_gru_layer", "h0", "[3, 2]", "[3, 3]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xg, s, randu({2, 6}, 181), b); }, {"_gru_layer", "w_hh", "[6, 2]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xg, s, w, randu({5}, 182)); }, {"_gru_layer", "b_hh", "[6]", "[5]"}));
  EXPECT_TRUE(throws_with([&] { call_layer(xg, s, w.to(TSR_F32), std::nullopt); }, {"_gru_layer", "w_hh", "float32"}));
}

}  // namespace
}  // namespace tsr
