// nn family: layer_norm, rms_norm, group_norm, batch_norm, dropout, embedding, one_hot.
#include <cmath>

#include "op_test.hpp"

namespace tsr {
namespace {

using namespace tsr::optest;

// Static: tsr::Op caches its handle by address.
static const Op op_native_dropout("native_dropout");

// Normalizes consecutive groups of `m` values (rows of a [rows, m] layout).
std::vector<double> norm_rows(const std::vector<double>& x, size_t m, double eps, bool rms) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r * m < x.size(); ++r) {
    double mu = 0, var = 0;
    if (!rms) {
      for (size_t j = 0; j < m; ++j) mu += x[r * m + j];
      mu /= static_cast<double>(m);
    }
    for (size_t j = 0; j < m; ++j) var += (x[r * m + j] - mu) * (x[r * m + j] - mu);
    var /= static_cast<double>(m);
    for (size_t j = 0; j < m; ++j) y[r * m + j] = (x[r * m + j] - mu) / std::sqrt(var + eps);
  }
  return y;
}

TEST(NNOpsNorm, LayerNormAndRmsNorm) {
  Tensor x = randu({3, 2, 5}, 1), w = randu({2, 5}, 2), b = randu({2, 5}, 3);
  auto xv = values(x), wv = values(w), bv = values(b);
  for (bool rms : {false, true}) {
    auto ref = norm_rows(xv, 10, 1e-5, rms);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = ref[i] * wv[i % 10] + (rms ? 0 : bv[i % 10]);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16, TSR_F16}) {
      Tensor xd = noncontig(x.to(dt)), wd = w.to(dt), bd = b.to(dt);
      Tensor y = rms ? call("rms_norm", {xd, std::vector<int64_t>{2, 5}, wd, 1e-5})
                     : call("layer_norm", {xd, std::vector<int64_t>{2, 5}, wd, bd});
      EXPECT_EQ(y.dtype(), dt);
      auto tol = default_tol(dt);
      EXPECT_TRUE(close(y, ref, {3, 2, 5}, tol.first * 4, tol.second * 4)) << rms << " " << dtype_name(dt);
    }
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return rms ? call("rms_norm", {in[0], std::vector<int64_t>{5}, in[1]})
                     : call("layer_norm", {in[0], std::vector<int64_t>{5}, in[1], in[2]});
        },
        {randu({2, 3, 5}, 4), randu({5}, 5), randu({5}, 6)}));
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return rms ? call("rms_norm", {in[0], std::vector<int64_t>{2, 3}})
                     : call("layer_norm", {in[0], std::vector<int64_t>{2, 3}});
        },
        {randu({2, 3}, 7)}));
  }
  EXPECT_TRUE(throws_with(
      [&] {
        call("layer_norm", {x, std::vector<int64_t>{4}});
      },
      {"layer_norm", "[3, 2, 5]", "[4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("layer_norm", {x, std::vector<int64_t>{5}, randu({4}, 1)});
      },
      {"layer_norm", "weight", "[4]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("rms_norm", {randint({2, 3}, 1, 0, 3), std::vector<int64_t>{3}});
      },
      {"rms_norm", "int64"}));
  // empty batch
  EXPECT_EQ(call("layer_norm", {randu({0, 4}, 1), std::vector<int64_t>{4}}).sizes(), (Shape{0, 4}));
}

// Rows a whole number of vectors wide and at most 256 long: the cpu kernels' blocked path (16
// float rows, 8 double rows at a time), over block counts with a remainder, against float64.
TEST(NNOpsNorm, LayerNormShortRowsInBlocks) {
  for (int64_t m : {8, 16, 64, 256})
    for (bool rms : {false, true})
      for (bool affine : {false, true}) {
        const int64_t rows = 37;
        Tensor x = randu({rows, m}, 20 + m, -3, 3), w = randu({m}, 21), b = randu({m}, 22);
        auto xv = values(x), wv = values(w), bv = values(b);
        auto ref = norm_rows(xv, size_t(m), 1e-5, rms);
        if (affine)
          for (size_t i = 0; i < ref.size(); ++i) ref[i] = ref[i] * wv[i % size_t(m)] + (rms ? 0 : bv[i % size_t(m)]);
        for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
          Tensor xd = x.to(dt), wd = w.to(dt), bd = b.to(dt);
          Tensor y = rms ? (affine ? call("rms_norm", {xd, std::vector<int64_t>{m}, wd, 1e-5})
                                   : call("rms_norm", {xd, std::vector<int64_t>{m}, none, 1e-5}))
                         : (affine ? call("layer_norm", {xd, std::vector<int64_t>{m}, wd, bd})
                                   : call("layer_norm", {xd, std::vector<int64_t>{m}}));
          auto tol = default_tol(dt);
          EXPECT_TRUE(close(y, ref, {rows, m}, tol.first * 4, tol.second * 4))
              << "m " << m << " rms " << rms << " affine " << affine << " " << dtype_name(dt);
        }
      }
}

