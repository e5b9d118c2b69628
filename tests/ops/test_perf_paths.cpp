// The fast paths added for training throughput (tessera_gpt_bench), each checked against float64
// references computed here and against the general path it short-cuts:
//   - matmul of a batched left operand with one matrix (linear layers) folds into one mm, and
//     its backward computes the matrix's gradient as one GEMM laid out like the matrix;
//   - gelu's, relu's, softmax's and log_softmax's backwards (and the attention's softmax step)
//     are one fused kernel each when not recording (create_graph keeps the formula);
//   - a wrapped number (`x * 2.5`) is made and converted to the op's dtype on the host, with no
//     _fill or _copy dispatch and no allocation for the converted value.
#include <cmath>

#include "op_test.hpp"

namespace tsr::optest {
namespace {

// Values of t within tolerance of expected (t's dtype's default tolerance unless given).
::testing::AssertionResult near(const Tensor& t, const std::vector<double>& expected, double rtol = -1,
                                double atol = -1) {
  auto tol = default_tol(t.dtype());
  return close(t, expected, t.sizes(), rtol < 0 ? tol.first : rtol, atol < 0 ? tol.second : atol);
}

std::vector<double> ref_matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t rows, int64_t k,
                               int64_t n) {
  std::vector<double> out(static_cast<size_t>(rows * n), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += a[i * k + q] * b[q * n + j];
      out[i * n + j] = s;
    }
  return out;
}

TEST(PerfPathsMatmulFold, BatchedTimesMatrixMatchesReference) {
  Tensor a = randu({2, 3, 5}, 1), b = randu({5, 4}, 2);
  Tensor y = matmul(a, b);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 4}));
  EXPECT_TRUE(near(y, ref_matmul(values(a), values(b), 6, 5, 4)));
  // Leading dims that do not collapse into one stride (a permuted view) take a copy.
  Tensor ap = randu({3, 2, 5}, 3).permute({1, 0, 2});
  EXPECT_TRUE(near(matmul(ap, b), ref_matmul(values(ap.contiguous()), values(b), 6, 5, 4)));
  // A transposed matrix (linear's weight.t()) and a strided (non-contiguous) left operand.
  Tensor w = randu({4, 5}, 4);
  EXPECT_TRUE(near(matmul(noncontig(a), w.t()), ref_matmul(values(a), values(w.t().contiguous()), 6, 5, 4)));
  // f32 through BLAS.
  EXPECT_TRUE(near(matmul(a.to(TSR_F32), b.to(TSR_F32)), ref_matmul(values(a), values(b), 6, 5, 4), 1e-5, 1e-5));
}

TEST(PerfPathsMatmulFold, VectorAndDegenerateShapes) {
  Tensor a = randu({2, 3, 5}, 5), v = randu({5}, 6);
  Tensor y = matmul(a, v);
  EXPECT_EQ(y.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(near(y, ref_matmul(values(a), values(v), 6, 5, 1)));
  // 1-D left operand times a matrix: [k] @ [k, n] -> [n].
  Tensor b = randu({5, 3}, 7);
  EXPECT_TRUE(near(matmul(v, b), ref_matmul(values(v), values(b), 1, 5, 3)));
  // Empty batch, empty rows, and k = 0 (a zero result).
  EXPECT_EQ(matmul(randu({0, 3, 5}, 8), b).sizes(), (Shape{0, 3, 3}));
  EXPECT_EQ(matmul(randu({2, 0, 5}, 9), b).sizes(), (Shape{2, 0, 3}));
  Tensor z = matmul(randu({2, 3, 0}, 10), randu({0, 4}, 11));
  EXPECT_EQ(z.sizes(), (Shape{2, 3, 4}));
  EXPECT_TRUE(near(z, std::vector<double>(24, 0.0)));
  EXPECT_TRUE(throws_with([&] { matmul(a, randu({4, 3}, 12)); }, {"matmul", "[2, 3, 5]", "[4, 3]"}));
}

TEST(PerfPathsMatmulFold, Gradients) {
  auto f = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  EXPECT_TRUE(gradcheck(f, {randu({2, 3, 4}, 13), randu({4, 5}, 14)}));
  EXPECT_TRUE(gradcheck(f, {randu({3, 2, 4}, 15).permute({1, 0, 2}), randu({4}, 16)}));
  EXPECT_TRUE(gradcheck(f, {randu({4}, 17), randu({4, 3}, 18)}));
  auto lin = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); };
  EXPECT_TRUE(gradcheck(lin, {randu({2, 3, 4}, 19), randu({5, 4}, 20), randu({5}, 21)}));
}

