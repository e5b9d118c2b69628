// The NCCL engine of the fabric backend on cuda devices, against references computed on the host
// (reference.hpp): a group of one GPU (every collective x reduce op x dtype x size 0, 1, 7 and 1M
// floats), the in-process group over every GPU of the machine (2 or more), work handles and
// streams, argument errors, and a collective captured into a CUDA graph. Without a cuda device
// (or with one GPU, for the multi-GPU cases) each test skips and says why; the test names start
// with "cuda." so that `ctest -R cuda` (tools/gpu-check.sh) runs them.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reference.hpp"
#include "tessera/distributed/collectives.hpp"
#include "tessera/device.hpp"
#include "tessera/stream.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace fabric_test;

// The machine's cuda devices, or none with the reason.
std::vector<Device> cuda_devices(std::string* why) {
  const tsr_api_t* api = tsr::api();
  int32_t type = -1;
  if (tsr_status_t st = api->device_type_lookup(tsr::runtime(), "cuda", &type)) {
    api->status_free(st);
    *why = "needs a cuda device: no \"cuda\" device type (the CUDA backend plugin is not loaded)";
    return {};
  }
  std::vector<Device> ds;
  for (int32_t i = 0; i < api->device_count(tsr::runtime(), type); ++i) ds.push_back(Device(tsr_device_t{type, i}));
  if (ds.empty()) *why = "needs a cuda device: the CUDA backend found no GPU";
  return ds;
}

#define REQUIRE_GPUS(var, n)                                                                          \
  std::string why_;                                                                                   \
  const std::vector<Device> var = cuda_devices(&why_);                                                \
  if (var.empty()) GTEST_SKIP() << why_;                                                              \
  if (static_cast<int>(var.size()) < (n))                                                             \
    GTEST_SKIP() << "needs " << (n) << " GPUs for a multi-GPU group, this machine has " << var.size()

// Sizes: 1M elements for float32 (a gradient bucket), odd and empty ones everywhere.
std::vector<int64_t> sizes_for(tsr_dtype_t dt) {
  if (dt == TSR_F32) return {0, 1, 7, 1 << 20};
  return {0, 1, 7, 1000};
}

// all_reduce and reduce (root: the last rank) of every op, dtype and size over `ds`.
void check_reductions(const dist::DeviceGroup& g, const std::vector<Device>& ds) {
  const int world = static_cast<int>(ds.size());
  for (tsr_dtype_t dt : kDtypes)
    for (int64_t n : sizes_for(dt))
      for (dist::ReduceOp op : kOps) {
        if (n > 1000 && op != dist::ReduceOp::Sum && op != dist::ReduceOp::Avg) continue;
        const std::string what = describe(ds, dt, n, op);
        std::vector<Tensor> ts;
        std::vector<std::vector<double>> vs;
        for (int m = 0; m < world; ++m) {
          ts.push_back(random_on(n, dt, m, static_cast<uint64_t>(n), ds[m]));
          vs.push_back(values(ts.back()));
        }
        std::vector<double> want(static_cast<size_t>(n));
        for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, op, dt);
        g.all_reduce(ts, op).wait();
        for (int m = 0; m < world; ++m) expect_values(ts[m], want, dt, "all_reduce " + what);
        std::vector<Tensor> rs;
        std::vector<std::vector<double>> rv;
        for (int m = 0; m < world; ++m) {
          rs.push_back(random_on(n, dt, m, static_cast<uint64_t>(n) + 1, ds[m]));
          rv.push_back(values(rs.back()));
        }
        g.reduce(rs, world - 1, op).wait();
        for (size_t j = 0; j < want.size(); ++j) want[j] = reference(rv, j, op, dt);
        for (int m = 0; m < world; ++m)
          expect_values(rs[m], m == world - 1 ? want : rv[m], dt, "reduce " + what + " rank " + std::to_string(m));
      }
}

