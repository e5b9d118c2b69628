// out= works for every op family, including non-contiguous out tensors (written through a
// dense temporary) and out tensors that alias an input (in-place).
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/tessera.hpp"

using tsr::Tensor;

static void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol = 1e-5f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << i;
}

TEST(OutVariants, NonContiguousOutForViewOps) {
  tsr::manual_seed(7);
  Tensor a = tsr::randn({3, 4}), b = tsr::randn({4, 5});
  static const tsr::Op mm("mm"), softmax("softmax"), sum("sum"), arange("arange"), add("add");
  // mm into the transpose of a [5,3] buffer
  Tensor buf = tsr::zeros({5, 3});
  Tensor out = buf.t();
  ASSERT_FALSE(out.is_contiguous());
  tsr::call_out(mm, out, {a, b});
  expect_near(out.to_vector<float>(), tsr::mm(a, b).to_vector<float>());
  // softmax into a strided view
  Tensor sbuf = tsr::zeros({4, 3});
  Tensor sout = sbuf.t();
  tsr::call_out(softmax, sout, {a, int64_t{1}, tsr::none});
  expect_near(sout.to_vector<float>(), tsr::softmax(a, 1).to_vector<float>());
  // a reduction into every other element of a buffer
  Tensor rbuf = tsr::full({6}, -1.0);
  Tensor rout = rbuf.slice(0, 0, 6, 2);
  tsr::call_out(sum, rout, {a, std::vector<int64_t>{1}, false, tsr::none});
  expect_near(rout.to_vector<float>(), tsr::sum(a, {1}).to_vector<float>());
  std::vector<float> rb = rbuf.to_vector<float>();
  EXPECT_EQ(rb[1], -1.0f);  // untouched gaps
  EXPECT_EQ(rb[3], -1.0f);
  // a factory into a strided view
  Tensor fbuf = tsr::zeros({8});
  Tensor fout = fbuf.slice(0, 1, 8, 2);
  tsr::call_out(arange, fout, {0.0, 4.0, 1.0, TSR_F32, tsr::none});
  EXPECT_EQ(fbuf.to_vector<float>(), (std::vector<float>{0, 0, 0, 1, 0, 2, 0, 3}));
}

TEST(OutVariants, InPlaceAliasingInput) {
  Tensor a = tsr::arange(0, 6, 1, TSR_F32).view({2, 3});
  Tensor b = tsr::ones({2, 3});
  static const tsr::Op add("add");
  tsr::call_out(add, a, {a, b, 2});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
}
