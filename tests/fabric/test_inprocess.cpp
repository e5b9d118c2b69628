// Collectives of the in-process engine on virtual CPU devices (TESSERA_CPU_DEVICES=4): every
// collective x dtype x size x world size against a float64 reference computed here from the
// members' inputs, and the errors (mismatches name both ranks; nothing is written).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "reference.hpp"
#include "tessera/distributed/collectives.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace fabric_test;

// 1M elements for float32 all_reduce and all_gather (the sizes of gradient buckets), small
// odd and empty sizes everywhere.
std::vector<int64_t> sizes_for(tsr_dtype_t dt, bool large = false) {
  if (dt == TSR_F32 && large) return {0, 1, 7, 1 << 20};
  return {0, 1, 7, 1000};
}


TEST(InProcess, AllReduceAndReduceEveryOpDtypeSizeWorld) {
  for (int world = 1; world <= 4; ++world) {
    dist::DeviceGroup g(devices(world));
    EXPECT_EQ(g.size(), world);
    for (tsr_dtype_t dt : kDtypes)
      for (int64_t n : sizes_for(dt, world == 4))
        for (dist::ReduceOp op : kOps) {
          if (n > 1000 && op != dist::ReduceOp::Sum) continue;
          const std::string what = "world " + std::to_string(world) + " " + tsr::dtype_name(dt) + " n " +
                                   std::to_string(n) + " op " + std::to_string(static_cast<int>(op));
          std::vector<Tensor> ts;
          std::vector<std::vector<double>> vs;
          for (int m = 0; m < world; ++m) {
            ts.push_back(random_on(n, dt, m, static_cast<uint64_t>(n)));
            vs.push_back(values(ts.back()));
          }
          std::vector<double> want(static_cast<size_t>(n));
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, op, dt);
          g.all_reduce(ts, op).wait();
          for (int m = 0; m < world; ++m) expect_values(ts[m], want, dt, "all_reduce " + what);
          // reduce: only the root (the last rank) changes.
          std::vector<Tensor> rs;
          for (int m = 0; m < world; ++m) rs.push_back(random_on(n, dt, m, static_cast<uint64_t>(n) + 1));
          std::vector<std::vector<double>> rv;
          for (const Tensor& t : rs) rv.push_back(values(t));
          g.reduce(rs, world - 1, op).wait();
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(rv, j, op, dt);
          for (int m = 0; m < world; ++m)
            expect_values(rs[m], m == world - 1 ? want : rv[m], dt, "reduce " + what + " rank " + std::to_string(m));
        }
  }
}

TEST(InProcess, BroadcastGatherScatterAllToAll) {
  for (int world = 1; world <= 4; ++world) {
    dist::DeviceGroup g(devices(world));
    check_data_movement(g, devices(world), [](tsr_dtype_t dt) { return sizes_for(dt); });
  }
}

TEST(InProcess, AllGatherOfAMillionFloats) {
  dist::DeviceGroup g(devices(4));
  const int64_t k = 1 << 20;
  std::vector<Tensor> in, out;
  for (int m = 0; m < 4; ++m) {
    in.push_back(tsr::full({k}, 1.5 + m, TSR_F32, Device::cpu(m)));
    out.push_back(tsr::zeros({4 * k}, TSR_F32, Device::cpu(m)));
  }
  g.all_gather(in, out).wait();
  for (int m = 0; m < 4; ++m) {
    std::vector<float> v = out[m].to_vector<float>();
    for (int s = 0; s < 4; ++s) {
      EXPECT_EQ(v[static_cast<size_t>(s * k)], 1.5f + s);
      EXPECT_EQ(v[static_cast<size_t>((s + 1) * k - 1)], 1.5f + s);
    }
  }
}

