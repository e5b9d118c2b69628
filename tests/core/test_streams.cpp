// ABI 1.2 streams, events, current stream/device, stream-ordered caching, memory fraction,
// private pools, stream-ordered raw allocators, precision switches and tensor_from_blob.
// The asynchronous semantics run on the "fakeasync" test device (plugins/fakeasync.cpp): host
// memory with worker-thread streams, so that ordering bugs show up as wrong values here.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fakeasync.h"
#include "tessera/device.hpp"
#include "tessera/stream.hpp"
#include "tessera/tessera.hpp"

namespace {

const tsr_api_t* A() { return tsr::api(); }

struct Status {
  tsr_code_t code = TSR_OK;
  std::string msg;
};

Status take(tsr_status_t st) {
  Status s;
  if (st) {
    s.code = A()->status_code(st);
    s.msg = A()->status_message(st);
    A()->status_free(st);
  }
  return s;
}

tsr_runtime_t* make_runtime(const char* conf = "") {
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.plugin_path = FAKEASYNC_PLUGIN_DIR;  // then the default dir (cpu)
  o.alloc_conf = conf;
  tsr_runtime_t* rt = nullptr;
  tsr::check(A()->runtime_create(&o, &rt));
  return rt;
}

tsr_device_t fake_device(tsr_runtime_t* rt) {
  int32_t type = -1;
  tsr::check(A()->device_type_lookup(rt, "fakeasync", &type));
  return tsr_device_t{type, 0};
}

FakeAsyncControl* control(tsr_runtime_t* rt) {
  return static_cast<FakeAsyncControl*>(const_cast<void*>(A()->get_extension(rt, "fakeasync.control")));
}

tsr_tensor_t* empty(tsr_runtime_t* rt, tsr_device_t dev, int64_t n) {
  tsr_tensor_t* t = nullptr;
  tsr::check(A()->tensor_empty(rt, 1, &n, TSR_F32, dev, &t));
  return t;
}

void fill(tsr_runtime_t* rt, tsr_tensor_t* t, double v) {
  tsr_op_t* op = nullptr;
  tsr::check(A()->op_find(rt, "_fill", &op));
  tsr_value_t args[2];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = t;
  args[1].tag = TSR_VALUE_DOUBLE;
  args[1].u.d = v;
  tsr_tensor_t* out = nullptr;
  tsr::check(A()->op_call(op, args, 2, &out, 1));
  A()->tensor_release(out);
}

tsr_tensor_t* add(tsr_runtime_t* rt, tsr_tensor_t* a, tsr_tensor_t* b) {
  tsr_op_t* op = nullptr;
  tsr::check(A()->op_find(rt, "add", &op));
  tsr_value_t args[3];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = a;
  args[1].tag = TSR_VALUE_TENSOR;
  args[1].u.tensor = b;
  args[2].tag = TSR_VALUE_INT;
  args[2].u.i = 1;
  tsr_tensor_t* out = nullptr;
  tsr::check(A()->op_call(op, args, 3, &out, 1));
  return out;
}

std::vector<float> read(tsr_tensor_t* t) {
  std::vector<float> v(static_cast<size_t>(A()->tensor_numel(t)));
  tsr::check(A()->tensor_copy_to_host(t, v.data(), v.size() * sizeof(float)));
  return v;
}

bool all_equal(const std::vector<float>& v, float x) {
  for (float e : v)
    if (e != x) return false;
  return true;
}

std::string snapshot(tsr_runtime_t* rt, tsr_device_t dev) {
  char* js = nullptr;
  tsr::check(A()->memory_snapshot(rt, dev, &js));
  std::string s = js;
  A()->string_free(js);
  return s;
}

tsr_stream_t* new_stream(tsr_runtime_t* rt, tsr_device_t dev) {
  tsr_stream_t* s = nullptr;
  tsr::check(A()->stream_create(rt, dev, 0, &s));
  return s;
}

void set_stream(tsr_runtime_t* rt, tsr_device_t dev, tsr_stream_t* s) {
  tsr::check(A()->stream_set_current(rt, dev, s));
}

const tsr_device_t kCpu{TSR_DEVICE_TYPE_CPU, 0};

}  // namespace

