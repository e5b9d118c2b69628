// Allocator statistics and snapshot through the public API.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tessera/ext_dispatch_trace.h"
#include "tessera/tessera.hpp"

static tsr_memory_stats_t stats() {
  tsr_memory_stats_t s{};
  s.struct_size = sizeof(s);
  tsr::check(tsr::api()->memory_stats(tsr::runtime(), tsr_device_t{0, 0}, &s));
  return s;
}

TEST(Memory, StatsTrackLiveTensorsAndCacheReuse) {
  tsr_memory_stats_t before = stats();
  {
    tsr::Tensor a = tsr::empty({1000}, TSR_F32);
    tsr_memory_stats_t during = stats();
    EXPECT_GE(during.allocated_bytes - before.allocated_bytes, 4000);
    EXPECT_EQ(during.num_allocs, before.num_allocs + 1);
  }
  tsr_memory_stats_t after = stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GT(after.reserved_bytes, 0);
  // A second allocation of the same size comes from the cache.
  { tsr::Tensor b = tsr::empty({1000}, TSR_F32); }
  tsr_memory_stats_t again = stats();
  EXPECT_GT(again.num_cache_hits, after.num_cache_hits);
  EXPECT_EQ(again.num_raw_allocs, after.num_raw_allocs);
}

// CPU tensors of at most 16 bytes keep their data in their own host block (TensorBlock): they
// never reach the device allocator, so its statistics do not move; 17 bytes and more do.
TEST(Memory, SmallCpuTensorsLiveInTheirBlock) {
  tsr_memory_stats_t before = stats();
  {
    tsr::Tensor scalar = tsr::full({}, 2.5, TSR_F64);
    tsr::Tensor four = tsr::randn({4});                      // 16 bytes
    tsr::Tensor two_longs = tsr::empty({2}, TSR_I64);        // 16 bytes
    tsr::Tensor sum = tsr::sum(four);                        // an op output
    tsr_memory_stats_t during = stats();
    EXPECT_EQ(during.num_allocs, before.num_allocs);
    EXPECT_EQ(during.allocated_bytes, before.allocated_bytes);
    EXPECT_EQ(scalar.item<double>(), 2.5);
    std::vector<float> v = four.to_vector<float>();
    EXPECT_FLOAT_EQ(sum.item<float>(), v[0] + v[1] + v[2] + v[3]);
    EXPECT_NE(two_longs.data_ptr(), nullptr);
    tsr::Tensor five = tsr::randn({5});  // 20 bytes: the allocator's
    EXPECT_EQ(stats().num_allocs, before.num_allocs + 1);
  }
  EXPECT_EQ(stats().allocated_bytes, before.allocated_bytes);
}

// A view keeps a small tensor's block (its storage) alive after the tensor itself is gone, and
// blocks reused by later tensors do not disturb it.
TEST(Memory, ViewsOfSmallTensorsOutliveThem) {
  tsr::Tensor view;
  std::vector<float> want;
  {
    tsr::Tensor base = tsr::from_vector(std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f}, {2, 2});
    view = base.t();  // non-contiguous, same storage
    want = {1.5f, 3.25f, -2.0f, 4.0f};
  }
  std::vector<tsr::Tensor> churn;
  for (int i = 0; i < 64; ++i) churn.push_back(tsr::full({4}, static_cast<double>(i)));
  EXPECT_EQ(view.contiguous().to_vector<float>(), want);
  churn.clear();
  EXPECT_EQ((view * 2.0).contiguous().to_vector<float>(), (std::vector<float>{3.0f, 6.5f, -4.0f, 8.0f}));
}

// Tensor blocks freed on another thread than the one that made them go to that thread's pool
// (or to the heap once it is full, or after the thread has ended); their data stays intact.
TEST(Memory, TensorsMadeOnOneThreadFreedOnAnother) {
  for (int round = 0; round < 3; ++round) {
    std::vector<tsr::Tensor> made;
    std::thread producer([&] {
      for (int i = 0; i < 600; ++i) made.push_back(tsr::full({i % 2 ? 1 : 64}, static_cast<double>(i)));
    });
    producer.join();  // its pool is gone: blocks freed from now on go to this thread's pool
    for (int i = 0; i < 600; i += 97) EXPECT_EQ(made[static_cast<size_t>(i)].to_vector<float>()[0], static_cast<float>(i));
    std::thread consumer([&] { made.clear(); });
    consumer.join();
    tsr::Tensor after = tsr::full({1}, 7.0) + 1.0;
    EXPECT_EQ(after.item<float>(), 8.0f);
  }
}

TEST(Memory, SnapshotIsJsonWithSegments) {
  tsr::Tensor keep = tsr::empty({4096}, TSR_F32);
  char* js = nullptr;
  tsr::check(tsr::api()->memory_snapshot(tsr::runtime(), tsr_device_t{0, 0}, &js));
  std::string s = js;
  tsr::api()->string_free(js);
  EXPECT_NE(s.find("\"segments\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"active\""), std::string::npos) << s;
}

TEST(Memory, OutOfMemoryIsAStatusWithNumbers) {
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof(opts);
  opts.alloc_conf = "limit_mb:8";
  tsr_runtime_t* rt = nullptr;
  tsr::check(tsr::api()->runtime_create(&opts, &rt));
  int64_t sizes[1] = {int64_t(16) << 20};  // 64 MiB of f32
  tsr_tensor_t* t = nullptr;
  tsr_status_t st = tsr::api()->tensor_empty(rt, 1, sizes, TSR_F32, tsr_device_t{0, 0}, &t);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(tsr::api()->status_code(st), TSR_RESOURCE_EXHAUSTED);
  std::string m = tsr::api()->status_message(st);
  tsr::api()->status_free(st);
  EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
  EXPECT_NE(m.find("empty"), std::string::npos) << m;
  EXPECT_EQ(t, nullptr);
  // The runtime keeps working after the OOM.
  int64_t small[1] = {16};
  ASSERT_EQ(tsr::api()->tensor_empty(rt, 1, small, TSR_F32, tsr_device_t{0, 0}, &t), nullptr);
  tsr::api()->tensor_release(t);
  tsr::api()->runtime_destroy(rt);
}