TEST(InProcess, NanPropagatesThroughMaxAndMin) {
  dist::DeviceGroup g(devices(2));
  Tensor a = tsr::from_vector(std::vector<float>{1, NAN, 3}, {3}, Device::cpu(0));
  Tensor b = tsr::from_vector(std::vector<float>{2, 5, NAN}, {3}, Device::cpu(1));
  g.all_reduce({a, b}, dist::ReduceOp::Max).wait();
  std::vector<float> v = a.to_vector<float>();
  EXPECT_EQ(v[0], 2);
  EXPECT_TRUE(std::isnan(v[1]) && std::isnan(v[2]));
}

// Tensors of different shapes, dtypes, devices or layouts are refused before anything is written,
// with both ranks named.
TEST(InProcess, MismatchesAreErrorsNamingBothRanksAndWriteNothing) {
  dist::DeviceGroup g(devices(3));
  Tensor a = random_on(4, TSR_F32, 0, 1), b = random_on(4, TSR_F32, 1, 1), c = random_on(5, TSR_F32, 2, 1);
  std::vector<double> a0 = values(a);
  auto expect_error = [](const std::function<void()>& f, tsr_code_t code, std::vector<std::string> parts) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  expect_error([&] { g.all_reduce({a, b, c}).wait(); }, TSR_INVALID_ARGUMENT,
               {"all_reduce", "rank 0's input is float32 [4] on cpu:0", "rank 2's is float32 [5] on cpu:2"});
  EXPECT_EQ(values(a), a0);  // untouched
  Tensor d = random_on(4, TSR_F64, 2, 1);
  expect_error([&] { g.all_reduce({a, b, d}).wait(); }, TSR_INVALID_ARGUMENT, {"float64", "dtypes differ"});
  Tensor on0 = random_on(4, TSR_F32, 0, 2);
  expect_error([&] { g.all_reduce({a, b, on0}).wait(); }, TSR_INVALID_ARGUMENT,
               {"the input of rank 2 is float32 [4] on cpu:0 but rank 2 is cpu:2"});
  Tensor wide = tsr::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}, Device::cpu(2));
  Tensor strided = wide.transpose(0, 1);
  expect_error([&] { g.broadcast({a.view({2, 2}), b.view({2, 2}), strided.narrow(0, 0, 2).narrow(1, 0, 2)}, 0).wait(); },
               TSR_INVALID_ARGUMENT, {"not contiguous"});
  expect_error([&] { g.all_reduce({a, b}).wait(); }, TSR_INVALID_ARGUMENT, {"2 tensors for a group with 3 members"});
  expect_error([&] { g.broadcast({a, b, random_on(4, TSR_F32, 2, 3)}, 3).wait(); }, TSR_INVALID_ARGUMENT,
               {"root 3"});
  std::vector<Tensor> outs = {tsr::zeros({11}, TSR_F32, Device::cpu(0)), tsr::zeros({11}, TSR_F32, Device::cpu(1)),
                              tsr::zeros({11}, TSR_F32, Device::cpu(2))};
  expect_error([&] { g.all_gather({a, b, random_on(4, TSR_F32, 2, 3)}, outs).wait(); }, TSR_INVALID_ARGUMENT,
               {"needs 12 elements"});
  expect_error([&] { g.reduce_scatter({a, b, random_on(4, TSR_F32, 2, 3)}, outs).wait(); }, TSR_INVALID_ARGUMENT,
               {"does not split into 3 equal slices"});
}

