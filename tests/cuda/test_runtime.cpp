// The CUDA backend's runtime side: loading (with and without a GPU), properties, copies,
// streams and events, allocators, pinned host memory, CUDA graphs, errors of asynchronous work.
// Tests that need a GPU skip with the reason when the runtime has no cuda device; the loading
// tests run everywhere (without a GPU they check the refusal and its reason).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tessera/ext_graphs.h"
#include "tessera/ext_pinned_host.h"
#include "tessera/tessera.hpp"

namespace {

const tsr_api_t* A() { return tsr::api(); }

// What CUDA itself says about this machine (the plugin's score must agree).
struct CudaProbe {
  cudaError_t err = cudaSuccess;
  int count = 0;
};
CudaProbe probe() {
  CudaProbe p;
  p.err = cudaGetDeviceCount(&p.count);
  if (p.err != cudaSuccess) {
    (void)cudaGetLastError();
    p.count = 0;
  }
  return p;
}

bool find_plugin(tsr_runtime_t* rt, const char* name, tsr_plugin_record_t* out) {
  for (size_t i = 0; i < A()->plugin_count(rt); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof(r);
    tsr::check(A()->plugin_record(rt, i, &r));
    if (std::string(r.name) == name) {
      *out = r;
      return true;
    }
  }
  return false;
}

// The cuda device type id of the default runtime, or -1 (with the reason) when there is none.
int32_t cuda_type(std::string* why) {
  int32_t id = -1;
  if (tsr_status_t st = A()->device_type_lookup(tsr::runtime(), "cuda", &id)) {
    *why = std::string("no cuda device type in this runtime: ") + A()->status_message(st);
    A()->status_free(st);
    tsr_plugin_record_t r{};
    if (find_plugin(tsr::runtime(), "cuda", &r) && !r.loaded)
      *why += std::string(" (plugin refused: ") + r.reason + ")";
    return -1;
  }
  if (A()->device_count(tsr::runtime(), id) <= 0) {
    *why = "the cuda device type has no devices";
    return -1;
  }
  return id;
}

#define REQUIRE_CUDA(dev_var)             \
  std::string why_;                       \
  const int32_t type_ = cuda_type(&why_); \
  if (type_ < 0) GTEST_SKIP() << why_;    \
  const tsr_device_t dev_var { type_, 0 }

// The 1.2 core functions: a core without them cannot run these tests.
#define REQUIRE_API(field)                                            \
  if (!TSR_HAS_FIELD(A(), tsr_api_t, field) || A()->field == nullptr) \
  GTEST_SKIP() << "the core lacks " #field " (ABI 1.2)"

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = d(g);
    if (x == 0.0f) x = 0.5f;  // never zeros
  }
  return v;
}

std::string status_text(tsr_status_t st, tsr_code_t* code) {
  if (!st) {
    *code = TSR_OK;
    return "";
  }
  *code = A()->status_code(st);
  std::string m = A()->status_message(st);
  A()->status_free(st);
  return m;
}

struct StreamHolder {
  tsr_device_t dev;
  tsr_stream_t* s = nullptr;
  StreamHolder(tsr_device_t d, int32_t priority = 0) : dev(d) {
    tsr::check(A()->stream_create(tsr::runtime(), d, priority, &s));
  }
  ~StreamHolder() {
    if (tsr_status_t st = A()->stream_destroy(tsr::runtime(), dev, s)) A()->status_free(st);
  }
};

// Makes `s` the calling thread's current stream of `dev` while alive.
struct CurrentStream {
  tsr_device_t dev;
  tsr_stream_t* prev = nullptr;
  CurrentStream(tsr_device_t d, tsr_stream_t* s) : dev(d) {
    tsr::check(A()->stream_get_current(tsr::runtime(), d, &prev));
    tsr::check(A()->stream_set_current(tsr::runtime(), d, s));
  }
  ~CurrentStream() {
    if (tsr_status_t st = A()->stream_set_current(tsr::runtime(), dev, prev)) A()->status_free(st);
  }
};

tsr_memory_stats_t stats_of(tsr_runtime_t* rt, tsr_device_t d) {
  tsr_memory_stats_t s{};
  s.struct_size = sizeof(s);
  tsr::check(A()->memory_stats(rt, d, &s));
  return s;
}