// Guard mode (guard_bytes): canaries around every allocation, checked after every kernel. A
// write past the end of a tensor (here by hand, as a broken kernel would) is reported by the
// next kernel that touches the tensor, with the op, the kernel and the tensor named, once.
TEST(Memory, GuardBytesCatchAWritePastTheEnd) {
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof(opts);
  opts.alloc_conf = "guard_bytes:256";
  tsr_runtime_t* rt = nullptr;
  tsr::check(tsr::api()->runtime_create(&opts, &rt));
  tsr::set_runtime(rt);
  {
    std::vector<float> v(15);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f + static_cast<float>(i) * 0.25f;
    tsr::Tensor x = tsr::from_vector(v, {5, 3});
    std::vector<float> neg(v.size());
    for (size_t i = 0; i < v.size(); ++i) neg[i] = -v[i];
    EXPECT_EQ(tsr::call("neg", {x}).to_vector<float>(), neg);  // intact guards: ops work as usual
    float* data = static_cast<float*>(x.data_ptr());
    data[15] = 1.0f;  // one float past the end
    data[20] = 2.0f;  // and 24 bytes past it
    try {
      tsr::call("neg", {x});
      ADD_FAILURE() << "the damaged guard bytes went unnoticed";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), TSR_DATA_LOSS);
      std::string m = e.what();
      EXPECT_NE(m.find("neg: kernel"), std::string::npos) << m;
      EXPECT_NE(m.find("on cpu:0 wrote outside input 0 (float32 [5, 3])"), std::string::npos) << m;
      EXPECT_NE(m.find("8 of the 256 guard bytes after the end of its block of 60 bytes were overwritten, up to 24 "
                       "bytes past the end"),
                std::string::npos)
          << m;
    }
    // Reported once: the canaries were rewritten.
    EXPECT_EQ(tsr::call("neg", {x}).to_vector<float>(), neg);
    data[-1] = 3.0f;  // before the start
    try {
      tsr::call("neg", {x});
      ADD_FAILURE() << "the damaged guard bytes went unnoticed";
    } catch (const tsr::Error& e) {
      EXPECT_NE(std::string(e.what()).find("guard bytes before the start"), std::string::npos) << e.what();
    }
  }
  tsr::set_runtime(nullptr);
  tsr::api()->runtime_destroy(rt);
}

TEST(Devices, DescribeAndAllocatorName) {
  char buf[128];
  tsr::check(tsr::api()->device_describe(tsr::runtime(), tsr_device_t{0, 1}, buf, sizeof(buf)));
  EXPECT_EQ(std::string(buf).rfind("cpu:1", 0), 0u) << buf;
  const char* name = tsr::api()->device_allocator_name(tsr::runtime(), tsr_device_t{0, 0});
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name, "caching(cpu)");
  EXPECT_EQ(tsr::api()->device_allocator_name(tsr::runtime(), tsr_device_t{0, 9}), nullptr);
  tsr_status_t st = tsr::api()->device_describe(tsr::runtime(), tsr_device_t{5, 0}, buf, sizeof(buf));
  ASSERT_NE(st, nullptr);
  tsr::api()->status_free(st);
}

// tessera.dispatch_trace: the core's own extension reports every kernel lookup.
namespace {
struct Seen {
  std::vector<std::string> ops;
  std::vector<int32_t> dtypes, found;
};
void record_lookup(void* user, const char* op, tsr_device_t, int32_t dtype, int32_t has_kernel) {
  auto* s = static_cast<Seen*>(user);
  s->ops.push_back(op);
  s->dtypes.push_back(dtype);
  s->found.push_back(has_kernel);
}
}  // namespace

TEST(DispatchTrace, ObserverSeesEveryKernelLookup) {
  const auto* t = static_cast<const tsr_dispatch_trace_t*>(
      tsr::api()->get_extension(tsr::runtime(), TSR_DISPATCH_TRACE_EXTENSION));
  ASSERT_NE(t, nullptr);
  ASSERT_GE(t->struct_size, sizeof(tsr_dispatch_trace_t));
  tsr::Tensor a = tsr::from_vector(std::vector<float>{1, 2, 3});
  tsr::Tensor b = tsr::from_vector(std::vector<float>{4, 5, 6});
  Seen seen;
  tsr::check(t->set_observer(tsr::runtime(), record_lookup, &seen));
  tsr_status_t twice = t->set_observer(tsr::runtime(), record_lookup, &seen);
  ASSERT_NE(twice, nullptr);
  EXPECT_EQ(tsr::api()->status_code(twice), TSR_FAILED_PRECONDITION);
  tsr::api()->status_free(twice);
  tsr::Tensor c = tsr::call("add", {a, b});
  tsr::Tensor t2 = a.transpose(0, 0);  // a view: no kernel
  tsr::check(t->set_observer(tsr::runtime(), nullptr, nullptr));
  tsr::call("mul", {a, b});  // not observed any more
  ASSERT_EQ(seen.ops.size(), 1u);
  EXPECT_EQ(seen.ops[0], "add");
  EXPECT_EQ(seen.dtypes[0], TSR_F32);
  EXPECT_EQ(seen.found[0], 1);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{5, 7, 9}));
}
