// Shape family tests: tril/triu, diagonal/diag_embed/diag, constant_pad_nd and pad (constant,
// reflect, replicate, circular; negative pads crop). References by index arithmetic, exact.
#include <limits>

#include "shape_test_util.hpp"

namespace tsr::optest {
namespace {

TEST(ShapeOps, TrilTriu) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor x = sample({2, 4, 5}, dt, 3);
    for (int64_t k : {-5, -1, 0, 2, 6}) {
      auto ref = [&](bool upper) {
        return ref_map(x, {2, 4, 5},
                       [&](std::vector<int64_t>& i) { return upper ? i[2] - i[1] >= k : i[2] - i[1] <= k; });
      };
      EXPECT_TRUE(close(tril(x, k), ref(false), {2, 4, 5}, 0, 0)) << dtype_name(dt) << " k=" << k;
      EXPECT_TRUE(close(triu(noncontig(x), k), ref(true), {2, 4, 5}, 0, 0)) << dtype_name(dt) << " k=" << k;
    }
  }
  Tensor m = randu({3, 4}, 4);
  Tensor tall = m.t();  // non-contiguous 2-D with a strided last dim
  EXPECT_TRUE(close(tril(tall, 1),
                    ref_map(tall.contiguous(), {4, 3}, [](std::vector<int64_t>& i) { return i[1] - i[0] <= 1; }),
                    {4, 3}, 0, 0));
  EXPECT_EQ(tril(empty({0, 3})).sizes(), Shape({0, 3}));
  const int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(close(tril(m, huge), values(m), {3, 4}, 0, 0));
  EXPECT_TRUE(close(triu(m, -huge), values(m), {3, 4}, 0, 0));
  EXPECT_TRUE(close(tril(m, -huge), std::vector<double>(12, 0.0), {3, 4}, 0, 0));
  EXPECT_EQ(triu(empty({2, 0, 3})).sizes(), Shape({2, 0, 3}));
  // In place and out=.
  Tensor c = m.clone();
  static const Op tril_inplace("tril_");
  call(tril_inplace, {c, int64_t{-1}});
  EXPECT_TRUE(close(c, values(tril(m, -1)), {3, 4}, 0, 0));
  Tensor out = empty({3, 4}, TSR_F64);
  static const Op triu_op("triu");
  call_out(triu_op, out, {m, int64_t{1}});
  EXPECT_TRUE(close(out, values(triu(m, 1)), {3, 4}, 0, 0));
  EXPECT_TRUE(throws_with([&] { tril(randu({5}, 1)); }, {"tril", "at least 2", "[5]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tril(in[0], 1); }, {m}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return triu(noncontig(in[0]), -1); }, {randu({2, 3, 3}, 5)}));
}

TEST(ShapeOps, Diagonal) {
  Tensor x = sample({3, 4, 5}, TSR_I32, 2);
  for (int64_t off : {-2, 0, 1, 4, 9}) {
    Tensor d = diagonal(x, off, 1, 2);
    int64_t len = std::max<int64_t>(0, off >= 0 ? std::min<int64_t>(4, 5 - off) : std::min<int64_t>(4 + off, 5));
    EXPECT_TRUE(close(d,
                      ref_map(x, {3, len},
                              [&](std::vector<int64_t>& i) {
                                int64_t b = i[0], j = i[1];
                                i = {b, off >= 0 ? j : j - off, off >= 0 ? j + off : j};
                                return true;
                              }),
                      {3, len}, 0, 0))
        << off;
  }
  // dims in either order, negative dims; the result is a view.
  Tensor d = diagonal(x, 1, -1, 0);
  EXPECT_EQ(d.sizes(), Shape({4, 2}));  // len = min(5, 3 - 1)
  EXPECT_TRUE(d.shares_storage(x));
  EXPECT_TRUE(close(d,
                    ref_map(x, {4, 2},
                            [](std::vector<int64_t>& i) {
                              int64_t m = i[0], j = i[1];
                              i = {j + 1, m, j};
                              return true;
                            }),
                    {4, 2}, 0, 0));
  EXPECT_TRUE(close(diagonal(noncontig(x), 0, 0, 2), values(diagonal(x, 0, 0, 2)), {4, 3}, 0, 0));
  EXPECT_TRUE(throws_with([&] { diagonal(x, 0, 1, -2); }, {"diagonal", "identical"}));
  EXPECT_TRUE(throws_with([&] { diagonal(randu({3}, 1)); }, {"diagonal", "[3]"}));
  EXPECT_TRUE(
      gradcheck([](const std::vector<Tensor>& in) { return diagonal(in[0], -1, 0, 2); }, {randu({3, 2, 4}, 3)}));
}

TEST(ShapeOps, DiagEmbedAndDiag) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_BF16, TSR_BOOL, TSR_I64}) {
    Tensor v = sample({2, 3}, dt, 4);
    for (int64_t off : {0, 2, -1}) {
      int64_t n = 3 + std::abs(off);
      EXPECT_TRUE(close(diag_embed(v, off),
                        ref_map(v, {2, n, n},
                                [&](std::vector<int64_t>& i) {
                                  int64_t b = i[0], r = i[1], c = i[2];
                                  if (c - r != off) return false;
                                  i = {b, off >= 0 ? r : c};
                                  return true;
                                }),
                        {2, n, n}, 0, 0))
          << dtype_name(dt) << off;
    }
    // dim1/dim2 placement: the diagonal dims go where asked, the batch dim fills the rest.
    Tensor e = diag_embed(noncontig(v), 1, 0, 2);
    EXPECT_EQ(e.sizes(), Shape({4, 2, 4}));
    EXPECT_TRUE(close(diagonal(e, 1, 0, 2), values(v), {2, 3}, 0, 0));
  }
  Tensor v = randu({4}, 5), m = randu({3, 5}, 6);
  EXPECT_TRUE(close(diag(v, -1), values(diag_embed(v, -1, 0, 1)), {5, 5}, 0, 0));
  Tensor dm = diag(m, 1);
  EXPECT_FALSE(dm.shares_storage(m));
  EXPECT_TRUE(close(dm, values(diagonal(m, 1)), {3}, 0, 0));
  EXPECT_EQ(diag(m, 7).sizes(), Shape({0}));
  EXPECT_TRUE(throws_with([&] { diag(randu({2, 2, 2}, 1)); }, {"diag", "[2, 2, 2]"}));
  EXPECT_TRUE(throws_with([&] { diag_embed(v, 0, 0, -2); }, {"diag_embed", "identical"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return diag_embed(in[0], 1); }, {randu({2, 3}, 7)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return diag(in[0], -1); }, {v}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return diag(in[0], 2); }, {m}));
}

