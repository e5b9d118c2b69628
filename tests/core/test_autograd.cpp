// The autograd engine: recording, backward over DAGs with broadcasting and dtype changes,
// accumulation, retain_graph, retain_grad, hooks, grad modes, version counters, views and
// higher-order gradients. Formulas of individual ops are tested with their op families.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <thread>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

Tensor rnd(std::vector<int64_t> shape, uint64_t seed, tsr_dtype_t dt = TSR_F64) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(0.25, 2.0);
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = (rng() & 1) ? d(rng) : -d(rng);
  return tsr::from_vector(v, shape).to(dt);
}

std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tsr::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Autograd, LeafFlagsAndRecording) {
  Tensor x = rnd({3}, 1);
  EXPECT_FALSE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  Tensor y = x * x;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_STREQ(y.grad_fn_name(), "MulBackward");
  EXPECT_EQ(x.grad_fn_name(), nullptr);
  Tensor c = rnd({3}, 2);
  Tensor z = c * c;  // nothing requires grad: nothing recorded
  EXPECT_FALSE(z.requires_grad());
  EXPECT_EQ(z.grad_fn_name(), nullptr);
}

TEST(Autograd, ProductRuleAndAccumulationOverADag) {
  Tensor x = rnd({5}, 3).requires_grad_();
  Tensor y = x * x + x;  // dy/dx = 2x + 1, x used three times
  tsr::sum(y).backward();
  std::vector<double> xv = vals(x), expect;
  for (double v : xv) expect.push_back(2 * v + 1);
  expect_near(vals(x.grad()), expect);
}

TEST(Autograd, BroadcastGradientsAreSummedToInputShapes) {
  Tensor a = rnd({3, 1}, 4).requires_grad_();
  Tensor b = rnd({4}, 5).requires_grad_();
  tsr::sum(a * b).backward();
  ASSERT_EQ(a.grad().sizes(), (std::vector<int64_t>{3, 1}));
  ASSERT_EQ(b.grad().sizes(), (std::vector<int64_t>{4}));
  double sb = 0, sa = 0;
  for (double v : vals(b)) sb += v;
  for (double v : vals(a)) sa += v;
  for (double g : vals(a.grad())) EXPECT_NEAR(g, sb, 1e-12);
  for (double g : vals(b.grad())) EXPECT_NEAR(g, sa, 1e-12);
}

TEST(Autograd, GradientTakesTheInputDtype) {
  Tensor x = rnd({4}, 6, TSR_F32).requires_grad_();
  Tensor w = rnd({4}, 7, TSR_F64);
  Tensor y = x * w;  // promoted to float64
  EXPECT_EQ(y.dtype(), TSR_F64);
  tsr::sum(y).backward();
  EXPECT_EQ(x.grad().dtype(), TSR_F32);
  expect_near(vals(x.grad()), vals(w.to(TSR_F32)), 0);
}

TEST(Autograd, BackwardTwiceNeedsRetainGraphAndAccumulates) {
  Tensor x = rnd({3}, 8).requires_grad_();
  Tensor y = tsr::sum(tsr::exp(x));
  y.backward(Tensor(), /*retain_graph=*/true);
  std::vector<double> g1 = vals(x.grad());
  y.backward();
  std::vector<double> g2 = vals(x.grad());
  for (size_t i = 0; i < g1.size(); ++i) EXPECT_NEAR(g2[i], 2 * g1[i], 1e-12);
  std::string msg = error_of([&] { y.backward(); });
  EXPECT_NE(msg.find("second time"), std::string::npos) << msg;
}

TEST(Autograd, ImplicitGradOnlyForOneElementOutputs) {
  Tensor x = rnd({3}, 9).requires_grad_();
  Tensor y = x * x;
  std::string msg = error_of([&] { y.backward(); });
  EXPECT_NE(msg.find("one-element"), std::string::npos) << msg;
  Tensor g = rnd({3}, 10);
  y.backward(g);
  std::vector<double> xv = vals(x), gv = vals(g), gx = vals(x.grad());
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(gx[i], 2 * xv[i] * gv[i], 1e-12);
  Tensor plain = rnd({1}, 11);
  EXPECT_NE(error_of([&] { plain.backward(); }).find("does not require grad"), std::string::npos);
}

