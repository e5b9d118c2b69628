// Shared drivers for the optimizer tests: run an optimizer and its float64 reference side by
// side on seeded random parameters and gradients, and the state_dict resume check.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "op_test.hpp"
#include "tessera/optim.hpp"

namespace optim_test {

using tsr::Tensor;
using tsr::optest::Shape;
using MakeOpt = std::function<std::unique_ptr<tsr::optim::Optimizer>(std::vector<Tensor>)>;

inline Tensor leaf(const Tensor& t) {
  Tensor c = t.clone();
  c.requires_grad_();
  return c;
}
// A float64 leaf parameter holding v, and its gradient set to g: the hand-computed step tests.
inline Tensor leaf64(std::vector<double> v) { return leaf(tsr::from_vector(v, {static_cast<int64_t>(v.size())})); }
inline void set_grad(Tensor& p, std::vector<double> g) {
  p.set_grad(tsr::from_vector(g, {static_cast<int64_t>(g.size())}));
}

// Params of odd and empty shapes (one non-contiguous, one that never gets a grad) stepped
// `steps` times with seeded grads; after every step each param must match its reference.
template <class Ref>
void run_vs_reference(const MakeOpt& make, const Ref& proto, tsr_dtype_t dt, double rtol, double atol, int steps = 6,
                      uint64_t seed = 1) {
  using tsr::optest::randu;
  const std::vector<Shape> shapes{{3, 4}, {5}, {0, 3}, {4, 3}, {2}};
  std::vector<Tensor> params;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Tensor v = randu(shapes[k], seed * 31 + k, -2, 2, dt);
    if (k == 3) {
      Tensor nc = tsr::optest::noncontig(v);
      ASSERT_FALSE(nc.is_contiguous());
      nc.requires_grad_();
      params.push_back(nc);
    } else {
      params.push_back(leaf(v));
    }
  }
  std::unique_ptr<tsr::optim::Optimizer> opt = make(params);
  std::vector<Ref> refs(shapes.size(), proto);
  std::vector<std::vector<double>> pv;
  for (const Tensor& p : params) pv.push_back(tsr::optest::values(p));
  const std::vector<double> untouched = pv.back();
  for (int s = 0; s < steps; ++s) {
    for (size_t k = 0; k + 1 < shapes.size(); ++k) {  // the last param never has a grad
      Tensor g = randu(shapes[k], seed * 1000 + 17 * s + k, -1.5, 1.5, dt);
      params[k].set_grad(g);
      refs[k].step(pv[k], tsr::optest::values(g));
    }
    opt->step();
    for (size_t k = 0; k < shapes.size(); ++k)
      ASSERT_TRUE(tsr::optest::close(params[k], pv[k], shapes[k], rtol, atol))
          << "param " << k << " after step " << s + 1;
  }
  EXPECT_EQ(pv.back(), untouched);
  EXPECT_TRUE(opt->state(shapes.size() - 1).empty() || opt->name() == "Adagrad");
}

// Optimizer A steps k times (its lr then changed, as a scheduler would); B, built on copies of
// A's params with default options, loads A's state_dict; the next step of both must give
// bit-identical params and state.
inline void expect_resume_bit_identical(const MakeOpt& make_a, const MakeOpt& make_b, int k = 3) {
  using tsr::optest::randu;
  const std::vector<Shape> shapes{{2, 3}, {7}};
  std::vector<Tensor> pa, pb;
  for (size_t i = 0; i < shapes.size(); ++i) pa.push_back(leaf(randu(shapes[i], 50 + i, -1, 1, TSR_F32)));
  auto a = make_a(pa);
  auto set_grads = [&](std::vector<Tensor>& ps, int s) {
    for (size_t i = 0; i < ps.size(); ++i) ps[i].set_grad(randu(shapes[i], 900 + 10 * s + i, -1, 1, TSR_F32));
  };
  for (int s = 0; s < k; ++s) {
    set_grads(pa, s);
    a->step();
  }
  a->set_lr(0.0123);
  for (const Tensor& p : pa) pb.push_back(leaf(p.detach()));
  auto b = make_b(pb);
  b->load_state_dict(a->state_dict());
  EXPECT_EQ(b->lr(), 0.0123);
  EXPECT_EQ(b->state_dict().keys(), a->state_dict().keys());
  set_grads(pa, k);
  set_grads(pb, k);
  a->step();
  b->step();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>()) << "param " << i;
  tsr::StateDict sa = a->state_dict(), sb = b->state_dict();
  for (const auto& kv : sa) EXPECT_EQ(kv.second.to_vector<double>(), sb.at(kv.first).to_vector<double>()) << kv.first;
}

}  // namespace optim_test
