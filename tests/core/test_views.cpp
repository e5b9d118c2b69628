// Views share storage and compute the right geometry; reshape copies only when it must.
#include <gtest/gtest.h>

#include <numeric>

#include "tessera/tessera.hpp"

using tsr::Tensor;

static Tensor iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0f);
  return tsr::from_vector(v, shape);
}

TEST(Views, TransposeSharesStorageAndReadsBackTransposed) {
  Tensor a = iota({2, 3});
  Tensor t = a.t();
  EXPECT_TRUE(t.shares_storage(a));
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  Tensor c = t.contiguous();
  EXPECT_FALSE(c.shares_storage(a));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Views, SliceSelectNarrow) {
  Tensor a = iota({4, 5});
  Tensor s = a.slice(1, 1, 5, 2);  // columns 1 and 3
  EXPECT_EQ(s.sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{2, 4, 7, 9, 12, 14, 17, 19}));
  EXPECT_EQ(a.slice(0, -2, 100).to_vector<float>().front(), 11.0f);  // clamped, negative start
  EXPECT_EQ(a.slice(0, 3, 1).numel(), 0);                            // empty
  Tensor row = a.select(0, -1);
  EXPECT_EQ(row.sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{16, 17, 18, 19, 20}));
  EXPECT_EQ(a.narrow(1, 2, 2).to_vector<float>(), (std::vector<float>{3, 4, 8, 9, 13, 14, 18, 19}));
  EXPECT_THROW(a.narrow(1, 4, 2), tsr::Error);
  EXPECT_THROW(a.select(0, 4), tsr::Error);
  EXPECT_THROW(a.slice(1, 0, 2, 0), tsr::Error);
}

TEST(Views, PermuteExpandSqueezeUnsqueeze) {
  Tensor a = iota({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  EXPECT_EQ(p.sizes(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(p.strides(), (std::vector<int64_t>{1, 12, 4}));
  EXPECT_EQ(p.contiguous().to_vector<float>()[1], 5.0f);  // p[0,0,1] = a[0,1,0]
  EXPECT_THROW(a.permute({0, 0, 1}), tsr::Error);
  Tensor col = iota({3, 1});
  Tensor e = col.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (std::vector<int64_t>{0, 1, 0}));
  std::vector<float> ev = e.to_vector<float>();
  EXPECT_EQ(ev[5], 2.0f);   // [0,1,1]
  EXPECT_EQ(ev[23], 3.0f);  // [1,2,3]
  EXPECT_THROW(col.expand({3, 2, 5}), tsr::Error);
  Tensor u = a.unsqueeze(1);
  EXPECT_EQ(u.sizes(), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(u.squeeze(1).sizes(), a.sizes());
  EXPECT_EQ(iota({1, 3, 1}).squeeze().sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(a.unsqueeze(-1).sizes(), (std::vector<int64_t>{2, 3, 4, 1}));
}

TEST(Views, ViewAndReshape) {
  Tensor a = iota({2, 3, 4});
  Tensor v = a.view({6, -1});
  EXPECT_TRUE(v.shares_storage(a));
  EXPECT_EQ(v.sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_THROW(a.view({5, -1}), tsr::Error);
  EXPECT_THROW(a.view({-1, -1}), tsr::Error);
  // A transposed tensor cannot be flattened as a view, but reshape copies.
  Tensor t = a.transpose(0, 2);
  EXPECT_THROW(t.view({-1}), tsr::Error);
  Tensor r = t.reshape({-1});
  EXPECT_FALSE(r.shares_storage(a));
  EXPECT_EQ(r.to_vector<float>()[1], 13.0f);  // t[0,0,1] = a[1,0,0]
  // Splitting a dim of a sliced tensor stays a view when strides allow it.
  Tensor s = iota({4, 6}).slice(1, 0, 6, 2);  // [4,3] strides (6,2)
  Tensor sv = s.view({2, 2, 3});
  EXPECT_EQ(sv.strides(), (std::vector<int64_t>{12, 6, 2}));
  EXPECT_EQ(sv.to_vector<float>(), s.to_vector<float>());
}

TEST(Views, AsStridedIsBoundsChecked) {
  Tensor a = iota({6});
  Tensor w = a.as_strided({2, 2}, {2, 1}, 1);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_THROW(a.as_strided({3, 3}, {2, 1}, 1), tsr::Error);
}

TEST(Views, WritesThroughViewsAreVisible) {
  Tensor a = tsr::zeros({3, 4});
  Tensor col = a.select(1, 2);
  col.fill_(7.0);
  std::vector<float> v = a.to_vector<float>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(v[i], i % 4 == 2 ? 7.0f : 0.0f) << i;
  Tensor src = tsr::from_vector(std::vector<float>{1, 2, 3}, {3});
  a.select(1, 0).copy_(src);
  EXPECT_EQ(a.to_vector<float>()[8], 3.0f);
}