bool has_cuda_kernel(const char* op_name, int32_t type) {
  tsr_op_t* op = nullptr;
  if (tsr_status_t st = A()->op_find(tsr::runtime(), op_name, &op)) {
    A()->status_free(st);
    return false;
  }
  for (size_t i = 0; i < A()->op_kernel_count(op); ++i) {
    tsr_kernel_info_t k{};
    k.struct_size = sizeof(k);
    if (tsr_status_t st = A()->op_kernel_info(op, i, &k)) {
      A()->status_free(st);
      continue;
    }
    if (k.device_type == type) return true;
  }
  return false;
}

#define REQUIRE_KERNEL(op) \
  if (!has_cuda_kernel(op, type_)) GTEST_SKIP() << "no cuda kernel for '" op "' yet"

}  // namespace

// ---- loading: runs with and without a GPU ------------------------------------------------------

TEST(CudaLoading, PluginIsRecordedWithScoreAndReason) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "cuda", &r)) << "the cuda plugin was not seen by the loader";
  const CudaProbe p = probe();
  if (p.count > 0) {
    EXPECT_EQ(r.loaded, 1) << r.reason;
    EXPECT_GT(r.score, 0);
    return;
  }
  EXPECT_EQ(r.loaded, 0);
  EXPECT_EQ(r.score, 0);
  const std::string reason = r.reason;
  EXPECT_NE(reason.find("no usable CUDA device"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cudaGetDeviceCount"), std::string::npos) << reason;
  if (p.err != cudaSuccess)
    EXPECT_NE(reason.find(cudaGetErrorString(p.err)), std::string::npos) << reason;
  else
    EXPECT_NE(reason.find("0 devices"), std::string::npos) << reason;
}

TEST(CudaLoading, WithoutGpuTheCpuStillWorks) {
  std::string why;
  const int32_t type = cuda_type(&why);
  if (probe().count == 0) {
    EXPECT_LT(type, 0) << "a cuda device type exists on a machine without a GPU";
    EXPECT_EQ(A()->get_extension(tsr::runtime(), TSR_PINNED_HOST_EXTENSION), nullptr);
    EXPECT_EQ(A()->get_extension(tsr::runtime(), TSR_GRAPHS_EXTENSION_PREFIX "cuda"), nullptr);
  }
  tsr::Tensor a = tsr::from_vector<float>({1.5f, -2.0f, 3.0f}, {3});
  std::vector<float> r = (a + a).to_vector<float>();
  EXPECT_EQ(r, (std::vector<float>{3.0f, -4.0f, 6.0f}));
}

// The plugin the loader scores is a shell linked against the CUDA runtime only: a process on a
// machine without a GPU must not pay for loading cuBLAS, cuBLASLt, cuSOLVER or cuDNN (160 ms).
TEST(CudaLoading, WithoutGpuNoCudaLibraryIsLoaded) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "cuda", &r));
  if (r.loaded) GTEST_SKIP() << "a CUDA device is present: the backend library is loaded, as it should be";
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  ASSERT_NE(f, nullptr);
  std::string maps;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) maps.append(buf, n);
  std::fclose(f);
  for (const char* lib : {"libcublas", "libcublasLt", "libcusolver", "libcudnn", "tessera_cuda_backend"})
    EXPECT_EQ(maps.find(lib), std::string::npos) << lib << " is mapped into a process without a usable GPU";
}

// The backend library the shell loads lies in cuda/ beside the plugin (outside the directory the
// loader scans), exports a "cuda" plugin table for this ABI, and scores the machine as the shell.
TEST(CudaLoading, BackendLibraryIsBesideTheShell) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "cuda", &r));
  std::string path = r.path;
  path = path.substr(0, path.rfind('/')) + "/cuda/tessera_cuda_backend.so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << path << ": " << dlerror();
  auto query = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
  ASSERT_NE(query, nullptr);
  const tsr_plugin_t* p = query(TSR_ABI_VERSION);
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->name, "cuda");
  EXPECT_EQ(p->abi_version, uint32_t(TSR_ABI_VERSION));
  ASSERT_NE(p->init, nullptr);
  ASSERT_NE(p->score, nullptr);
  char reason[512] = "";
  const int32_t score = p->score(A(), reason, sizeof reason);
  EXPECT_EQ(score, r.score);
  if (!r.loaded) {
    EXPECT_EQ(std::string("scored 0: ") + reason, std::string(r.reason));
  }
  // Left loaded: CUDA libraries dislike dlclose.
}