TEST(Autograd, RetainGradKeepsNonLeafGradients) {
  Tensor x = rnd({4}, 12).requires_grad_();
  Tensor h = x * x;
  h.retain_grad();
  Tensor y = tsr::sum(h * x);
  y.backward();
  expect_near(vals(h.grad()), vals(x));  // dy/dh = x
  Tensor other = x * x;
  EXPECT_FALSE(other.grad().defined());  // not retained
}

TEST(Autograd, HooksSeeAndReplaceGradients) {
  Tensor x = rnd({3}, 13).requires_grad_();
  int calls = 0;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 2.0;
  });
  Tensor h = x * 3.0;
  std::vector<double> seen;
  h.register_hook([&](const Tensor& g) {
    seen = vals(g);
    return Tensor();
  });
  tsr::sum(h).backward();
  EXPECT_EQ(calls, 1);
  expect_near(seen, {1, 1, 1});
  expect_near(vals(x.grad()), {6, 6, 6});
}

// A hook that runs a whole backward of its own, in the middle of a pass: the nested pass gets
// bookkeeping of its own (the engine keeps one set per thread for reuse) and the outer pass
// goes on with its counts and gradient buffers intact.
TEST(Autograd, HookRunningABackwardOfItsOwnLeavesTheOuterPassIntact) {
  Tensor x = rnd({4}, 60).requires_grad_(), z = rnd({4}, 61).requires_grad_();
  Tensor h = tsr::exp(x) * 2.0;  // several nodes before and after the hooked tensor
  std::vector<double> nested;
  h.register_hook([&](const Tensor& g) {
    tsr::EnableGradGuard grad_on;  // hooks run with grad mode off, as the pass's formulas do
    Tensor w = tsr::sum(tsr::sin(z) * tsr::exp(z) + z * z);
    nested = vals(tsr::autograd::grad({w}, {z})[0]);
    tsr::sum(z * 3.0).backward();  // a backward into z's .grad, also nested
    return g * 1.0;
  });
  tsr::sum(tsr::tanh(h) + h * h).backward();
  std::vector<double> xv = vals(x.detach()), zv = vals(z.detach()), want(4), want_z(4);
  for (size_t i = 0; i < 4; ++i) {
    const double hv = 2 * std::exp(xv[i]), t = std::tanh(hv);
    want[i] = (1 - t * t + 2 * hv) * hv;
    want_z[i] = std::cos(zv[i]) * std::exp(zv[i]) + std::sin(zv[i]) * std::exp(zv[i]) + 2 * zv[i];
  }
  expect_near(vals(x.grad()), want, 1e-9);
  expect_near(nested, want_z, 1e-12);
  expect_near(vals(z.grad()), {3, 3, 3, 3});
}

// .grad accumulates into its own tensor when nothing else holds it (as PyTorch's AccumulateGrad
// outside grad mode); a .grad someone holds is replaced by a new sum, never changed under them.
TEST(Autograd, LeafGradAccumulatesWithoutChangingAGradientSomeoneHolds) {
  Tensor x = rnd({5}, 62).requires_grad_();
  Tensor y = tsr::sum(tsr::exp(x));
  y.backward(Tensor(), /*retain_graph=*/true);
  Tensor held = x.grad();
  const std::vector<double> g1 = vals(held);
  y.backward(Tensor(), true);
  expect_near(vals(held), g1);  // unchanged
  std::vector<double> g2 = g1;
  for (double& v : g2) v *= 2;
  expect_near(vals(x.grad()), g2);
  held = Tensor();
  void* before = x.grad().data_ptr();
  y.backward();  // now only .grad refers to the sum: accumulated in place
  EXPECT_EQ(x.grad().data_ptr(), before);
  for (size_t i = 0; i < g2.size(); ++i) g2[i] = 3 * g1[i];
  expect_near(vals(x.grad()), g2);
  // Under create_graph the sum is a new tensor with a graph. (One delivery per pass: with two,
  // the second sum could land in the block the first freed.)
  Tensor x2 = rnd({3}, 63).requires_grad_();
  tsr::sum(tsr::exp(x2)).backward();
  void* first = x2.grad().data_ptr();
  tsr::sum(tsr::exp(x2)).backward(Tensor(), true, /*create_graph=*/true);
  EXPECT_NE(x2.grad().data_ptr(), first);
  EXPECT_TRUE(x2.grad().requires_grad());
  // A .grad with a graph refers back to its leaf (a cycle, as in PyTorch): break it.
  x2.set_grad(Tensor());
}

