// tsr::data datasets, the seeded order (shuffled_indices, BatchSampler) and pinned-memory
// staging through a supplied "tessera.pinned_host" table.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>

#include "op_test.hpp"
#include "tessera/data.hpp"

namespace {

using tsr::Tensor;
using tsr::data::Example;
using tsr::optest::throws_with;

// Sample i: a [2, 3] float64 feature with element (r, c) = sin(i + 0.1 r + 0.01 c), a 0-dim
// int64 label 3 i + 1 and a [1] float32 weight i / 7.
struct Synthetic : tsr::data::Dataset {
  size_t n;
  explicit Synthetic(size_t n_) : n(n_) {}
  static double feature(size_t i, int r, int c) { return std::sin(double(i) + 0.1 * r + 0.01 * c); }
  size_t size() const override { return n; }
  Example get(size_t i) const override {
    if (i >= n) throw tsr::Error(TSR_OUT_OF_RANGE, "Synthetic: index " + std::to_string(i));
    std::vector<double> f;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) f.push_back(feature(i, r, c));
    return {tsr::from_vector(f, {2, 3}), tsr::from_vector(std::vector<int64_t>{int64_t(3 * i + 1)}, {}),
            tsr::from_vector(std::vector<float>{float(i) / 7.f}, {1})};
  }
};

TEST(DataDataset, DefaultGetBatchStacksEachFieldOfTheSamples) {
  Synthetic ds(9);
  std::vector<int64_t> idx{7, 0, 4, 4, 8};
  Example b = ds.get_batch(idx);
  ASSERT_EQ(b.size(), 3u);
  std::vector<double> f, w;
  std::vector<int64_t> y;
  for (int64_t i : idx) {
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) f.push_back(Synthetic::feature(size_t(i), r, c));
    y.push_back(3 * i + 1);
    w.push_back(double(float(i) / 7.f));
  }
  EXPECT_TRUE(tsr::optest::close(b[0], f, {5, 2, 3}, 0, 0));
  EXPECT_EQ(b[1].sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(b[1].dtype(), TSR_I64);
  EXPECT_EQ(b[1].to_vector<int64_t>(), y);
  EXPECT_EQ(b[2].dtype(), TSR_F32);
  EXPECT_TRUE(tsr::optest::close(b[2], w, {5, 1}, 0, 0));
}

struct Ragged : tsr::data::Dataset {
  size_t size() const override { return 4; }
  Example get(size_t i) const override {
    if (i == 3) return {tsr::zeros({2})};  // one field instead of two
    return {tsr::zeros({i == 2 ? 3 : 2}), tsr::zeros({})};
  }
};

TEST(DataDataset, DefaultGetBatchNamesTheSampleThatDoesNotFit) {
  Ragged ds;
  EXPECT_TRUE(throws_with([&] { ds.get_batch({0, 2}); }, {"get_batch", "field 0", "sample 2", "[3]", "[2]"}));
  EXPECT_TRUE(throws_with([&] { ds.get_batch({1, 3}); }, {"sample 3", "1 fields", "has 2"}));
  EXPECT_TRUE(throws_with([&] { ds.get_batch({1, 4}); }, {"index 4", "size 4"}));
  EXPECT_TRUE(throws_with([&] { ds.get_batch({}); }, {"empty index list"}));
}

TEST(DataDataset, TensorDatasetRowsAndGatheredBatches) {
  Tensor x = tsr::optest::randu({6, 2, 2}, 11);
  Tensor y = tsr::optest::randint({6}, 12, 0, 100);
  auto xs = x.to_vector<double>();
  auto ys = y.to_vector<int64_t>();
  tsr::data::TensorDataset ds({x, y});
  EXPECT_EQ(ds.size(), 6u);
  Example r = ds.get(4);
  EXPECT_TRUE(tsr::optest::close(r[0], std::vector<double>(xs.begin() + 16, xs.begin() + 20), {2, 2}, 0, 0));
  EXPECT_EQ(r[1].item<int64_t>(), ys[4]);
  EXPECT_TRUE(r[0].shares_storage(x));  // a row is a view

  std::vector<int64_t> idx{5, 1, 1, 0};
  Example b = ds.get_batch(idx);
  std::vector<double> ex;
  std::vector<int64_t> ey;
  for (int64_t i : idx) {
    for (int k = 0; k < 4; ++k) ex.push_back(xs[size_t(i * 4 + k)]);
    ey.push_back(ys[size_t(i)]);
  }
  EXPECT_TRUE(tsr::optest::close(b[0], ex, {4, 2, 2}, 0, 0));
  EXPECT_EQ(b[1].to_vector<int64_t>(), ey);
  EXPECT_FALSE(b[0].shares_storage(x));  // a batch is a copy: training may not alias the dataset
}