TEST(DeviceProperties, CpuAndBackendProperties) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_properties_t p{};
  p.struct_size = sizeof(p);
  tsr::check(A()->device_properties(rt, kCpu, &p));
  EXPECT_STREQ(p.name, "cpu");
  EXPECT_EQ(p.struct_size, sizeof(p));
  EXPECT_EQ(p.multiprocessor_count, static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(p.total_memory_bytes, 0);
  tsr_device_properties_t q{};
  tsr::check(A()->device_properties(rt, fake_device(rt), &q));
  EXPECT_STREQ(q.name, "FakeAsync Device");
  EXPECT_EQ(q.total_memory_bytes, 64ll << 20);
  EXPECT_EQ(take(A()->device_properties(rt, tsr_device_t{fake_device(rt).type, 3}, &q)).code, TSR_INVALID_ARGUMENT);
  A()->runtime_destroy(rt);
}

TEST(CurrentDevice, PerThreadAndChecked) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  int32_t idx = -1;
  tsr::check(A()->device_get_current(rt, fa.type, &idx));
  EXPECT_EQ(idx, 0);
  EXPECT_EQ(take(A()->device_set_current(rt, tsr_device_t{fa.type, 1})).code, TSR_INVALID_ARGUMENT);
  tsr::check(A()->device_set_current(rt, fa));
  tsr::check(A()->device_get_current(rt, fa.type, &idx));
  EXPECT_EQ(idx, 0);
  EXPECT_EQ(take(A()->device_get_current(rt, 99, &idx)).code, TSR_INVALID_ARGUMENT);
  A()->runtime_destroy(rt);
}

TEST(Streams, CpuStreamsAreSynchronousDummies) {
  tsr_runtime_t* rt = make_runtime();
  tsr_stream_t* a = new_stream(rt, kCpu);
  tsr_stream_t* b = new_stream(rt, kCpu);
  EXPECT_NE(a, nullptr);
  EXPECT_NE(a, b);
  int32_t done = 0;
  tsr::check(A()->stream_query(rt, kCpu, a, &done));
  EXPECT_EQ(done, 1);
  tsr::check(A()->stream_synchronize(rt, kCpu, a));
  tsr_event_t* e = nullptr;
  tsr::check(A()->event_create(rt, kCpu, TSR_EVENT_TIMING, &e));
  EXPECT_NE(e, nullptr);
  tsr::check(A()->event_record(rt, kCpu, e, a));
  done = 0;
  tsr::check(A()->event_query(rt, kCpu, e, &done));
  EXPECT_EQ(done, 1);
  tsr::check(A()->stream_wait_event(rt, kCpu, b, e));
  float ms = 0;
  EXPECT_EQ(take(A()->event_elapsed_ms(rt, kCpu, e, e, &ms)).code, TSR_UNIMPLEMENTED);
  // A current cpu stream is accepted and ops still run (synchronously).
  set_stream(rt, kCpu, a);
  tsr_tensor_t* t = empty(rt, kCpu, 4);
  fill(rt, t, 3.0);
  EXPECT_TRUE(all_equal(read(t), 3.0f));
  A()->tensor_release(t);
  set_stream(rt, kCpu, nullptr);
  tsr::check(A()->event_destroy(rt, kCpu, e));
  tsr::check(A()->stream_destroy(rt, kCpu, a));
  tsr::check(A()->stream_destroy(rt, kCpu, b));
  EXPECT_EQ(take(A()->stream_destroy(rt, kCpu, nullptr)).code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(take(A()->stream_create(rt, tsr_device_t{42, 0}, 0, &a)).code, TSR_INVALID_ARGUMENT);
  A()->runtime_destroy(rt);
}

// cat on a device whose backend registers no "cat" kernel (fakeasync has _fill, _copy and add):
// the core falls back to one copy per input, in stream order.
TEST(Streams, CatWithoutACatKernelCopiesInputByInput) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  std::vector<tsr_tensor_t*> parts;
  std::vector<float> want;
  for (int k = 0; k < 20; ++k) {
    parts.push_back(empty(rt, fa, 1 + k % 3));
    fill(rt, parts.back(), k + 1);
    want.insert(want.end(), static_cast<size_t>(1 + k % 3), static_cast<float>(k + 1));
  }
  tsr_op_t* op = nullptr;
  tsr::check(A()->op_find(rt, "cat", &op));
  tsr_value_t args[2];
  args[0].tag = TSR_VALUE_TENSOR_LIST;
  args[0].u.tensors.data = parts.data();
  args[0].u.tensors.len = static_cast<int64_t>(parts.size());
  args[1].tag = TSR_VALUE_INT;
  args[1].u.i = 0;
  tsr_tensor_t* out = nullptr;
  tsr::check(A()->op_call(op, args, 2, &out, 1));
  EXPECT_EQ(read(out), want);
  A()->tensor_release(out);
  for (tsr_tensor_t* t : parts) A()->tensor_release(t);
  A()->runtime_destroy(rt);
}