// Rows wide enough for the cpu backward's 16-lane sums (and a remainder), with and without a
// weight: gradcheck in float64, and float32 gradients against float64's over many rows (several
// row blocks and their column sums for the weight and bias gradients).
TEST(NNOpsNorm, LayerNormBackwardOnWideRows) {
  for (bool rms : {false, true}) {
    auto norm = [rms](const Tensor& x, int64_t m, const Tensor* w, const Tensor* b) {
      if (rms) return w ? call("rms_norm", {x, std::vector<int64_t>{m}, *w}) : call("rms_norm", {x, std::vector<int64_t>{m}});
      return w ? call("layer_norm", {x, std::vector<int64_t>{m}, *w, *b}) : call("layer_norm", {x, std::vector<int64_t>{m}});
    };
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return norm(in[0], 37, &in[1], &in[2]); },
                          {randu({3, 37}, 8), randu({37}, 9), randu({37}, 10)}))
        << rms;
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return norm(in[0], 32, nullptr, nullptr); },
                          {randu({2, 32}, 11)}))
        << rms;
    Tensor x = randu({150, 64}, 12), w = randu({64}, 13), b = randu({64}, 14), g = randu({150, 64}, 15);
    std::vector<Tensor> ref, got;
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
      Tensor xd = x.to(dt).requires_grad_(), wd = w.to(dt).requires_grad_(), bd = b.to(dt).requires_grad_();
      std::vector<Tensor> grads = autograd::grad({norm(xd, 64, &wd, &bd)}, rms ? std::vector<Tensor>{xd, wd}
                                                                               : std::vector<Tensor>{xd, wd, bd},
                                                 {g.to(dt)});
      (dt == TSR_F64 ? ref : got) = grads;
    }
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_TRUE(close(got[i], values(ref[i]), ref[i].sizes(), 1e-4, 1e-4)) << rms << " gradient " << i;
  }
}

TEST(NNOpsNorm, GroupNorm) {
  const int N = 2, C = 6, G = 3, HW = 5;
  Tensor x = randu({N, C, HW}, 10), w = randu({C}, 11), b = randu({C}, 12);
  auto xv = values(x), wv = values(w), bv = values(b);
  auto ref = norm_rows(xv, (C / G) * HW, 1e-5, false);
  for (size_t i = 0; i < ref.size(); ++i) {
    size_t c = (i / HW) % C;
    ref[i] = ref[i] * wv[c] + bv[c];
  }
  EXPECT_TRUE(close(call("group_norm", {x, G, w, b}), ref, {N, C, HW}, 1e-10, 1e-10));
  EXPECT_TRUE(close(call("group_norm", {x.to(TSR_F32), G, w.to(TSR_F32), b.to(TSR_F32)}), ref, {N, C, HW}, 1e-5, 1e-5));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("group_norm", {in[0], 2, in[1], in[2]});
      },
      {randu({2, 4, 3}, 13), randu({4}, 14), randu({4}, 15)}));
  EXPECT_TRUE(throws_with([&] { call("group_norm", {x, 4}); }, {"group_norm", "num_groups 4", "[2, 6, 5]"}));
  EXPECT_TRUE(throws_with([&] { call("group_norm", {x, 3, randu({5}, 1)}); }, {"group_norm", "weight", "[5]"}));
}