void expect_error(const std::function<void()>& f, tsr_code_t code, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Nccl, OneGpuEveryCollectiveOpDtypeAndSize) {
  REQUIRE_GPUS(ds, 1);
  const std::vector<Device> one = {ds[0]};
  dist::DeviceGroup g(one);  // no engine named: cuda members pick nccl
  tsr_comm_group_info_t info = g.info();
  EXPECT_STREQ(info.engine, "nccl");
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.num_local, 1);
  check_reductions(g, one);
  check_data_movement(g, one, sizes_for);
}

TEST(Nccl, InProcessGroupOverEveryGpu) {
  REQUIRE_GPUS(ds, 2);
  dist::DeviceGroup g(ds, 0, "nccl");
  EXPECT_EQ(g.size(), static_cast<int>(ds.size()));
  check_reductions(g, ds);
  check_data_movement(g, ds, sizes_for);
  // A subgroup of the first and last GPU (ncclCommSplit).
  dist::DeviceGroup ends = g.split({0, static_cast<int32_t>(ds.size()) - 1});
  EXPECT_EQ(ends.size(), 2);
  EXPECT_STREQ(ends.info().engine, "nccl");
  Tensor x = random_on(5, TSR_F32, 0, 5, ds.front()), y = random_on(5, TSR_F32, 1, 5, ds.back());
  std::vector<double> sum = values(x);
  const std::vector<double> yv = values(y);
  for (size_t j = 0; j < sum.size(); ++j) sum[j] += yv[j];
  ends.all_reduce({x, y}).wait();
  expect_values(x, sum, TSR_F32, "split all_reduce");
  expect_values(y, sum, TSR_F32, "split all_reduce");
  // Mismatches are refused before anything is enqueued, naming both ranks.
  Tensor a = random_on(4, TSR_F32, 0, 1, ds[0]);
  const std::vector<double> a0 = values(a);
  std::vector<Tensor> bad = {a};
  for (size_t m = 1; m < ds.size(); ++m) bad.push_back(random_on(m + 1 == ds.size() ? 5 : 4, TSR_F32, 1, 1, ds[m]));
  expect_error([&] { g.all_reduce(bad).wait(); }, TSR_INVALID_ARGUMENT, {"all_reduce", "shapes differ"});
  EXPECT_EQ(values(a), a0);
  expect_error([&] { g.send(a, 1).wait(); }, TSR_UNIMPLEMENTED, {"send", "one member per process"});
}

TEST(Nccl, WorkRunsOnTheCurrentStream) {
  REQUIRE_GPUS(ds, 1);
  dist::DeviceGroup g({ds[0]});
  tsr::Stream s(ds[0]);
  Tensor t = tsr::full({1 << 20}, 2.0, TSR_F32, ds[0]);
  tsr::Stream::default_stream(ds[0]).synchronize();  // s does not wait for the default stream
  {
    tsr::StreamGuard guard(s);
    tsr::record_stream(t, s);
    Tensor u = t * 3.0;  // queued on s before the collective
    dist::Work w = g.all_reduce({u}, dist::ReduceOp::Max);
    w.wait();
    EXPECT_TRUE(w.done());
    EXPECT_EQ(u.to_vector<float>()[12345], 6.0f);
    w.wait();  // twice: the same outcome
  }
  // A work handle outlives its group.
  dist::Work late;
  {
    dist::DeviceGroup h({ds[0]});
    late = h.all_reduce({t});
  }
  late.wait();
  EXPECT_EQ(t.to_vector<float>()[0], 2.0f);
}