// A leaf used three times gets three deliveries; the post-accumulate hook runs once, after the
// last, and then sees the whole gradient (a + b + cos(x)) in .grad.
TEST(Autograd, PostAccumulateHookRunsOnceWhenTheGradientIsComplete) {
  Tensor x = rnd({5}, 21).requires_grad_();
  Tensor a = rnd({5}, 22), b = rnd({5}, 23);
  int calls = 0;
  std::vector<double> seen;
  x.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    ++calls;
    seen = vals(leaf.grad());
  });
  tsr::sum(x * a + x * b + tsr::sin(x)).backward();
  EXPECT_EQ(calls, 1);
  std::vector<double> want = vals(a + b + tsr::cos(x.detach()));
  expect_near(seen, want);
  // A second pass accumulates into .grad and runs the hook again, after the accumulation.
  tsr::sum(x * a + x * b + tsr::sin(x)).backward();
  EXPECT_EQ(calls, 2);
  for (double& w : want) w *= 2;
  expect_near(seen, want);
}

// In a chain, the last layer's parameter is complete before backward reaches the first layer:
// the hook of w2 runs while w1 has no gradient yet (what lets DDP overlap communication).
TEST(Autograd, PostAccumulateHookRunsBeforeBackwardReachesEarlierLayers) {
  Tensor x = rnd({4, 3}, 24);
  Tensor w1 = rnd({3, 3}, 25).requires_grad_(), w2 = rnd({3, 2}, 26).requires_grad_();
  std::vector<std::string> order;
  w2.register_post_accumulate_grad_hook([&](const Tensor&) {
    order.push_back(w1.grad().defined() ? "w2 after w1" : "w2");
  });
  w1.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("w1"); });
  tsr::sum(tsr::matmul(tsr::tanh(tsr::matmul(x, w1)), w2)).backward();
  EXPECT_EQ(order, (std::vector<std::string>{"w2", "w1"}));
}

TEST(Autograd, PostAccumulateHookMayUpdateTheGradientInPlace) {
  Tensor x = rnd({6}, 27).requires_grad_();
  x.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    Tensor g = leaf.grad();
    g.copy_(g * 0.5);
  });
  tsr::sum(x * x).backward();
  expect_near(vals(x.grad()), vals(x.detach()));  // d(x^2)/dx = 2x, halved
}

TEST(Autograd, PostAccumulateHookSkipsPassesWithoutAGradientAndAutogradGrad) {
  Tensor x = rnd({3}, 28).requires_grad_(), y = rnd({3}, 29).requires_grad_();
  int x_calls = 0, y_calls = 0;
  x.register_post_accumulate_grad_hook([&](const Tensor&) { ++x_calls; });
  y.register_post_accumulate_grad_hook([&](const Tensor&) { ++y_calls; });
  tsr::sum(x * 2.0).backward();  // y is not in this graph
  EXPECT_EQ(x_calls, 1);
  EXPECT_EQ(y_calls, 0);
  tsr::autograd::grad({tsr::sum(x * y)}, {x, y});  // accumulates nothing
  EXPECT_EQ(x_calls, 1);
  EXPECT_EQ(y_calls, 0);
  // The leaf as a root of backward: its own gradient is the whole pass.
  x.backward(tsr::ones({3}, TSR_F64));
  EXPECT_EQ(x_calls, 2);
}

