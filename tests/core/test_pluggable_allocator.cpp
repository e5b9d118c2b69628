// A plugin's named allocator replaces the default one when TESSERA_ALLOC_CONF asks for it.
#include <gtest/gtest.h>

#include <atomic>

#include "tessera/tessera.hpp"

namespace {
struct Counters {
  std::atomic<long> allocs;
  std::atomic<long> frees;
};

tsr_runtime_t* make_runtime(const char* conf) {
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.plugin_path = TRACKING_PLUGIN_DIR;  // then the default dir (cpu)
  o.alloc_conf = conf;
  tsr_runtime_t* rt = nullptr;
  tsr::check(tsr::api()->runtime_create(&o, &rt));
  return rt;
}
}  // namespace

TEST(PluggableAllocator, ConfigSelectsThePluginAllocator) {
  tsr_runtime_t* rt = make_runtime("cpu.allocator:tracking");
  auto* c = static_cast<const Counters*>(tsr::api()->get_extension(rt, "tracking.counters"));
  ASSERT_NE(c, nullptr);
  long a0 = c->allocs.load(), f0 = c->frees.load();
  {
    int64_t n = 100;
    tsr_tensor_t* t = nullptr;
    tsr::check(tsr::api()->tensor_empty(rt, 1, &n, TSR_F32, tsr_device_t{0, 0}, &t));
    EXPECT_EQ(c->allocs.load(), a0 + 1);
    tsr::api()->tensor_release(t);
    EXPECT_EQ(c->frees.load(), f0 + 1);  // passthrough: freed at once
  }
  char* js = nullptr;
  tsr::check(tsr::api()->memory_snapshot(rt, tsr_device_t{0, 0}, &js));
  EXPECT_NE(std::string(js).find("tracking"), std::string::npos) << js;
  tsr::api()->string_free(js);
  tsr::api()->runtime_destroy(rt);
}

TEST(PluggableAllocator, DefaultConfigKeepsTheCachingAllocator) {
  tsr_runtime_t* rt = make_runtime("");
  auto* c = static_cast<const Counters*>(tsr::api()->get_extension(rt, "tracking.counters"));
  ASSERT_NE(c, nullptr);
  long a0 = c->allocs.load();
  int64_t n = 100;
  tsr_tensor_t* t = nullptr;
  tsr::check(tsr::api()->tensor_empty(rt, 1, &n, TSR_F32, tsr_device_t{0, 0}, &t));
  tsr::api()->tensor_release(t);
  EXPECT_EQ(c->allocs.load(), a0);
  tsr::api()->runtime_destroy(rt);
}

TEST(PluggableAllocator, UnknownAllocatorNameFailsRuntimeCreation) {
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.alloc_conf = "allocator:nonexistent";
  tsr_runtime_t* rt = nullptr;
  tsr_status_t st = tsr::api()->runtime_create(&o, &rt);
  ASSERT_NE(st, nullptr);
  std::string m = tsr::api()->status_message(st);
  tsr::api()->status_free(st);
  EXPECT_NE(m.find("nonexistent"), std::string::npos) << m;
  EXPECT_EQ(rt, nullptr);
  o.alloc_conf = "limit_mb:abc";
  st = tsr::api()->runtime_create(&o, &rt);
  ASSERT_NE(st, nullptr);
  tsr::api()->status_free(st);
}

TEST(Dispatcher, NoKernelNamesOpDeviceDtypeAndWhatIsRegistered) {
  tsr_runtime_t* rt = make_runtime("");
  tsr::set_runtime(rt);
  {
    tsr::Tensor a = tsr::from_vector(std::vector<float>{1, 2, 3});
    EXPECT_EQ(tsr::call("test::only_f32", {a}).to_vector<float>(), (std::vector<float>{2, 4, 6}));
    tsr::Tensor d = tsr::from_vector(std::vector<double>{1, 2, 3});
    try {
      tsr::call("test::only_f32", {d});
      ADD_FAILURE() << "expected no kernel";
    } catch (const tsr::Error& e) {
      std::string m = e.what();
      EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
      EXPECT_NE(m.find("test::only_f32"), std::string::npos) << m;
      EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
      EXPECT_NE(m.find("float64"), std::string::npos) << m;
      EXPECT_NE(m.find("registered: cpu [float32]"), std::string::npos) << m;
    }
  }
  tsr::set_runtime(nullptr);
  tsr::api()->runtime_destroy(rt);
}

TEST(Loader, ReportsTheDirectoriesItSearched) {
  tsr_runtime_t* rt = make_runtime("");
  const char* first = tsr::api()->plugin_search_dir(rt, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_STREQ(first, TRACKING_PLUGIN_DIR);
  const char* second = tsr::api()->plugin_search_dir(rt, 1);
  ASSERT_NE(second, nullptr);  // the plugins/ directory beside the core
  EXPECT_NE(std::string(second).find("tessera/plugins"), std::string::npos) << second;
  EXPECT_EQ(tsr::api()->plugin_search_dir(rt, 2), nullptr);
  tsr::api()->runtime_destroy(rt);
}