TEST(CudaLoading, PluginRecordSurvivesSecondRuntime) {
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  tsr_runtime_t* rt = nullptr;
  tsr::check(A()->runtime_create(&o, &rt));
  tsr_plugin_record_t r{};
  EXPECT_TRUE(find_plugin(rt, "cuda", &r));
  EXPECT_EQ(r.loaded != 0, probe().count > 0) << r.reason;
  A()->runtime_destroy(rt);  // shutdown must be safe with and without devices
}

#ifdef TSR_CLI
namespace {
std::string run(const std::string& args) {
  const std::string cmd = "env -u TESSERA_PLUGIN_PATH '" + std::string(TSR_CLI) + "' " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}
}  // namespace

TEST(CudaLoading, TesseraInfoListsThePlugin) {
  const std::string out = run("info");
  if (probe().count > 0) {
    EXPECT_NE(out.find("cuda:0 ("), std::string::npos) << out;  // describe: "cuda:0 (NAME, sm_XY, N GiB)"
    EXPECT_NE(out.find("caching(cuda)"), std::string::npos) << out;
  } else {
    const size_t refused = out.find("Plugins refused");
    ASSERT_NE(refused, std::string::npos) << out;
    EXPECT_NE(out.find("cuda", refused), std::string::npos) << out;
    EXPECT_NE(out.find("no usable CUDA device", refused), std::string::npos) << out;
  }
  const std::string js = run("info --json");
  EXPECT_NE(js.find("\"cuda\""), std::string::npos) << js;
}
#endif

// ---- device facts ------------------------------------------------------------------------------------

TEST(CudaDevice, PropertiesAndDescription) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(device_properties);
  tsr_device_properties_t p{};
  p.struct_size = sizeof(p);
  tsr::check(A()->device_properties(tsr::runtime(), dev, &p));
  cudaDeviceProp cp{};
  ASSERT_EQ(cudaGetDeviceProperties(&cp, 0), cudaSuccess);
  EXPECT_STREQ(p.name, cp.name);
  EXPECT_EQ(p.compute_major, cp.major);
  EXPECT_EQ(p.compute_minor, cp.minor);
  EXPECT_EQ(p.total_memory_bytes, static_cast<int64_t>(cp.totalGlobalMem));
  EXPECT_EQ(p.multiprocessor_count, cp.multiProcessorCount);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GT(p.max_threads_per_block, 0);
  EXPECT_GT(p.l2_cache_bytes, 0);
  char buf[256];
  tsr::check(A()->device_describe(tsr::runtime(), dev, buf, sizeof(buf)));
  const std::string d = buf;
  EXPECT_EQ(d.rfind("cuda:0 (", 0), 0u) << d;
  EXPECT_NE(d.find(cp.name), std::string::npos) << d;
  EXPECT_NE(d.find("sm_" + std::to_string(cp.major) + std::to_string(cp.minor)), std::string::npos) << d;
  EXPECT_NE(d.find("GiB"), std::string::npos) << d;
  // An index past the device count is an error, not a crash.
  tsr_device_t bad{type_, A()->device_count(tsr::runtime(), type_)};
  tsr_code_t code;
  status_text(A()->device_properties(tsr::runtime(), bad, &p), &code);
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT);
}

// ---- copies --------------------------------------------------------------------------------------

TEST(CudaCopy, RoundTripsAndViews) {
  REQUIRE_CUDA(dev);
  for (size_t n : {size_t(1), size_t(7), size_t(1000), size_t(1) << 20}) {
    const std::vector<float> v = random_floats(n, static_cast<uint32_t>(n));
    tsr::Tensor c = tsr::from_vector(v, {static_cast<int64_t>(n)}, dev);
    EXPECT_EQ(c.device(), tsr::Device(dev));
    EXPECT_EQ(c.to_vector<float>(), v) << n;
    tsr::Tensor back = c.to(tsr::Device::cpu());
    EXPECT_EQ(back.to_vector<float>(), v) << n;
    tsr::Tensor d2d = c.clone();  // device to device
    EXPECT_EQ(d2d.to_vector<float>(), v) << n;
  }
  // Empty tensors.
  tsr::Tensor e = tsr::empty({0, 3}, TSR_F32, dev);
  EXPECT_EQ(e.to(tsr::Device::cpu()).numel(), 0);
  // Other dtypes travel bit-exact.
  std::vector<double> vd = {1.0 / 3, -2.5, 1e300, -0.0};
  EXPECT_EQ(tsr::from_vector(vd, {4}, dev).to_vector<double>(), vd);
  std::vector<int64_t> vi = {INT64_MIN, -1, 0, INT64_MAX, 42};
  EXPECT_EQ(tsr::from_vector(vi, {5}, dev).to_vector<int64_t>(), vi);
}

