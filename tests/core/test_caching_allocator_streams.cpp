// Stream-ordered reuse, record_stream events, private pools and the limit note of the caching
// allocator, deterministically: a fake device type whose events complete only when the test
// says so (the end-to-end versions with real asynchrony are in test_streams.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "memory/allocator.hpp"
#include "runtime/status.hpp"

namespace {

using tsr::core::AllocConf;
using tsr::core::DeviceAllocator;

struct FakeEvents {
  std::map<tsr_event_t*, bool> done;
  uintptr_t next = 1;
  int created = 0, destroyed = 0, recorded = 0, synced = 0, queried = 0, stream_syncs = 0;
};
FakeEvents* g_ev = nullptr;

tsr_status_t ok_stream_create(void*, tsr_device_t, int32_t, tsr_stream_t**) { return nullptr; }
tsr_status_t ok_stream(void*, tsr_device_t, tsr_stream_t*) {
  g_ev->stream_syncs++;
  return nullptr;
}
tsr_status_t ok_stream_query(void*, tsr_device_t, tsr_stream_t*, int32_t* d) {
  *d = 1;
  return nullptr;
}
tsr_status_t ok_wait(void*, tsr_device_t, tsr_stream_t*, tsr_event_t*) { return nullptr; }
tsr_status_t ev_create(void*, tsr_device_t, uint32_t, tsr_event_t** out) {
  *out = reinterpret_cast<tsr_event_t*>(g_ev->next++ * 16);
  g_ev->done[*out] = true;
  g_ev->created++;
  return nullptr;
}
tsr_status_t ev_destroy(void*, tsr_device_t, tsr_event_t*) {
  g_ev->destroyed++;
  return nullptr;
}
tsr_status_t ev_record(void*, tsr_device_t, tsr_event_t* e, tsr_stream_t*) {
  g_ev->done[e] = false;
  g_ev->recorded++;
  return nullptr;
}
tsr_status_t ev_sync(void*, tsr_device_t, tsr_event_t* e) {
  g_ev->done[e] = true;
  g_ev->synced++;
  return nullptr;
}
tsr_status_t ev_query(void*, tsr_device_t, tsr_event_t* e, int32_t* d) {
  g_ev->queried++;
  *d = g_ev->done[e] ? 1 : 0;
  return nullptr;
}
tsr_status_t ev_elapsed(void*, tsr_device_t, tsr_event_t*, tsr_event_t*, float*) { return nullptr; }

tsr_status_t raw_alloc_fn(void*, tsr_device_t, size_t n, void** out) {
  *out = std::aligned_alloc(64, (n + 63) / 64 * 64);
  return nullptr;
}
void raw_free_fn(void*, tsr_device_t, void* p, size_t) { std::free(p); }

tsr_stream_t* S(int i) { return reinterpret_cast<tsr_stream_t*>(static_cast<uintptr_t>(i) * 4096); }

class CachingAllocatorStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ev = &ev_;
    raw_.struct_size = sizeof(raw_);
    raw_.name = "fake";
    raw_.alloc = raw_alloc_fn;
    raw_.free = raw_free_fn;
    def_.struct_size = sizeof(def_);
    def_.stream_create = ok_stream_create;
    def_.stream_destroy = ok_stream;
    def_.stream_synchronize = ok_stream;
    def_.stream_query = ok_stream_query;
    def_.stream_wait_event = ok_wait;
    def_.event_create = ev_create;
    def_.event_destroy = ev_destroy;
    def_.event_record = ev_record;
    def_.event_synchronize = ev_sync;
    def_.event_query = ev_query;
    def_.event_elapsed_ms = ev_elapsed;
  }
  void TearDown() override { g_ev = nullptr; }
  std::unique_ptr<DeviceAllocator> make(bool streams = true, AllocConf conf = AllocConf()) {
    return tsr::core::make_caching_allocator(&raw_, tsr_device_t{1, 0}, "fake:0", conf, streams ? &def_ : nullptr);
  }
  static void* alloc(DeviceAllocator* a, size_t n, tsr_stream_t* s) {
    void* p = nullptr;
    tsr_status_t st = a->allocate(n, s, &p);
    EXPECT_EQ(st, nullptr) << (st ? st->message : "");
    if (st) tsr::core::free_status(st);
    return p;
  }
  FakeEvents ev_;
  tsr_raw_allocator_t raw_{};
  tsr_device_type_def_t def_{};
};

TEST_F(CachingAllocatorStreams, FreedBlocksAreCachedPerStream) {
  auto a = make();
  void* p = alloc(a.get(), 1000, S(1));
  a->deallocate(p);
  void* q = alloc(a.get(), 1000, S(2));
  EXPECT_NE(q, p);
  void* r = alloc(a.get(), 1000, S(1));
  EXPECT_EQ(r, p);
  tsr_memory_stats_t st{};
  a->stats(&st);
  EXPECT_EQ(st.num_segments, 2);
  EXPECT_EQ(st.num_cache_hits, 1);
  a->deallocate(q);
  a->deallocate(r);
}

TEST_F(CachingAllocatorStreams, WithoutStreamCallbacksStreamsShareTheCache) {
  auto a = make(false);
  void* p = alloc(a.get(), 1000, S(1));
  EXPECT_EQ(a->record_stream(p, S(2)), nullptr);  // no-op
  a->deallocate(p);
  EXPECT_EQ(alloc(a.get(), 1000, S(2)), p);
  EXPECT_EQ(ev_.created, 0);
  a->deallocate(p);
}

