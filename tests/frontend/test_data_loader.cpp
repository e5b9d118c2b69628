// tsr::data::DataLoader: coverage of every sample per epoch with and without workers, seeded
// order, resumable position, early exit and destruction while workers are blocked, errors
// from the dataset, the workers' runtime and grad mode.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "op_test.hpp"
#include "tessera/data.hpp"

namespace {

using tsr::Tensor;
using tsr::data::DataLoader;
using tsr::data::DataLoaderOptions;
using tsr::data::Example;
using tsr::optest::throws_with;

// Rows (id, 0.5 id + 3) so that a batch can be traced back to its samples and a mixed-up field
// is noticed.
std::shared_ptr<tsr::data::TensorDataset> id_dataset(int64_t n) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::vector<double> vals;
  for (int64_t i = 0; i < n; ++i) {
    ids[size_t(i)] = i;
    vals.push_back(0.5 * double(i) + 3.0);
    vals.push_back(-double(i));
  }
  return std::make_shared<tsr::data::TensorDataset>(
      std::vector<Tensor>{tsr::from_vector(ids, {n}), tsr::from_vector(vals, {n, 2})});
}

DataLoaderOptions opts(int64_t bs, bool shuffle, bool drop_last, int workers, int prefetch = 2, uint64_t seed = 17) {
  DataLoaderOptions o;
  o.batch_size = bs;
  o.shuffle = shuffle;
  o.seed = seed;
  o.drop_last = drop_last;
  o.num_workers = workers;
  o.prefetch = prefetch;
  return o;
}

// The ids of one loop's batches, checking that each batch's second field belongs to its ids.
std::vector<std::vector<int64_t>> one_pass(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const Example& b : loader) {
    EXPECT_EQ(b.size(), 2u);
    std::vector<int64_t> ids = b[0].to_vector<int64_t>();
    std::vector<double> v = b[1].to_vector<double>();
    EXPECT_EQ(v.size(), 2 * ids.size());
    for (size_t k = 0; k < ids.size() && 2 * k + 1 < v.size(); ++k) {
      EXPECT_EQ(v[2 * k], 0.5 * double(ids[k]) + 3.0);
      EXPECT_EQ(v[2 * k + 1], -double(ids[k]));
    }
    out.push_back(ids);
  }
  return out;
}
std::vector<int64_t> flat(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> f;
  for (auto& b : batches) f.insert(f.end(), b.begin(), b.end());
  return f;
}