TEST(CudaCopy, NonContiguousBothWays) {
  REQUIRE_CUDA(dev);
  const std::vector<float> v = random_floats(5 * 7, 3);
  tsr::Tensor cpu = tsr::from_vector(v, {5, 7});
  tsr::Tensor cpu_t = cpu.t();                      // 7x5, strides (1, 7)
  tsr::Tensor to_gpu = cpu_t.to(tsr::Device(dev));  // host view -> device
  EXPECT_EQ(to_gpu.sizes(), (std::vector<int64_t>{7, 5}));
  EXPECT_EQ(to_gpu.to_vector<float>(), cpu_t.contiguous().to_vector<float>());
  tsr::Tensor gpu = tsr::from_vector(v, {5, 7}, dev);
  tsr::Tensor gpu_view = gpu.slice(1, 1, 7, 2).t();  // device view -> host
  tsr::Tensor cpu_view = cpu.slice(1, 1, 7, 2).t();
  EXPECT_EQ(gpu_view.to(tsr::Device::cpu()).to_vector<float>(), cpu_view.contiguous().to_vector<float>());
  // copy_ into a device view from the host.
  tsr::Tensor dst = tsr::zeros({5, 7}, TSR_F32, dev);
  tsr::Tensor dst_col = dst.select(1, 3);
  tsr::Tensor src_col = cpu.select(1, 3);
  dst_col.copy_(src_col);
  std::vector<float> got = dst.to_vector<float>();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_EQ(got[i * 7 + j], j == 3 ? v[i * 7 + j] : 0.0f) << i << "," << j;
}

// ---- streams and events ---------------------------------------------------------------------------

TEST(CudaStreams, CurrentStreamIsPerThread) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(stream_create);
  tsr_stream_t* cur = reinterpret_cast<tsr_stream_t*>(1);
  tsr::check(A()->stream_get_current(tsr::runtime(), dev, &cur));
  EXPECT_EQ(cur, nullptr);  // the default stream
  StreamHolder s(dev);
  ASSERT_NE(s.s, nullptr);
  {
    CurrentStream use(dev, s.s);
    tsr::check(A()->stream_get_current(tsr::runtime(), dev, &cur));
    EXPECT_EQ(cur, s.s);
    tsr_stream_t* other = reinterpret_cast<tsr_stream_t*>(1);
    std::thread([&] { tsr::check(A()->stream_get_current(tsr::runtime(), dev, &other)); }).join();
    EXPECT_EQ(other, nullptr);
    // Ops run on the current stream: the result is right after a stream sync.
    tsr::Tensor a = tsr::from_vector<float>({1, 2, 3}, {3}, dev);
    tsr::Tensor b = a + a;
    tsr::check(A()->stream_synchronize(tsr::runtime(), dev, s.s));
    EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  }
  tsr::check(A()->stream_get_current(tsr::runtime(), dev, &cur));
  EXPECT_EQ(cur, nullptr);
  // Priorities outside CUDA's range are clamped, not refused.
  StreamHolder hi(dev, -100), lo(dev, 100);
  EXPECT_NE(hi.s, nullptr);
  EXPECT_NE(lo.s, nullptr);
}

