// The ring engine (backends/fabric/ring.cpp) on virtual CPU devices (TESSERA_CPU_DEVICES=4):
// the same algorithm that reduces among GPUs over peer copies when NCCL cannot be loaded, here
// with engine "ring" so that it runs without GPUs. Every collective x dtype x size x world size
// against a float64 reference; sizes that do not split evenly into the ring's chunks; in-place
// and aliased forms; errors before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "reference.hpp"
#include "tessera/distributed/collectives.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace fabric_test;

dist::DeviceGroup ring(int world) { return dist::DeviceGroup(devices(world), 0, "ring"); }

TEST(Ring, AllReduceAndReduceEveryOpDtypeSizeWorld) {
  for (int world = 1; world <= 4; ++world) {
    dist::DeviceGroup g = ring(world);
    EXPECT_STREQ(g.info().engine, "ring");
    for (tsr_dtype_t dt : kDtypes)
      // 0, 1 and 2 elements leave some of the ring's chunks empty; 7 and 1001 split unevenly.
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{7}, int64_t{1001}})
        for (dist::ReduceOp op : kOps) {
          const std::string what = "world " + std::to_string(world) + " " + tsr::dtype_name(dt) + " n " +
                                   std::to_string(n) + " op " + std::to_string(static_cast<int>(op));
          std::vector<Tensor> ts;
          std::vector<std::vector<double>> vs;
          for (int m = 0; m < world; ++m) {
            ts.push_back(random_on(n, dt, m, static_cast<uint64_t>(n) + 40));
            vs.push_back(values(ts.back()));
          }
          std::vector<double> want(static_cast<size_t>(n));
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, op, dt);
          g.all_reduce(ts, op).wait();
          for (int m = 0; m < world; ++m) expect_ring_values(ts[m], want, vs, dt, "all_reduce " + what);
          // reduce: only the root (rank 1 where there is one) changes; the others keep their inputs.
          const int root = world > 1 ? 1 : 0;
          std::vector<Tensor> rs;
          std::vector<std::vector<double>> rv;
          for (int m = 0; m < world; ++m) {
            rs.push_back(random_on(n, dt, m, static_cast<uint64_t>(n) + 41));
            rv.push_back(values(rs.back()));
          }
          g.reduce(rs, root, op).wait();
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(rv, j, op, dt);
          for (int m = 0; m < world; ++m) {
            if (m == root)
              expect_ring_values(rs[m], want, rv, dt, "reduce " + what);
            else
              EXPECT_EQ(values(rs[m]), rv[m]) << "reduce " << what << ": rank " << m << "'s input changed";
          }
        }
  }
}

TEST(Ring, AllReduceOfAMillionFloatsOverFourDevices) {
  dist::DeviceGroup g = ring(4);
  const int64_t n = (1 << 20) + 3;  // gradient-bucket sized, and not a multiple of 4
  std::vector<Tensor> ts;
  std::vector<std::vector<double>> vs;
  for (int m = 0; m < 4; ++m) {
    ts.push_back(random_on(n, TSR_F32, m, 77));
    vs.push_back(values(ts.back()));
  }
  std::vector<double> want(static_cast<size_t>(n));
  for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, dist::ReduceOp::Avg, TSR_F32);
  g.all_reduce(ts, dist::ReduceOp::Avg).wait();
  for (int m = 0; m < 4; ++m) expect_ring_values(ts[m], want, vs, TSR_F32, "avg of 1M floats, rank " + std::to_string(m));
}

TEST(Ring, BroadcastGatherScatterAllToAll) {
  for (int world = 1; world <= 4; ++world)
    check_data_movement(ring(world), devices(world),
                        [](tsr_dtype_t) { return std::vector<int64_t>{0, 1, 7, 1000}; }, Rounding::per_step);
}