// Reference F.pad over the last pads.size()/2 dims: output index o reads input o - left,
// mapped per mode (constant: outside -> value).
std::vector<double> ref_pad(const Tensor& x, const Shape& pads, const std::string& mode, double value,
                            Shape* out_shape) {
  Shape xs = x.sizes(), os = xs;
  size_t nd = xs.size(), k = pads.size() / 2;
  for (size_t i = 0; i < k; ++i) os[nd - 1 - i] += pads[2 * i] + pads[2 * i + 1];
  *out_shape = os;
  return ref_map(
      x, os,
      [&](std::vector<int64_t>& idx) {
        for (size_t i = 0; i < k; ++i) {
          size_t d = nd - 1 - i;
          int64_t n = xs[d], p = idx[d] - pads[2 * i];
          if (mode == "constant") {
            if (p < 0 || p >= n) return false;
          } else if (mode == "reflect") {
            p = p < 0 ? -p : (p >= n ? 2 * (n - 1) - p : p);
          } else if (mode == "replicate") {
            p = std::min(std::max<int64_t>(p, 0), n - 1);
          } else {
            p = ((p % n) + n) % n;
          }
          idx[d] = p;
        }
        return true;
      },
      value);
}

TEST(ShapeOps, ConstantPad) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor x = sample({2, 3, 4}, dt, 8);
    double val = dt == TSR_BOOL ? 1.0 : 3.0;
    for (const Shape& p : {Shape{1, 2}, Shape{0, 1, 2, 0}, Shape{-1, 2, 1, -2}, Shape{1, 1, 0, 0, 2, 1}, Shape{}}) {
      Shape os;
      std::vector<double> ref = ref_pad(x, p, "constant", val, &os);
      EXPECT_TRUE(close(pad(x, p, "constant", val), ref, os, 0, 0)) << dtype_name(dt);
      EXPECT_TRUE(close(constant_pad_nd(noncontig(x), p, val), ref, os, 0, 0)) << dtype_name(dt);
    }
  }
  Tensor x = randu({3, 4}, 9);
  EXPECT_FALSE(pad(x, {0, 0}).shares_storage(x));
  EXPECT_EQ(pad(x, {-2, -2}).sizes(), Shape({3, 0}));
  EXPECT_EQ(pad(empty({0, 2}), {1, 1, 1, 1}).sizes(), Shape({2, 4}));
  EXPECT_TRUE(throws_with([&] { pad(x, {1, 2, 3}); }, {"constant_pad_nd", "divisible by 2", "[1, 2, 3]"}));
  EXPECT_TRUE(throws_with([&] { pad(x, {1, 1, 1, 1, 1, 1}); }, {"constant_pad_nd", "too large", "[3, 4]"}));
  EXPECT_TRUE(throws_with([&] { pad(x, {-3, -2}); }, {"constant_pad_nd", "negative output size", "[3, 4]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return pad(in[0], {1, 2, -1, 1}, "constant", 0.5); }, {x}));
}

TEST(ShapeOps, ReflectReplicateCircularPad) {
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    for (tsr_dtype_t dt : {TSR_F64, TSR_F16, TSR_I32, TSR_BOOL}) {
      Tensor x = sample({2, 4, 5}, dt, 10);
      for (const Shape& p : {Shape{2, 3}, Shape{1, 0, 0, 3}, Shape{3, -1, -2, 2}, Shape{0, 0}}) {
        Shape os;
        std::vector<double> ref = ref_pad(x, p, mode, 0, &os);
        EXPECT_TRUE(close(pad(noncontig(x), p, mode), ref, os, 0, 0)) << mode << " " << dtype_name(dt);
      }
    }
    Tensor x = randu({2, 3, 4}, 11);
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return pad(in[0], {2, 1, 1, 2}, mode); }, {x})) << mode;
    EXPECT_TRUE(throws_with([&] { pad(x, {1, 1}, mode, 1.0); }, {"pad", mode, "value"}));
  }
  Tensor x = randu({2, 3}, 12);
  EXPECT_TRUE(throws_with([&] { pad(x, {3, 0}, "reflect"); }, {"pad", "(3, 0)", "[2, 3]"}));
  EXPECT_TRUE(throws_with([&] { pad(x, {0, 4}, "circular"); }, {"pad", "wrapping", "[2, 3]"}));
  EXPECT_TRUE(throws_with([&] { pad(empty({2, 0}), {1, 1}, "replicate"); }, {"pad", "size 0"}));
  EXPECT_TRUE(throws_with([&] { pad(x, {1, 1}, "wrap"); }, {"pad", "'wrap'"}));
}

// Large enough that the kernels split rows across threads.
TEST(ShapeOps, LargeInputsParallelKernels) {
  Tensor x = sample({2, 256, 300}, TSR_F32, 21);
  Tensor xn = noncontig(x);
  EXPECT_TRUE(close(flip(xn, {1, 2}),
                    ref_map(x, {2, 256, 300},
                            [](std::vector<int64_t>& i) {
                              i[1] = 255 - i[1];
                              i[2] = 299 - i[2];
                              return true;
                            }),
                    {2, 256, 300}, 0, 0));
  EXPECT_TRUE(close(triu(xn, 3), ref_map(x, {2, 256, 300}, [](std::vector<int64_t>& i) { return i[2] - i[1] >= 3; }),
                    {2, 256, 300}, 0, 0));
  Tensor y = sample({2, 256, 300}, TSR_I16, 22);
  EXPECT_TRUE(close(cat({x, y}, 2), ref_cat({x, y}, 2), {2, 256, 600}, 0, 0));
}

}  // namespace
}  // namespace tsr::optest