TEST(Streams, CurrentStreamIsPerThreadAndReachesKernelsAndCopies) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  FakeAsyncControl* c = control(rt);
  ASSERT_NE(c, nullptr);
  tsr_stream_t* s = new_stream(rt, fa);
  tsr_stream_t* cur = reinterpret_cast<tsr_stream_t*>(1);
  tsr::check(A()->stream_get_current(rt, fa, &cur));
  EXPECT_EQ(cur, nullptr);
  set_stream(rt, fa, s);
  tsr::check(A()->stream_get_current(rt, fa, &cur));
  EXPECT_EQ(cur, s);
  // Another thread still has the default stream, and its kernels get NULL.
  std::thread([&] {
    tsr_stream_t* other = reinterpret_cast<tsr_stream_t*>(1);
    tsr::check(A()->stream_get_current(rt, fa, &other));
    EXPECT_EQ(other, nullptr);
    tsr_tensor_t* t = empty(rt, fa, 8);
    fill(rt, t, 1.0);
    EXPECT_EQ(c->last_kernel_stream.load(), nullptr);
    A()->tensor_release(t);
  }).join();
  // Another runtime is another key.
  tsr_runtime_t* rt2 = make_runtime();
  tsr::check(A()->stream_get_current(rt2, fake_device(rt2), &cur));
  EXPECT_EQ(cur, nullptr);
  A()->runtime_destroy(rt2);

  tsr_tensor_t* t = empty(rt, fa, 8);
  fill(rt, t, 2.0);
  EXPECT_EQ(c->last_kernel_stream.load(), s);
  std::vector<float> host(8, 5.0f);
  int64_t n = 8;
  tsr_tensor_t* h = nullptr;
  tsr::check(A()->tensor_from_host(rt, host.data(), 1, &n, TSR_F32, fa, &h));
  EXPECT_EQ(c->last_copy_stream.load(), s);
  EXPECT_TRUE(all_equal(read(h), 5.0f));
  tsr_tensor_t* sum = add(rt, t, h);
  EXPECT_EQ(c->last_kernel_stream.load(), s);
  EXPECT_TRUE(all_equal(read(sum), 7.0f));
  // Device -> cpu copies run on the current stream and are complete on return.
  c->kernel_delay_us.store(20000);
  fill(rt, t, 9.0);
  c->kernel_delay_us.store(0);
  tsr_tensor_t* on_cpu = nullptr;
  tsr::check(A()->tensor_to(t, TSR_F32, kCpu, 0, &on_cpu));
  EXPECT_EQ(c->last_copy_stream.load(), s);
  EXPECT_TRUE(all_equal(read(on_cpu), 9.0f));
  for (tsr_tensor_t* x : {t, h, sum, on_cpu}) A()->tensor_release(x);
  // Destroying the current stream resets this thread to the default stream.
  tsr::check(A()->stream_destroy(rt, fa, s));
  tsr::check(A()->stream_get_current(rt, fa, &cur));
  EXPECT_EQ(cur, nullptr);
  A()->runtime_destroy(rt);
}

TEST(Streams, ManyCurrentStreamsOnOneThread) {
  // More runtimes with a current stream than the inline table holds.
  std::vector<tsr_runtime_t*> rts;
  std::vector<tsr_stream_t*> ss;
  for (int i = 0; i < 11; ++i) {
    rts.push_back(make_runtime());
    ss.push_back(new_stream(rts.back(), kCpu));
    set_stream(rts.back(), kCpu, ss.back());
  }
  for (int i = 0; i < 11; ++i) {
    tsr_stream_t* cur = nullptr;
    tsr::check(A()->stream_get_current(rts[i], kCpu, &cur));
    EXPECT_EQ(cur, ss[i]) << i;
  }
  for (int i = 0; i < 11; ++i) {
    set_stream(rts[i], kCpu, nullptr);
    A()->runtime_destroy(rts[i]);
  }
}