TEST(Autograd, PostAccumulateHookRemovalErrorsAndFreesItsState) {
  Tensor x = rnd({3}, 30).requires_grad_();
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  int calls = 0;
  uint64_t h = x.register_post_accumulate_grad_hook([&calls, alive](const Tensor&) { ++calls; });
  alive.reset();
  EXPECT_FALSE(watch.expired());  // the hook holds it
  x.remove_post_accumulate_grad_hook(h);
  EXPECT_TRUE(watch.expired());  // removal freed the hook's state
  tsr::sum(x * x).backward();
  EXPECT_EQ(calls, 0);
  EXPECT_NE(error_of([&] { x.remove_post_accumulate_grad_hook(h); }).find("no hook with handle"), std::string::npos);
  Tensor nonleaf = x * 2.0;
  EXPECT_NE(error_of([&] { nonleaf.register_post_accumulate_grad_hook([](const Tensor&) {}); }).find("not a leaf"),
            std::string::npos);
  Tensor plain = rnd({3}, 31);
  EXPECT_NE(error_of([&] { plain.register_post_accumulate_grad_hook([](const Tensor&) {}); })
                .find("does not require grad"),
            std::string::npos);
  // A hook that throws aborts backward with its message.
  x.register_post_accumulate_grad_hook([](const Tensor&) { throw tsr::Error(TSR_ABORTED, "stop here"); });
  std::string err = error_of([&] { tsr::sum(x * x).backward(); });
  EXPECT_NE(err.find("post-accumulate-grad hook"), std::string::npos) << err;
  EXPECT_NE(err.find("stop here"), std::string::npos) << err;
}

TEST(Autograd, NoGradAndInferenceModeRecordNothing) {
  Tensor x = rnd({3}, 14).requires_grad_();
  {
    tsr::NoGradGuard g;
    EXPECT_FALSE(tsr::is_grad_enabled());
    Tensor y = x * x;
    EXPECT_FALSE(y.requires_grad());
    {
      tsr::EnableGradGuard e;
      EXPECT_TRUE((x * x).requires_grad());
    }
  }
  EXPECT_TRUE(tsr::is_grad_enabled());
  {
    tsr::InferenceMode im;
    EXPECT_FALSE((x * x).requires_grad());
  }
  EXPECT_TRUE((x * x).requires_grad());
}

TEST(Autograd, DetachStopsGradientsAndSharesStorage) {
  Tensor x = rnd({3}, 15).requires_grad_();
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.shares_storage(x));
  tsr::sum(x * d).backward();
  expect_near(vals(x.grad()), vals(x));  // d is a constant
}

TEST(Autograd, ModifiedSavedTensorIsAClearError) {
  Tensor x = rnd({3}, 16).requires_grad_();
  Tensor y = tsr::exp(x);  // saves its output
  Tensor s = tsr::sum(y);
  uint32_t v0 = y.version();
  {
    tsr::NoGradGuard g;
    y.fill_(1.0);
  }
  EXPECT_GT(y.version(), v0);
  std::string msg = error_of([&] { s.backward(); });
  EXPECT_NE(msg.find("modified by an in-place operation"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ExpBackward"), std::string::npos) << msg;
}

TEST(Autograd, InPlaceOnLeafThatRequiresGradIsRefused) {
  Tensor x = rnd({3}, 17).requires_grad_();
  std::vector<double> before = vals(x);
  EXPECT_NE(error_of([&] { x.copy_(rnd({3}, 18)); }).find("leaf"), std::string::npos);
  expect_near(vals(x), before, 0);  // nothing written
  Tensor out = tsr::empty({3}, TSR_F64);
  std::string msg = error_of([&] { tsr::call_multi(tsr::Op("mul"), {x, x}, {out}); });
  EXPECT_NE(msg.find("out="), std::string::npos) << msg;
}

TEST(Autograd, RequiresGradOnlyForFloatingLeaves) {
  Tensor i = tsr::arange(int64_t{4});
  EXPECT_NE(error_of([&] { i.requires_grad_(); }).find("floating point"), std::string::npos);
  Tensor x = rnd({2}, 19).requires_grad_();
  Tensor y = x * x;
  EXPECT_NE(error_of([&] { y.requires_grad_(false); }).find("leaf"), std::string::npos);
}

TEST(Autograd, ViewsPropagateGradientsToTheBase) {
  Tensor x = rnd({3, 4}, 20).requires_grad_();
  // transpose -> slice -> select -> unsqueeze -> expand -> reshape
  Tensor t = x.transpose(0, 1).slice(0, 1, 4, 2);  // rows 1 and 3 of x^T = columns 1, 3 of x
  Tensor s = t.select(1, 2).unsqueeze(0).expand({2, 2}).reshape({4});
  Tensor w = rnd({4}, 21);
  tsr::sum(s * w).backward();
  std::vector<double> g = vals(x.grad()), wv = vals(w);
  // s = [x[2,1], x[2,3], x[2,1], x[2,3]]
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      double expect = 0;
      if (r == 2 && c == 1) expect = wv[0] + wv[2];
      if (r == 2 && c == 3) expect = wv[1] + wv[3];
      EXPECT_NEAR(g[r * 4 + c], expect, 1e-12) << r << "," << c;
    }
}

TEST(Autograd, PermuteNarrowAsStridedAndConversions) {
  Tensor x = rnd({2, 3, 4}, 22).requires_grad_();
  Tensor p = x.permute({2, 0, 1}).narrow(0, -2, 2);  // x[:, :, 2:4] permuted
  Tensor a = x.as_strided({2, 2}, {12, 1}, 1);       // x[0..1, 0, 1..2]
  Tensor f = p.to(TSR_F32).contiguous();
  tsr::sum(f.to(TSR_F64)).backward(Tensor(), true);
  tsr::sum(a * 2.0).backward();
  std::vector<double> g = vals(x.grad());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        double expect = (k >= 2 ? 1.0 : 0.0) + ((j == 0 && (k == 1 || k == 2)) ? 2.0 : 0.0);
        EXPECT_NEAR(g[(i * 3 + j) * 4 + k], expect, 1e-12) << i << j << k;
      }
  EXPECT_EQ(x.grad().dtype(), TSR_F64);
}