TEST(DataLoader, EverySampleExactlyOncePerEpoch) {
  struct Case {
    int64_t n, bs;
  };
  for (Case c : {Case{10, 3}, Case{12, 4}, Case{7, 7}, Case{5, 8}, Case{1, 1}})
    for (int workers : {0, 1, 3})
      for (bool shuffle : {false, true})
        for (bool drop_last : {false, true}) {
          SCOPED_TRACE("n " + std::to_string(c.n) + " bs " + std::to_string(c.bs) + " workers " +
                       std::to_string(workers) + " shuffle " + std::to_string(shuffle) + " drop_last " +
                       std::to_string(drop_last));
          DataLoader loader(id_dataset(c.n), opts(c.bs, shuffle, drop_last, workers));
          const int64_t full = c.n / c.bs, rest = c.n % c.bs;
          const int64_t expect_batches = full + (rest && !drop_last ? 1 : 0);
          EXPECT_EQ(loader.size(), expect_batches);
          for (int epoch = 0; epoch < 2; ++epoch) {
            auto batches = one_pass(loader);
            ASSERT_EQ(int64_t(batches.size()), expect_batches);
            for (size_t b = 0; b < batches.size(); ++b)
              EXPECT_EQ(int64_t(batches[b].size()), int64_t(b) < full ? c.bs : rest);
            std::vector<int64_t> ids = flat(batches);
            std::map<int64_t, int> seen;
            for (int64_t i : ids) seen[i]++;
            for (auto& kv : seen) EXPECT_EQ(kv.second, 1) << "id " << kv.first;
            EXPECT_EQ(int64_t(seen.size()), drop_last ? full * c.bs : c.n);
            for (int64_t i : ids) EXPECT_TRUE(i >= 0 && i < c.n);
            if (!shuffle) {
              for (size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(ids[k], int64_t(k));
            }
            // The seeded order, whatever the number of workers.
            if (shuffle) {
              auto order = tsr::data::shuffled_indices(size_t(c.n), 17, uint64_t(epoch));
              EXPECT_EQ(ids, std::vector<int64_t>(order.begin(), order.begin() + int64_t(ids.size())));
            }
            EXPECT_EQ(loader.epoch(), expect_batches > 0 ? uint64_t(epoch + 1) : 0u);  // an empty epoch never ends
          }
        }
}

TEST(DataLoader, EmptyDatasetGivesNoBatches) {
  for (int workers : {0, 2}) {
    DataLoader loader(id_dataset(0), opts(4, true, false, workers));
    EXPECT_EQ(loader.size(), 0);
    EXPECT_TRUE(loader.begin() == loader.end());
    EXPECT_TRUE(one_pass(loader).empty());
  }
}

TEST(DataLoader, SameSeedAndEpochSameOrderOtherEpochOtherOrder) {
  auto ds = id_dataset(40);
  DataLoader a(ds, opts(6, true, false, 0)), b(ds, opts(6, true, false, 3));
  a.set_epoch(5);
  b.set_epoch(5);
  auto pa = flat(one_pass(a));
  EXPECT_EQ(pa, flat(one_pass(b)));
  // The pass moved both to epoch 6: consecutive loops are consecutive epochs.
  EXPECT_EQ(a.epoch(), 6u);
  auto next = flat(one_pass(a));
  EXPECT_NE(next, pa);
  b.set_epoch(6);
  EXPECT_EQ(flat(one_pass(b)), next);
  a.set_epoch(5);
  EXPECT_EQ(flat(one_pass(a)), pa);
  DataLoader c(ds, opts(6, true, false, 0, 2, /*seed=*/18));
  c.set_epoch(5);
  EXPECT_NE(flat(one_pass(c)), pa);
}

TEST(DataLoader, ResumesMidEpochFromItsState) {
  auto ds = id_dataset(23);
  for (int workers : {0, 2}) {
    DataLoader ref(ds, opts(4, true, false, workers));
    ref.set_epoch(2);
    auto full = one_pass(ref);
    ASSERT_EQ(full.size(), 6u);

    DataLoader first(ds, opts(4, true, false, workers));
    first.set_epoch(2);
    tsr::data::DataLoaderState saved;
    tsr::StateDict sd;
    int k = 0;
    for (const Example& b : first) {
      EXPECT_EQ(b[0].to_vector<int64_t>(), full[size_t(k)]);
      ++k;
      saved = first.state();  // a checkpoint written after batch k - 1
      sd = first.state_dict();
      if (k == 3) break;
    }
    EXPECT_EQ(saved, (tsr::data::DataLoaderState{17, 2, 3}));
    EXPECT_EQ(first.state(), saved);
    // The abandoned loop's position carries over to the next loop on the same loader.
    auto rest = one_pass(first);
    EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(full.begin() + 3, full.end()));

    DataLoader resumed(ds, opts(4, true, false, workers));
    resumed.load_state_dict(sd);
    EXPECT_EQ(resumed.state(), saved);
    EXPECT_EQ(one_pass(resumed), rest);
    EXPECT_EQ(resumed.state(), (tsr::data::DataLoaderState{17, 3, 0}));

    // A checkpoint written during the last batch resumes at the next epoch.
    DataLoader last(ds, opts(4, true, false, workers));
    last.set_epoch(2);
    last.skip_to(5);
    tsr::data::DataLoaderState during_last;
    for (const Example& b : last) {
      EXPECT_EQ(b[0].to_vector<int64_t>(), full[5]);
      during_last = last.state();
    }
    EXPECT_EQ(during_last, (tsr::data::DataLoaderState{17, 3, 0}));
    // skip_to(size()) means "this epoch is done".
    last.set_epoch(2);
    last.skip_to(6);
    auto e3 = one_pass(last);
    ref.set_epoch(3);
    EXPECT_EQ(e3, one_pass(ref));
  }
}

TEST(DataLoader, StateErrors) {
  DataLoader loader(id_dataset(10), opts(4, true, false, 0));
  EXPECT_TRUE(throws_with([&] { loader.skip_to(4); }, {"batch 4", "3 batches"}));
  EXPECT_TRUE(throws_with([&] { loader.skip_to(-1); }, {"batch -1"}));
  EXPECT_TRUE(throws_with([&] { loader.load_state({18, 0, 0}); }, {"seed 18", "seed 17"}));
  tsr::StateDict sd = loader.state_dict();
  sd.erase("epoch");
  EXPECT_TRUE(throws_with([&] { loader.load_state_dict(sd); }, {"missing key 'epoch'"}));
  sd.insert("epoch", tsr::zeros({2}));
  EXPECT_TRUE(throws_with([&] { loader.load_state_dict(sd); }, {"'epoch'", "int64", "[2]"}));
  EXPECT_EQ(loader.state(), (tsr::data::DataLoaderState{17, 0, 0}));  // nothing half-loaded
}

