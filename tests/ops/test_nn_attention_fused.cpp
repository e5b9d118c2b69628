// The fused attention kernels (_nn_attention, _nn_attention_backward) behind _sdpa_math on the
// cpu: forward (output and saved probabilities) and gradients against float64 references
// computed here, for every floating dtype, odd and empty shapes, row counts across the kernels'
// row blocks, biases shared by the batch or given per head, dropout masks, rows with NaN or
// only -inf scores, strided heads (an attention's q/k/v as views of one projection), and the
// cases that stay on the matmul + softmax composite (large heads, broadcast batch dims, a bias
// that needs a gradient, create_graph), which must agree with the fused path.
#include <cmath>
#include <limits>
#include <string>

#include "op_test.hpp"

namespace tsr::optest {
namespace {

struct Ref {
  std::vector<double> out, probs, dq, dk, dv;
};

// q [N, L, E], k [N, S, E], v [N, S, Ev], bias [N, L, S] (empty: none), drop [N, L, S] (empty:
// none), g [N, L, Ev] (empty: no gradients), all row-major float64.
Ref reference(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
              const std::vector<double>& bias, const std::vector<double>& drop, const std::vector<double>& g, int64_t N,
              int64_t L, int64_t S, int64_t E, int64_t Ev, double scale) {
  Ref r;
  r.out.assign(size_t(N * L * Ev), 0.0);
  r.probs.assign(size_t(N * L * S), 0.0);
  r.dq.assign(size_t(N * L * E), 0.0);
  r.dk.assign(size_t(N * S * E), 0.0);
  r.dv.assign(size_t(N * S * Ev), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S)), p(static_cast<size_t>(S)), pd(static_cast<size_t>(S));
      double m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) dot += q[size_t((n * L + i) * E + e)] * k[size_t((n * S + j) * E + e)];
        s[size_t(j)] = dot * scale + (bias.empty() ? 0.0 : bias[size_t((n * L + i) * S + j)]);
        if (!std::isnan(s[size_t(j)])) m = std::max(m, s[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += std::exp(s[size_t(j)] - m);
      for (int64_t j = 0; j < S; ++j) {
        p[size_t(j)] = std::exp(s[size_t(j)] - m) / sum;
        pd[size_t(j)] = p[size_t(j)] * (drop.empty() ? 1.0 : drop[size_t((n * L + i) * S + j)]);
        r.probs[size_t((n * L + i) * S + j)] = p[size_t(j)];
        for (int64_t c = 0; c < Ev; ++c) r.out[size_t((n * L + i) * Ev + c)] += pd[size_t(j)] * v[size_t((n * S + j) * Ev + c)];
      }
      if (g.empty()) continue;
      std::vector<double> dp(static_cast<size_t>(S));
      double dot = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < Ev; ++c) acc += g[size_t((n * L + i) * Ev + c)] * v[size_t((n * S + j) * Ev + c)];
        dp[size_t(j)] = acc * (drop.empty() ? 1.0 : drop[size_t((n * L + i) * S + j)]);
        dot += p[size_t(j)] * dp[size_t(j)];
        for (int64_t c = 0; c < Ev; ++c) r.dv[size_t((n * S + j) * Ev + c)] += pd[size_t(j)] * g[size_t((n * L + i) * Ev + c)];
      }
      for (int64_t j = 0; j < S; ++j) {
        const double ds = p[size_t(j)] * (dp[size_t(j)] - dot) * scale;
        for (int64_t e = 0; e < E; ++e) {
          r.dq[size_t((n * L + i) * E + e)] += ds * k[size_t((n * S + j) * E + e)];
          r.dk[size_t((n * S + j) * E + e)] += ds * q[size_t((n * L + i) * E + e)];
        }
      }
    }
  return r;
}

Shape with_last(Shape batch, int64_t a, int64_t b) {
  batch.push_back(a);
  batch.push_back(b);
  return batch;
}