TEST(Events, OrderingWaitAndElapsedTime) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  FakeAsyncControl* c = control(rt);
  tsr_stream_t* s = new_stream(rt, fa);
  tsr_stream_t* u = new_stream(rt, fa);
  tsr_tensor_t* x = empty(rt, fa, 1000);
  fill(rt, x, 1.0);
  tsr::check(A()->device_synchronize(rt, fa));

  tsr_event_t *start = nullptr, *end = nullptr;
  tsr::check(A()->event_create(rt, fa, TSR_EVENT_TIMING, &start));
  tsr::check(A()->event_create(rt, fa, TSR_EVENT_TIMING, &end));
  int32_t done = 0;
  tsr::check(A()->event_query(rt, fa, end, &done));
  EXPECT_EQ(done, 1);  // never recorded
  set_stream(rt, fa, s);
  tsr::check(A()->event_record(rt, fa, start, s));
  c->kernel_delay_us.store(30000);
  fill(rt, x, 5.0);  // slow, on s
  c->kernel_delay_us.store(0);
  tsr::check(A()->event_record(rt, fa, end, s));
  tsr::check(A()->event_query(rt, fa, end, &done));
  EXPECT_EQ(done, 0);
  tsr::check(A()->stream_query(rt, fa, s, &done));
  EXPECT_EQ(done, 0);
  // u waits for s's fill before it adds.
  tsr::check(A()->stream_wait_event(rt, fa, u, end));
  set_stream(rt, fa, u);
  tsr_tensor_t* y = add(rt, x, x);
  tsr::check(A()->event_synchronize(rt, fa, end));
  tsr::check(A()->event_query(rt, fa, end, &done));
  EXPECT_EQ(done, 1);
  float ms = 0;
  tsr::check(A()->event_elapsed_ms(rt, fa, start, end, &ms));
  EXPECT_GE(ms, 25.0f);
  tsr::check(A()->stream_synchronize(rt, fa, u));
  EXPECT_TRUE(all_equal(read(y), 10.0f));
  set_stream(rt, fa, nullptr);
  A()->tensor_release(x);
  A()->tensor_release(y);
  tsr::check(A()->event_destroy(rt, fa, start));
  tsr::check(A()->event_destroy(rt, fa, end));
  tsr::check(A()->stream_destroy(rt, fa, s));
  tsr::check(A()->stream_destroy(rt, fa, u));
  A()->runtime_destroy(rt);
}

TEST(StreamOrderedCache, FreedBlockIsReusedOnlyOnItsStream) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  tsr_stream_t* a = new_stream(rt, fa);
  tsr_stream_t* b = new_stream(rt, fa);
  const int64_t n = 4096;
  set_stream(rt, fa, a);
  tsr_tensor_t* x = empty(rt, fa, n);
  void* px = A()->tensor_data(x);
  A()->tensor_release(x);
  set_stream(rt, fa, b);
  tsr_tensor_t* y = empty(rt, fa, n);
  EXPECT_NE(A()->tensor_data(y), px);  // a's cached block is not handed to b
  std::string js = snapshot(rt, fa);
  EXPECT_NE(js.find("\"stream\":" + std::to_string(reinterpret_cast<uintptr_t>(a))), std::string::npos) << js;
  EXPECT_NE(js.find("\"stream\":" + std::to_string(reinterpret_cast<uintptr_t>(b))), std::string::npos) << js;
  set_stream(rt, fa, a);
  tsr_tensor_t* z = empty(rt, fa, n);
  EXPECT_EQ(A()->tensor_data(z), px);  // but reused on a
  tsr_memory_stats_t st{};
  st.struct_size = sizeof(st);
  tsr::check(A()->memory_stats(rt, fa, &st));
  EXPECT_EQ(st.num_segments, 2);
  A()->tensor_release(y);
  A()->tensor_release(z);
  set_stream(rt, fa, nullptr);
  tsr::check(A()->stream_destroy(rt, fa, a));
  tsr::check(A()->stream_destroy(rt, fa, b));
  A()->runtime_destroy(rt);
}