TEST(DataDataset, TensorDatasetErrors) {
  Tensor a = tsr::zeros({4, 2}), b = tsr::zeros({5});
  EXPECT_TRUE(throws_with([&] { tsr::data::TensorDataset({}); }, {"TensorDataset", "no tensors"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::TensorDataset({a, b}); }, {"tensor 1", "[5]", "[4, 2]", "dim 0"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::TensorDataset({a, tsr::zeros({})}); }, {"tensor 1", "[]"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::TensorDataset({a, Tensor()}); }, {"tensor 1", "undefined"}));
  tsr::data::TensorDataset ds({a});
  EXPECT_TRUE(throws_with([&] { ds.get(4); }, {"index 4", "size 4"}));
  EXPECT_TRUE(throws_with([&] { ds.get_batch({0, -1}); }, {"index -1", "size 4"}));
}

TEST(DataDataset, TensorDatasetOfZeroRows) {
  tsr::data::TensorDataset ds({tsr::zeros({0, 3})});
  EXPECT_EQ(ds.size(), 0u);
  EXPECT_TRUE(throws_with([&] { ds.get(0); }, {"index 0", "size 0"}));
}

TEST(DataDataset, SubsetMapsIndices) {
  auto base = std::make_shared<Synthetic>(10);
  tsr::data::Subset sub(base, {9, 2, 5});
  EXPECT_EQ(sub.size(), 3u);
  EXPECT_EQ(sub.get(1)[1].item<int64_t>(), 7);
  EXPECT_EQ(sub.get_batch({2, 0})[1].to_vector<int64_t>(), (std::vector<int64_t>{16, 28}));
  EXPECT_TRUE(throws_with([&] { sub.get(3); }, {"Subset", "index 3", "size 3"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::Subset(base, {10}); }, {"Subset", "index 10", "size 10"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::Subset(nullptr, {}); }, {"null"}));
}

// ---- the order ----

bool is_permutation_of_range(const std::vector<int64_t>& p) {
  std::vector<int64_t> s = p;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != int64_t(i)) return false;
  return true;
}

TEST(DataSampler, ShuffleIsAPermutationFixedBySeedAndEpoch) {
  for (size_t n : {0, 1, 2, 7, 100}) {
    auto p = tsr::data::shuffled_indices(n, 42, 3);
    EXPECT_EQ(p.size(), n);
    EXPECT_TRUE(is_permutation_of_range(p));
    EXPECT_EQ(p, tsr::data::shuffled_indices(n, 42, 3));
  }
  auto a = tsr::data::shuffled_indices(100, 42, 3);
  EXPECT_NE(a, tsr::data::shuffled_indices(100, 42, 4));
  EXPECT_NE(a, tsr::data::shuffled_indices(100, 43, 3));
  EXPECT_NE(a, tsr::data::shuffled_indices(100, 42 + (uint64_t(1) << 32), 3));  // the seed's high half counts
  EXPECT_NE(a, tsr::data::shuffled_indices(100, 42, 3 + (uint64_t(1) << 32)));
  std::vector<int64_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(a, identity);
}

TEST(DataSampler, ShuffleIsPinnedAcrossPlatformsAndReleases) {
  // The order is part of a checkpoint's meaning: this known answer must never change.
  EXPECT_EQ(tsr::data::shuffled_indices(10, 1234, 5), (std::vector<int64_t>{7, 6, 8, 3, 5, 0, 1, 2, 4, 9}));
}

TEST(DataSampler, ShuffleIsUniform) {
  // Where element 0 lands and which element comes first over 4000 epochs of n = 5: each of the
  // 5 outcomes about 800 times. Chi-square with 4 degrees of freedom, p = 0.001 at 18.47.
  const int trials = 4000;
  std::vector<int> where(5), first(5);
  for (int e = 0; e < trials; ++e) {
    auto p = tsr::data::shuffled_indices(5, 99, uint64_t(e));
    first[size_t(p[0])]++;
    for (size_t i = 0; i < 5; ++i)
      if (p[i] == 0) where[i]++;
  }
  for (auto* counts : {&where, &first}) {
    double chi2 = 0, expect = trials / 5.0;
    for (int c : *counts) chi2 += (c - expect) * (c - expect) / expect;
    EXPECT_LT(chi2, 18.47);
  }
}

TEST(DataSampler, MulHiMatchesWideMultiplication) {
  std::mt19937_64 g(5);
  for (int i = 0; i < 1000; ++i) {
    uint64_t a = g(), b = g() >> (i % 64);
    __extension__ unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    EXPECT_EQ(tsr::data::detail::mulhi64(a, b), static_cast<uint64_t>(p >> 64));
  }
  EXPECT_EQ(tsr::data::detail::mulhi64(~uint64_t(0), ~uint64_t(0)), ~uint64_t(0) - 1);
}

