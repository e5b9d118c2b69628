// The cpu device: ops from several host threads at once (large OpenMP and small ones), and
// virtual cpu devices from TESSERA_CPU_DEVICES.
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

TEST(CpuConcurrency, OpsFromSeveralThreads) {
  // Kernels are re-entrant: several host threads run large (OpenMP) and small ops at once.
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      std::mt19937 rng(900 + unsigned(t));
      Tensor a = tt::random_tensor({300, 700}, TSR_F32, rng), b = tt::random_tensor({700}, TSR_F32, rng);
      const auto av = tt::values(a), bv = tt::values(b);
      bool good = true;
      for (int it = 0; it < 5; ++it) {
        const auto s = tsr::sum(a * b + 1.0, {1}).to_vector<float>();
        for (int64_t r = 0; r < 300 && good; r += 37) {
          double ref = 0;
          for (int64_t c = 0; c < 700; ++c) ref += double(float(av[size_t(r * 700 + c)] * bv[size_t(c)])) + 1.0;
          good = std::fabs(s[size_t(r)] - ref) <= 1e-4 * (1 + std::fabs(ref));
        }
        const auto one = (tsr::ones({1}) + tsr::ones({1})).to_vector<float>();
        good = good && one[0] == 2.0f;
      }
      ok[size_t(t)] = good ? 1 : 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST(CpuDevices, VirtualDevicesFromEnvironment) {
  const tsr_api_t* api = tsr::api();
  setenv("TESSERA_CPU_DEVICES", "3", 1);
  tsr_runtime_t* rt = nullptr;
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof(opts);
  tsr_status_t st = api->runtime_create(&opts, &rt);
  unsetenv("TESSERA_CPU_DEVICES");
  ASSERT_EQ(st, nullptr) << api->status_message(st);
  EXPECT_EQ(api->device_count(rt, TSR_DEVICE_TYPE_CPU), 3);
  tsr::set_runtime(rt);
  {
    Tensor a = tsr::from_vector<float>({1, 2, 3}, {3}, tsr::Device::cpu(2));
    Tensor b = tsr::ones({3}, TSR_F32, tsr::Device::cpu(2));
    Tensor c = a + b;
    EXPECT_EQ(c.device(), tsr::Device::cpu(2));
    Tensor d = c.to(tsr::Device::cpu(1));
    EXPECT_EQ(d.device(), tsr::Device::cpu(1));
    EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  }
  tsr::set_runtime(nullptr);
  api->runtime_destroy(rt);

  setenv("TESSERA_CPU_DEVICES", "lots", 1);
  rt = nullptr;
  st = api->runtime_create(&opts, &rt);
  unsetenv("TESSERA_CPU_DEVICES");
  // The cpu plugin refuses to load; the runtime reports why.
  if (st == nullptr) {
    bool found = false;
    for (size_t i = 0; i < api->plugin_count(rt); ++i) {
      tsr_plugin_record_t rec{};
      rec.struct_size = sizeof(rec);
      ASSERT_EQ(api->plugin_record(rt, i, &rec), nullptr);
      if (std::string(rec.name) == "cpu" && !rec.loaded) {
        found = true;
        EXPECT_NE(std::string(rec.reason).find("TESSERA_CPU_DEVICES"), std::string::npos) << rec.reason;
      }
    }
    EXPECT_TRUE(found);
    api->runtime_destroy(rt);
  } else {
    EXPECT_NE(std::string(api->status_message(st)).find("TESSERA_CPU_DEVICES"), std::string::npos);
    api->status_free(st);
  }
}

}  // namespace