TEST(CudaStreams, EventsOrderStreamsAndTime) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(event_elapsed_ms);
  REQUIRE_API(tensor_record_stream);
  REQUIRE_KERNEL("add");
  StreamHolder s1(dev), s2(dev);
  tsr_event_t *start = nullptr, *end = nullptr, *ready = nullptr;
  tsr::check(A()->event_create(tsr::runtime(), dev, TSR_EVENT_TIMING, &start));
  tsr::check(A()->event_create(tsr::runtime(), dev, TSR_EVENT_TIMING, &end));
  tsr::check(A()->event_create(tsr::runtime(), dev, TSR_EVENT_DEFAULT, &ready));
  int32_t done = 0;
  tsr::check(A()->event_query(tsr::runtime(), dev, ready, &done));
  EXPECT_EQ(done, 1);  // never recorded: complete
  const int64_t n = int64_t(1) << 24;
  tsr::Tensor x = tsr::ones({n}, TSR_F32, dev);
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  tsr::Tensor y;
  {
    CurrentStream use(dev, s1.s);
    tsr::check(A()->event_record(tsr::runtime(), dev, start, s1.s));
    y = x;
    for (int i = 0; i < 20; ++i) y = y + x;  // long enough for s2 to overtake without the wait
    tsr::check(A()->event_record(tsr::runtime(), dev, end, s1.s));
    tsr::check(A()->event_record(tsr::runtime(), dev, ready, s1.s));
    tsr::check(A()->tensor_record_stream(y.get(), s2.s));
  }
  tsr::Tensor z;
  {
    CurrentStream use(dev, s2.s);
    tsr::check(A()->stream_wait_event(tsr::runtime(), dev, s2.s, ready));
    z = y + y;  // reads y only after s1 finished it
  }
  tsr::check(A()->stream_synchronize(tsr::runtime(), dev, s2.s));
  tsr::check(A()->event_query(tsr::runtime(), dev, ready, &done));
  EXPECT_EQ(done, 1);
  tsr::check(A()->stream_query(tsr::runtime(), dev, s1.s, &done));
  EXPECT_EQ(done, 1);
  std::vector<float> zv = z.to_vector<float>();
  EXPECT_EQ(zv.front(), 42.0f);
  EXPECT_EQ(zv.back(), 42.0f);
  tsr::check(A()->event_synchronize(tsr::runtime(), dev, end));
  float ms = -1.0f;
  tsr::check(A()->event_elapsed_ms(tsr::runtime(), dev, start, end, &ms));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 60000.0f);
  // Elapsed time needs timing events.
  tsr_code_t code;
  const std::string m = status_text(A()->event_elapsed_ms(tsr::runtime(), dev, ready, end, &ms), &code);
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT) << m;
  EXPECT_NE(m.find("TSR_EVENT_TIMING"), std::string::npos) << m;
  for (tsr_event_t* e : {start, end, ready}) tsr::check(A()->event_destroy(tsr::runtime(), dev, e));
}