TEST(DataSampler, BatchesCoverTheOrder) {
  tsr::data::BatchSampler s(10, 4, true, 8, false, 2);
  EXPECT_EQ(s.num_batches(), 3);
  auto order = tsr::data::shuffled_indices(10, 8, 2);
  EXPECT_EQ(s.batch(0), std::vector<int64_t>(order.begin(), order.begin() + 4));
  EXPECT_EQ(s.batch(2), std::vector<int64_t>(order.begin() + 8, order.end()));
  EXPECT_EQ(tsr::data::BatchSampler(10, 4, true, 8, true).num_batches(), 2);
  EXPECT_EQ(tsr::data::BatchSampler(0, 4, true, 8, false).num_batches(), 0);
  EXPECT_EQ(tsr::data::BatchSampler(3, 4, false, 8, true).num_batches(), 0);
  tsr::data::BatchSampler seq(5, 2, false, 0, false);
  EXPECT_EQ(seq.batch(2), (std::vector<int64_t>{4}));
  EXPECT_TRUE(throws_with([&] { seq.batch(3); }, {"batch 3", "3 batches"}));
  EXPECT_TRUE(throws_with([&] { tsr::data::BatchSampler(5, 0, false, 0, false); }, {"batch_size", "got 0"}));
}

// ---- pinned memory ----

// A stand-in for a device backend's table: "pinned" tensors are ordinary CPU tensors, counted.
std::atomic<int> g_pinned_made{0};
std::atomic<bool> g_pinned_exhausted{false};
tsr_status_t fake_alloc(tsr_runtime_t*, size_t, void**) { return tsr::api()->status_create(TSR_UNIMPLEMENTED, "fake"); }
void fake_free(tsr_runtime_t*, void*) {}
tsr_status_t fake_tensor_empty(tsr_runtime_t* rt, int32_t ndim, const int64_t* sizes, tsr_dtype_t dt,
                               tsr_tensor_t** out) {
  if (g_pinned_exhausted) return tsr::api()->status_create(TSR_RESOURCE_EXHAUSTED, "fake: no pinned memory left");
  g_pinned_made++;
  return tsr::api()->tensor_empty(rt, ndim, sizes, dt, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, out);
}
const tsr_pinned_host_t kFakePinned = {sizeof(tsr_pinned_host_t), 0, fake_alloc, fake_free, fake_tensor_empty};

TEST(DataPinned, CpuOnlyRuntimeHasNoPinnedMemoryAndPinningIsANoOp) {
  EXPECT_EQ(tsr::data::find_pinned_host(tsr::runtime()), nullptr);
  Tensor x = tsr::optest::randu({6, 2}, 3);
  tsr::data::DataLoaderOptions o;
  o.batch_size = 4;
  o.pin_memory = true;
  tsr::data::DataLoader loader(std::make_shared<tsr::data::TensorDataset>(std::vector<Tensor>{x}), o);
  EXPECT_FALSE(loader.pinning());
  int64_t rows = 0;
  for (const Example& b : loader) rows += b[0].size(0);
  EXPECT_EQ(rows, 6);
}

TEST(DataPinned, BatchesAreStagedThroughTheTable) {
  Tensor x = tsr::optest::randu({7, 3}, 4);
  Tensor y = tsr::optest::randint({7}, 5, 0, 9);
  auto ds = std::make_shared<tsr::data::TensorDataset>(std::vector<Tensor>{x, y});
  for (int workers : {0, 2}) {
    g_pinned_made = 0;
    tsr::data::DataLoaderOptions o;
    o.batch_size = 3;
    o.num_workers = workers;
    o.pin_memory = true;
    o.pinned_host = &kFakePinned;
    tsr::data::DataLoader loader(ds, o);
    EXPECT_TRUE(loader.pinning());
    int64_t b = 0;
    for (const Example& batch : loader) {
      Example ref = ds->get_batch(tsr::data::BatchSampler(7, 3, false, 0, false).batch(b++));
      EXPECT_TRUE(tsr::optest::close(batch[0], ref[0], 0, 0));
      EXPECT_EQ(batch[1].to_vector<int64_t>(), ref[1].to_vector<int64_t>());
    }
    EXPECT_EQ(b, 3);
    EXPECT_EQ(g_pinned_made.load(), 6);  // 3 batches x 2 fields
  }
}

TEST(DataPinned, ExhaustedPinnedMemoryFallsBackAndBadTablesAreRejected) {
  Tensor x = tsr::optest::randu({4, 2}, 6);
  tsr::Tensor p;
  g_pinned_exhausted = true;
  EXPECT_NO_THROW(p = tsr::data::pin(x, &kFakePinned));
  g_pinned_exhausted = false;
  EXPECT_TRUE(p.shares_storage(x));
  g_pinned_made = 0;
  p = tsr::data::pin(x, &kFakePinned);
  EXPECT_EQ(g_pinned_made.load(), 1);
  EXPECT_FALSE(p.shares_storage(x));
  EXPECT_TRUE(tsr::optest::close(p, x, 0, 0));

  tsr_pinned_host_t old = kFakePinned;
  old.struct_size = offsetof(tsr_pinned_host_t, tensor_empty);  // a table from before tensor_empty
  tsr::data::DataLoaderOptions o;
  o.pin_memory = true;
  o.pinned_host = &old;
  auto ds = std::make_shared<tsr::data::TensorDataset>(std::vector<Tensor>{x});
  EXPECT_TRUE(throws_with([&] { tsr::data::DataLoader(ds, o); }, {"pinned_host", "tensor_empty"}));
}

}  // namespace