TEST(Autograd, CopyIntoAFreshTensorPassesTheGradientToTheSource) {
  Tensor x = rnd({3}, 23).requires_grad_();
  Tensor buf = tsr::zeros({2, 3}, TSR_F64);
  buf.copy_(x * 2.0);  // broadcast copy
  EXPECT_TRUE(buf.requires_grad());
  tsr::sum(buf).backward();
  expect_near(vals(x.grad()), {4, 4, 4});
}

TEST(Autograd, GradApiAndDoubleBackward) {
  Tensor x = rnd({4}, 24).requires_grad_();
  Tensor y = tsr::sum(x * x * x);
  auto g = tsr::autograd::grad({y}, {x}, {}, false, /*create_graph=*/true);
  std::vector<double> xv = vals(x), gv = vals(g[0]);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(gv[i], 3 * xv[i] * xv[i], 1e-12);
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate
  ASSERT_TRUE(g[0].requires_grad());
  auto gg = tsr::autograd::grad({tsr::sum(g[0])}, {x});
  std::vector<double> ggv = vals(gg[0]);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(ggv[i], 6 * xv[i], 1e-12);
  Tensor unused = rnd({2}, 25).requires_grad_();
  Tensor z = tsr::sum(x * x);
  EXPECT_NE(error_of([&] { tsr::autograd::grad({z}, {unused}); }).find("not used"), std::string::npos);
  auto r = tsr::autograd::grad({tsr::sum(x * x)}, {unused, x}, {}, false, false, /*allow_unused=*/true);
  EXPECT_FALSE(r[0].defined());
  EXPECT_TRUE(r[1].defined());
}

TEST(Autograd, GradientOfANonLeafThroughGradApi) {
  Tensor x = rnd({3}, 26).requires_grad_();
  Tensor h = x * 2.0;
  Tensor y = tsr::sum(h * h);
  auto g = tsr::autograd::grad({y}, {h});
  std::vector<double> hv = vals(h), gv = vals(g[0]);
  for (size_t i = 0; i < hv.size(); ++i) EXPECT_NEAR(gv[i], 2 * hv[i], 1e-12);
}

TEST(Autograd, VeryLongChainsBackwardAndFreeWithoutRecursion) {
  Tensor x = rnd({1}, 27).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y + 1.0;
  y.backward();
  expect_near(vals(x.grad()), {1});
  Tensor z = x;
  for (int i = 0; i < 200000; ++i) z = z + 1.0;
  z = Tensor();  // frees the whole chain
  SUCCEED();
}

TEST(Autograd, GraphsBuiltAndRunOnSeveralThreads) {
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      Tensor x = rnd({16}, 100 + t).requires_grad_();
      Tensor y = x;
      for (int i = 0; i < 50; ++i) y = y * 1.01 + x;
      tsr::sum(y).backward();
      ok[t] = x.grad().defined() && x.grad().numel() == 16;
    });
  for (auto& th : ts) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1);
}