TEST(CudaStreams, ThreadsLaunchOnTheirOwnStreams) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(stream_create);
  REQUIRE_KERNEL("add");
  REQUIRE_KERNEL("mul");
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        StreamHolder s(dev);
        CurrentStream use(dev, s.s);
        const std::vector<float> v = random_floats(4097, 100 + t);
        tsr::Tensor a = tsr::from_vector(v, {4097}, dev);
        tsr::Tensor acc = tsr::zeros({4097}, TSR_F32, dev);
        for (int i = 0; i < 50; ++i) acc = acc + a * a;
        tsr::check(A()->stream_synchronize(tsr::runtime(), dev, s.s));
        std::vector<float> got = acc.to_vector<float>();
        for (size_t i = 0; i < v.size(); ++i) {
          float want = 0.0f;
          for (int k = 0; k < 50; ++k) want += v[i] * v[i];
          if (std::fabs(got[i] - want) > 1e-4f * std::fabs(want) + 1e-5f) {
            errors[t] = "element " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want);
            ++failures;
            return;
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

// ---- allocators -------------------------------------------------------------------------------------

TEST(CudaMemory, CachingAllocatorStatsSnapshotEmptyCache) {
  REQUIRE_CUDA(dev);
  EXPECT_STREQ(A()->device_allocator_name(tsr::runtime(), dev), "caching(cuda)");
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  const tsr_memory_stats_t before = stats_of(tsr::runtime(), dev);
  {
    tsr::Tensor a = tsr::empty({1000}, TSR_F32, dev);
    const tsr_memory_stats_t during = stats_of(tsr::runtime(), dev);
    EXPECT_GE(during.allocated_bytes - before.allocated_bytes, 4000);
    EXPECT_GT(during.reserved_bytes, 0);
    char* js = nullptr;
    tsr::check(A()->memory_snapshot(tsr::runtime(), dev, &js));
    const std::string s = js;
    A()->string_free(js);
    EXPECT_NE(s.find("\"segments\""), std::string::npos) << s;
    EXPECT_NE(s.find("\"active\""), std::string::npos) << s;
  }
  const tsr_memory_stats_t after = stats_of(tsr::runtime(), dev);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  { tsr::Tensor b = tsr::empty({1000}, TSR_F32, dev); }  // served from the cache
  const tsr_memory_stats_t again = stats_of(tsr::runtime(), dev);
  EXPECT_GT(again.num_cache_hits, after.num_cache_hits);
  EXPECT_EQ(again.num_raw_allocs, after.num_raw_allocs);
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  tsr::check(A()->empty_cache(tsr::runtime(), dev));
  const tsr_memory_stats_t emptied = stats_of(tsr::runtime(), dev);
  EXPECT_LT(emptied.reserved_bytes, again.reserved_bytes);
  EXPECT_GE(emptied.reserved_bytes, emptied.allocated_bytes);
}

TEST(CudaMemory, OutOfMemoryIsAStatusWithNumbers) {
  REQUIRE_CUDA(dev);
  const int64_t ten_tb = int64_t(10) << 40;
  tsr_tensor_t* t = nullptr;
  tsr_code_t code;
  const std::string m = status_text(A()->tensor_empty(tsr::runtime(), 1, &ten_tb, TSR_U8, dev, &t), &code);
  EXPECT_EQ(code, TSR_RESOURCE_EXHAUSTED) << m;
  EXPECT_EQ(t, nullptr);
  EXPECT_NE(m.find("cuda:0"), std::string::npos) << m;
  EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
  EXPECT_NE(m.find("free of"), std::string::npos) << m;  // the device's free and total memory
  // The error was cleared: the device keeps working, and kernels launched later do not see it.
  tsr::Tensor a = tsr::from_vector<float>({1, 2}, {2}, dev);
  EXPECT_EQ((a + a).to_vector<float>(), (std::vector<float>{2, 4}));
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
}

TEST(CudaMemory, MemoryFractionCapsTheCache) {
  REQUIRE_CUDA(dev0);
  REQUIRE_API(memory_set_fraction);
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  tsr_runtime_t* rt = nullptr;
  tsr::check(A()->runtime_create(&o, &rt));
  int32_t type = -1;
  tsr::check(A()->device_type_lookup(rt, "cuda", &type));
  const tsr_device_t dev{type, 0};
  tsr_device_properties_t p{};
  p.struct_size = sizeof(p);
  tsr::check(A()->device_properties(rt, dev, &p));
  tsr::check(A()->memory_set_fraction(rt, dev, 0.01));
  const int64_t big = p.total_memory_bytes / 20;  // 5% > 1%
  tsr_tensor_t* t = nullptr;
  tsr_code_t code;
  const std::string m = status_text(A()->tensor_empty(rt, 1, &big, TSR_U8, dev, &t), &code);
  EXPECT_EQ(code, TSR_RESOURCE_EXHAUSTED) << m;
  const int64_t small = 1 << 20;
  ASSERT_EQ(A()->tensor_empty(rt, 1, &small, TSR_U8, dev, &t), nullptr);
  A()->tensor_release(t);
  EXPECT_GT(stats_of(rt, dev).limit_bytes, 0);
  tsr_code_t c2;
  status_text(A()->memory_set_fraction(rt, dev, 1.5), &c2);
  EXPECT_EQ(c2, TSR_INVALID_ARGUMENT);
  A()->runtime_destroy(rt);
  (void)dev0;
}

TEST(CudaMemory, AsyncAllocatorThroughAllocConf) {
  REQUIRE_CUDA(dev0);
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.alloc_conf = "cuda.allocator:cuda_async";
  tsr_runtime_t* rt = nullptr;
  tsr::check(A()->runtime_create(&o, &rt));
  int32_t type = -1;
  tsr::check(A()->device_type_lookup(rt, "cuda", &type));
  const tsr_device_t dev{type, 0};
  EXPECT_STREQ(A()->device_allocator_name(rt, dev), "passthrough(cuda_async)");
  EXPECT_STREQ(A()->device_allocator_name(rt, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}), "caching(cpu)");
  {
    tsr::RuntimeScope scope(rt);
    const std::vector<float> v = random_floats(3001, 9);
    for (int i = 0; i < 10; ++i) {  // allocate and free repeatedly: the driver pool reuses
      tsr::Tensor a = tsr::from_vector(v, {3001}, dev);
      EXPECT_EQ(a.to_vector<float>(), v);
    }
    const tsr_memory_stats_t s = stats_of(rt, dev);
    EXPECT_GE(s.num_allocs, 10);
    EXPECT_EQ(s.allocated_bytes, 0);
    const int64_t ten_tb = int64_t(10) << 40;
    tsr_tensor_t* t = nullptr;
    tsr_code_t code;
    const std::string m = status_text(A()->tensor_empty(rt, 1, &ten_tb, TSR_U8, dev, &t), &code);
    EXPECT_EQ(code, TSR_RESOURCE_EXHAUSTED) << m;
    EXPECT_NE(m.find("cudaMallocAsync"), std::string::npos) << m;
  }
  tsr::check(A()->device_synchronize(rt, dev));
  A()->runtime_destroy(rt);
  (void)dev0;
}

