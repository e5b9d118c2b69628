// Fused optimizer steps against a float64 transcription of torch.optim's single-tensor SGD and
// Adam/AdamW, step by step (each step's reference starts from the state the op left).
#include <cmath>

#include "linalg_test.hpp"

namespace {

using namespace tsr;
using namespace tsr::optest;

using Vec = std::vector<double>;

void ref_sgd(Vec& p, const Vec& grad, Vec& buf, const SgdOptions& o, bool first) {
  for (size_t i = 0; i < p.size(); ++i) {
    double g = o.maximize ? -grad[i] : grad[i];
    if (o.weight_decay != 0) g += o.weight_decay * p[i];
    if (o.momentum != 0) {
      buf[i] = first ? g : o.momentum * buf[i] + (1 - o.dampening) * g;
      g = o.nesterov ? g + o.momentum * buf[i] : buf[i];
    }
    p[i] -= o.lr * g;
  }
}

void ref_adam(Vec& p, const Vec& grad, Vec& m, Vec& v, Vec& vmax, int64_t step, const AdamOptions& o) {
  double bc1 = 1 - std::pow(o.beta1, double(step)), bc2 = 1 - std::pow(o.beta2, double(step));
  for (size_t i = 0; i < p.size(); ++i) {
    double g = o.maximize ? -grad[i] : grad[i];
    if (o.weight_decay != 0) {
      if (o.decoupled_weight_decay)
        p[i] *= 1 - o.lr * o.weight_decay;
      else
        g += o.weight_decay * p[i];
    }
    m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
    v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
    double vh = v[i];
    if (o.amsgrad) vh = vmax[i] = std::max(vmax[i], v[i]);
    p[i] -= o.lr / bc1 * m[i] / (std::sqrt(vh) / std::sqrt(bc2) + o.eps);
  }
}

double tol_of(tsr_dtype_t dt) { return dt == TSR_F64 ? 1e-12 : dt == TSR_F32 ? 2e-6 : dt == TSR_F16 ? 2e-3 : 1.6e-2; }

TEST(OptimOps, SgdMatchesTorchFormulas) {
  std::vector<SgdOptions> configs(5);
  configs[0].lr = 0.1;
  configs[1] = {0.05, 0.9, 0.0, 0.01, false, false};
  configs[2] = {0.05, 0.9, 0.0, 0.0, true, false};
  configs[3] = {0.02, 0.5, 0.3, 0.1, false, true};
  configs[4] = {0.05, 0.9, 0.1, 0.0, false, false};
  uint64_t seed = 1;
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16, TSR_F16}) {
    for (const SgdOptions& o : configs) {
      Shape shape{5, 7};
      Tensor p = randu(shape, ++seed, -1, 1, dt);
      if (dt == TSR_F32) p = noncontig(p);  // the strided path
      std::optional<Tensor> buf;
      if (o.momentum != 0) buf = zeros(shape, dt);
      for (int step = 0; step < 4; ++step) {
        Tensor g = randu(shape, ++seed, -1, 1, dt);
        Vec pr = values(p), br = buf ? values(*buf) : Vec(pr.size(), 0.0);
        ref_sgd(pr, values(g), br, o, step == 0);
        uint32_t v0 = p.version();
        sgd_step_(p, g, buf, o, step == 0);
        EXPECT_GT(p.version(), v0);
        double t = tol_of(dt);
        ASSERT_TRUE(close(p, pr, shape, t, t)) << dtype_name(dt) << " step " << step << " momentum " << o.momentum;
        if (buf) {
          ASSERT_TRUE(close(*buf, br, shape, t, t)) << dtype_name(dt) << " step " << step;
        }
      }
    }
  }
}