// all_gather_into_tensor's in-place form (each input a slice of its own output) and an
// all_to_all whose outputs are its inputs.
TEST(Ring, InPlaceGatherAndAliasedAllToAll) {
  const int world = 3;
  const int64_t k = 5;
  dist::DeviceGroup g = ring(world);
  std::vector<Tensor> out, in;
  std::vector<double> cat;
  for (int m = 0; m < world; ++m) {
    out.push_back(tsr::zeros({world * k}, TSR_F32, Device::cpu(m)));
    in.push_back(out.back().narrow(0, m * k, k));
    in.back().copy_(random_on(k, TSR_F32, m, 21));
    std::vector<double> v = values(in.back());
    cat.insert(cat.end(), v.begin(), v.end());
  }
  g.all_gather(in, out).wait();
  for (int m = 0; m < world; ++m) EXPECT_EQ(values(out[m]), cat) << "rank " << m;

  std::vector<Tensor> a;
  std::vector<std::vector<double>> av;
  for (int m = 0; m < world; ++m) {
    a.push_back(random_on(world * 2, TSR_I64, m, 22));
    av.push_back(values(a.back()));
  }
  g.all_to_all(a, a).wait();
  for (int i = 0; i < world; ++i) {
    std::vector<double> want;
    for (int j = 0; j < world; ++j) want.insert(want.end(), av[j].begin() + i * 2, av[j].begin() + (i + 1) * 2);
    EXPECT_EQ(values(a[i]), want) << "rank " << i;
  }
}

TEST(Ring, NanPropagatesThroughMaxAndMin) {
  dist::DeviceGroup g = ring(3);
  for (dist::ReduceOp op : {dist::ReduceOp::Max, dist::ReduceOp::Min}) {
    Tensor a = tsr::from_vector(std::vector<float>{1, NAN, 3, 4}, {4}, Device::cpu(0));
    Tensor b = tsr::from_vector(std::vector<float>{2, 5, NAN, -4}, {4}, Device::cpu(1));
    Tensor c = tsr::from_vector(std::vector<float>{0, 0, 0, 0}, {4}, Device::cpu(2));
    g.all_reduce({a, b, c}, op).wait();
    for (const Tensor& t : {a, b, c}) {
      std::vector<float> v = t.to_vector<float>();
      EXPECT_EQ(v[0], op == dist::ReduceOp::Max ? 2 : 0);
      EXPECT_TRUE(std::isnan(v[1]) && std::isnan(v[2]));
      EXPECT_EQ(v[3], op == dist::ReduceOp::Max ? 4 : -4);
    }
  }
}

TEST(Ring, ErrorsComeBeforeAnythingIsWritten) {
  dist::DeviceGroup g = ring(3);
  Tensor a = random_on(4, TSR_F32, 0, 1), b = random_on(4, TSR_F32, 1, 1), c = random_on(5, TSR_F32, 2, 1);
  const std::vector<double> a0 = values(a), b0 = values(b);
  auto expect_error = [](const std::function<void()>& f, tsr_code_t code, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error([&] { g.all_reduce({a, b, c}).wait(); }, TSR_INVALID_ARGUMENT, "rank 2's is float32 [5] on cpu:2");
  Tensor strided = tsr::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}, Device::cpu(2)).select(1, 0);
  expect_error([&] { g.all_reduce({a, b, strided}).wait(); }, TSR_INVALID_ARGUMENT, "not contiguous");
  EXPECT_EQ(values(a), a0);
  EXPECT_EQ(values(b), b0);
  expect_error([&] { g.send(a, 1).wait(); }, TSR_UNIMPLEMENTED, "point to point");
  // One process only.
  try {
    dist::DeviceGroup::join(Device::cpu(0), 0, 2, "file:///tmp/nowhere", 1, "ring");
    ADD_FAILURE() << "a multi-process ring group was accepted";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("devices of one process"), std::string::npos) << e.what();
  }
}

TEST(Ring, SubgroupsOfARingAreRings) {
  dist::DeviceGroup g = ring(4);
  dist::DeviceGroup odd = g.split({1, 3});
  EXPECT_STREQ(odd.info().engine, "ring");
  Tensor x = random_on(9, TSR_F64, 1, 5), y = random_on(9, TSR_F64, 3, 5);
  std::vector<std::vector<double>> vs = {values(x), values(y)};
  std::vector<double> sum(9);
  for (size_t j = 0; j < sum.size(); ++j) sum[j] = vs[0][j] + vs[1][j];
  odd.all_reduce({x, y}).wait();
  expect_ring_values(x, sum, vs, TSR_F64, "split all_reduce rank 1");
  expect_ring_values(y, sum, vs, TSR_F64, "split all_reduce rank 3");
}

}  // namespace
