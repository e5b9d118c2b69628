// Index family: gradients (float64 finite differences, duplicate indices), double backward,
// in-place autograd, 0-dim operands and int32 indices.
#include "op_test.hpp"

namespace tsr::optest {
namespace {

::testing::AssertionResult exact(const Tensor& t, const std::vector<double>& e, const Shape& s) {
  return close(t, e, s, 0, 0);
}

// ---- gradients ------------------------------------------------------------------------------

TEST(IndexOps, GradIndexSelectGatherScatter) {
  Tensor i1 = from_vector<int64_t>({2, 0, 2, -1}, {4});
  EXPECT_TRUE(
      gradcheck([&](const std::vector<Tensor>& in) { return index_select(in[0], 1, i1); }, {randu({3, 5}, 120)}));
  Tensor gi = randint({3, 4}, 121, 0, 5);
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return gather(in[0], 1, gi); }, {randu({3, 5}, 122)}));
  Tensor si = from_vector<int64_t>({0, 4, 4, 1, 2, 2, 0, 3}, {2, 4});  // duplicates
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return scatter_add(in[0], 1, si, in[1]); },
                        {randu({3, 5}, 123), randu({2, 6}, 124)}));
  Tensor su = from_vector<int64_t>({0, 4, 3, 1, 2, 1, 0, 3}, {2, 4});  // no duplicates per row
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return scatter(in[0], 1, su, in[1]); },
                        {randu({3, 5}, 125), randu({3, 4}, 126)}));
  for (const char* red : {"sum", "mean", "amax", "amin"})
    for (bool inc : {true, false})
      EXPECT_TRUE(
          gradcheck([&](const std::vector<Tensor>& in) { return scatter_reduce(in[0], 1, si, in[1], red, inc); },
                    {randu({3, 5}, 127), randu({2, 4}, 128)}))
          << red << " " << inc;
}

TEST(IndexOps, GradIndexAddCopyFillTakePut) {
  Tensor idx = from_vector<int64_t>({3, 0, 3}, {3});
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return index_add(in[0], 0, idx, in[1], 1.5); },
                        {randu({4, 3}, 130), randu({3, 3}, 131)}));
  Tensor uidx = from_vector<int64_t>({3, 0}, {2});
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return index_copy(in[0], 1, uidx, in[1]); },
                        {randu({3, 4}, 132), randu({3, 2}, 133)}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return index_fill(in[0], 1, from_vector<int64_t>({2, 0, 2}, {3}), 2.0);
      },
      {randu({3, 4}, 134)}));
  Tensor ti = from_vector<int64_t>({0, 5, 5, -1}, {2, 2});
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return take(in[0], ti); }, {randu({2, 3}, 135)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return put(in[0], ti, in[1], true); },
                        {randu({2, 3}, 136), randu({2, 2}, 137)}));
}

TEST(IndexOps, GradMasks) {
  Tensor m = randmask({3, 4}, 140), mb = randmask({4}, 141);
  EXPECT_TRUE(
      gradcheck([&](const std::vector<Tensor>& in) { return masked_fill(in[0], mb, 0.5); }, {randu({3, 4}, 142)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return masked_fill(in[0], m, in[1]); },
                        {randu({3, 4}, 143), randu({}, 144)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return masked_select(in[0], mb); }, {randu({3, 4}, 145)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return masked_scatter(in[0], m, in[1]); },
                        {randu({3, 4}, 146), randu({13}, 147)}));
}

TEST(IndexOps, GradAdvancedIndex) {
  Tensor i = from_vector<int64_t>({1, 1, -1}, {3, 1}), j = from_vector<int64_t>({0, 2}, {2});
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return index(in[0], {i, j}); }, {randu({3, 4, 2}, 150)}));
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return index(in[0], {j}, 1); }, {randu({3, 4, 2}, 151)}));
  EXPECT_TRUE(gradcheck(
      [&](const std::vector<Tensor>& in) {
        return index_put(in[0], {i, j}, in[1], true);
      },
      {randu({3, 4, 2}, 152), randu({3, 2, 2}, 153)}));
  Tensor u = from_vector<int64_t>({2, 0}, {2});
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return index_put(in[0], {u}, in[1], false); },
                        {randu({3, 4}, 154), randu({4}, 155)}));
}

}  // namespace
}  // namespace tsr::optest