int64_t prod(const Shape& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

struct Case {
  Shape batch;
  int64_t L, S, E, Ev;
};

// Tolerances against float64 for S-term sums of products of values in [-1, 1].
std::pair<double, double> tol(tsr_dtype_t dt, int64_t terms) {
  auto [rtol, atol] = default_tol(dt);
  const double k = 1 + double(terms) / 8;
  return {rtol * k, atol * k * (dt == TSR_F16 || dt == TSR_BF16 ? 4 : 1)};
}

TEST(AttentionFused, ForwardAndGradientsMatchFloat64ForEveryFloatingDtype) {
  const std::vector<Case> cases = {
      {{3, 4}, 11, 11, 16, 16},  // tessera_gpt_bench's heads
      {{2}, 17, 33, 20, 9},      // two row blocks (16 and 8 lanes), three key vectors, padded dims
      {{5}, 3, 7, 5, 4},        {{}, 1, 1, 1, 1},     {{2, 1}, 9, 40, 3, 18},
      {{2}, 0, 5, 4, 3},         // no queries
      {{2}, 4, 0, 4, 3},         // no keys: zero output, zero grad_query
      {{0, 3}, 4, 5, 4, 3},      // no heads
      {{2}, 4, 5, 0, 3},         // empty embedding: scores are the bias alone
  };
  uint64_t seed = 900;
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_F16, TSR_BF16})
    for (const Case& c : cases)
      for (int variant = 0; variant < 4; ++variant) {  // none, shared bias, per-head bias + mask, row bias
        const int64_t N = prod(c.batch);
        Tensor q = randu(with_last(c.batch, c.L, c.E), ++seed, -1, 1, dt);
        Tensor k = randu(with_last(c.batch, c.S, c.E), ++seed, -1, 1, dt);
        Tensor v = randu(with_last(c.batch, c.S, c.Ev), ++seed, -1, 1, dt);
        Tensor g = randu(with_last(c.batch, c.L, c.Ev), ++seed, -1, 1, dt);
        std::optional<Tensor> bias, drop;
        if (variant == 1) bias = randu({c.L, c.S}, ++seed, -2, 2, dt);
        if (variant == 2) {
          bias = randu(with_last(c.batch, c.L, c.S), ++seed, -2, 2, dt);
          drop = (tsr::ge(randu(with_last(c.batch, c.L, c.S), ++seed, 0, 1, TSR_F64), 0.3).to(dt)) * 1.25;
        }
        if (variant == 3) bias = randu({1, c.S}, ++seed, -2, 2, dt);
        const double scale = 0.3;
        const std::string what = std::string(dtype_name(dt)) + " batch " + std::to_string(N) + " L " +
                                 std::to_string(c.L) + " S " + std::to_string(c.S) + " E " + std::to_string(c.E) +
                                 " Ev " + std::to_string(c.Ev) + " variant " + std::to_string(variant);
        std::vector<double> bias_full;
        if (bias) bias_full = values(bias->expand(with_last(c.batch, c.L, c.S)));
        Ref ref = reference(values(q), values(k), values(v), bias_full, drop ? values(*drop) : std::vector<double>{},
                            values(g), N, c.L, c.S, c.E, c.Ev, scale);
        std::vector<Tensor> leaves = {q.clone().requires_grad_(), k.clone().requires_grad_(),
                                      v.clone().requires_grad_()};
        auto r = call_multi(Op("_sdpa_math"), {leaves[0], leaves[1], leaves[2], tsr::detail::opt_tensor_arg(bias), tsr::detail::opt_tensor_arg(drop), scale});
        auto [rtol, atol] = tol(dt, std::max(c.S, std::max(c.E, c.Ev)));
        EXPECT_TRUE(close(r[0], ref.out, with_last(c.batch, c.L, c.Ev), rtol, atol)) << what;
        EXPECT_TRUE(close(r[1], ref.probs, with_last(c.batch, c.L, c.S), rtol, atol)) << what;
        if (c.L * c.Ev == 0) continue;
        auto grads = autograd::grad({r[0]}, leaves, {g});
        EXPECT_TRUE(close(grads[0], ref.dq, q.sizes(), rtol, atol)) << what << " grad query";
        EXPECT_TRUE(close(grads[1], ref.dk, k.sizes(), rtol, atol)) << what << " grad key";
        EXPECT_TRUE(close(grads[2], ref.dv, v.sizes(), rtol, atol)) << what << " grad value";
      }
}

// The composite formulation, written with public ops, in float64.
Tensor composite_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& bias,
                      double scale) {
  Tensor s = matmul(q, k.transpose(-2, -1)) * scale;
  if (bias) s = s + *bias;
  return matmul(softmax(s, -1), v);
}