// The pattern of Hogwild-style training and of several workers sharing one module: each thread
// builds its own graph over one shared leaf and runs backward, so every pass accumulates into
// the same .grad at once. Accumulation is serialized per leaf (as in PyTorch): no gradient may
// be lost, and the heap must survive (this aborted with a double free, and ASan saw a use after
// free, before the leaf's accumulation was locked). Values are small integers in float64, so
// the expected sum is exact whatever order the additions ran in.
TEST(Autograd, ConcurrentBackwardIntoOneSharedLeafLosesNothing) {
  constexpr int kThreads = 8, kIters = 150;
  Tensor w = tsr::from_vector(std::vector<double>{1, -2, 3, 0.5, 4}, {5}).requires_grad_();
  std::vector<std::thread> ts;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      try {
        Tensor c = tsr::full({5}, double(t + 1), TSR_F64);
        for (int i = 0; i < kIters; ++i) {
          // The first pass of each thread may find .grad unset and set it: the racy path too.
          Tensor y = tsr::sum(w * c + w);
          y.backward();
        }
      } catch (const std::exception&) {
        errors++;
      }
    });
  for (auto& th : ts) th.join();
  ASSERT_EQ(errors.load(), 0);
  // d/dw sum(w * (t+1) + w) = t + 2 per pass; summed over threads and passes.
  double per_pass = 0;
  for (int t = 0; t < kThreads; ++t) per_pass += t + 2;
  expect_near(vals(w.grad()), std::vector<double>(5, per_pass * kIters), 0);
}