namespace tsr::optest {
namespace {

TEST(IndexOps, DoubleBackwardAndInplaceAutograd) {
  Tensor idx = from_vector<int64_t>({0, 2, 2, 1, 0, 0}, {2, 3});
  Tensor x = randu({2, 4}, 160).requires_grad_();
  Tensor c = randu({2, 3}, 161).requires_grad_();
  Tensor w = randu({2, 4}, 162);
  // d/dc of (d gather / dx . c) is gather again: the formula (scatter_add) was recorded.
  Tensor gx = autograd::grad({gather(x, 1, idx)}, {x}, {c}, true, true)[0];
  EXPECT_TRUE(close(gx, values(scatter_add(zeros({2, 4}, TSR_F64), 1, idx, c.detach())), {2, 4}, 1e-12, 1e-12));
  Tensor gc = autograd::grad({gx}, {c}, {w})[0];
  EXPECT_TRUE(close(gc, values(gather(w, 1, idx)), {2, 3}, 1e-12, 1e-12));
  Tensor rows = from_vector<int64_t>({1, 1, 0}, {3});
  Tensor c2 = randu({3, 4}, 163).requires_grad_();
  Tensor gx2 = autograd::grad({index_select(x, 0, rows)}, {x}, {c2}, true, true)[0];
  Tensor w2 = randu({2, 4}, 164);
  EXPECT_TRUE(close(autograd::grad({gx2}, {c2}, {w2})[0], values(index_select(w2, 0, rows)), {3, 4}, 1e-12, 1e-12));
  // In-place on a non-leaf moves its history: gradients reach both x and src.
  Tensor src = randu({2, 3}, 165).requires_grad_();
  Tensor y = index_select(x, 0, from_vector<int64_t>({0, 1}, {2}));
  scatter_add_(y, 1, idx, src);
  Tensor cot = randu({2, 4}, 166);
  std::vector<Tensor> g = autograd::grad({y}, {x, src}, {cot});
  EXPECT_TRUE(close(g[0], values(cot), {2, 4}, 1e-12, 1e-12));
  EXPECT_TRUE(close(g[1], values(gather(cot, 1, idx)), {2, 3}, 1e-12, 1e-12));
  // In-place on a leaf that requires grad is refused.
  EXPECT_TRUE(throws_with([&] { index_fill_(x, 1, from_vector<int64_t>({0}, {1}), 1.0); }, {"index_fill_"}));
}

}  // namespace
}  // namespace tsr::optest

namespace tsr::optest {
namespace {

TEST(IndexOps, ZeroDimAndInt32Indices) {
  Tensor s = scalar_tensor(4.0, TSR_F64, false);
  Tensor i0 = scalar_tensor_int(0, TSR_I64, false), im1 = scalar_tensor_int(-1, TSR_I64, false);
  EXPECT_TRUE(exact(gather(s, 0, im1), {4.0}, {}));
  EXPECT_TRUE(exact(scatter_add(s, 0, i0, scalar_tensor(1.5, TSR_F64, false)), {5.5}, {}));
  EXPECT_TRUE(exact(index_add(s, 0, i0, scalar_tensor(1.5, TSR_F64, false), 2.0), {7.0}, {}));
  EXPECT_TRUE(exact(masked_fill(s, from_bools({true}, {}), -1.0), {-1.0}, {}));
  EXPECT_TRUE(exact(take(randu({3}, 170), i0), {values(randu({3}, 170))[0]}, {}));
  EXPECT_TRUE(
      throws_with([&] { gather(s, 0, scalar_tensor_int(1, TSR_I64, false)); }, {"gather", "index 1", "size 1"}));
  // int32 indices everywhere they are accepted.
  Tensor x = randu({4, 3}, 171);
  Tensor i32 = from_vector<int32_t>({3, -4, 1}, {3});
  Tensor i64 = i32.to(TSR_I64);
  Tensor src = randu({3, 3}, 172);
  EXPECT_EQ(values(index_add(x, 0, i32, src)), values(index_add(x, 0, i64, src)));
  EXPECT_EQ(values(index_copy(x, 0, i32, src)), values(index_copy(x, 0, i64, src)));
  EXPECT_EQ(values(gather(x, 0, i32.reshape({3, 1}))), values(gather(x, 0, i64.reshape({3, 1}))));
  EXPECT_EQ(values(scatter(x, 0, i32.reshape({3, 1}), src)), values(scatter(x, 0, i64.reshape({3, 1}), src)));
  EXPECT_EQ(values(index(x, {i32})), values(index(x, {i64})));
  EXPECT_EQ(values(take(x, i32)), values(take(x, i64)));
  EXPECT_TRUE(throws_with(
      [&] {
        gather(x, 0, from_vector<int16_t>({1}, {1, 1}));
      },
      {"gather", "int64 or int32", "int16"}));
}

}  // namespace
}  // namespace tsr::optest