// PyTorch's record_stream: a tensor made on stream a and read by slow work on stream b is
// freed on a; its block must not be reused by a until b's work is done.
TEST(StreamOrderedCache, RecordStreamDelaysReuseUntilTheOtherStreamIsDone) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  FakeAsyncControl* c = control(rt);
  tsr_stream_t* a = new_stream(rt, fa);
  tsr_stream_t* b = new_stream(rt, fa);
  const int64_t n = 4096;
  set_stream(rt, fa, a);
  tsr_tensor_t* x = empty(rt, fa, n);
  fill(rt, x, 1.0);
  tsr::check(A()->stream_synchronize(rt, fa, a));
  void* px = A()->tensor_data(x);

  c->kernel_delay_us.store(60000);
  set_stream(rt, fa, b);
  tsr_tensor_t* y = add(rt, x, x);  // reads x ~60 ms from now
  c->kernel_delay_us.store(0);
  tsr::check(A()->tensor_record_stream(x, b));
  set_stream(rt, fa, a);
  A()->tensor_release(x);
  std::string js = snapshot(rt, fa);
  EXPECT_NE(js.find("pending_free"), std::string::npos) << js;
  EXPECT_NE(js.find("\"pending_events\":1"), std::string::npos) << js;

  tsr_tensor_t* z = empty(rt, fa, n);
  EXPECT_NE(A()->tensor_data(z), px);  // x's block waits for b
  fill(rt, z, 7.0);                    // would clobber x if it had been reused
  tsr::check(A()->stream_synchronize(rt, fa, b));
  EXPECT_TRUE(all_equal(read(y), 2.0f));
  // b is done: the block is reusable on a again.
  tsr_tensor_t* w = empty(rt, fa, n);
  EXPECT_EQ(A()->tensor_data(w), px);
  js = snapshot(rt, fa);
  EXPECT_EQ(js.find("pending_free\""), std::string::npos) << js;
  EXPECT_NE(js.find("\"pending_free_blocks\":0"), std::string::npos) << js;
  for (tsr_tensor_t* t : {y, z, w}) A()->tensor_release(t);

  // Without record_stream the block is reused at once (what the test above guards against).
  tsr_tensor_t* x2 = empty(rt, fa, n);
  void* p2 = A()->tensor_data(x2);
  A()->tensor_release(x2);
  tsr_tensor_t* z2 = empty(rt, fa, n);
  EXPECT_EQ(A()->tensor_data(z2), p2);
  A()->tensor_release(z2);

  // empty_cache waits for pending blocks and then returns every free segment.
  set_stream(rt, fa, b);
  tsr_tensor_t* x3 = empty(rt, fa, n);
  c->kernel_delay_us.store(20000);
  set_stream(rt, fa, a);
  tsr_tensor_t* y3 = add(rt, x3, x3);
  c->kernel_delay_us.store(0);
  tsr::check(A()->tensor_record_stream(x3, a));
  tsr::check(A()->tensor_record_stream(x3, a));  // recorded once
  A()->tensor_release(x3);
  A()->tensor_release(y3);
  tsr::check(A()->empty_cache(rt, fa));
  tsr_memory_stats_t st{};
  st.struct_size = sizeof(st);
  tsr::check(A()->memory_stats(rt, fa, &st));
  EXPECT_EQ(st.reserved_bytes, 0);
  EXPECT_EQ(st.allocated_bytes, 0);

  set_stream(rt, fa, nullptr);
  tsr::check(A()->stream_destroy(rt, fa, a));
  tsr::check(A()->stream_destroy(rt, fa, b));
  A()->runtime_destroy(rt);
}