TEST(DataLoader, BadOptions) {
  auto ds = id_dataset(3);
  EXPECT_TRUE(throws_with([&] { DataLoader(ds, opts(0, false, false, 0)); }, {"batch_size", "got 0"}));
  EXPECT_TRUE(throws_with([&] { DataLoader(ds, opts(2, false, false, -1)); }, {"num_workers", "got -1"}));
  EXPECT_TRUE(throws_with([&] { DataLoader(ds, opts(2, false, false, 2, 0)); }, {"prefetch", "got 0"}));
  EXPECT_TRUE(throws_with([&] { DataLoader(nullptr, opts(2, false, false, 0)); }, {"null dataset"}));
}

// A dataset that counts how far ahead workers ran and can be slowed down.
struct Slow : tsr::data::Dataset {
  size_t n;
  int sleep_us;
  mutable std::atomic<int> calls{0};
  Slow(size_t n_, int us) : n(n_), sleep_us(us) {}
  size_t size() const override { return n; }
  Example get(size_t i) const override {
    calls++;
    if (sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    return {tsr::full({}, double(i), TSR_I64)};
  }
};

TEST(DataLoader, BreakingEarlyAndDestroyingWhileWorkersAreBlockedIsClean) {
  for (int rep = 0; rep < 20; ++rep) {
    auto ds = std::make_shared<Slow>(200, rep % 2 ? 200 : 0);
    {
      DataLoader loader(ds, opts(2, rep % 3 == 0, false, 3, 1));
      int seen = 0;
      for (const Example& b : loader) {
        (void)b;
        if (++seen == 2) break;
      }
      if (rep % 2 == 0) {
        // Leaving the loop joined the workers: nothing is produced any more.
        const int calls = ds->calls.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        EXPECT_EQ(ds->calls.load(), calls);
        // The loader outlives the loop; a new loop starts new workers at the position.
        EXPECT_EQ(loader.state().next_batch, 2);
        auto it = loader.begin();
        EXPECT_EQ(it.batch_index(), 2);
      }
      // Destroyed with workers blocked on full queues (or inside get()).
    }
    // Bounded prefetch: 3 workers x 1 batch ahead x 2 samples, plus the batches delivered.
    EXPECT_LE(ds->calls.load(), 2 * (3 + 3 + 2 + 3));
  }
}

TEST(DataLoader, AnIteratorOutlivingItsLoaderIsCancelledNotDangling) {
  auto ds = std::make_shared<Slow>(50, 0);
  DataLoader::Iterator it;
  {
    DataLoader loader(ds, opts(5, false, false, 2, 1));
    it = loader.begin();
    EXPECT_EQ((*it)[0].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  }
  try {
    ++it;
    FAIL() << "advancing a stopped loop did not throw";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_CANCELLED);
    EXPECT_NE(std::string(e.what()).find("stopped"), std::string::npos) << e.what();
  }
}

TEST(DataLoader, ANewLoopCancelsThePreviousOne) {
  DataLoader loader(std::make_shared<Slow>(30, 0), opts(5, false, false, 2, 1));
  auto it = loader.begin();
  auto it2 = loader.begin();  // the first loop's position was batch 1; this continues there
  EXPECT_EQ(it2.batch_index(), 1);
  EXPECT_THROW(++it, tsr::Error);
  ++it2;
  EXPECT_EQ((*it2)[0].to_vector<int64_t>(), (std::vector<int64_t>{10, 11, 12, 13, 14}));
}

// Samples that take very different times, so workers finish out of order.
struct Jittery : tsr::data::Dataset {
  size_t size() const override { return 60; }
  Example get(size_t i) const override {
    std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 5 == 0 ? 2000 : 0));
    return {tsr::full({}, double(i), TSR_I64)};
  }
};

TEST(DataLoader, BatchesArriveInOrderWhenWorkersFinishOutOfOrder) {
  for (int workers : {2, 4}) {
    DataLoader loader(std::make_shared<Jittery>(), opts(3, true, false, workers, 3, 9));
    std::vector<int64_t> got;
    int64_t k = 0;
    for (auto it = loader.begin(); it != loader.end(); ++it, ++k) {
      EXPECT_EQ(it.batch_index(), k);
      for (int64_t v : (*it)[0].to_vector<int64_t>()) got.push_back(v);
    }
    EXPECT_EQ(got, tsr::data::shuffled_indices(60, 9, 0));
  }
}

struct Faulty : tsr::data::Dataset {
  size_t bad;
  bool tessera_error;
  Faulty(size_t b, bool te) : bad(b), tessera_error(te) {}
  size_t size() const override { return 40; }
  Example get(size_t i) const override {
    if (i == bad) {
      if (tessera_error) throw tsr::Error(TSR_DATA_LOSS, "sample " + std::to_string(i) + " is corrupt");
      throw std::runtime_error("disk on fire");
    }
    return {tsr::full({}, double(i), TSR_I64)};
  }
};