TEST(PerfPathsMatmulFold, LinearWeightGradIsDenseAndExact) {
  // dW = g^T x summed over every row: computed here in float64 by hand.
  Tensor x = randu({2, 3, 4}, 22), w = randu({5, 4}, 23).requires_grad_();
  Tensor g = randu({2, 3, 5}, 24);
  linear(x, w).backward(g);
  Tensor dw = w.grad();
  EXPECT_TRUE(dw.is_contiguous());
  std::vector<double> xv = values(x), gv = values(g), ref(20, 0.0);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t o = 0; o < 5; ++o)
      for (int64_t i = 0; i < 4; ++i) ref[o * 4 + i] += gv[r * 5 + o] * xv[r * 4 + i];
  EXPECT_TRUE(near(dw, ref));
  // Empty batch: a zero gradient of the weight's shape.
  Tensor w2 = randu({5, 4}, 25).requires_grad_();
  tsr::sum(linear(randu({0, 3, 4}, 26), w2)).backward();
  EXPECT_TRUE(near(w2.grad(), std::vector<double>(20, 0.0)));
}

double ref_gelu_grad(double x, bool tanh_form) {
  if (tanh_form) {
    const double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    double t = std::tanh(k * (x + a * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * a * x * x);
  }
  return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
}

TEST(PerfPathsGelu, FusedBackwardMatchesReference) {
  std::vector<double> xs{-30, -9, -4.5, -1.3, -0.2, 0, 1e-4, 0.7, 2.2, 5.5, 12, 40};
  Tensor xr = randu({7, 9}, 27, -6, 6);
  std::vector<double> rv = values(xr);
  xs.insert(xs.end(), rv.begin(), rv.end());
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor gr = randu({n}, 28);
  for (const char* mode : {"none", "tanh"}) {
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16}) {
      Tensor x = from_vector(xs, {n}).to(dt).requires_grad_();
      Tensor g = gr.to(dt);
      gelu(x, mode).backward(g);
      std::vector<double> xq = values(x.detach()), gq = values(g), ref(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) ref[i] = gq[i] * ref_gelu_grad(xq[i], std::string(mode) == "tanh");
      double tol = dt == TSR_F64 ? 1e-12 : dt == TSR_F32 ? 2e-6 : 1e-2;
      EXPECT_TRUE(near(x.grad(), ref, tol, tol)) << mode << " " << dtype_name(dt);
    }
  }
}

TEST(PerfPathsGelu, RecordedBackwardAgreesWithFused) {
  // Under create_graph the formula of ops is used (differentiable twice); both must agree.
  Tensor x = randu({4, 6}, 29, -5, 5).requires_grad_();
  Tensor g = randu({4, 6}, 30);
  for (const char* mode : {"none", "tanh"}) {
    Tensor fused = autograd::grad({gelu(x, mode)}, {x}, {g}, false, false)[0];
    Tensor recorded = autograd::grad({gelu(x, mode)}, {x}, {g}, false, true)[0];
    EXPECT_TRUE(recorded.requires_grad());
    EXPECT_TRUE(close(fused, recorded, 1e-12, 1e-12)) << mode;
  }
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {randu({3, 5}, 31, -4, 4)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); }, {randu({3, 5}, 32, -4, 4)}));
  // Second derivative through the recorded formula: gelu''(x) = phi(x) (2 - x^2).
  Tensor x2 = randu({2, 3}, 33, -3, 3).requires_grad_();
  Tensor y = gelu(x2);
  Tensor d1 = autograd::grad({y}, {x2}, {tsr::ones(y.sizes(), y.dtype())}, true, true)[0];
  Tensor d2 = autograd::grad({d1}, {x2}, {g.slice(0, 0, 2).slice(1, 0, 3)})[0];
  std::vector<double> xv = values(x2.detach()), gv = values(g.slice(0, 0, 2).slice(1, 0, 3).contiguous()), ref(6);
  for (size_t i = 0; i < 6; ++i)
    ref[i] = gv[i] * std::exp(-0.5 * xv[i] * xv[i]) / std::sqrt(2 * M_PI) * (2 - xv[i] * xv[i]);
  EXPECT_TRUE(near(d2, ref, 1e-10, 1e-10));
}

TEST(PerfPathsGelu, FusedOpRejectsBadMode) {
  static const Op op("_gelu_backward");
  Tensor x = randu({3}, 34);
  EXPECT_TRUE(throws_with([&] { call(op, {x, x, std::string("fast")}); }, {"_gelu_backward", "fast"}));
}