TEST(Nccl, ArgumentErrors) {
  REQUIRE_GPUS(ds, 1);
  dist::DeviceGroup g({ds[0]});
  Tensor wide = tsr::zeros({4, 2}, TSR_F32, ds[0]);
  expect_error([&] { g.all_reduce({wide.transpose(0, 1)}).wait(); }, TSR_INVALID_ARGUMENT, {"not contiguous"});
  expect_error([&] { g.all_reduce({tsr::zeros({3}, TSR_F32)}).wait(); }, TSR_INVALID_ARGUMENT,
               {"the input of rank 0 is float32 [3] on cpu:0"});
  // int16: moved as bytes, but NCCL cannot reduce it.
  Tensor s16 = tsr::full({7}, 3.0, TSR_I16, ds[0]);
  g.broadcast({s16}, 0).wait();
  EXPECT_EQ(s16.to(TSR_F64).to_vector<double>()[6], 3.0);
  expect_error([&] { g.all_reduce({s16}).wait(); }, TSR_UNIMPLEMENTED, {"int16"});
  expect_error([&] { g.broadcast({s16}, 1).wait(); }, TSR_INVALID_ARGUMENT, {"root 1"});
  // cpu and cuda members together.
  expect_error([&] { dist::DeviceGroup mixed({Device::cpu(0), ds[0]}); }, TSR_INVALID_ARGUMENT,
               {"mix device types"});
  expect_error([&] { dist::DeviceGroup wrong({ds[0]}, 0, "gloo"); }, TSR_UNIMPLEMENTED, {"nccl"});
}

// The ring engine (the fallback when NCCL cannot be loaded) over every GPU: peer copies and the
// cuda backend's own kernels, each on the current stream of the GPU it writes, the streams joined
// between ring steps. Non-default streams on every GPU make the ordering matter.
TEST(Nccl, RingEngineOverEveryGpu) {
  REQUIRE_GPUS(ds, 1);
  dist::DeviceGroup g(ds, 0, "ring");
  EXPECT_STREQ(g.info().engine, "ring");
  const int world = static_cast<int>(ds.size());
  std::vector<tsr::Stream> streams;
  for (const Device& d : ds) {
    streams.emplace_back(d);
    tsr::synchronize(d);  // the new streams do not wait for the default ones
  }
  for (tsr_dtype_t dt : {TSR_F32, TSR_F16, TSR_BF16, TSR_I32, TSR_BOOL})
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{(1 << 20) + 3}})
      for (dist::ReduceOp op : kOps) {
        const std::string what = describe(ds, dt, n, op);
        std::vector<Tensor> ts;
        std::vector<std::vector<double>> vs;
        for (int m = 0; m < world; ++m) {
          ts.push_back(random_on(n, dt, m, static_cast<uint64_t>(n) + 3, ds[m]));
          vs.push_back(values(ts.back()));
        }
        std::vector<double> want(static_cast<size_t>(n));
        for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, op, dt);
        {
          std::vector<std::unique_ptr<tsr::StreamGuard>> guards;
          for (const tsr::Stream& s : streams) guards.push_back(std::make_unique<tsr::StreamGuard>(s));
          for (int m = 0; m < world; ++m) tsr::record_stream(ts[m], streams[m]);
          g.all_reduce(ts, op).wait();
        }
        for (int m = 0; m < world; ++m) expect_ring_values(ts[m], want, vs, dt, "ring all_reduce " + what);
      }
  check_data_movement(g, ds, sizes_for);
}

// all_gather captured into a graph: each replay copies the input's current values.
TEST(Nccl, CapturedIntoACudaGraph) {
  REQUIRE_GPUS(ds, 1);
  dist::DeviceGroup g({ds[0]});
  tsr::Stream s(ds[0]);
  Tensor in = tsr::full({1000}, 1.0, TSR_F32, ds[0]), out = tsr::zeros({1000}, TSR_F32, ds[0]);
  tsr::Stream::default_stream(ds[0]).synchronize();  // s does not wait for the default stream
  tsr::Graph graph(ds[0]);
  {
    tsr::GraphCapture cap(graph, s);
    g.all_gather({in}, {out});  // enqueues only: no event under capture
    cap.end();
  }
  EXPECT_EQ(out.to_vector<float>()[999], 0.0f);  // captured, not run
  in.fill_(7.0);
  tsr::Stream::default_stream(ds[0]).synchronize();
  graph.replay(s);
  s.synchronize();
  EXPECT_EQ(out.to_vector<float>()[999], 7.0f);
}

}  // namespace