TEST(NNOpsNorm, BatchNorm) {
  const int N = 4, C = 3, HW = 5;
  Tensor x = randu({N, C, HW}, 20), w = randu({C}, 21), b = randu({C}, 22);
  auto xv = values(x), wv = values(w), bv = values(b);
  Tensor rm = zeros({C}, TSR_F64), rv = ones({C}, TSR_F64);
  Tensor y = call("batch_norm", {x, w, b, rm, rv, true, 0.1, 1e-5});
  std::vector<double> ref(xv.size()), mean(C), var(C);
  for (int c = 0; c < C; ++c) {
    double s = 0, ss = 0;
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < HW; ++i) s += xv[(n * C + c) * HW + i];
    mean[c] = s / (N * HW);
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < HW; ++i) ss += std::pow(xv[(n * C + c) * HW + i] - mean[c], 2);
    var[c] = ss / (N * HW);
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < HW; ++i) {
        size_t k = (n * C + c) * HW + i;
        ref[k] = (xv[k] - mean[c]) / std::sqrt(var[c] + 1e-5) * wv[c] + bv[c];
      }
  }
  EXPECT_TRUE(close(y, ref, {N, C, HW}, 1e-10, 1e-10));
  std::vector<double> rm_ref(C), rv_ref(C);
  for (int c = 0; c < C; ++c) {
    rm_ref[c] = 0.1 * mean[c];
    rv_ref[c] = 0.9 + 0.1 * var[c] * (N * HW) / (N * HW - 1);
  }
  EXPECT_TRUE(close(rm, rm_ref, {C}, 1e-12, 1e-12));
  EXPECT_TRUE(close(rv, rv_ref, {C}, 1e-12, 1e-12));
  // eval mode uses the running statistics
  std::vector<double> eref(xv.size());
  for (size_t k = 0; k < xv.size(); ++k) {
    size_t c = (k / HW) % C;
    eref[k] = (xv[k] - rm_ref[c]) / std::sqrt(rv_ref[c] + 1e-5) * wv[c] + bv[c];
  }
  EXPECT_TRUE(close(call("batch_norm", {x, w, b, rm, rv, false}), eref, {N, C, HW}, 1e-10, 1e-10));
  for (bool training : {true, false})
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) {
          return call("batch_norm",
                      {in[0], in[1], in[2], rm.slice(0, 0, 2).clone(), rv.slice(0, 0, 2).clone(), training});
        },
        {randu({3, 2, 2, 2}, 23), randu({2}, 24), randu({2}, 25)}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return call("batch_norm", {in[0], none, none, none, none, true});
      },
      {randu({4, 3}, 26)}));
  EXPECT_TRUE(close(call("batch_norm", {x.to(TSR_BF16), w.to(TSR_BF16), b.to(TSR_BF16), none, none, true}), ref,
                    {N, C, HW}, 3e-2, 3e-2));
  EXPECT_TRUE(throws_with(
      [&] {
        call("batch_norm", {randu({1, 3}, 1), none, none, none, none, true});
      },
      {"batch_norm", "more than 1 value per channel", "[1, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("batch_norm", {x, none, none, none, none, false});
      },
      {"batch_norm", "running_mean"}));
  EXPECT_TRUE(throws_with([&] { call("batch_norm", {x, randu({4}, 1)}); }, {"batch_norm", "weight", "[4]"}));
}

TEST(NNOpsMisc, DropoutSeededAndScaled) {
  Tensor x = randu({64, 33}, 30, 0.5, 1.5, TSR_F32);
  manual_seed(7);
  auto r1 = call_multi(op_native_dropout, {x, 0.3, true});
  manual_seed(7);
  Tensor y2 = call("dropout", {x, 0.3, true});
  auto a = values(r1[0]), b = values(y2), xv = values(x), m = values(r1[1]);
  size_t kept = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i], b[i]);  // same seed, same mask
    EXPECT_TRUE(a[i] == 0 || std::fabs(a[i] - xv[i] / 0.7) < 1e-5) << a[i];
    EXPECT_EQ(m[i] != 0, a[i] != 0);  // the mask marks exactly the kept elements
    kept += a[i] != 0;
  }
  double frac = static_cast<double>(kept) / a.size();
  EXPECT_GT(frac, 0.6);
  EXPECT_LT(frac, 0.8);
  EXPECT_TRUE(close(call("dropout", {x, 0.3, false}), x));
  EXPECT_TRUE(close(call("dropout", {x, 1.0, true}), std::vector<double>(x.numel(), 0.0), x.sizes(), 0, 0));
  // The mask is bool, as PyTorch's; the gradient is the mask scaled by 1/(1-p).
  EXPECT_EQ(r1[1].dtype(), TSR_BOOL);
  Tensor xd = randu({3, 4}, 31).requires_grad_(true);
  manual_seed(3);
  auto r = call_multi(op_native_dropout, {xd, 0.5, true});
  r[0].backward(ones({3, 4}, TSR_F64));
  EXPECT_TRUE(close(xd.grad(), r[1].to(TSR_F64) * 2.0));
  // Not training: the input unchanged, an all-true mask, and the gradient passes through.
  Tensor xe = randu({2, 5}, 32).requires_grad_(true);
  auto e = call_multi(op_native_dropout, {xe, 0.5, false});
  EXPECT_EQ(e[1].dtype(), TSR_BOOL);
  EXPECT_TRUE(close(e[0], values(xe), xe.sizes(), 0, 0));
  EXPECT_EQ(call("sum", {e[1]}).item<int64_t>(), 10);
  e[0].backward(ones({2, 5}, TSR_F64));
  EXPECT_TRUE(close(xe.grad(), std::vector<double>(10, 1.0), {2, 5}, 0, 0));
  EXPECT_TRUE(throws_with([&] { call("dropout", {x, 1.5, true}); }, {"dropout", "between 0 and 1", "1.5"}));
}

