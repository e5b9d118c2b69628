// cat as one kernel over all its inputs (backends/cpu/cat.cpp): input counts from 1 to 1000 (past
// the 16 views other kernels get), every dtype, every position of the dim, odd and empty shapes,
// strided inputs (transposed, stepped, expanded), promotion, and outputs large enough to be split
// across threads mid-block. Results are checked element by element against a reference built
// here by index arithmetic (never by calling cat), and the dispatch trace shows that the kernel
// ran (one "cat" lookup, no per-input "_copy").
#include <string>

#include "shape_test_util.hpp"

namespace tsr::optest {
namespace {

// The expected output, element by element: output index idx takes input k where idx[dim] falls
// in k's range along dim, at the same index with idx[dim] shifted to k's start. Inputs without
// elements take no range (legacy 1-D empties included, whatever their rank).
std::vector<double> ref_by_index(const std::vector<Tensor>& ts, int64_t dim, const Shape& out_shape) {
  std::vector<std::vector<double>> vals;
  std::vector<int64_t> start;
  std::vector<size_t> who;
  int64_t at = 0;
  for (size_t k = 0; k < ts.size(); ++k) {
    vals.push_back(values(ts[k]));
    if (ts[k].numel() == 0) continue;
    who.push_back(k);
    start.push_back(at);
    at += ts[k].size(dim);
  }
  std::vector<double> out(static_cast<size_t>(numel_of(out_shape)));
  std::vector<int64_t> idx(out_shape.size());
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t r = static_cast<int64_t>(o);
    for (size_t d = out_shape.size(); d-- > 0;) {
      idx[d] = r % out_shape[d];
      r /= out_shape[d];
    }
    size_t j = 0;
    while (j + 1 < start.size() && start[j + 1] <= idx[static_cast<size_t>(dim)]) ++j;
    const Tensor& t = ts[who[j]];
    int64_t lin = 0;
    for (size_t d = 0; d < out_shape.size(); ++d)
      lin = lin * t.size(static_cast<int64_t>(d)) + (static_cast<int64_t>(d) == dim ? idx[d] - start[j] : idx[d]);
    out[o] = vals[who[j]][static_cast<size_t>(lin)];
  }
  return out;
}

// The output shape of cat by the same rule.
Shape cat_shape(const std::vector<Tensor>& ts, int64_t dim) {
  Shape s;
  int64_t n = 0;
  for (const Tensor& t : ts) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    s = t.sizes();
    n += t.size(dim);
  }
  if (!s.empty()) s[static_cast<size_t>(dim)] = n;
  return s;
}

::testing::AssertionResult cat_matches(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor r = cat(ts, dim);
  if (dim < 0) dim += r.dim();
  const Shape s = cat_shape(ts, dim);
  return close(r, ref_by_index(ts, dim, s), s, 0, 0);
}

// n inputs of shape `base` with a different size along dim each (0 among them when n > 2).
std::vector<Tensor> inputs(int n, Shape base, int64_t dim, tsr_dtype_t dt, uint64_t seed) {
  std::vector<Tensor> ts;
  for (int k = 0; k < n; ++k) {
    base[static_cast<size_t>(dim)] = n > 2 && k == 1 ? 0 : 1 + k % 3;
    ts.push_back(sample(base, dt, seed + static_cast<uint64_t>(k)));
  }
  return ts;
}

TEST(CatKernel, InputCountsDimsAndDtypes) {
  for (tsr_dtype_t dt : all_dtypes())
    for (int n : {1, 2, 8, 33})
      for (int64_t dim : {0, 1, 2}) {
        const std::vector<Tensor> ts = inputs(n, {3, 2, 5}, dim, dt, 100);
        EXPECT_TRUE(cat_matches(ts, dim)) << dtype_name(dt) << ", " << n << " inputs, dim " << dim;
      }
}

TEST(CatKernel, AThousandInputsInOneKernelCall) {
  for (int64_t dim : {0, 1}) {
    const std::vector<Tensor> ts = inputs(1000, {2, 3}, dim, TSR_F32, 7);
    Tensor r;
    Lookups l = trace_lookups([&] { r = cat(ts, dim); });
    EXPECT_EQ(l.count("cat"), 1);
    EXPECT_EQ(l.count("_copy"), 0);
    const Shape s = cat_shape(ts, dim);
    EXPECT_TRUE(close(r, ref_by_index(ts, dim, s), s, 0, 0)) << "dim " << dim;
  }
  // Strided and 1-D empty inputs among a thousand, in an i16 output.
  std::vector<Tensor> ts;
  for (int k = 0; k < 1000; ++k) {
    if (k % 10 == 3) ts.push_back(empty({0}, TSR_I16));
    else if (k % 10 == 5) ts.push_back(sample({4, 2}, TSR_I16, 900 + uint64_t(k)).t());
    else ts.push_back(sample({2, 1 + k % 4}, TSR_I16, 900 + uint64_t(k)));
  }
  EXPECT_TRUE(cat_matches(ts, 1));
}

// The kernel runs once per cat, before any readback: no "_copy" per input.
TEST(CatKernel, DispatchReachesTheKernel) {
  const std::vector<Tensor> ts = inputs(20, {4, 3}, 0, TSR_F32, 3);
  Tensor r;
  Lookups l = trace_lookups([&] { r = cat(ts, 0); });
  EXPECT_EQ(l.count("cat"), 1);
  EXPECT_EQ(l.count("_copy"), 0);
  // Promotion converts only the inputs of another dtype, then one kernel call.
  std::vector<Tensor> mixed = ts;
  mixed[3] = sample({2, 3}, TSR_I32, 40);
  mixed[17] = sample({1, 3}, TSR_F16, 41);
  Lookups m = trace_lookups([&] { r = cat(mixed, 0); });
  EXPECT_EQ(m.count("cat"), 1);
  EXPECT_EQ(m.count("_copy"), 2);
  EXPECT_TRUE(cat_matches(mixed, 0));
}