// grad where self > threshold, else exactly 0; a NaN self passes grad (PyTorch's
// threshold_backward), and a grad that is inf or NaN where self <= threshold is dropped.
std::vector<double> ref_threshold_backward(const std::vector<double>& g, const std::vector<double>& x, double th) {
  std::vector<double> out(g.size());
  for (size_t i = 0; i < g.size(); ++i) out[i] = x[i] <= th ? 0.0 : g[i];
  return out;
}

TEST(PerfPathsRelu, ThresholdBackwardMatchesReferenceOnEveryFloatDtype) {
  static const Op op("_threshold_backward");
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16})
    for (const Shape& shape : {Shape{0}, Shape{1}, Shape{7}, Shape{3, 0, 2}, Shape{5, 33}, Shape{2, 3, 67}})
      for (double th : {0.0, 0.5, -1.25}) {
        Tensor g = randu(shape, 40, -3, 3, dt), x = randu(shape, 41, -2, 2, dt);
        if (x.numel() > 2) {  // values at the threshold itself, a NaN self, a non-finite grad
          std::vector<double> xv = values(x), gv = values(g);
          xv[0] = th;
          xv[1] = NAN;
          gv[0] = INFINITY;
          gv[2] = xv[2] <= th ? NAN : gv[2];
          x = from_vector(xv, shape).to(dt);
          g = from_vector(gv, shape).to(dt);
        }
        const std::vector<double> ref = ref_threshold_backward(values(g), values(x), th);
        Tensor out = call(op, {g, x, th});
        EXPECT_EQ(out.dtype(), dt);
        // A select: bit-exact, no tolerance.
        EXPECT_TRUE(close(out, ref, shape, 0, 0)) << dtype_name(dt) << " th " << th;
        EXPECT_TRUE(close(call(op, {noncontig(g), noncontig(x), th}), ref, shape, 0, 0)) << dtype_name(dt);
      }
}

TEST(PerfPathsRelu, FusedBackwardAgreesWithRecordedFormula) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_BF16}) {
    std::vector<double> xv = values(randu({6, 9}, 42, -2, 2));
    xv[3] = 0.0;  // relu'(0) = 0, as PyTorch
    xv[7] = -0.0;
    Tensor x = from_vector(xv, {6, 9}).to(dt).requires_grad_();
    Tensor g = randu({6, 9}, 43, -2, 2, dt);
    Tensor fused = autograd::grad({relu(x)}, {x}, {g}, false, false)[0];
    // Under create_graph the gradient is a graph in the incoming gradient: its derivative with
    // respect to that gradient is the mask.
    Tensor gr = g.detach().requires_grad_();
    Tensor recorded = autograd::grad({relu(x)}, {x}, {gr}, false, true)[0];
    ASSERT_TRUE(recorded.requires_grad());
    std::vector<double> gv = values(g), xr = values(x.detach()), ref(xv.size()), mask(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      ref[i] = xr[i] > 0 ? gv[i] : 0.0;
      mask[i] = xr[i] > 0 ? 1.0 : 0.0;
    }
    EXPECT_TRUE(close(fused, ref, {6, 9}, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(recorded, ref, {6, 9}, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(autograd::grad({sum(recorded)}, {gr})[0], mask, {6, 9}, 0, 0)) << dtype_name(dt);
  }
  // Through a non-contiguous input and into a leaf shared with another use.
  Tensor x = noncontig(randu({4, 5}, 44)).requires_grad_();
  Tensor y = sum(relu(x) * 3.0 + relu(x.t()).t());
  y.backward();
  std::vector<double> xv = values(x.detach()), ref(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) ref[i] = xv[i] > 0 ? 4.0 : 0.0;
  EXPECT_TRUE(close(x.grad(), ref, {4, 5}, 0, 0));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return relu(in[0]); }, {rand_away({3, 4}, 45)}));
}

TEST(PerfPathsRelu, ThresholdBackwardRejectsMismatchedShapes) {
  static const Op op("_threshold_backward");
  EXPECT_TRUE(throws_with([&] { call(op, {randu({3, 4}, 46), randu({3, 5}, 47), 0.0}); },
                          {"_threshold_backward", "[3, 4]", "[3, 5]"}));
}

