// nn family: softmax backward, elementwise losses, nll_loss / cross_entropy.
#include <cmath>

#include "op_test.hpp"

namespace tsr {
namespace {

using namespace tsr::optest;

Tensor call_op(const char* name, std::initializer_list<Arg> args) { return call(name, args); }

double reduce_ref(const std::vector<double>& l, const char* red) {
  double s = 0;
  for (double v : l) s += v;
  if (std::string(red) == "mean") return s / static_cast<double>(l.size());
  return s;
}

TEST(NNOpsSoftmax, GradcheckAndValues) {
  Tensor x = randu({3, 5}, 1);
  for (int64_t dim : {0, 1, -1}) {
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return softmax(in[0], dim); }, {x}));
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); }, {x}));
  }
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return softmax(in[0], 1); }, {randu({2, 3, 4}, 2)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }, {randu({7}, 3)}));
  // values against a float64 reference, f32 and non-contiguous
  Tensor xf = noncontig(randu({4, 7}, 4, -3, 3, TSR_F32));
  std::vector<double> v = values(xf), ref(v.size());
  for (int r = 0; r < 4; ++r) {
    double m = -1e300, s = 0;
    for (int c = 0; c < 7; ++c) m = std::max(m, v[r * 7 + c]);
    for (int c = 0; c < 7; ++c) s += std::exp(v[r * 7 + c] - m);
    for (int c = 0; c < 7; ++c) ref[r * 7 + c] = std::exp(v[r * 7 + c] - m) / s;
  }
  EXPECT_TRUE(close(softmax(xf, 1), ref, {4, 7}, 1e-5, 1e-6));
}

struct DiffCase {
  const char* name;
  double param;
  double (*f)(double d, double p);
};

TEST(NNOpsLoss, ElementwiseLossesValuesAndGrad) {
  DiffCase cases[] = {
      {"mse_loss", 0, [](double d, double) { return d * d; }},
      {"l1_loss", 0, [](double d, double) { return std::fabs(d); }},
      {"smooth_l1_loss", 0.7,
       [](double d, double b) { return std::fabs(d) < b ? 0.5 * d * d / b : std::fabs(d) - 0.5 * b; }},
      {"huber_loss", 0.7,
       [](double d, double b) { return std::fabs(d) <= b ? 0.5 * d * d : b * (std::fabs(d) - 0.5 * b); }},
  };
  for (const DiffCase& c : cases) {
    bool has_p = std::string(c.name) == "smooth_l1_loss" || std::string(c.name) == "huber_loss";
    auto run = [&](const Tensor& x, const Tensor& y, const char* red) {
      return has_p ? call_op(c.name, {x, y, red, c.param}) : call_op(c.name, {x, y, red});
    };
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
      Tensor x = randu({3, 5}, 10, -2, 2, dt), y = randu({5}, 11, -2, 2, dt);  // broadcast target
      std::vector<double> xv = values(x), yv = values(y), l;
      for (int i = 0; i < 15; ++i) l.push_back(c.f(xv[i] - yv[i % 5], c.param));
      auto tol = default_tol(dt);
      EXPECT_TRUE(close(run(x, y, "none"), l, {3, 5}, tol.first, tol.second)) << c.name;
      EXPECT_TRUE(close(run(x, y, "mean"), {reduce_ref(l, "mean")}, {}, tol.first, tol.second)) << c.name;
      EXPECT_TRUE(close(run(noncontig(x), y, "sum"), {reduce_ref(l, "sum")}, {}, tol.first, 1e-4)) << c.name;
    }
    for (const char* red : {"none", "mean", "sum"})
      EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return run(in[0], in[1], red); },
                            {rand_away({2, 3}, 12), randu({2, 3}, 13)}))
          << c.name << " " << red;
    EXPECT_TRUE(throws_with([&] { run(randu({2, 3}, 1), randu({4}, 2), "mean"); }, {c.name, "[2, 3]", "[4]"}));
    EXPECT_TRUE(throws_with([&] { run(randu({2}, 1), randu({2}, 2), "avg"); }, {c.name, "avg"}));
  }
  EXPECT_TRUE(close(call_op("mse_loss", {randu({0, 3}, 1), randu({0, 3}, 2), "sum"}), {0.0}, {}, 0, 0));
}