// Several threads running autograd.grad over one shared graph kept with retain_graph, as
// PyTorch allows: the engine's per-pass bookkeeping (dependency counts, gradient buffers) must
// belong to each pass, not to the shared nodes, or passes mix each other's gradients.
TEST(Autograd, ConcurrentGradOverOneSharedRetainedGraph) {
  constexpr int kThreads = 8, kIters = 60;
  Tensor x = rnd({7}, 7).requires_grad_();
  Tensor h = x * x;  // shared interior nodes, reached twice below (a DAG, not a chain)
  Tensor y = tsr::sum(h * 3.0 + tsr::exp(h) + h);
  std::vector<double> xv = vals(x), want(7);
  for (size_t i = 0; i < 7; ++i) want[i] = (4.0 + std::exp(xv[i] * xv[i])) * 2 * xv[i];
  std::vector<std::thread> ts;
  std::atomic<int> errors{0}, wrong{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      try {
        for (int i = 0; i < kIters; ++i) {
          std::vector<double> g = vals(tsr::autograd::grad({y}, {x}, {}, /*retain_graph=*/true)[0]);
          for (size_t k = 0; k < 7; ++k)
            if (std::abs(g[k] - want[k]) > 1e-9 * (1 + std::abs(want[k]))) {
              wrong++;
              break;
            }
        }
      } catch (const std::exception&) {
        errors++;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  // The graph is intact afterwards: one more backward without retain_graph still works.
  y.backward();
  expect_near(vals(x.grad()), want, 1e-9);
}

// Concurrent backward passes without retain_graph through one shared graph: exactly one may
// run it; the others must get the clear 'backward through the graph a second time' error (or,
// when they started before the first one freed the saved tensors, a correct result), never a
// crash from tensors freed under them.
TEST(Autograd, ConcurrentBackwardWithoutRetainGraphFailsCleanly) {
  constexpr int kThreads = 6;
  Tensor x = rnd({9}, 9).requires_grad_();
  Tensor y = tsr::sum(tsr::exp(x * x));
  std::vector<std::thread> ts;
  std::atomic<int> ok{0}, refused{0}, other{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      try {
        (void)tsr::autograd::grad({y}, {x});
        ok++;
      } catch (const tsr::Error& e) {
        (std::string(e.what()).find("a second time") != std::string::npos ? refused : other)++;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_GE(ok.load(), 1);
  EXPECT_EQ(ok.load() + refused.load(), kThreads);
  EXPECT_EQ(other.load(), 0);
}

// Pieces of one non-leaf tensor (overlapping slices, a select, a chunk, a strided slice) and the
// tensor itself: their gradients are added into one buffer of the base's size (the engine's
// region path) and must equal the sum of every use's gradient.
TEST(Autograd, PiecesOfOneTensorAccumulateIntoOneBuffer) {
  Tensor x = rnd({5, 4}, 91);
  x.requires_grad_();
  Tensor w = rnd({5, 4}, 92);
  Tensor b = x * 3.0;
  Tensor loss = tsr::sum(b * w) + tsr::sum(b.narrow(0, 0, 3) * 2.0) + tsr::sum(tsr::mul(b.narrow(0, 2, 3), b.narrow(0, 2, 3))) +
                tsr::sum(b.select(0, 4) * 5.0) + tsr::sum(tsr::chunk(b, 2, 1)[1] * 7.0) +
                tsr::sum(b.slice(1, 0, 4, 3) * 11.0);
  loss.backward();
  const std::vector<double> xv = vals(x), wv = vals(w);
  std::vector<double> want(20);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 4; ++c) {
      const size_t i = static_cast<size_t>(r * 4 + c);
      double db = wv[i];
      if (r < 3) db += 2;
      if (r >= 2) db += 2 * 3 * xv[i];
      if (r == 4) db += 5;
      if (c >= 2) db += 7;
      if (c == 0 || c == 3) db += 11;
      want[i] = 3 * db;
    }
  expect_near(vals(x.grad()), want);
}

// Pieces along one dim that do not overlap are copied into a region buffer that is never zeroed
// first; rows no piece wrote are zeroed when the buffer is read, before an overlapping piece or a
// piece along another dim is added, and before an ordinary gradient is added to it. The
// buffers' memory is poisoned with NaN first, so a row left unwritten shows. The reference is
// the same gradient under create_graph, which builds each piece's gradient from zero blocks
// (views.cpp) instead of the engine's buffer.
TEST(Autograd, RegionPiecesCopiedIntoUnzeroedBufferMatchZeroFilledPath) {
  using Loss = std::function<Tensor(const Tensor&)>;
  auto s = [](const Tensor& t, double k) { return tsr::sum(t * t) * k; };
  const std::vector<std::pair<const char*, Loss>> cases = {
      {"chunk into 3 along dim 1, all used",
       [&](const Tensor& b) {
         auto c = tsr::chunk(b, 3, 1);
         return s(c[0], 1) + s(c[1], 2) + s(c[2], 3);
       }},
      {"rows 0-1 and 4-5 only (a gap)", [&](const Tensor& b) { return s(b.narrow(0, 0, 2), 1) + s(b.narrow(0, 4, 2), 2); }},
      {"overlapping narrows", [&](const Tensor& b) { return s(b.narrow(0, 0, 3), 1) + s(b.narrow(0, 2, 3), 2); }},
      {"pieces along two dims", [&](const Tensor& b) { return s(b.narrow(0, 1, 2), 1) + s(b.narrow(1, 1, 4), 2); }},
      {"selects of some rows", [&](const Tensor& b) { return s(b.select(0, 5), 1) + s(b.select(0, 1), 2) + s(b.select(0, -3), 3); }},
      {"a piece and the whole tensor", [&](const Tensor& b) { return s(b.narrow(1, 2, 3), 1) + s(b, 2); }},
      {"the whole tensor and a piece", [&](const Tensor& b) { return s(b, 2) + s(b.narrow(1, 2, 3), 1); }},
      {"a stepped slice after pieces",
       [&](const Tensor& b) { return s(b.narrow(1, 0, 2), 1) + s(b.narrow(1, 5, 1), 2) + s(b.slice(1, 1, 6, 2), 3); }},
      {"an empty piece and negative bounds",
       [&](const Tensor& b) { return s(b.narrow(0, 3, 0), 1) + s(b.slice(0, -2, 100), 2) + s(b.slice(0, -6, -4), 3); }},
  };
  for (const auto& [name, loss] : cases) {
    SCOPED_TRACE(name);
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
      Tensor x = rnd({6, 6}, 99, dt);
      x.requires_grad_();
      Tensor want = tsr::autograd::grad({loss(x * 3.0)}, {x}, {}, false, true)[0].detach();
      {
        std::vector<Tensor> poison;
        for (int i = 0; i < 16; ++i) poison.push_back(tsr::full({6, 6}, std::nan(""), dt));
      }
      Tensor got = tsr::autograd::grad({loss(x * 3.0)}, {x})[0];
      expect_near(vals(got), vals(want), dt == TSR_F64 ? 1e-12 : 1e-5);
    }
  }
}

// A gradient the engine did not make (a root's, given by the caller) reaches a buffer first; a
// slice's gradient then goes into the same buffer: the caller's tensor is not written.
// A gradient that flows out of a slicing view and depends on the input (here 3 v^2 for
// f = sum(v^3)) must keep its graph under create_graph: the second derivative sum(g * w) w.r.t.
// x is 6 x w on the view's elements and 0 elsewhere, for select, narrow, stepped and negative
// slices and chunk.
TEST(Autograd, DoubleBackwardThroughSlicingViews) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> views = {
      {"select(0, 1)", [](const Tensor& t) { return t.select(0, 1); }},
      {"select(1, -1)", [](const Tensor& t) { return t.select(1, -1); }},
      {"narrow(0, 1, 2)", [](const Tensor& t) { return t.narrow(0, 1, 2); }},
      {"narrow(1, -3, 2)", [](const Tensor& t) { return t.narrow(1, -3, 2); }},
      {"slice(1, 0, 5, 2)", [](const Tensor& t) { return t.slice(1, 0, 5, 2); }},
      {"slice(1, 1, 100, 3)", [](const Tensor& t) { return t.slice(1, 1, 100, 3); }},
      {"slice(0, -2, 4)", [](const Tensor& t) { return t.slice(0, -2, 4); }},
      {"chunk(2, 1)[1]", [](const Tensor& t) { return tsr::chunk(t, 2, 1)[1]; }},
  };
  for (const auto& [name, view] : views) {
    SCOPED_TRACE(name);
    Tensor x = rnd({4, 5}, 97);
    x.requires_grad_();
    Tensor w = rnd({4, 5}, 98);
    Tensor v = view(x);
    Tensor g = tsr::autograd::grad({tsr::sum(v * v * v)}, {x}, {}, false, true)[0];
    ASSERT_TRUE(g.requires_grad());
    Tensor h = tsr::autograd::grad({tsr::sum(g * w)}, {x})[0];
    // Which elements the view covers: view() of a tensor of ones, placed back by the same view
    // of a zero tensor (no autograd involved).
    Tensor mask = tsr::zeros({4, 5}, TSR_F64);
    view(mask).copy_(tsr::ones(view(mask).sizes(), TSR_F64));
    const std::vector<double> xv = vals(x), wv = vals(w), mv = vals(mask), hv = vals(h), gv = vals(g);
    for (size_t i = 0; i < xv.size(); ++i) {
      EXPECT_NEAR(gv[i], mv[i] * 3 * xv[i] * xv[i], 1e-12) << i;
      EXPECT_NEAR(hv[i], mv[i] * 6 * xv[i] * wv[i], 1e-12) << i;
    }
  }
}

TEST(Autograd, RegionGradientsNeverWriteACallersTensor) {
  Tensor x = rnd({4, 3}, 93);
  x.requires_grad_();
  Tensor b = x * 2.0;
  Tensor g = rnd({4, 3}, 94), g_piece = rnd({2, 3}, 95);
  const std::vector<double> g0 = vals(g);
  tsr::autograd::backward({b, b.narrow(0, 1, 2)}, {g, g_piece});
  EXPECT_EQ(vals(g), g0);
  std::vector<double> want = g0;
  const std::vector<double> gp = vals(g_piece);
  for (size_t i = 0; i < gp.size(); ++i) want[3 + i] += gp[i];
  for (double& v : want) v *= 2;
  expect_near(vals(x.grad()), want);
  // Under create_graph the pieces keep their graph: a second derivative through them.
  Tensor y = rnd({6}, 96);
  y.requires_grad_();
  Tensor c = y * y;
  Tensor s = tsr::sum(c.narrow(0, 0, 4)) + tsr::sum(c.narrow(0, 2, 4));
  Tensor dy = tsr::autograd::grad({s}, {y}, {}, false, true)[0];
  tsr::sum(dy).backward();
  const std::vector<double> yv = vals(y), gy = vals(y.grad()), d1 = vals(dy);
  for (size_t i = 0; i < 6; ++i) {
    const double times = (i < 4 ? 1 : 0) + (i >= 2 ? 1 : 0);
    EXPECT_NEAR(d1[i], 2 * times * yv[i], 1e-12) << i;
    EXPECT_NEAR(gy[i], 2 * times, 1e-12) << i;
  }
}
