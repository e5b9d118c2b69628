// nn::LSTM, GRU, LSTMCell, GRUCell against float64 step equations written here with plain
// loops from the modules' own parameters; layouts, states, empty sequences, gradients and
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "op_test.hpp"
#include "tessera/nn/rnn.hpp"

namespace {

using tsr::Tensor;
using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;
using Vec = std::vector<double>;

double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct RefOut {
  Vec out, hn, cn;  // out time-major [T, N, D*H]; hn/cn [L*D, N, H]
};

// The PyTorch recurrence, one scalar at a time. x time-major [T, N, I]; h0/c0 [L*D, N, H].
RefOut ref_rnn(tsr::nn::RNNBase& m, bool lstm, const Vec& x, int64_t T, int64_t N, const Vec& h0, const Vec& c0) {
  const int64_t H = m.hidden_size, L = m.num_layers, D = m.num_directions(), G = lstm ? 4 : 3;
  RefOut r;
  r.hn.assign(static_cast<size_t>(L * D * N * H), 0.0);
  r.cn = r.hn;
  Vec in = x;
  int64_t I = m.input_size;
  for (int64_t l = 0; l < L; ++l) {
    Vec out(static_cast<size_t>(T * N * D * H));
    for (int64_t d = 0; d < D; ++d) {
      Vec wi = values(m.weight_ih(l, d)), wh = values(m.weight_hh(l, d));
      Vec bi = m.bias ? values(m.bias_ih(l, d)) : Vec(G * H, 0.0);
      Vec bh = m.bias ? values(m.bias_hh(l, d)) : Vec(G * H, 0.0);
      for (int64_t n = 0; n < N; ++n) {
        Vec h(H), c(H);
        for (int64_t j = 0; j < H; ++j) {
          h[j] = h0[((l * D + d) * N + n) * H + j];
          c[j] = lstm ? c0[((l * D + d) * N + n) * H + j] : 0.0;
        }
        for (int64_t s = 0; s < T; ++s) {
          int64_t t = d ? T - 1 - s : s;
          Vec xa(G * H), ha(G * H);
          for (int64_t g = 0; g < G * H; ++g) {
            xa[g] = bi[g];
            for (int64_t k = 0; k < I; ++k) xa[g] += wi[g * I + k] * in[(t * N + n) * I + k];
            ha[g] = bh[g];
            for (int64_t k = 0; k < H; ++k) ha[g] += wh[g * H + k] * h[k];
          }
          Vec h2(H);
          for (int64_t j = 0; j < H; ++j) {
            if (lstm) {
              double ig = sig(xa[j] + ha[j]), fg = sig(xa[H + j] + ha[H + j]);
              double gg = std::tanh(xa[2 * H + j] + ha[2 * H + j]), og = sig(xa[3 * H + j] + ha[3 * H + j]);
              c[j] = fg * c[j] + ig * gg;
              h2[j] = og * std::tanh(c[j]);
            } else {
              double rg = sig(xa[j] + ha[j]), zg = sig(xa[H + j] + ha[H + j]);
              double ng = std::tanh(xa[2 * H + j] + rg * ha[2 * H + j]);
              h2[j] = (1 - zg) * ng + zg * h[j];
            }
          }
          h = h2;
          for (int64_t j = 0; j < H; ++j) out[((t * N + n) * D + d) * H + j] = h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          size_t at = static_cast<size_t>(((l * D + d) * N + n) * H + j);
          r.hn[at] = h[j];
          r.cn[at] = c[j];
        }
      }
    }
    in = out;
    I = D * H;
  }
  r.out = in;
  return r;
}

// [A, B, C] -> [B, A, C] of a flat vector (batch_first <-> time-major).
Vec swap01(const Vec& v, int64_t A, int64_t B, int64_t C) {
  Vec o(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) o[(b * A + a) * C + c] = v[(a * B + b) * C + c];
  return o;
}

constexpr double kRtol = 1e-5, kAtol = 2e-6;

struct Case {
  bool lstm;
  int64_t I, H, L, T, N;
  bool bias, batch_first, bidir;
};

void check_case(const Case& cs) {
  SCOPED_TRACE(testing::Message() << (cs.lstm ? "LSTM" : "GRU") << " I=" << cs.I << " H=" << cs.H << " L=" << cs.L
                                  << " T=" << cs.T << " N=" << cs.N << " bias=" << cs.bias
                                  << " batch_first=" << cs.batch_first << " bidir=" << cs.bidir);
  tsr::manual_seed(7);
  std::shared_ptr<tsr::nn::RNNBase> m;
  if (cs.lstm)
    m = std::make_shared<tsr::nn::LSTM>(cs.I, cs.H, cs.L, cs.bias, cs.batch_first, 0.0, cs.bidir);
  else
    m = std::make_shared<tsr::nn::GRU>(cs.I, cs.H, cs.L, cs.bias, cs.batch_first, 0.0, cs.bidir);
  const int64_t D = cs.bidir ? 2 : 1;
  Tensor x_tm = randu({cs.T, cs.N, cs.I}, 11, -1.5, 1.5, TSR_F32);
  Tensor h0 = randu({cs.L * D, cs.N, cs.H}, 12, -1, 1, TSR_F32);
  Tensor c0 = randu({cs.L * D, cs.N, cs.H}, 13, -1, 1, TSR_F32);
  Tensor x = cs.batch_first ? x_tm.transpose(0, 1).contiguous() : x_tm;
  RefOut r = ref_rnn(*m, cs.lstm, values(x_tm), cs.T, cs.N, values(h0), values(c0));
  Vec out_ref = cs.batch_first ? swap01(r.out, cs.T, cs.N, D * cs.H) : r.out;
  std::vector<int64_t> out_shape =
      cs.batch_first ? std::vector<int64_t>{cs.N, cs.T, D * cs.H} : std::vector<int64_t>{cs.T, cs.N, D * cs.H};
  std::vector<int64_t> state_shape{cs.L * D, cs.N, cs.H};
  if (cs.lstm) {
    auto [out, hc] = static_cast<tsr::nn::LSTM&>(*m).forward(x, std::make_pair(h0, c0));
    EXPECT_TRUE(close(out, out_ref, out_shape, kRtol, kAtol));
    EXPECT_TRUE(close(hc.first, r.hn, state_shape, kRtol, kAtol));
    EXPECT_TRUE(close(hc.second, r.cn, state_shape, kRtol, kAtol));
  } else {
    auto [out, hn] = static_cast<tsr::nn::GRU&>(*m).forward(x, h0);
    EXPECT_TRUE(close(out, out_ref, out_shape, kRtol, kAtol));
    EXPECT_TRUE(close(hn, r.hn, state_shape, kRtol, kAtol));
  }
}

TEST(NnRnn, LstmMatchesStepEquations) {
  check_case({true, 3, 5, 1, 4, 3, true, false, false});
  check_case({true, 3, 5, 2, 4, 3, true, true, false});    // multi-layer, batch_first
  check_case({true, 2, 3, 2, 3, 2, true, false, true});    // bidirectional
  check_case({true, 4, 3, 1, 1, 1, false, false, false});  // seq 1, batch 1, no bias
}

TEST(NnRnn, GruMatchesStepEquations) {
  check_case({false, 3, 5, 1, 4, 3, true, false, false});
  check_case({false, 3, 5, 2, 4, 3, true, true, false});
  check_case({false, 2, 3, 2, 3, 2, true, true, true});
  check_case({false, 4, 3, 1, 1, 1, false, false, false});
}

TEST(NnRnn, ZeroInitialStateWhenAbsentAndOutputOnlyForward) {
  tsr::manual_seed(3);
  tsr::nn::LSTM lstm(3, 4, 2);
  Tensor x = randu({5, 2, 3}, 21, -1, 1, TSR_F32);
  auto [out, hc] = lstm.forward(x, std::nullopt);
  Tensor z = tsr::zeros({2, 2, 4});
  auto [out2, hc2] = lstm.forward(x, std::make_pair(z, z));
  EXPECT_TRUE(close(out, values(out2), out2.sizes(), 0, 0));
  EXPECT_TRUE(close(lstm(x), values(out), out.sizes(), 0, 0));
  // The last time step of a unidirectional output is h_n of the last layer.
  EXPECT_TRUE(close(out.select(0, 4), values(hc.first.select(0, 1)), {2, 4}, 0, 0));

  tsr::nn::GRU gru(3, 4);
  auto [gout, gh] = gru.forward(x, std::nullopt);
  EXPECT_TRUE(close(gru(x), values(gout), gout.sizes(), 0, 0));
  EXPECT_TRUE(close(gout.select(0, 4), values(gh.select(0, 0)), {2, 4}, 0, 0));
}

TEST(NnRnn, UnbatchedInputMatchesBatchOfOne) {
  tsr::manual_seed(4);
  tsr::nn::LSTM lstm(3, 5, 2, true, /*batch_first=*/true);
  Tensor x = randu({4, 3}, 31, -1, 1, TSR_F32);
  Tensor h0 = randu({2, 5}, 32, -1, 1, TSR_F32), c0 = randu({2, 5}, 33, -1, 1, TSR_F32);
  auto [out, hc] = lstm.forward(x, std::make_pair(h0, c0));
  auto [outb, hcb] = lstm.forward(x.unsqueeze(0), std::make_pair(h0.unsqueeze(1), c0.unsqueeze(1)));
  EXPECT_TRUE(close(out, values(outb), {4, 5}, 0, 0));
  EXPECT_TRUE(close(hc.first, values(hcb.first), {2, 5}, 0, 0));
  EXPECT_TRUE(close(hc.second, values(hcb.second), {2, 5}, 0, 0));

  tsr::nn::GRU gru(3, 5);
  auto [g, gh] = gru.forward(x, h0.select(0, 0).unsqueeze(0));
  EXPECT_EQ(g.sizes(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(gh.sizes(), (std::vector<int64_t>{1, 5}));
}

TEST(NnRnn, EmptySequenceAndEmptyBatch) {
  tsr::manual_seed(5);
  tsr::nn::LSTM lstm(3, 4, 2, true, false, 0.0, true);
  Tensor h0 = randu({4, 2, 4}, 41, -1, 1, TSR_F32), c0 = randu({4, 2, 4}, 42, -1, 1, TSR_F32);
  auto [out, hc] = lstm.forward(tsr::zeros({0, 2, 3}), std::make_pair(h0, c0));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{0, 2, 8}));
  EXPECT_TRUE(close(hc.first, values(h0), {4, 2, 4}, 0, 0));  // nothing ran: the state is h_0
  EXPECT_TRUE(close(hc.second, values(c0), {4, 2, 4}, 0, 0));

  tsr::nn::GRU gru(3, 4, 1, true, true);
  auto [gout, gh] = gru.forward(tsr::zeros({0, 5, 3}), std::nullopt);
  EXPECT_EQ(gout.sizes(), (std::vector<int64_t>{0, 5, 4}));
  EXPECT_EQ(gh.sizes(), (std::vector<int64_t>{1, 0, 4}));
}

TEST(NnRnn, ParameterNamesShapesAndSeededInit) {
  tsr::manual_seed(9);
  tsr::nn::LSTM a(3, 5, 2, true, false, 0.0, true);
  std::vector<std::string> names;
  for (auto& kv : a.named_parameters()) names.push_back(kv.first);
  EXPECT_EQ(names, (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                             "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                             "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1",
                                             "bias_hh_l1", "weight_ih_l1_reverse", "weight_hh_l1_reverse",
                                             "bias_ih_l1_reverse", "bias_hh_l1_reverse"}));
  EXPECT_EQ(a.weight_ih(0).sizes(), (std::vector<int64_t>{20, 3}));
  EXPECT_EQ(a.weight_ih(1, true).sizes(), (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(a.weight_hh(1).sizes(), (std::vector<int64_t>{20, 5}));
  const double k = 1 / std::sqrt(5.0);
  Vec w = values(a.weight_hh(1, true));
  double lo = 1, hi = -1;
  for (double v : w) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GE(lo, -k);
  EXPECT_LE(hi, k);
  EXPECT_LT(lo, -k / 2);  // spread over the range, not a constant
  EXPECT_GT(hi, k / 2);
  tsr::manual_seed(9);
  tsr::nn::LSTM b(3, 5, 2, true, false, 0.0, true);
  EXPECT_TRUE(close(b.weight_hh(1, true), w, {20, 5}, 0, 0));

  tsr::nn::GRU g(3, 5, 1, /*bias=*/false);
  EXPECT_EQ(g.named_parameters().size(), 2u);
  EXPECT_EQ(g.weight_ih(0).sizes(), (std::vector<int64_t>{15, 3}));
  EXPECT_EQ(g.repr(), "GRU(3, 5, bias=false)");
  EXPECT_EQ(a.repr(), "LSTM(3, 5, num_layers=2, bidirectional=true)");
}

TEST(NnRnn, GradientsReachEveryParameter) {
  tsr::manual_seed(10);
  tsr::nn::LSTM lstm(3, 4, 2, true, true, 0.0, true);
  tsr::nn::GRU gru(3, 4, 2, true, false, 0.0, true);
  Tensor x = randu({2, 3, 3}, 51, -1, 1, TSR_F32);
  tsr::sum(lstm(x)).backward();
  tsr::sum(gru(x)).backward();
  for (tsr::nn::Module* m : std::vector<tsr::nn::Module*>{&lstm, &gru})
    for (auto& kv : m->named_parameters()) {
      Tensor g = kv.second.grad();
      ASSERT_TRUE(g.defined()) << m->type_name() << "." << kv.first;
      EXPECT_EQ(g.sizes(), kv.second.sizes());
      double s = 0;
      for (double v : values(g)) s += std::fabs(v);
      EXPECT_GT(s, 0) << m->type_name() << "." << kv.first;
    }
}

// Finite differences in float64 with respect to the input, the initial state and every parameter.
template <class M, class Run>
void gradcheck_module(M& m, std::vector<Tensor> inputs, Run run) {
  m.to(TSR_F64);
  std::vector<Tensor*> slots;
  for (int64_t l = 0; l < m.num_layers; ++l)
    for (int d = 0; d < m.num_directions(); ++d)
      for (Tensor* t : {&m.weight_ih(l, d), &m.weight_hh(l, d), &m.bias_ih(l, d), &m.bias_hh(l, d)}) slots.push_back(t);
  const size_t n_in = inputs.size();
  for (Tensor* s : slots) inputs.push_back(s->detach());
  EXPECT_TRUE(tsr::optest::gradcheck(
      [&](const std::vector<Tensor>& in) {
        for (size_t i = 0; i < slots.size(); ++i) *slots[i] = in[n_in + i];
        return run(in);
      },
      inputs));
}

TEST(NnRnn, Gradcheck) {
  tsr::manual_seed(12);
  tsr::nn::LSTM lstm(2, 2, 2, true, false, 0.0, true);
  gradcheck_module(lstm, {randu({3, 1, 2}, 61), randu({4, 1, 2}, 62), randu({4, 1, 2}, 63)},
                   [&](const std::vector<Tensor>& in) {
                     auto [out, hc] = lstm.forward(in[0], std::make_pair(in[1], in[2]));
                     return tsr::cat({tsr::flatten(out), tsr::flatten(hc.first), tsr::flatten(hc.second)});
                   });
  tsr::nn::GRU gru(2, 3, 1, true, true);
  gradcheck_module(gru, {randu({2, 3, 2}, 64), randu({1, 2, 3}, 65)}, [&](const std::vector<Tensor>& in) {
    auto [out, hn] = gru.forward(in[0], in[1]);
    return tsr::cat({tsr::flatten(out), tsr::flatten(hn)});
  });
}

TEST(NnRnn, DropoutBetweenLayersOnlyInTraining) {
  tsr::manual_seed(13);
  tsr::nn::GRU gru(3, 6, 2, true, false, /*dropout=*/0.5);
  Tensor x = randu({4, 2, 3}, 71, -1, 1, TSR_F32);
  gru.eval();
  RefOut r = ref_rnn(gru, false, values(x), 4, 2, Vec(2 * 2 * 6, 0.0), {});
  EXPECT_TRUE(close(gru(x), r.out, {4, 2, 6}, kRtol, kAtol));
  gru.train();
  Vec tr = values(gru(x));
  double diff = 0;
  for (size_t i = 0; i < tr.size(); ++i) diff += std::fabs(tr[i] - r.out[i]);
  EXPECT_GT(diff, 1e-3);
}

TEST(NnRnn, CellsMatchOneStepOfTheLayer) {
  tsr::manual_seed(14);
  tsr::nn::LSTMCell cell(3, 5);
  tsr::nn::LSTM layer(3, 5);
  layer.load_state_dict([&] {
    tsr::StateDict sd;
    for (auto& kv : cell.state_dict()) sd.insert(kv.first + "_l0", kv.second);
    return sd;
  }());
  Tensor x = randu({2, 3}, 81, -1, 1, TSR_F32), h = randu({2, 5}, 82, -1, 1, TSR_F32),
         c = randu({2, 5}, 83, -1, 1, TSR_F32);
  RefOut r = ref_rnn(layer, true, values(x), 1, 2, values(h), values(c));
  auto [h2, c2] = cell.forward(x, std::make_pair(h, c));
  EXPECT_TRUE(close(h2, r.hn, {2, 5}, kRtol, kAtol));
  EXPECT_TRUE(close(c2, r.cn, {2, 5}, kRtol, kAtol));
  auto [h1, c1] = cell.forward(x.select(0, 1), std::make_pair(h.select(0, 1), c.select(0, 1)));
  // Within float rounding, not bit for bit: a GEMM may pick another kernel (another summation
  // order) for one row than for two (oneDNN's sgemm does).
  EXPECT_TRUE(close(h1, values(h2.select(0, 1)), {5}, 1e-6, 1e-7));

  tsr::nn::GRUCell gcell(3, 5, /*bias=*/false);
  tsr::nn::GRU glayer(3, 5, 1, false);
  {
    tsr::NoGradGuard no_grad;
    glayer.weight_ih(0).copy_(gcell.weight_ih.detach());
    glayer.weight_hh(0).copy_(gcell.weight_hh.detach());
  }
  RefOut g = ref_rnn(glayer, false, values(x), 1, 2, values(h), {});
  EXPECT_TRUE(close(gcell.forward(x, h), g.hn, {2, 5}, kRtol, kAtol));
  EXPECT_EQ(gcell.named_parameters().size(), 2u);

  tsr::nn::GRUCell small(2, 2);
  small.to(TSR_F64);
  EXPECT_TRUE(tsr::optest::gradcheck(
      [&](const std::vector<Tensor>& in) {
        small.weight_ih = in[2];
        small.weight_hh = in[3];
        small.bias_ih = in[4];
        small.bias_hh = in[5];
        return small.forward(in[0], in[1]);
      },
      {randu({2, 2}, 84), randu({2, 2}, 85), small.weight_ih.detach(), small.weight_hh.detach(), small.bias_ih.detach(),
       small.bias_hh.detach()}));
}

TEST(NnRnn, BadInputsNameTheModuleAndShapes) {
  tsr::nn::LSTM lstm(3, 4, 2);
  EXPECT_TRUE(throws_with(
      [&] {
        lstm.forward(tsr::zeros({5, 2, 7}), std::nullopt);
      },
      {"LSTM", "expected input [seq, batch, 3]", "got [5, 2, 7]"}));
  EXPECT_TRUE(throws_with([&] { lstm(tsr::zeros({2, 3, 4, 3})); }, {"LSTM", "got [2, 3, 4, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        lstm.forward(tsr::zeros({5, 2, 3}), std::make_pair(tsr::zeros({1, 2, 4}), tsr::zeros({2, 2, 4})));
      },
      {"LSTM", "h_0 [2, 2, 4]", "got [1, 2, 4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        lstm.forward(tsr::zeros({5, 2, 3}), std::make_pair(tsr::zeros({2, 2, 4}), Tensor()));
      },
      {"LSTM", "c_0 [2, 2, 4]", "got undefined"}));
  EXPECT_TRUE(throws_with([&] { lstm(tsr::zeros({5, 2, 3}, TSR_F64)); }, {"LSTM", "float64", "float32"}));
  tsr::nn::GRU gru(3, 4, 1, true, true);
  EXPECT_TRUE(throws_with([&] { gru(tsr::zeros({5, 2, 2})); }, {"GRU", "[batch, seq, 3]", "got [5, 2, 2]"}));
  EXPECT_TRUE(throws_with([&] { gru(tsr::zeros({5, 2, 3}, TSR_I64)); }, {"GRU", "floating point"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::GRU(0, 4); }, {"GRU", "input_size must be positive, got 0"}));
  EXPECT_TRUE(throws_with([] { tsr::nn::LSTM(2, 4, 1, true, false, 1.5); }, {"LSTM", "dropout"}));
  EXPECT_TRUE(throws_with([&] { gru.weight_ih(0, true); }, {"GRU", "layer 0 reverse"}));
  tsr::nn::LSTMCell cell(3, 4);
  EXPECT_TRUE(throws_with([&] { cell(tsr::zeros({2, 5})); }, {"LSTMCell", "[batch, 3]", "got [2, 5]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        cell.forward(tsr::zeros({2, 3}), std::make_pair(tsr::zeros({3, 4}), tsr::zeros({2, 4})));
      },
      {"LSTMCell", "expected h [2, 4]", "got [3, 4]"}));
}

}  // namespace