TEST(NNOpsMisc, EmbeddingAndOneHot) {
  Tensor w = randu({6, 4}, 40);
  Tensor idx = from_vector<int64_t>({5, 0, 2, 2, 3, 1}, {2, 3});
  auto wv = values(w);
  std::vector<double> ref;
  for (int64_t i : {5, 0, 2, 2, 3, 1})
    for (int j = 0; j < 4; ++j) ref.push_back(wv[i * 4 + j]);
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16})
    EXPECT_TRUE(close(call("embedding", {noncontig(w.to(dt)), idx.to(TSR_I32)}), ref, {2, 3, 4}, 1e-2, 1e-2));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return call("embedding", {in[0], idx}); }, {w}));
  // padding_idx: no gradient into that row
  Tensor wl = w.clone().requires_grad_(true);
  call("embedding", {wl, idx, int64_t{2}}).backward(ones({2, 3, 4}, TSR_F64));
  auto g = values(wl.grad());
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(g[2 * 4 + j], 0.0);
    EXPECT_EQ(g[5 * 4 + j], 1.0);
    EXPECT_EQ(g[4 * 4 + j], 0.0);
  }
  EXPECT_TRUE(throws_with(
      [&] {
        call("embedding", {w, from_vector<int64_t>({1, 6})});
      },
      {"embedding", "index 6", "[6, 4]"}));
  EXPECT_TRUE(throws_with([&] { call("embedding", {w, from_vector<double>({1.0})}); }, {"embedding", "integer"}));
  EXPECT_EQ(call("embedding", {w, from_vector<int64_t>({}, {0})}).sizes(), (Shape{0, 4}));

  Tensor oh = call("one_hot", {from_vector<int64_t>({2, 0, 1}), 4});
  EXPECT_EQ(oh.dtype(), TSR_I64);
  EXPECT_TRUE(close(oh, {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0}, {3, 4}, 0, 0));
  EXPECT_EQ(call("one_hot", {from_vector<int64_t>({2, 0, 1})}).sizes(), (Shape{3, 3}));
  EXPECT_TRUE(throws_with(
      [&] {
        call("one_hot", {from_vector<int64_t>({4}), 3});
      },
      {"one_hot", "smaller than num_classes"}));
  EXPECT_TRUE(throws_with([&] { call("one_hot", {from_vector<int64_t>({-1}), 3}); }, {"one_hot", "non-negative"}));
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {
using namespace tsr::optest;

// The SDK wrappers pass their arguments in schema order.
TEST(NNOpsSdk, WrappersMatchOps) {
  Tensor x = randu({2, 3, 5, 5}, 1), w = randu({4, 3, 3, 3}, 2);
  EXPECT_TRUE(close(nn::conv2d(x, w, std::nullopt, {1}, {1}), call("conv2d", {x, w, none, 1, 1})));
  EXPECT_TRUE(close(nn::max_pool2d(x, {2}), call("max_pool2d", {x, 2})));
  EXPECT_TRUE(close(nn::avg_pool2d(x, {3}, std::vector<int64_t>{1}, {1}), call("avg_pool2d", {x, 3, 1, 1})));
  Tensor rm = zeros({3}, TSR_F64), rv = ones({3}, TSR_F64);
  EXPECT_TRUE(close(nn::batch_norm(x, rm, rv), call("batch_norm", {x, none, none, rm, rv})));
  EXPECT_TRUE(close(nn::layer_norm(x, {5}), call("layer_norm", {x, std::vector<int64_t>{5}})));
  Tensor t = from_vector<int64_t>({1, 0});
  Tensor logits = randu({2, 3}, 3);
  EXPECT_TRUE(
      close(nn::cross_entropy(logits, t, std::nullopt, "sum"), call("cross_entropy", {logits, t, none, "sum"})));
  Tensor emb = randu({4, 2}, 4);
  EXPECT_TRUE(close(nn::embedding(t, emb), call("embedding", {emb, t})));
  EXPECT_TRUE(close(nn::interpolate(x, std::vector<int64_t>{7, 7}, std::nullopt, "bilinear", true),
                    call("upsample_bilinear2d", {x, std::vector<int64_t>{7, 7}, true})));
}

}  // namespace
}  // namespace tsr