TEST(OptimOps, AdamMatchesTorchFormulas) {
  std::vector<AdamOptions> configs(4);
  configs[1].weight_decay = 0.1;
  configs[2].weight_decay = 0.1;
  configs[2].decoupled_weight_decay = true;
  configs[2].lr = 0.01;
  configs[3].amsgrad = true;
  configs[3].maximize = true;
  configs[3].beta1 = 0.8;
  uint64_t seed = 100;
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32, TSR_BF16, TSR_F16}) {
    for (const AdamOptions& o : configs) {
      Shape shape{3, 11};
      Tensor p = randu(shape, ++seed, -1, 1, dt);
      Tensor m = zeros(shape, dt), v = zeros(shape, dt);
      if (dt == TSR_F64) m = noncontig(m);
      std::optional<Tensor> vmax;
      if (o.amsgrad) vmax = zeros(shape, dt);
      for (int64_t step = 1; step <= 5; ++step) {
        Tensor g = randu(shape, ++seed, -1, 1, dt);
        Vec pr = values(p), mr = values(m), vr = values(v), xr = vmax ? values(*vmax) : Vec(pr.size(), 0.0);
        ref_adam(pr, values(g), mr, vr, xr, step, o);
        adam_step_(p, g, m, v, vmax, step, o);
        // bf16/f16 state rounds differently from the float64 reference: scale tolerances by lr.
        double t = tol_of(dt);
        ASSERT_TRUE(close(p, pr, shape, t, t)) << dtype_name(dt) << " step " << step;
        ASSERT_TRUE(close(m, mr, shape, t, t)) << dtype_name(dt) << " step " << step;
        ASSERT_TRUE(close(v, vr, shape, t, t)) << dtype_name(dt) << " step " << step;
        if (vmax) {
          ASSERT_TRUE(close(*vmax, xr, shape, t, t));
        }
      }
    }
  }
}

TEST(OptimOps, LeavesRequiringGradAndEmpty) {
  // Steps act on leaves that require grad (never recorded), like torch.optim under no_grad.
  Tensor p = randu({4}, 1).requires_grad_();
  Tensor g = randu({4}, 2);
  Vec pr = values(p), buf(4, 0.0);
  SgdOptions o;
  ref_sgd(pr, values(g), buf, o, false);
  sgd_step_(p, g, std::nullopt, o);
  EXPECT_TRUE(close(p.detach(), pr, {4}, 1e-12, 1e-12));
  EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(p.grad_fn_name(), nullptr);
  Tensor e = zeros({0, 3}), em = zeros({0, 3}), ev = zeros({0, 3});
  adam_step_(e, zeros({0, 3}), em, ev, std::nullopt, 1, AdamOptions{});
  EXPECT_EQ(e.numel(), 0);
}

TEST(OptimOps, BadArguments) {
  Tensor p = zeros({3}), g = zeros({3}), m = zeros({3}), v = zeros({3});
  SgdOptions mom;
  mom.momentum = 0.9;
  EXPECT_TRUE(throws_with([&] { sgd_step_(p, zeros({4}), std::nullopt, SgdOptions{}); }, {"sgd_step_", "[4]", "[3]"}));
  EXPECT_TRUE(throws_with([&] { sgd_step_(p, g.to(TSR_F64), std::nullopt, SgdOptions{}); },
                          {"sgd_step_", "float64", "float32"}));
  EXPECT_TRUE(throws_with([&] { sgd_step_(p, g, std::nullopt, mom); }, {"sgd_step_", "momentum_buffer"}));
  SgdOptions nes;
  nes.nesterov = true;
  EXPECT_TRUE(throws_with([&] { sgd_step_(p, g, std::nullopt, nes); }, {"sgd_step_", "nesterov"}));
  SgdOptions neg;
  neg.lr = -1;
  EXPECT_TRUE(throws_with([&] { sgd_step_(p, g, std::nullopt, neg); }, {"sgd_step_", "learning rate", "-1"}));
  Tensor ip = zeros({3}, TSR_I64);
  EXPECT_TRUE(
      throws_with([&] { sgd_step_(ip, zeros({3}, TSR_I64), std::nullopt, SgdOptions{}); }, {"sgd_step_", "int64"}));
  EXPECT_TRUE(
      throws_with([&] { adam_step_(p, g, m, v, std::nullopt, 0, AdamOptions{}); }, {"adam_step_", "step", "0"}));
  AdamOptions ams;
  ams.amsgrad = true;
  EXPECT_TRUE(throws_with([&] { adam_step_(p, g, m, v, std::nullopt, 1, ams); }, {"adam_step_", "max_exp_avg_sq"}));
  AdamOptions beta;
  beta.beta2 = 1.0;
  EXPECT_TRUE(throws_with([&] { adam_step_(p, g, m, v, std::nullopt, 1, beta); }, {"adam_step_", "beta", "1"}));
  Tensor bad = zeros({2, 3});
  EXPECT_TRUE(throws_with([&] { adam_step_(p, g, bad, v, std::nullopt, 1, AdamOptions{}); },
                          {"adam_step_", "exp_avg", "[2, 3]"}));
  // Nothing was written by the refused calls.
  EXPECT_TRUE(close(p, zeros({3}), 0, 0));
}

}  // namespace