TEST(AttentionFused, NaNAndFullyMaskedRowsAsTheComposite) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    Tensor q = randu({2, 5, 4}, 31, -1, 1, dt), k = randu({2, 6, 4}, 32, -1, 1, dt), v = randu({2, 6, 3}, 33, -1, 1, dt);
    std::vector<double> bv = values(randu({5, 6}, 34, -1, 1));
    for (int j = 0; j < 6; ++j) bv[size_t(2 * 6 + j)] = -INFINITY;  // row 2: every key masked
    bv[size_t(3 * 6 + 4)] = std::numeric_limits<double>::quiet_NaN();  // row 3: one NaN score
    bv[size_t(4 * 6 + 1)] = INFINITY;                                   // row 4: one +inf score
    Tensor bias = from_vector<double>(bv, {5, 6}).to(dt);
    Tensor fused = call_multi(Op("_sdpa_math"), {q, k, v, bias, none, 0.5})[0];
    Tensor ref = composite_sdpa(q.to(TSR_F64), k.to(TSR_F64), v.to(TSR_F64), bias.to(TSR_F64), 0.5);
    EXPECT_TRUE(close(fused, values(ref), ref.sizes(), 1e-5, 1e-6)) << dtype_name(dt);
    std::vector<double> f = values(fused);
    for (int b = 0; b < 2; ++b)
      for (int row : {2, 3, 4})
        for (int c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(f[size_t((b * 5 + row) * 3 + c)])) << b << " " << row;
  }
}

// q, k and v as the heads of one [B, T, 3C] projection (strided views), as a GPT block takes them.
TEST(AttentionFused, StridedHeadsAndCausalMaskMatchContiguousOperands) {
  const int64_t B = 3, T = 7, H = 2, D = 5, C = H * D;
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    Tensor qkv = randu({B, T, 3 * C}, 41, -1, 1, dt).requires_grad_();
    Tensor gy = randu({B, H, T, D}, 42, -1, 1, dt);
    auto heads = [&](const Tensor& x, int64_t i) { return x.narrow(2, i * C, C).reshape({B, T, H, D}).transpose(1, 2); };
    Tensor y = nn::scaled_dot_product_attention(heads(qkv, 0), heads(qkv, 1), heads(qkv, 2), std::nullopt, 0.0, true);
    Tensor dqkv = autograd::grad({y}, {qkv}, {gy})[0];
    Tensor c = qkv.detach().clone().requires_grad_();
    Tensor qc = heads(c, 0).contiguous(), kc = heads(c, 1).contiguous(), vc = heads(c, 2).contiguous();
    std::vector<double> mask(size_t(T * T));
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) mask[size_t(i * T + j)] = j <= i ? 0.0 : -INFINITY;
    Tensor ref = composite_sdpa(qc, kc, vc, from_vector<double>(mask, {T, T}).to(dt), 1.0 / std::sqrt(double(D)));
    EXPECT_TRUE(close(y, ref)) << dtype_name(dt);
    Tensor dref = autograd::grad({ref}, {c}, {gy})[0];
    EXPECT_TRUE(close(dqkv, dref)) << dtype_name(dt);
    // The output's memory is [B, T, H, D]: merging the heads again is a view.
    EXPECT_TRUE(y.transpose(1, 2).is_contiguous()) << dtype_name(dt);
  }
  // A query whose innermost stride is not 1 (the kernel op copies it) and a key broadcast over
  // the heads by stride 0 (read in place).
  Tensor qt = randu({2, 3, 4, 6}, 43, -1, 1, TSR_F32).transpose(2, 3);  // [2, 3, 6, 4], stride 1 on dim 2
  Tensor kb = randu({2, 1, 5, 4}, 44, -1, 1, TSR_F32).expand({2, 3, 5, 4});
  Tensor vb = randu({2, 3, 5, 2}, 45, -1, 1, TSR_F32);
  Tensor r = call("scaled_dot_product_attention", {qt, kb, vb});
  EXPECT_TRUE(close(r, composite_sdpa(qt.contiguous(), kb.contiguous(), vb, std::nullopt, 0.5)));
}