// float64 references of softmax's and log_softmax's backward along `dim` of a contiguous
// [outer, D, inner] view: y * (g - sum(g y)) and g - exp(y) sum(g).
std::vector<double> ref_softmax_bw(const std::vector<double>& g, const std::vector<double>& y, const Shape& shape,
                                   int64_t dim, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i) {
    if (i < dim) outer *= shape[size_t(i)];
    if (i > dim) inner *= shape[size_t(i)];
  }
  const int64_t D = shape.empty() ? 1 : shape[size_t(dim)];
  std::vector<double> dx(g.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double s = 0;
      for (int64_t q = 0; q < D; ++q) {
        const size_t k = size_t((o * D + q) * inner + j);
        s += log ? g[k] : g[k] * y[k];
      }
      for (int64_t q = 0; q < D; ++q) {
        const size_t k = size_t((o * D + q) * inner + j);
        dx[k] = log ? g[k] - std::exp(y[k]) * s : y[k] * (g[k] - s);
      }
    }
  return dx;
}

// The fused kernels against float64 on every float dtype: the last dim (rows, short and long,
// with a vector remainder) and inner dims (column tiles, more than one tile), empty, 0-d and
// non-contiguous operands.
TEST(PerfPathsSoftmax, BackwardKernelsMatchReference) {
  static const Op sm_bw("_softmax_backward_data"), lsm_bw("_log_softmax_backward_data");
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16})
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{7}, Shape{3, 0, 2}, Shape{5, 11}, Shape{4, 37},
                               Shape{2, 3, 300}, Shape{2, 5, 3}})
      for (int64_t dim = 0; dim < std::max<int64_t>(1, int64_t(shape.size())); ++dim)
        for (bool log : {false, true}) {
          const Tensor x = randu(shape, 50, -3, 3, dt);
          const Tensor y = log ? log_softmax(x, dim) : softmax(x, dim);
          const Tensor g = randu(shape, 51, -2, 2, dt);
          const std::vector<double> ref = ref_softmax_bw(values(g), values(y), shape, dim, log);
          const Op& op = log ? lsm_bw : sm_bw;
          auto tol = default_tol(dt);
          const double rtol = 4 * tol.first, atol = 8 * tol.second + (dt == TSR_F32 ? 1e-6 : 0.0);
          Tensor out = call(op, {g, y, dim});
          EXPECT_EQ(out.dtype(), dt);
          EXPECT_TRUE(close(out, ref, shape, rtol, atol)) << dtype_name(dt) << " rank " << shape.size() << " dim " << dim;
          EXPECT_TRUE(close(call(op, {noncontig(g), noncontig(y), dim}), ref, shape, rtol, atol)) << dtype_name(dt);
        }
}

// softmax's, log_softmax's and the attention's backward run the fused kernel (no mul/sum/sub of
// the formula) and agree with it; under create_graph the formula runs and differentiates again.
TEST(PerfPathsSoftmax, FormulasUseTheFusedKernel) {
  Tensor x = randu({6, 11}, 52, -3, 3, TSR_F32).requires_grad_();
  Tensor g = randu({6, 11}, 53, -1, 1, TSR_F32);
  for (bool log : {false, true}) {
    Tensor y = log ? log_softmax(x, -1) : softmax(x, -1);
    Tensor dx;
    Lookups l = trace_lookups([&] { dx = autograd::grad({y}, {x}, {g}, true, false)[0]; });
    EXPECT_EQ(l.count(log ? "_log_softmax_backward_data" : "_softmax_backward_data"), 1) << log;
    EXPECT_EQ(l.count("mul"), 0) << log;
    const std::vector<double> ref = ref_softmax_bw(values(g), values(y.detach()), {6, 11}, 1, log);
    EXPECT_TRUE(near(dx, ref, 1e-5, 1e-6)) << log;
    Tensor gr = g.detach().requires_grad_();
    Tensor recorded = autograd::grad({y}, {x}, {gr}, false, true)[0];
    ASSERT_TRUE(recorded.requires_grad());
    EXPECT_TRUE(near(recorded, ref, 1e-5, 1e-6)) << log;
  }
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 1); }, {randu({3, 4, 2}, 54)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }, {randu({3, 4}, 55)}));
  // The attention's backward: small heads take the fused attention kernel (its softmax step
  // inside); heads it declines (too large) run the formula, whose softmax step is this kernel.
  Tensor q = randu({2, 3, 5, 4}, 56, -1, 1, TSR_F32).requires_grad_(), k = randu({2, 3, 6, 4}, 57, -1, 1, TSR_F32),
         v = randu({2, 3, 6, 4}, 58, -1, 1, TSR_F32);
  Tensor att = call("scaled_dot_product_attention", {q, k, v});
  Lookups la = trace_lookups([&] { autograd::grad({sum(att)}, {q}); });
  EXPECT_EQ(la.count("_nn_attention_backward"), 1);
  EXPECT_EQ(la.count("_softmax_backward_data"), 0);
  EXPECT_EQ(la.count("bmm"), 0);
  Tensor qb = randu({1, 96, 64}, 59, -1, 1, TSR_F32).requires_grad_(), kb = randu({1, 96, 64}, 60, -1, 1, TSR_F32);
  Tensor big = call("scaled_dot_product_attention", {qb, kb, kb});
  Lookups lb = trace_lookups([&] { autograd::grad({sum(big)}, {qb}); });
  EXPECT_EQ(lb.count("_softmax_backward_data"), 1);
}