TEST(CudaMemory, UnknownAllocatorNameIsAnError) {
  REQUIRE_CUDA(dev);
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.alloc_conf = "cuda.allocator:no_such_allocator";
  tsr_runtime_t* rt = nullptr;
  tsr_status_t st = A()->runtime_create(&o, &rt);
  ASSERT_NE(st, nullptr);
  tsr_code_t code;
  const std::string m = status_text(st, &code);
  EXPECT_NE(m.find("cuda_async"), std::string::npos) << m;  // lists what exists
  (void)dev;
}

// ---- pinned host memory ------------------------------------------------------------------------------

TEST(CudaPinned, TensorRoundTrip) {
  REQUIRE_CUDA(dev);
  const auto* ph = static_cast<const tsr_pinned_host_t*>(A()->get_extension(tsr::runtime(), TSR_PINNED_HOST_EXTENSION));
  ASSERT_NE(ph, nullptr);
  ASSERT_TRUE(TSR_PINNED_HOST_HAS(ph, tensor_empty));
  void* z = nullptr;
  tsr::check(ph->alloc(tsr::runtime(), 0, &z));
  EXPECT_NE(z, nullptr);
  ph->free(tsr::runtime(), z);
  ph->free(tsr::runtime(), nullptr);
  const std::vector<float> v = random_floats(100003, 5);
  for (int round = 0; round < 3; ++round) {  // blocks are reused after their copies finished
    tsr_tensor_t* raw = nullptr;
    const int64_t n = static_cast<int64_t>(v.size());
    tsr::check(ph->tensor_empty(tsr::runtime(), 1, &n, TSR_F32, &raw));
    tsr::Tensor pinned = tsr::Tensor::adopt(raw);
    EXPECT_EQ(pinned.device(), tsr::Device::cpu());
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, pinned.data_ptr()), cudaSuccess);
    EXPECT_EQ(attr.type, cudaMemoryTypeHost);
    std::memcpy(pinned.data_ptr(), v.data(), v.size() * sizeof(float));
    tsr::Tensor g = pinned.to(tsr::Device(dev));  // asynchronous host-to-device copy
    pinned.reset();                               // the block waits for the copy before reuse
    tsr::Tensor g2 = g + g;
    tsr::check(ph->tensor_empty(tsr::runtime(), 1, &n, TSR_F32, &raw));
    tsr::Tensor back = tsr::Tensor::adopt(raw);
    back.copy_(g2);  // device to pinned host: complete on return
    const float* b = static_cast<const float*>(back.data_ptr());
    for (size_t i = 0; i < v.size(); i += 997) EXPECT_EQ(b[i], 2 * v[i]) << i;
    EXPECT_EQ(b[v.size() - 1], 2 * v.back());
  }
}

// ---- CUDA graphs ----------------------------------------------------------------------------------------

namespace {
const tsr_graphs_t* graphs() {
  return static_cast<const tsr_graphs_t*>(A()->get_extension(tsr::runtime(), TSR_GRAPHS_EXTENSION_PREFIX "cuda"));
}
}  // namespace

TEST(CudaGraphs, CaptureAndReplayWithCheckedResults) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(memory_pool_create);
  REQUIRE_KERNEL("add");
  REQUIRE_KERNEL("mul");
  const tsr_graphs_t* g = graphs();
  ASSERT_NE(g, nullptr);
  StreamHolder s(dev);
  const int64_t n = 1000;
  tsr::Tensor x = tsr::from_vector(random_floats(n, 1), {n}, dev);
  tsr::Tensor w = tsr::from_vector(random_floats(n, 2), {n}, dev);
  tsr_graph_t* graph = nullptr;
  tsr::Tensor y;
  {
    CurrentStream use(dev, s.s);
    { tsr::Tensor warm = (x + w) * x; }  // load the kernels before capturing
    tsr::check(A()->stream_synchronize(tsr::runtime(), dev, s.s));
    tsr::check(g->capture_begin(tsr::runtime(), dev, s.s, 0));
    EXPECT_EQ(g->is_capturing(tsr::runtime(), dev, s.s), 1);
    y = (x + w) * x;  // recorded, not run; y comes from the graph's pool
    tsr::check(g->capture_end(tsr::runtime(), dev, s.s, &graph));
  }
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(g->is_capturing(tsr::runtime(), dev, s.s), 0);
  EXPECT_GE(g->graph_node_count(graph), 2);
  EXPECT_GT(g->graph_pool(graph), 0u);
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> xv = random_floats(n, 10 + round), wv = random_floats(n, 20 + round);
    x.copy_(tsr::from_vector(xv, {n}));  // refill the captured inputs in place
    w.copy_(tsr::from_vector(wv, {n}));
    tsr::check(A()->device_synchronize(tsr::runtime(), dev));
    tsr::check(g->graph_replay(graph, s.s));
    tsr::check(A()->stream_synchronize(tsr::runtime(), dev, s.s));
    const std::vector<float> yv = y.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(yv[i], (xv[i] + wv[i]) * xv[i]) << "round " << round << " i " << i;
  }
  g->graph_release(graph);
  y.reset();
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
}