TEST(DataLoader, ADatasetExceptionSurfacesInTheConsumerWithTheBatch) {
  for (int workers : {0, 1, 3})
    for (bool te : {true, false}) {
      SCOPED_TRACE("workers " + std::to_string(workers));
      DataLoader loader(std::make_shared<Faulty>(13, te), opts(4, false, false, workers));
      int delivered = 0;
      try {
        for (const Example& b : loader) {
          EXPECT_EQ(b[0].to_vector<int64_t>()[0], int64_t(4 * delivered));
          ++delivered;
        }
        ADD_FAILURE() << "no exception";
      } catch (const tsr::Error& e) {
        std::string m = e.what();
        EXPECT_EQ(e.code(), te ? TSR_DATA_LOSS : TSR_UNKNOWN);
        EXPECT_NE(m.find("batch 3"), std::string::npos) << m;
        EXPECT_NE(m.find("[12, 13, 14, 15]"), std::string::npos) << m;
        EXPECT_NE(m.find(te ? "sample 13 is corrupt" : "disk on fire"), std::string::npos) << m;
        if (workers) {
          EXPECT_NE(m.find("worker " + std::to_string(3 % workers)), std::string::npos) << m;
        }
      }
      EXPECT_EQ(delivered, 3);
      // The failed batch was not consumed: a new loop retries it.
      EXPECT_EQ(loader.state().next_batch, 3);
      EXPECT_THROW(loader.begin(), tsr::Error);
    }
}

// Records, from inside get(), which runtime and grad mode the calling thread had.
struct Probe : tsr::data::Dataset {
  Tensor w;
  mutable std::atomic<int> grad_on{0}, wrong_rt{0};
  tsr_runtime_t* expect_rt;
  Probe(Tensor w_, tsr_runtime_t* rt) : w(std::move(w_)), expect_rt(rt) {}
  size_t size() const override { return 12; }
  Example get(size_t i) const override {
    if (tsr::is_grad_enabled()) grad_on++;
    if (tsr::runtime() != expect_rt) wrong_rt++;
    // A computation on a tensor that requires grad: recorded only if grad mode were on.
    return {tsr::full({2}, double(i), TSR_F32) * w};
  }
};

TEST(DataLoader, WorkersUseTheLoadersRuntimeWithoutAutograd) {
  tsr_runtime_options_t ro{};
  ro.struct_size = sizeof(ro);
  tsr_runtime_t* rt = nullptr;
  tsr::check(tsr::api()->runtime_create(&ro, &rt));
  {
    Tensor w;
    {
      tsr::RuntimeScope scope(rt);
      w = tsr::ones({2}).requires_grad_();
    }
    auto ds = std::make_shared<Probe>(w, rt);
    for (int workers : {0, 2}) {
      DataLoaderOptions o = opts(5, true, false, workers);
      o.runtime = rt;
      DataLoader loader(ds, o);
      int n = 0;
      for (const Example& b : loader) {
        EXPECT_EQ(b[0].runtime(), rt);
        EXPECT_FALSE(b[0].requires_grad());
        ++n;
      }
      EXPECT_EQ(n, 3);
    }
    EXPECT_EQ(ds->grad_on.load(), 0);
    EXPECT_EQ(ds->wrong_rt.load(), 0);
    EXPECT_TRUE(tsr::is_grad_enabled());  // the consumer's grad mode is untouched
  }
  tsr::api()->runtime_destroy(rt);
}

TEST(DataLoader, CustomDatasetBatchesAreTheStackedSamples) {
  struct Pairs : tsr::data::Dataset {
    size_t size() const override { return 11; }
    Example get(size_t i) const override {
      return {tsr::from_vector(std::vector<double>{std::cos(double(i)), std::exp(-double(i))}, {2}),
              tsr::full({}, double(i % 3), TSR_I64)};
    }
  };
  for (int workers : {0, 3}) {
    DataLoader loader(std::make_shared<Pairs>(), opts(4, true, false, workers, 2, 5));
    std::vector<int64_t> order = tsr::data::shuffled_indices(11, 5, 0);
    size_t k = 0;
    for (const Example& b : loader) {
      std::vector<double> x;
      std::vector<int64_t> y;
      for (int64_t r = 0; r < b[0].size(0); ++r, ++k) {
        x.push_back(std::cos(double(order[k])));
        x.push_back(std::exp(-double(order[k])));
        y.push_back(order[k] % 3);
      }
      EXPECT_TRUE(tsr::optest::close(b[0], x, {int64_t(y.size()), 2}, 0, 0));
      EXPECT_EQ(b[1].to_vector<int64_t>(), y);
    }
    EXPECT_EQ(k, 11u);
  }
}

}  // namespace