TEST(PerfPathsSoftmax, BackwardKernelRejectsBadArguments) {
  static const Op op("_softmax_backward_data");
  EXPECT_TRUE(throws_with([&] { call(op, {randu({3, 4}, 59), randu({3, 5}, 60), int64_t(1)}); },
                          {"_softmax_backward_data", "[3, 4]", "[3, 5]"}));
  EXPECT_TRUE(throws_with([&] { call(op, {randu({3, 4}, 59), randu({3, 4}, 60), int64_t(-1)}); },
                          {"_softmax_backward_data", "dim -1"}));
}

// Every kind of wrapped number against every dtype it meets: the result must be bit for bit the
// op with the same number already in the result dtype (made by `full`, the fill kernel), on
// contiguous, strided and empty tensors. A conversion other than _copy's would show here.
TEST(PerfPathsScalar, WrappedNumbersMatchTheKernelConversion) {
  const std::vector<tsr_dtype_t> dtypes{TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64, TSR_I32, TSR_I16, TSR_I8, TSR_U8};
  for (tsr_dtype_t dt : dtypes)
    for (const Shape& shape : {Shape{0}, Shape{7}, Shape{3, 5}}) {
      const bool fl = tsr::is_floating(dt);
      Tensor x = fl ? randu(shape, 50, -4, 4, dt) : randint(shape, 51, 1, 90, dt);
      for (Tensor t : {x, noncontig(x)}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + describe(t));
        // Floats: 0.1 and 1/3 round differently in every float dtype; integers: a value that
        // wraps in int8 and uint8 (300) and a negative one.
        for (double v : {0.1, 1.0 / 3.0, -2.75, 1e6}) {
          if (!fl) continue;
          Tensor same = tsr::full({1}, v, dt);
          EXPECT_TRUE(close(t * v, values(t * same), shape, 0, 0)) << v;
          EXPECT_TRUE(close(v - t, values(same - t), shape, 0, 0)) << v;
        }
        for (int64_t v : {int64_t{3}, int64_t{-5}, int64_t{300}}) {
          Tensor same = tsr::full({1}, double(v), dt);
          EXPECT_TRUE(close(t + v, values(t + same), shape, 0, 0)) << v;
          EXPECT_TRUE(close(t * v, values(t * same), shape, 0, 0)) << v;
        }
        Tensor one = tsr::full({1}, 1.0, dt);
        EXPECT_TRUE(close(t * true, values(t * one), shape, 0, 0));
        // Made and converted on the host: no _fill, no _copy for the number. (An integer
        // tensor is itself converted to float32 by _copy.)
        Lookups l = trace_lookups([&] { Tensor r = t * 2.5; });
        EXPECT_EQ(l.count("_fill"), 0);
        EXPECT_EQ(l.count("_copy"), fl || t.numel() == 0 ? 0 : 1);
        EXPECT_EQ(l.count("mul"), t.numel() ? 1 : 0);
        EXPECT_EQ((t * 2.5).dtype(), fl ? dt : tsr_dtype_t(TSR_F32));  // promotion unchanged
      }
    }
}

// On a second CPU device the number is converted for that device; results stay there.
TEST(PerfPathsScalar, WrappedNumbersOnASecondCpuDevice) {
  Tensor x;
  try {
    x = randu({4, 3}, 52, -2, 2, TSR_F32).to(tsr::Device::cpu(1));
  } catch (const tsr::Error&) {
    GTEST_SKIP() << "needs a second cpu device (TESSERA_CPU_DEVICES=2)";
  }
  Tensor y = x * 0.1 + 3;
  EXPECT_EQ(y.device(), tsr::Device::cpu(1));
  Tensor ref = x.to(tsr::Device::cpu(0)) * tsr::full({1}, 0.1, TSR_F32) + tsr::full({1}, 3.0, TSR_F32);
  EXPECT_TRUE(close(y, values(ref), {4, 3}, 0, 0));
}

}  // namespace
}  // namespace tsr::optest