TEST(CudaGraphs, SynchronizingCallsAreRefusedDuringCapture) {
  REQUIRE_CUDA(dev);
  REQUIRE_API(memory_pool_create);
  const tsr_graphs_t* g = graphs();
  ASSERT_NE(g, nullptr);
  StreamHolder s(dev), other(dev);
  tsr_code_t code;
  // The default stream cannot capture.
  status_text(g->capture_begin(tsr::runtime(), dev, nullptr, 0), &code);
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT);
  tsr::Tensor host = tsr::zeros({4});
  tsr::Tensor d = tsr::ones({4}, TSR_F32, dev);
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  tsr::check(g->capture_begin(tsr::runtime(), dev, s.s, 0));
  std::string m = status_text(A()->device_synchronize(tsr::runtime(), dev), &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION) << m;
  EXPECT_NE(m.find("cuda:0 synchronize: not allowed while stream 0x"), std::string::npos) << m;
  EXPECT_NE(m.find("is capturing a CUDA graph"), std::string::npos) << m;
  m = status_text(A()->stream_synchronize(tsr::runtime(), dev, other.s), &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION) << m;
  tsr_event_t* e = nullptr;
  tsr::check(A()->event_create(tsr::runtime(), dev, 0, &e));
  m = status_text(A()->event_synchronize(tsr::runtime(), dev, e), &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION) << m;
  m = status_text(A()->tensor_copy_to_host(d.get(), host.data_ptr(), 4 * sizeof(float)), &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION) << m;
  // The refusals (made by this thread) failed the capture: no graph.
  tsr_graph_t* graph = nullptr;
  m = status_text(g->capture_end(tsr::runtime(), dev, s.s, &graph), &code);
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION) << m;
  EXPECT_NE(m.find("not allowed while stream"), std::string::npos) << m;
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(g->is_capturing(tsr::runtime(), dev, s.s), 0);
  // After the capture everything works again.
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  tsr::check(A()->event_destroy(tsr::runtime(), dev, e));
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
}

// ---- errors of asynchronous work ---------------------------------------------------------------------

TEST(CudaErrors, DeviceSideIndexErrorNamesTheOp) {
  REQUIRE_CUDA(dev);
  REQUIRE_KERNEL("index_select");
  tsr::Tensor src = tsr::from_vector(random_floats(10 * 3, 4), {10, 3}, dev);
  tsr::Tensor idx = tsr::from_vector<int64_t>({0, 17, 2}, {3}, dev);
  std::string msg;
  tsr_code_t code = TSR_OK;
  try {
    tsr::Tensor out = tsr::index_select(src, 0, idx);
    tsr_status_t st = A()->device_synchronize(tsr::runtime(), dev);  // reported here at the latest
    msg = status_text(st, &code);
  } catch (const tsr::Error& e) {  // or at once, when the core checks on the host
    code = e.code();
    msg = e.what();
  }
  EXPECT_EQ(code, TSR_OUT_OF_RANGE) << msg;
  EXPECT_NE(msg.find("index_select"), std::string::npos) << msg;
  EXPECT_NE(msg.find("17"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out of bounds"), std::string::npos) << msg;
  // Reported once, and the device is still usable (no sticky error).
  tsr::check(A()->device_synchronize(tsr::runtime(), dev));
  tsr::Tensor ok = tsr::index_select(src, 0, tsr::from_vector<int64_t>({9, 0}, {2}, dev));
  EXPECT_EQ(ok.to_vector<float>().size(), 6u);
}