TEST(CatKernel, PromotionOfManyInputs) {
  std::vector<Tensor> ts;
  const tsr_dtype_t cycle[] = {TSR_BOOL, TSR_U8, TSR_I8, TSR_I32, TSR_F16};
  for (int k = 0; k < 20; ++k) ts.push_back(sample({2, 1 + k % 3, 3}, cycle[k % 5], 50 + uint64_t(k)));
  EXPECT_EQ(cat(ts, 1).dtype(), TSR_F16);
  EXPECT_TRUE(cat_matches(ts, 1));
  ts.push_back(sample({2, 2, 3}, TSR_BF16, 90));  // f16 with bf16: f32
  EXPECT_EQ(cat(ts, 1).dtype(), TSR_F32);
  EXPECT_TRUE(cat_matches(ts, 1));
  EXPECT_EQ(cat({sample({2}, TSR_BOOL, 1), sample({3}, TSR_U8, 2)}).dtype(), TSR_U8);
}

TEST(CatKernel, OddAndEmptyShapes) {
  for (tsr_dtype_t dt : {TSR_U8, TSR_F64, TSR_BF16}) {
    // Odd sizes, the dim in the middle, zero-size inputs along it and legacy 1-D empties.
    std::vector<Tensor> ts = {sample({3, 1, 7}, dt, 1), sample({3, 0, 7}, dt, 2), empty({0}, dt),
                              sample({3, 5, 7}, dt, 3), sample({3, 2, 7}, dt, 4), empty({0}, dt)};
    EXPECT_TRUE(cat_matches(ts, 1)) << dtype_name(dt);
    EXPECT_TRUE(cat_matches(ts, -2)) << dtype_name(dt);
    // Size 0 along another dim: an empty result of the right shape.
    EXPECT_EQ(cat({sample({0, 2}, dt, 5), sample({0, 3}, dt, 6), empty({0}, dt)}, 1).sizes(), Shape({0, 5}));
    // Every input empty along dim: [2, 0].
    EXPECT_EQ(cat({sample({2, 0}, dt, 7), sample({2, 0}, dt, 8)}, 1).sizes(), Shape({2, 0}));
    // One-element and 1-D inputs.
    EXPECT_TRUE(cat_matches({sample({1}, dt, 9), sample({4}, dt, 10), sample({1}, dt, 11)}, 0));
  }
}

TEST(CatKernel, StridedInputs) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor a = sample({5, 4}, dt, 1).t();                             // [4, 5] transposed
    Tensor b = sample({4, 12}, dt, 2).slice(1, 1, 12, 3);             // [4, 4], step 3
    Tensor c = sample({1, 3}, dt, 3).expand({4, 3});                  // [4, 3], stride 0
    Tensor d = sample({4, 2}, dt, 4);                                 // dense
    Tensor e = sample({8, 6}, dt, 5).slice(0, 0, 8, 2).slice(1, 1, 6, 2);  // [4, 3], both stepped
    EXPECT_TRUE(cat_matches({a, b, c, d, e}, 1)) << dtype_name(dt);
    EXPECT_TRUE(cat_matches({a.t(), b.t(), c.t(), d.t(), e.t()}, 0)) << dtype_name(dt);
    Tensor s = sample({3}, dt, 6).expand({2, 3});  // stride 0 along dim 0
    EXPECT_TRUE(cat_matches({s, sample({1, 3}, dt, 7), s}, 0)) << dtype_name(dt);
  }
}

// Outputs past the parallel grain (4 MiB), with rows whose size is not a multiple of the 64-byte
// chunk alignment, so that threads start in the middle of an input's block, a strided one among
// them (where the machine has two threads or more; one thread copies it all in one range).
TEST(CatKernel, LargeOutputsSplitAcrossThreads) {
  std::vector<Tensor> ts = {sample({14000, 37}, TSR_I16, 1), sample({14000, 61}, TSR_I16, 2),
                            sample({61, 14000}, TSR_I16, 3).t(), sample({14000, 1}, TSR_I16, 4)};
  EXPECT_TRUE(cat_matches(ts, 1));
  // A strided input of many rows split between threads: a chunk starts mid-row in it.
  std::vector<Tensor> split = {sample({1200, 1000}, TSR_F32, 5).t(), sample({1000, 1200}, TSR_F32, 6)};
  EXPECT_TRUE(cat_matches(split, 0));
  std::vector<Tensor> wide = {sample({1024, 900}, TSR_F64, 23), sample({1024, 700}, TSR_F64, 24)};
  EXPECT_TRUE(cat_matches(wide, 1));
}

// Autograd is cat_backward's, unchanged: each input's gradient is its slice of the cotangent.
TEST(CatKernel, GradientsOfManyInputs) {
  std::vector<Tensor> ts;
  for (int k = 0; k < 20; ++k) ts.push_back(randu({2, 1 + k % 3}, 70 + uint64_t(k)).requires_grad_());
  const Shape s = cat_shape(ts, 1);
  Tensor cot = randu(s, 99);
  std::vector<Tensor> g = autograd::grad({cat(ts, 1)}, ts, {cot});
  int64_t off = 0;
  for (size_t k = 0; k < ts.size(); ++k) {
    const int64_t n = ts[k].size(1);
    EXPECT_TRUE(close(g[k], values(cot.narrow(1, off, n)), {2, n}, 0, 0)) << "input " << k;
    off += n;
  }
}

}  // namespace
}  // namespace tsr::optest