// Where the fused kernels do not run (large heads, which they decline; broadcast batch dims; a
// bias that needs a gradient; create_graph), the composite gives the same results.
TEST(AttentionFused, CompositeCasesAgreeWithTheFusedPath) {
  // Large heads: 96 x 96 x (64 + 64) multiply-adds per head, above the kernels' bound.
  Tensor q = randu({2, 96, 64}, 51, -1, 1, TSR_F32), k = randu({2, 96, 64}, 52, -1, 1, TSR_F32),
         v = randu({2, 96, 64}, 53, -1, 1, TSR_F32);
  Tensor big = call("scaled_dot_product_attention", {q, k, v});
  Tensor big_ref = composite_sdpa(q.to(TSR_F64), k.to(TSR_F64), v.to(TSR_F64), std::nullopt, 0.125);
  EXPECT_TRUE(close(big, values(big_ref), big_ref.sizes(), 1e-4, 1e-5));
  // A key and value shared by the batch (broadcast batch dims): the composite's matmul.
  Tensor qb = randu({3, 4, 5}, 54), kb = randu({1, 6, 5}, 55), vb = randu({1, 6, 2}, 56);
  EXPECT_TRUE(close(call("scaled_dot_product_attention", {qb, kb, vb}),
                    composite_sdpa(qb, kb, vb, std::nullopt, 1.0 / std::sqrt(5.0))));
  // A float mask that needs a gradient, and second derivatives (create_graph: the formula).
  Tensor qs = randu({2, 4, 3}, 57), ks = randu({2, 5, 3}, 58), vs = randu({2, 5, 2}, 59), ms = randu({4, 5}, 60);
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        return call("scaled_dot_product_attention", {in[0], in[1], in[2], in[3], 0.0, false, 0.7});
      },
      {qs, ks, vs, ms}));
  Tensor ql = qs.clone().requires_grad_();
  Tensor out = call("scaled_dot_product_attention", {ql, ks, vs});
  Tensor gq = autograd::grad({tsr::sum(out)}, {ql}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  Tensor gq_fused = autograd::grad({tsr::sum(out)}, {ql})[0];
  EXPECT_TRUE(close(gq, gq_fused));
  EXPECT_TRUE(gq.requires_grad());
}

TEST(AttentionFused, KernelOpsRefuseMismatchedOperands) {
  Tensor q = randu({2, 1, 3, 4}, 61, -1, 1, TSR_F32), k = randu({2, 1, 5, 4}, 62, -1, 1, TSR_F32),
         v = randu({2, 1, 5, 6}, 63, -1, 1, TSR_F32);
  EXPECT_TRUE(throws_with(
      [&] { call_multi(Op("_nn_attention"), {q, randu({2, 1, 5, 3}, 64, -1, 1, TSR_F32), v, none, none, 1.0}); },
      {"_nn_attention", "[2, 1, 3, 4]", "[2, 1, 5, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] { call_multi(Op("_nn_attention"), {q, k, v, randu({3, 1, 3, 5}, 65, -1, 1, TSR_F32), none, 1.0}); },
      {"_nn_attention", "bias", "[3, 1, 3, 5]"}));
  EXPECT_TRUE(throws_with([&] { call_multi(Op("_nn_attention"), {q, k.to(TSR_F64), v, none, none, 1.0}); },
                          {"_nn_attention", "float64"}));
  EXPECT_TRUE(throws_with([&] { call_multi(Op("_nn_attention"), {q.squeeze(1), k, v, none, none, 1.0}); },
                          {"_nn_attention", "4-D"}));
  Tensor p = randu({2, 1, 3, 5}, 66, 0, 1, TSR_F32), g = randu({2, 1, 3, 6}, 67, -1, 1, TSR_F32);
  EXPECT_TRUE(throws_with(
      [&] { call_multi(Op("_nn_attention_backward"), {g, q, k, v, p.narrow(3, 0, 4), none, 1.0}); },
      {"_nn_attention_backward", "probs", "[2, 1, 3, 4]"}));
  // Outputs in [B, L, H, E] memory: out.transpose(1, 2) is contiguous.
  auto ok = call_multi(Op("_nn_attention"), {q, k, v, none, none, 1.0});
  EXPECT_TRUE(ok[0].transpose(1, 2).is_contiguous());
  // out= tensors: a contiguous one is written as it is, a transposed one through a dense copy.
  Tensor o1 = empty({2, 1, 3, 6}), p1 = empty({2, 1, 3, 5});
  Tensor o2 = empty({2, 1, 6, 3}).transpose(2, 3), p2 = empty({2, 1, 5, 3}).transpose(2, 3);
  call_multi(Op("_nn_attention"), {q, k, v, none, none, 1.0}, {o1, p1});
  call_multi(Op("_nn_attention"), {q, k, v, none, none, 1.0}, {o2, p2});
  EXPECT_TRUE(close(o1, ok[0], 0, 0));
  EXPECT_TRUE(close(p1, ok[1], 0, 0));
  EXPECT_TRUE(close(o2, ok[0], 0, 0));
  EXPECT_TRUE(close(p2, ok[1], 0, 0));
  auto grads = call_multi(Op("_nn_attention_backward"), {g, q, k, v, ok[1], none, 1.0});
  EXPECT_EQ(grads[1].sizes(), Shape({2, 1, 5, 4}));
  EXPECT_TRUE(grads[1].transpose(1, 2).is_contiguous());
}

}  // namespace
}  // namespace tsr::optest