TEST(NNOpsLoss, BinaryCrossEntropy) {
  Tensor p = randu({4, 3}, 20, 0.05, 0.95), y = randu({4, 3}, 21, 0, 1), w = randu({3}, 22, 0.5, 1.5);
  std::vector<double> pv = values(p), yv = values(y), wv = values(w), l;
  for (int i = 0; i < 12; ++i) l.push_back(-wv[i % 3] * (yv[i] * std::log(pv[i]) + (1 - yv[i]) * std::log(1 - pv[i])));
  EXPECT_TRUE(close(call_op("binary_cross_entropy", {p, y, w, "none"}), l, {4, 3}, 1e-10, 1e-12));
  EXPECT_TRUE(close(call_op("binary_cross_entropy", {p, y, w}), {reduce_ref(l, "mean")}, {}, 1e-10, 1e-12));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("binary_cross_entropy", {in[0], in[1], in[2], "sum"});
      },
      {p, y, w}));
  // log clamped at -100: p = 0 with y = 0 contributes 0, with y = 1 contributes 100
  Tensor p0 = from_vector<double>({0.0, 0.0}), y0 = from_vector<double>({0.0, 1.0});
  EXPECT_TRUE(close(call_op("binary_cross_entropy", {p0, y0, none, "none"}), {0.0, 100.0}, {2}, 1e-12, 1e-12));
  EXPECT_TRUE(throws_with(
      [&] {
        call_op("binary_cross_entropy", {from_vector<double>({1.5}), from_vector<double>({1.0})});
      },
      {"binary_cross_entropy", "between 0 and 1"}));

  Tensor x = randu({4, 3}, 23, -30, 30), pw = randu({3}, 24, 0.5, 2);
  std::vector<double> xv = values(x), pwv = values(pw), l2;
  for (int i = 0; i < 12; ++i) {
    auto softplus = [](double z) { return std::log1p(std::exp(-std::fabs(z))) + std::max(z, 0.0); };
    l2.push_back(wv[i % 3] * (pwv[i % 3] * yv[i] * softplus(-xv[i]) + (1 - yv[i]) * softplus(xv[i])));
  }
  EXPECT_TRUE(close(call_op("binary_cross_entropy_with_logits", {x, y, w, pw, "none"}), l2, {4, 3}, 1e-8, 1e-10));
  // numerically stable for huge logits
  Tensor big = from_vector<double>({1000.0, -1000.0}), yb = from_vector<double>({0.0, 1.0});
  EXPECT_TRUE(close(call_op("binary_cross_entropy_with_logits", {big, yb, none, none, "none"}), {1000.0, 1000.0}, {2},
                    1e-12, 0));
  Tensor xs = randu({2, 3}, 25);
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("binary_cross_entropy_with_logits", {in[0], in[1], in[2], in[3], "mean"});
      },
      {xs, randu({2, 3}, 26, 0, 1), w, pw}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("binary_cross_entropy_with_logits", {in[0], in[1], none, none, "none"});
      },
      {xs, randu({2, 3}, 27, 0, 1)}));
}

TEST(NNOpsLoss, KlDiv) {
  Tensor x = randu({3, 4}, 30, -3, 0), t = randu({3, 4}, 31, 0, 1);
  std::vector<double> xv = values(x), tv = values(t), l, ll;
  for (int i = 0; i < 12; ++i) {
    l.push_back(tv[i] * (std::log(tv[i]) - xv[i]));
    ll.push_back(std::exp(xv[i]) * (xv[i] - xv[(i + 1) % 12]));
  }
  EXPECT_TRUE(close(call_op("kl_div", {x, t, "none"}), l, {3, 4}, 1e-10, 1e-12));
  EXPECT_TRUE(close(call_op("kl_div", {x, t, "batchmean"}), {reduce_ref(l, "sum") / 3}, {}, 1e-10, 1e-12));
  // zero targets contribute 0 (xlogy)
  EXPECT_TRUE(
      close(call_op("kl_div", {from_vector<double>({-1.0}), from_vector<double>({0.0}), "sum"}), {0.0}, {}, 0, 0));
  for (bool lt : {false, true})
    for (const char* red : {"none", "batchmean", "sum"})
      EXPECT_TRUE(gradcheck(
          [&](const std::vector<Tensor>& in) {
            return call_op("kl_div", {in[0], in[1], red, lt});
          },
          {randu({2, 3}, 32), lt ? randu({2, 3}, 33, -2, 0) : randu({2, 3}, 33, 0.1, 1)}));
}