TEST_F(CachingAllocatorStreams, RecordedStreamsDelayReuseUntilTheirEventsComplete) {
  auto a = make();
  void* p = alloc(a.get(), 1024, S(1));
  ASSERT_EQ(a->record_stream(p, S(1)), nullptr);  // its own stream: nothing to do
  ASSERT_EQ(a->record_stream(p, S(2)), nullptr);
  ASSERT_EQ(a->record_stream(p, S(3)), nullptr);
  ASSERT_EQ(a->record_stream(p, S(2)), nullptr);  // once per stream
  a->deallocate(p);
  EXPECT_EQ(ev_.recorded, 2);
  std::string js = a->snapshot_json();
  EXPECT_NE(js.find("\"pending_free_blocks\":1,\"pending_events\":2"), std::string::npos) << js;
  EXPECT_NE(js.find("\"state\":\"pending_free\""), std::string::npos) << js;
  void* q = alloc(a.get(), 1024, S(1));
  EXPECT_NE(q, p);  // still pending
  // One event done is not enough.
  auto it = ev_.done.begin();
  it->second = true;
  void* r = alloc(a.get(), 1024, S(1));
  EXPECT_NE(r, p);
  for (auto& e : ev_.done) e.second = true;
  void* w = alloc(a.get(), 1024, S(1));
  EXPECT_EQ(w, p);
  EXPECT_EQ(ev_.synced, 0);  // polled, never waited for
  // Events are reused, not made again.
  ASSERT_EQ(a->record_stream(w, S(2)), nullptr);
  a->deallocate(w);
  EXPECT_EQ(ev_.created, 2);
  // empty_cache waits for them.
  a->deallocate(q);
  a->deallocate(r);
  a->empty_cache();
  EXPECT_EQ(ev_.synced, 1);
  tsr_memory_stats_t st{};
  a->stats(&st);
  EXPECT_EQ(st.reserved_bytes, 0);
  a.reset();
  EXPECT_EQ(ev_.destroyed, ev_.created);
}

TEST_F(CachingAllocatorStreams, OutOfMemoryWaitsForPendingBlocks) {
  AllocConf conf;
  conf.limit_bytes = 2 << 20;  // one small segment
  auto a = make(true, conf);
  void* p = alloc(a.get(), 1 << 20, S(1));
  ASSERT_EQ(a->record_stream(p, S(2)), nullptr);
  a->deallocate(p);
  // A request on another stream needs a new segment: the pending one is waited for and freed.
  void* q = alloc(a.get(), 1 << 20, S(3));
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(ev_.synced, 1);
  a->deallocate(q);
}

TEST_F(CachingAllocatorStreams, LimitNoteInOutOfMemoryMessages) {
  auto a = make();
  a->set_limit(4 << 20, "per_process_memory_fraction 0.5 of 8.00 MiB total memory");
  void* p = nullptr;
  tsr_status_t st = a->allocate(6 << 20, S(1), &p);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(st->message.find("limit 4.00 MiB (per_process_memory_fraction 0.5"), std::string::npos) << st->message;
  tsr::core::free_status(st);
  tsr_memory_stats_t s{};
  a->stats(&s);
  EXPECT_EQ(s.limit_bytes, 4 << 20);
}

TEST_F(CachingAllocatorStreams, PrivatePoolsIsolateAndReturnTheirSegments) {
  auto a = make();
  uint64_t pool = 0;
  ASSERT_EQ(a->pool_create(&pool), nullptr);
  ASSERT_EQ(a->pool_begin(pool, S(1)), nullptr);
  void* p = alloc(a.get(), 1000, S(1));
  void* other = alloc(a.get(), 1000, S(2));  // another stream: not in the pool
  a->deallocate(p);
  void* p2 = alloc(a.get(), 1000, S(1));
  EXPECT_EQ(p2, p);  // reused inside the pool
  a->deallocate(p2);
  ASSERT_EQ(a->pool_end(pool, S(1)), nullptr);
  void* q = alloc(a.get(), 1000, S(1));
  EXPECT_NE(q, p);
  a->deallocate(q);
  a->empty_cache();  // keeps the pool's segment
  tsr_memory_stats_t st{};
  a->stats(&st);
  EXPECT_EQ(st.num_segments, 2);  // pool + `other`
  EXPECT_NE(a->snapshot_json().find("\"private_pool\":" + std::to_string(pool)), std::string::npos);
  ASSERT_EQ(a->pool_release(pool), nullptr);  // the begin's claim
  EXPECT_NE(a->snapshot_json().find("\"private_pool\":" + std::to_string(pool)), std::string::npos);
  ASSERT_EQ(a->pool_release(pool), nullptr);  // the create's claim: back to the cache
  EXPECT_EQ(a->snapshot_json().find("\"private_pool\":" + std::to_string(pool)), std::string::npos);
  a->empty_cache();
  a->stats(&st);
  EXPECT_EQ(st.num_segments, 1);
  tsr_status_t bad = a->pool_release(pool);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->code, TSR_INVALID_ARGUMENT);
  tsr::core::free_status(bad);
  a->deallocate(other);
}

}  // namespace