TEST(MemoryFraction, ConfAndSetterCapReservedMemory) {
  tsr_runtime_t* rt = make_runtime("fakeasync.per_process_memory_fraction:0.25");
  tsr_device_t fa = fake_device(rt);
  tsr_memory_stats_t st{};
  st.struct_size = sizeof(st);
  tsr::check(A()->memory_stats(rt, fa, &st));
  EXPECT_EQ(st.limit_bytes, 16ll << 20);
  tsr_tensor_t* t = nullptr;
  int64_t n = (20ll << 20) / 4;
  Status s = take(A()->tensor_empty(rt, 1, &n, TSR_F32, fa, &t));
  EXPECT_EQ(s.code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(s.msg.find("per_process_memory_fraction 0.25 of 64.0 MiB"), std::string::npos) << s.msg;
  tsr::check(A()->memory_set_fraction(rt, fa, 0.5));
  tsr::check(A()->tensor_empty(rt, 1, &n, TSR_F32, fa, &t));
  A()->tensor_release(t);
  tsr::check(A()->memory_stats(rt, fa, &st));
  EXPECT_EQ(st.limit_bytes, 32ll << 20);
  EXPECT_EQ(take(A()->memory_set_fraction(rt, fa, 0.0)).code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(take(A()->memory_set_fraction(rt, fa, 1.5)).code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(take(A()->memory_set_fraction(rt, kCpu, 0.5)).code, TSR_FAILED_PRECONDITION);
  A()->runtime_destroy(rt);
  // An untyped key also reaches cpu, which has no total memory: ignored there.
  rt = make_runtime("per_process_memory_fraction:0.5");
  tsr::check(A()->memory_stats(rt, fake_device(rt), &st));
  EXPECT_EQ(st.limit_bytes, 32ll << 20);
  tsr::check(A()->memory_stats(rt, kCpu, &st));
  EXPECT_EQ(st.limit_bytes, 0);
  A()->runtime_destroy(rt);
  tsr_runtime_options_t o{};
  o.struct_size = sizeof(o);
  o.alloc_conf = "per_process_memory_fraction:1.5";
  tsr_runtime_t* bad = nullptr;
  EXPECT_EQ(take(A()->runtime_create(&o, &bad)).code, TSR_INVALID_ARGUMENT);
}

TEST(MemoryPools, PrivatePoolIsolationAndRelease) {
  tsr_runtime_t* rt = make_runtime();
  tsr_device_t fa = fake_device(rt);
  tsr_stream_t* s = new_stream(rt, fa);
  set_stream(rt, fa, s);
  const int64_t n = 4096;
  uint64_t pool = 0;
  tsr::check(A()->memory_pool_create(rt, fa, &pool));
  EXPECT_GT(pool, 0u);
  tsr::check(A()->memory_pool_begin(rt, fa, pool, s));
  EXPECT_EQ(take(A()->memory_pool_begin(rt, fa, pool, s)).code, TSR_FAILED_PRECONDITION);
  tsr_tensor_t* x = empty(rt, fa, n);
  void* px = A()->tensor_data(x);
  std::string js = snapshot(rt, fa);
  EXPECT_NE(js.find("\"private_pool\":" + std::to_string(pool)), std::string::npos) << js;
  A()->tensor_release(x);  // back into the pool
  tsr::check(A()->memory_pool_end(rt, fa, pool, s));
  EXPECT_EQ(take(A()->memory_pool_end(rt, fa, pool, s)).code, TSR_FAILED_PRECONDITION);
  tsr_tensor_t* y = empty(rt, fa, n);
  EXPECT_NE(A()->tensor_data(y), px);  // pool memory is not for ordinary allocations
  A()->tensor_release(y);
  tsr::check(A()->empty_cache(rt, fa));  // frees y's segment, keeps the pool's
  tsr_memory_stats_t st{};
  st.struct_size = sizeof(st);
  tsr::check(A()->memory_stats(rt, fa, &st));
  EXPECT_EQ(st.num_segments, 1);
  tsr::check(A()->memory_pool_begin(rt, fa, pool, s));
  tsr_tensor_t* x2 = empty(rt, fa, n);
  EXPECT_EQ(A()->tensor_data(x2), px);  // reused inside the pool
  tsr::check(A()->memory_pool_end(rt, fa, pool, s));
  // Claims: create + two begins. Released with a block still in use: segments stay tagged.
  for (int i = 0; i < 3; ++i) tsr::check(A()->memory_pool_release(rt, fa, pool));
  js = snapshot(rt, fa);
  EXPECT_NE(js.find("\"private_pool\":" + std::to_string(pool)), std::string::npos) << js;
  A()->tensor_release(x2);  // last block: the pool's segments join the device cache
  js = snapshot(rt, fa);
  EXPECT_EQ(js.find("\"private_pool\":" + std::to_string(pool)), std::string::npos) << js;
  tsr_tensor_t* z = empty(rt, fa, n);
  EXPECT_EQ(A()->tensor_data(z), px);
  A()->tensor_release(z);
  EXPECT_EQ(take(A()->memory_pool_release(rt, fa, pool)).code, TSR_INVALID_ARGUMENT);
  set_stream(rt, fa, nullptr);
  tsr::check(A()->stream_destroy(rt, fa, s));
  A()->runtime_destroy(rt);

  rt = make_runtime("fakeasync.allocator:native");
  EXPECT_EQ(take(A()->memory_pool_create(rt, fake_device(rt), &pool)).code, TSR_FAILED_PRECONDITION);
  A()->runtime_destroy(rt);
}

TEST(AsyncRawAllocator, StreamOrderedFreeWaitsForRecordedStreams) {
  tsr_runtime_t* rt = make_runtime("fakeasync.allocator:fakeasync_async");
  tsr_device_t fa = fake_device(rt);
  FakeAsyncControl* c = control(rt);
  EXPECT_STREQ(A()->device_allocator_name(rt, fa), "passthrough(fakeasync_async)");
  tsr_stream_t* a = new_stream(rt, fa);
  tsr_stream_t* b = new_stream(rt, fa);
  const int64_t n = 4096;
  set_stream(rt, fa, a);
  tsr_tensor_t* x = empty(rt, fa, n);
  EXPECT_EQ(c->last_async_alloc_stream.load(), a);
  fill(rt, x, 1.0);
  tsr::check(A()->stream_synchronize(rt, fa, a));
  c->kernel_delay_us.store(50000);
  set_stream(rt, fa, b);
  tsr_tensor_t* y = add(rt, x, x);
  c->kernel_delay_us.store(0);
  tsr::check(A()->tensor_record_stream(x, b));
  set_stream(rt, fa, a);
  long frees = c->async_frees.load();
  A()->tensor_release(x);
  EXPECT_EQ(c->last_async_free_stream.load(), a);
  tsr::check(A()->device_synchronize(rt, fa));
  EXPECT_EQ(c->async_frees.load(), frees + 1);
  EXPECT_GE(c->last_async_free_ns.load(), c->last_kernel_end_ns.load());  // after b's add
  EXPECT_TRUE(all_equal(read(y), 2.0f));
  A()->tensor_release(y);
  set_stream(rt, fa, nullptr);
  tsr::check(A()->stream_destroy(rt, fa, a));
  tsr::check(A()->stream_destroy(rt, fa, b));
  A()->runtime_destroy(rt);
}

TEST(Precision, DefaultsSettersAndEnvironment) {
  tsr_runtime_t* rt = make_runtime();
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_MATMUL_ALLOW_TF32), 0);
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_CONV_ALLOW_TF32), 1);
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION), 1);
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION), 1);
  tsr::check(A()->precision_set(rt, TSR_PRECISION_MATMUL_ALLOW_TF32, 1));
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_MATMUL_ALLOW_TF32), 1);
  tsr::check(A()->precision_set(rt, TSR_PRECISION_CONV_ALLOW_TF32, 0));
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_CONV_ALLOW_TF32), 0);
  EXPECT_EQ(take(A()->precision_set(rt, static_cast<tsr_precision_setting_t>(9), 1)).code, TSR_INVALID_ARGUMENT);
  A()->runtime_destroy(rt);
  setenv("TESSERA_ALLOW_TF32", "1", 1);
  rt = make_runtime();
  unsetenv("TESSERA_ALLOW_TF32");
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_MATMUL_ALLOW_TF32), 1);
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_CONV_ALLOW_TF32), 1);
  A()->runtime_destroy(rt);
  setenv("TESSERA_ALLOW_TF32", "0", 1);
  rt = make_runtime();
  unsetenv("TESSERA_ALLOW_TF32");
  EXPECT_EQ(A()->precision_get(rt, TSR_PRECISION_CONV_ALLOW_TF32), 0);
  A()->runtime_destroy(rt);
}