// Reference cross entropy / nll with weights, ignore_index, label smoothing.
std::vector<double> ce_ref(const std::vector<double>& x, const std::vector<int64_t>& t, int N, int C,
                           const std::vector<double>& w, int64_t ignore, double ls, bool log_softmax_input,
                           double* denom) {
  std::vector<double> out(N);
  *denom = 0;
  for (int n = 0; n < N; ++n) {
    std::vector<double> lp(C);
    double m = -1e300, s = 0;
    for (int c = 0; c < C; ++c) m = std::max(m, x[n * C + c]);
    for (int c = 0; c < C; ++c) s += std::exp(x[n * C + c] - m);
    for (int c = 0; c < C; ++c) lp[c] = log_softmax_input ? x[n * C + c] : x[n * C + c] - m - std::log(s);
    if (t[n] == ignore) {
      out[n] = 0;
      continue;
    }
    double smooth = 0;
    for (int c = 0; c < C; ++c) smooth -= lp[c] * w[c];
    out[n] = (1 - ls) * (-lp[t[n]] * w[t[n]]) + ls / C * smooth;
    *denom += w[t[n]];
  }
  return out;
}

TEST(NNOpsLoss, CrossEntropyAndNll) {
  const int N = 5, C = 4;
  Tensor x = randu({N, C}, 40);
  std::vector<int64_t> tv{1, 3, -100, 0, 3};
  Tensor t = from_vector(tv, {N});
  Tensor w = randu({C}, 41, 0.5, 2);
  std::vector<double> xv = values(x), wv = values(w), ones(C, 1.0);
  for (double ls : {0.0, 0.2}) {
    double denom;
    auto ref = ce_ref(xv, tv, N, C, wv, -100, ls, false, &denom);
    EXPECT_TRUE(close(call_op("cross_entropy", {x, t, w, "none", -100, ls}), ref, {N}, 1e-10, 1e-12));
    EXPECT_TRUE(close(call_op("cross_entropy", {x, t, w, "mean", -100, ls}), {reduce_ref(ref, "sum") / denom}, {},
                      1e-10, 1e-12));
    for (const char* red : {"none", "mean", "sum"})
      EXPECT_TRUE(gradcheck(
          [&](const std::vector<Tensor>& in) {
            return call_op("cross_entropy", {in[0], t, w, red, -100, ls});
          },
          {x}));
  }
  double denom;
  auto nref = ce_ref(xv, tv, N, C, ones, -100, 0, true, &denom);
  EXPECT_TRUE(close(call_op("nll_loss", {x, t}), {reduce_ref(nref, "sum") / denom}, {}, 1e-10, 1e-12));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("nll_loss", {in[0], t, w, "mean"});
      },
      {x}));
  // spatial: [N, C, d] with [N, d] targets; 1-D input with 0-dim target
  Tensor xs = randu({2, 3, 4}, 42);
  Tensor ts = randint({2, 4}, 43, 0, 3);
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("cross_entropy", {in[0], ts, none, "none"});
      },
      {xs}));
  Tensor x1 = randu({C}, 44);
  Tensor t0 = from_vector<int64_t>({2}, {});
  double m = -1e300, s = 0;
  auto x1v = values(x1);
  for (double v : x1v) m = std::max(m, v);
  for (double v : x1v) s += std::exp(v - m);
  EXPECT_TRUE(close(call_op("cross_entropy", {x1, t0}), {-(x1v[2] - m - std::log(s))}, {}, 1e-10, 1e-12));
  // probabilities target
  Tensor probs = softmax(randu({N, C}, 45), 1);
  auto pv = values(probs);
  std::vector<double> pref(N);
  for (int n = 0; n < N; ++n) {
    double mm = -1e300, ss = 0;
    for (int c = 0; c < C; ++c) mm = std::max(mm, xv[n * C + c]);
    for (int c = 0; c < C; ++c) ss += std::exp(xv[n * C + c] - mm);
    for (int c = 0; c < C; ++c) pref[n] -= pv[n * C + c] * (xv[n * C + c] - mm - std::log(ss));
  }
  EXPECT_TRUE(close(call_op("cross_entropy", {x, probs, none, "none"}), pref, {N}, 1e-10, 1e-12));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call_op("cross_entropy", {in[0], in[1], none, "mean", -100, 0.1});
      },
      {x, probs}));
  // f32
  EXPECT_TRUE(close(call_op("cross_entropy", {x.to(TSR_F32), t, w.to(TSR_F32), "none"}),
                    ce_ref(xv, tv, N, C, wv, -100, 0, false, &denom), {N}, 1e-5, 1e-5));
  // bad input
  EXPECT_TRUE(throws_with(
      [&] {
        call_op("cross_entropy", {x, from_vector<int64_t>({0, 1, 2, 4, 0}, {N})});
      },
      {"cross_entropy", "target 4 is out of bounds"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call_op("cross_entropy", {x, from_vector<int64_t>({0, 1}, {2})});
      },
      {"cross_entropy", "[5]", "[2]"}));
  EXPECT_TRUE(throws_with([&] { call_op("nll_loss", {x, x}); }, {"nll_loss", "integer class indices"}));
  EXPECT_TRUE(throws_with([&] { call_op("nll_loss", {x, t, randu({3}, 1)}); }, {"nll_loss", "weight", "[3]"}));
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {
using namespace tsr::optest;

// f32 cross entropy forward and backward where the kernels change strategy: rows longer than
// the 16 KiB row buffer (C = 5000: the backward computes each exp twice) and gradients of 8 MiB
// or more (written with streaming stores under the ops_stream_stores CTest entry, from rows that
// start at every 16-byte alignment when C = 1001), with class weights, label smoothing and ignored rows, against float64.
TEST(NNOpsLoss, CrossEntropyF32LongRowsAndLargeGradients) {
  for (auto [N, C] : {std::pair<int64_t, int64_t>{2100, 1001}, {5, 5000}, {450, 5000}}) {
    SCOPED_TRACE(std::to_string(N) + " x " + std::to_string(C));
    Tensor x64 = randu({N, C}, uint64_t(60 + C), -8, 8), w64 = randu({C}, 61, 0.5, 2);
    Tensor t = randint({N}, uint64_t(62 + N), 0, C);
    std::vector<int64_t> tv(static_cast<size_t>(N));
    {
      auto t_vals = values(t);
      for (int64_t n = 0; n < N; ++n) tv[size_t(n)] = n % 7 == 3 ? -100 : int64_t(t_vals[size_t(n)]);
    }
    t = from_vector(tv, {N});
    const double ls = 0.1;
    Tensor x = x64.to(TSR_F32).requires_grad_(), w = w64.to(TSR_F32);
    const std::vector<double> xv = values(x), wv = values(w);  // the f32 values, widened
    double denom = 0;
    const std::vector<double> ref = ce_ref(xv, tv, int(N), int(C), wv, -100, ls, false, &denom);
    Tensor loss = call_op("cross_entropy", {x, t, w, "sum", -100, ls});
    EXPECT_TRUE(close(loss, {reduce_ref(ref, "sum")}, {}, 1e-5, 0));
    loss.backward();
    // d/dx_c of row n's loss: (1-ls) w_t (p_c - [c == t]) + ls/C (p_c sum_k w_k - w_c).
    double wsum = 0;
    for (double v : wv) wsum += v;
    std::vector<double> g(static_cast<size_t>(N * C), 0.0);
    for (int64_t n = 0; n < N; ++n) {
      const int64_t tn = tv[size_t(n)];
      if (tn < 0) continue;
      const double* xr = &xv[size_t(n * C)];
      double m = -1e300, s = 0;
      for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
      for (int64_t c = 0; c < C; ++c) s += std::exp(xr[c] - m);
      for (int64_t c = 0; c < C; ++c) {
        const double p = std::exp(xr[c] - m) / s;
        g[size_t(n * C + c)] = (1 - ls) * wv[size_t(tn)] * (p - (c == tn ? 1.0 : 0.0)) +
                               ls / double(C) * (p * wsum - wv[size_t(c)]);
      }
    }
    EXPECT_TRUE(close(x.grad(), g, {N, C}, 2e-5, 1e-8));
  }
}

TEST(NNOpsLoss, OutVariantsAndNoPartialWrite) {
  // Static: tsr::Op caches its handle by address, so temporaries at one address would collide.
  static const Op mse("mse_loss"), conv("conv2d"), embedding("embedding");
  Tensor x = randu({3, 4}, 1), y = randu({3, 4}, 2);
  Tensor out = empty({3, 4}, TSR_F64);
  call_out(mse, out, {x, y, "none"});
  EXPECT_TRUE(close(out, call("mse_loss", {x, y, "none"})));
  Tensor wrong = full({2}, 7.0, TSR_F64);
  EXPECT_TRUE(throws_with([&] { call_out(mse, wrong, {x, y, "none"}); }, {"mse_loss", "[2]"}));
  EXPECT_TRUE(close(wrong, {7.0, 7.0}, {2}, 0, 0));
  // out= of a kernel-backed op, and a non-contiguous out
  Tensor ci = randu({1, 2, 5, 5}, 3), cw = randu({3, 2, 3, 3}, 4);
  Tensor co = empty({1, 3, 3, 3}, TSR_F64);
  call_out(conv, co, {ci, cw});
  EXPECT_TRUE(close(co, call("conv2d", {ci, cw})));
  Tensor emb = randu({5, 3}, 5), idx = from_vector<int64_t>({4, 0});
  Tensor eo = empty({3, 2}, TSR_F64).t();
  call_out(embedding, eo, {emb, idx});
  EXPECT_TRUE(close(eo, call("embedding", {emb, idx})));
}

}  // namespace
}  // namespace tsr