TEST(InProcess, GroupsSplitsInfoAndWhatThisEngineCannotDo) {
  dist::DeviceGroup g(devices(4));
  tsr_comm_group_info_t i = g.info();
  EXPECT_EQ(i.world_size, 4);
  EXPECT_EQ(i.num_local, 4);
  EXPECT_EQ(i.rank, 0);
  EXPECT_STREQ(i.engine, "inprocess");
  EXPECT_EQ(i.timeout_seconds, 300);
  dist::DeviceGroup odd = g.split({1, 3});
  EXPECT_EQ(odd.size(), 2);
  Tensor x = random_on(5, TSR_F32, 1, 5), y = random_on(5, TSR_F32, 3, 5);
  std::vector<double> sum = values(x);
  std::vector<double> yv = values(y);
  for (size_t j = 0; j < sum.size(); ++j) sum[j] += yv[j];
  odd.all_reduce({x, y}).wait();
  expect_values(x, sum, TSR_F32, "split all_reduce");
  try {
    g.split({2, 1});
    ADD_FAILURE() << "unsorted ranks accepted";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ascending"), std::string::npos) << e.what();
  }
  // A device twice, a missing device, a multi-process world, an engine this build lacks.
  for (auto bad : {std::vector<Device>{Device::cpu(0), Device::cpu(0)}, std::vector<Device>{Device::cpu(7)}}) {
    try {
      dist::DeviceGroup b(bad);
      ADD_FAILURE() << "bad devices accepted";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
    }
  }
  try {
    dist::DeviceGroup b(devices(2), 0, "nccl");
    ADD_FAILURE() << "nccl accepted";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("engine 'nccl'"), std::string::npos) << e.what();
  }
  // send/recv pair members of different processes.
  const auto* c = static_cast<const tsr_collectives_t*>(
      tsr::api()->get_extension(tsr::runtime(), TSR_COLLECTIVES_EXTENSION));
  ASSERT_NE(c, nullptr);
  tsr_comm_group_options_t o{};
  o.struct_size = sizeof(o);
  tsr_device_t ds[2] = {{TSR_DEVICE_TYPE_CPU, 0}, {TSR_DEVICE_TYPE_CPU, 1}};
  o.devices = ds;
  o.num_devices = 1;
  o.world_size = 2;
  o.rendezvous = "file:///tmp/nowhere";
  tsr_comm_group_t* mg = nullptr;
  tsr_status_t st = c->group_create(tsr::runtime(), &o, &mg);  // a multi-process group: gloo
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(tsr::api()->status_code(st), TSR_UNAVAILABLE);
  EXPECT_NE(std::string(tsr::api()->status_message(st)).find("/tmp/nowhere does not exist"), std::string::npos)
      << tsr::api()->status_message(st);
  tsr::api()->status_free(st);
  EXPECT_EQ(mg, nullptr);
  for (const char* bad : {"tcp://127.0.0.1", "ftp://host/dir"}) {  // no port; neither file:// nor tcp://
    o.rendezvous = bad;
    st = c->group_create(tsr::runtime(), &o, &mg);
    ASSERT_NE(st, nullptr) << bad;
    EXPECT_EQ(tsr::api()->status_code(st), TSR_INVALID_ARGUMENT) << tsr::api()->status_message(st);
    tsr::api()->status_free(st);
  }
  // A work handle keeps the outcome; waiting twice gives it twice.
  tsr_comm_group_t* grp = nullptr;
  o.num_devices = 2;
  o.world_size = 0;
  o.rendezvous = nullptr;
  tsr::check(c->group_create(tsr::runtime(), &o, &grp));
  Tensor t0 = random_on(5, TSR_F32, 0, 9), t1 = random_on(5, TSR_F32, 1, 9);
  tsr_tensor_t* ts[2] = {t0.get(), t1.get()};
  tsr_collective_args_t a{};
  a.struct_size = sizeof(a);
  a.kind = TSR_COLLECTIVE_SEND;
  a.num_tensors = 2;
  a.inputs = ts;
  tsr_comm_work_t* w = nullptr;
  ASSERT_EQ(c->collective(grp, &a, &w), nullptr);
  c->group_release(grp);  // the work keeps the group alive
  int32_t done = 0;
  tsr::check(c->work_query(w, &done));
  EXPECT_EQ(done, 1);
  for (int k = 0; k < 2; ++k) {
    tsr_status_t ws = c->work_wait(w, -1);
    ASSERT_NE(ws, nullptr);
    EXPECT_EQ(tsr::api()->status_code(ws), TSR_UNIMPLEMENTED);
    tsr::api()->status_free(ws);
  }
  c->work_release(w);
}

}  // namespace