namespace {
struct Blob {
  std::atomic<int> deleted{0};
  void* seen = nullptr;
};
void blob_deleter(void* ctx, void* data) {
  auto* b = static_cast<Blob*>(ctx);
  b->deleted++;
  b->seen = data;
}
}  // namespace

TEST(FromBlob, DeleterRunsOnceAfterTheLastViewAndMemoryIsNotCounted) {
  tsr_runtime_t* rt = make_runtime();
  std::vector<float> mem = {1, 2, 3, 4, 5, 6};
  Blob blob;
  tsr_memory_stats_t before{}, after{};
  before.struct_size = after.struct_size = sizeof(tsr_memory_stats_t);
  tsr::check(A()->memory_stats(rt, kCpu, &before));
  int64_t sizes[2] = {2, 3};
  tsr_tensor_t* t = nullptr;
  tsr::check(A()->tensor_from_blob(rt, mem.data(), 2, sizes, nullptr, TSR_F32, kCpu, blob_deleter, &blob, &t));
  EXPECT_EQ(A()->tensor_data(t), mem.data());
  EXPECT_TRUE(A()->tensor_is_contiguous(t));
  tsr::check(A()->memory_stats(rt, kCpu, &after));
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  tsr_tensor_t* tr = nullptr;
  tsr::check(A()->tensor_transpose(t, 0, 1, &tr));
  tsr_tensor_t* sum = add(rt, t, t);
  EXPECT_EQ(read(sum), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  A()->tensor_release(sum);
  A()->tensor_release(t);
  EXPECT_EQ(blob.deleted.load(), 0);  // the transpose still views it
  mem[1] = 20;                        // shared, not copied
  tsr_tensor_t* c = nullptr;
  tsr::check(A()->tensor_contiguous(tr, &c));
  EXPECT_EQ(read(c), (std::vector<float>{1, 4, 20, 5, 3, 6}));
  A()->tensor_release(c);
  A()->tensor_release(tr);
  EXPECT_EQ(blob.deleted.load(), 1);
  EXPECT_EQ(blob.seen, mem.data());

  // Strided (every other element), no deleter.
  int64_t n = 3, stride = 2;
  tsr::check(A()->tensor_from_blob(rt, mem.data(), 1, &n, &stride, TSR_F32, kCpu, nullptr, nullptr, &t));
  EXPECT_EQ(read(t), (std::vector<float>{1, 3, 5}));
  A()->tensor_release(t);

  // Errors leave the memory with the caller.
  Blob b2;
  int64_t neg = -1;
  EXPECT_EQ(take(A()->tensor_from_blob(rt, mem.data(), 1, &neg, nullptr, TSR_F32, kCpu, blob_deleter, &b2, &t)).code,
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(take(A()->tensor_from_blob(rt, nullptr, 1, &n, nullptr, TSR_F32, kCpu, blob_deleter, &b2, &t)).code,
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(
      take(A()->tensor_from_blob(rt, mem.data(), 1, &n, nullptr, TSR_F32, tsr_device_t{0, 99}, blob_deleter, &b2, &t))
          .code,
      TSR_INVALID_ARGUMENT);
  EXPECT_EQ(b2.deleted.load(), 0);
  A()->runtime_destroy(rt);
}

TEST(SdkWrappers, StreamEventGuardsFromBlobAndGraph) {
  tsr_runtime_t* rt = make_runtime();
  {
    tsr::RuntimeScope scope(rt);
    tsr::Device fa("fakeasync:0");
    FakeAsyncControl* c = control(rt);
    EXPECT_EQ(tsr::get_device_properties(fa).total_memory, 64ll << 20);
    EXPECT_EQ(tsr::get_device_properties(tsr::Device::cpu()).name, "cpu");
    {
      tsr::DeviceGuard dg(fa);
      EXPECT_EQ(tsr::current_device(fa.d.type), fa);
    }
    tsr::Stream s(fa);
    EXPECT_EQ(tsr::current_stream(fa).get(), nullptr);
    tsr_tensor_t* x = empty(rt, fa.d, 100);
    {
      tsr::StreamGuard g(s);
      EXPECT_EQ(tsr::current_stream(fa).get(), s.get());
      tsr::Event start(fa, true), end(fa, true);
      start.record();
      c->kernel_delay_us.store(10000);
      fill(rt, x, 4.0);
      c->kernel_delay_us.store(0);
      end.record(s);
      EXPECT_EQ(c->last_kernel_stream.load(), s.get());
      end.synchronize();
      EXPECT_TRUE(end.query());
      EXPECT_GE(start.elapsed_time(end), 5.0f);
      tsr::Stream other(fa);
      other.wait(end);
      other.synchronize();
      EXPECT_TRUE(other.query());
      tsr::record_stream(tsr::Tensor::borrow(x), s);  // x was made on the default stream
    }
    EXPECT_EQ(tsr::current_stream(fa).get(), nullptr);
    EXPECT_TRUE(all_equal(read(x), 4.0f));
    A()->tensor_release(x);
    tsr::synchronize(fa);

    bool old = tsr::allow_tf32_matmul();
    tsr::set_allow_tf32_matmul(!old);
    EXPECT_EQ(tsr::allow_tf32_matmul(), !old);
    tsr::set_allow_tf32_matmul(old);
    EXPECT_TRUE(tsr::allow_bf16_reduced_precision_reduction());

    tsr::set_memory_fraction(0.75, fa);
    tsr_memory_stats_t st{};
    st.struct_size = sizeof(st);
    tsr::check(A()->memory_stats(rt, fa.d, &st));
    EXPECT_EQ(st.limit_bytes, 48ll << 20);
    EXPECT_THROW(tsr::set_memory_fraction(0.5, tsr::Device::cpu()), tsr::Error);

    int deleted = 0;
    std::vector<double> mem = {1.5, 2.5};
    {
      tsr::Tensor t = tsr::from_blob(mem.data(), {2}, TSR_F64, tsr::Device::cpu(), [&](void* p) {
        EXPECT_EQ(p, mem.data());
        ++deleted;
      });
      EXPECT_EQ(t.numel(), 2);
      EXPECT_EQ(deleted, 0);
    }
    EXPECT_EQ(deleted, 1);
    EXPECT_THROW(tsr::from_blob(mem.data(), {-2}, TSR_F64, tsr::Device::cpu(), [&](void*) { ++deleted; }), tsr::Error);
    EXPECT_EQ(deleted, 1);

    try {
      tsr::Graph g(fa);
      ADD_FAILURE() << "fakeasync has no graph extension";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
      EXPECT_NE(std::string(e.what()).find("tessera.graphs.fakeasync"), std::string::npos) << e.what();
    }
  }
  A()->runtime_destroy(rt);
}
