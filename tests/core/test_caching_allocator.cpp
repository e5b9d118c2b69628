// Unit tests of the core's caching allocator, pass-through allocator and TESSERA_ALLOC_CONF
// parser (core/memory/caching_allocator.cpp), over a fake raw allocator.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "memory/allocator.hpp"
#include "runtime/status.hpp"

namespace {

using tsr::core::AllocConf;
using tsr::core::DeviceAllocator;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

// A raw allocator over aligned_alloc that counts calls and fails once the bytes it has
// outstanding would exceed `budget`.
class FakeRaw {
 public:
  FakeRaw() {
    table_.struct_size = sizeof(table_);
    table_.name = "fake";
    table_.device_type = 0;
    table_.flags = 0;
    table_.self = this;
    table_.alloc = &FakeRaw::alloc_fn;
    table_.free = &FakeRaw::free_fn;
  }
  ~FakeRaw() {
    for (auto& [p, n] : live_) std::free(p);
  }
  const tsr_raw_allocator_t* table() const { return &table_; }

  void set_budget(size_t b) {
    std::lock_guard<std::mutex> lock(mu_);
    budget_ = b;
  }
  int64_t allocs() {
    std::lock_guard<std::mutex> lock(mu_);
    return allocs_;
  }
  int64_t frees() {
    std::lock_guard<std::mutex> lock(mu_);
    return frees_;
  }
  int64_t failures() {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_;
  }
  size_t outstanding() {
    std::lock_guard<std::mutex> lock(mu_);
    return outstanding_;
  }
  int64_t bad_frees() {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_frees_;
  }
  std::vector<size_t> last_sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  // Frees something the allocator leaked on purpose (destructor test).
  void release(void* p) { free_fn(this, tsr_device_t{0, 0}, p, size_of(p)); }
  size_t size_of(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(p);
    return it == live_.end() ? 0 : it->second;
  }

 private:
  static tsr_status_t alloc_fn(void* self, tsr_device_t, size_t n, void** out) {
    auto* f = static_cast<FakeRaw*>(self);
    std::lock_guard<std::mutex> lock(f->mu_);
    if (n == 0 || f->outstanding_ + n > f->budget_) {
      ++f->failures_;
      return tsr::core::make_status(TSR_RESOURCE_EXHAUSTED, "fake device is full");
    }
    void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    if (p == nullptr) return tsr::core::make_status(TSR_RESOURCE_EXHAUSTED, "host oom");
    ++f->allocs_;
    f->outstanding_ += n;
    f->live_[p] = n;
    f->sizes_.push_back(n);
    *out = p;
    return nullptr;
  }
  static void free_fn(void* self, tsr_device_t, void* p, size_t n) {
    auto* f = static_cast<FakeRaw*>(self);
    std::lock_guard<std::mutex> lock(f->mu_);
    auto it = f->live_.find(p);
    if (it == f->live_.end() || it->second != n) {
      ++f->bad_frees_;
      return;
    }
    f->live_.erase(it);
    f->outstanding_ -= n;
    ++f->frees_;
    std::free(p);
  }

  tsr_raw_allocator_t table_{};
  std::mutex mu_;
  size_t budget_ = SIZE_MAX;
  size_t outstanding_ = 0;
  int64_t allocs_ = 0;
  int64_t frees_ = 0;
  int64_t failures_ = 0;
  int64_t bad_frees_ = 0;
  std::unordered_map<void*, size_t> live_;
  std::vector<size_t> sizes_;
};

class CachingAllocatorTest : public ::testing::Test {
 protected:
  std::unique_ptr<DeviceAllocator> make(const AllocConf& conf = AllocConf()) {
    return tsr::core::make_caching_allocator(raw_.table(), tsr_device_t{0, 0}, "cpu:0", conf);
  }
  void* alloc(DeviceAllocator* a, size_t n) {
    void* p = nullptr;
    tsr_status_t st = a->allocate(n, &p);
    EXPECT_EQ(st, nullptr) << (st ? st->message : "");
    delete st;
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    return p;
  }
  static tsr_memory_stats_t stats(DeviceAllocator* a) {
    tsr_memory_stats_t s;
    std::memset(&s, 0xab, sizeof s);
    a->stats(&s);
    return s;
  }
  void TearDown() override { EXPECT_EQ(raw_.bad_frees(), 0); }

  FakeRaw raw_;
};

std::string addr(const void* p) { return std::to_string(reinterpret_cast<uintptr_t>(p)); }

// ---- A minimal JSON reader, to check snapshots structurally -------------------------------

struct Json {
  enum Kind { kNull, kNum, kStr, kArr, kObj, kBool } kind = kNull;
  double num = 0;
  uint64_t u = 0;  // exact value of non-negative integers
  std::string str;
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;
  const Json& operator[](const std::string& k) const {
    for (const auto& [key, v] : obj) {
      if (key == k) return v;
    }
    static const Json null;
    return null;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}
  bool parse(Json* out) {
    if (!value(out)) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool lit(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool string(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        if (++i_ >= s_.size()) return false;
        const char c = s_[i_];
        if (c == 'u') {
          if (i_ + 4 >= s_.size()) return false;
          out->push_back(static_cast<char>(std::stoi(s_.substr(i_ + 1, 4), nullptr, 16)));
          i_ += 4;
        } else {
          out->push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c);
        }
      } else {
        out->push_back(s_[i_]);
      }
      ++i_;
    }
    if (i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool value(Json* v) {
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      v->kind = Json::kObj;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        ws();
        std::string k;
        if (!string(&k)) return false;
        ws();
        if (i_ >= s_.size() || s_[i_++] != ':') return false;
        Json e;
        if (!value(&e)) return false;
        v->obj.emplace_back(std::move(k), std::move(e));
        ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == '}') return ++i_, true;
        return false;
      }
    }
    if (c == '[') {
      v->kind = Json::kArr;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        Json e;
        if (!value(&e)) return false;
        v->arr.push_back(std::move(e));
        ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == '"') {
      v->kind = Json::kStr;
      return string(&v->str);
    }
    if (lit("true") || lit("false")) return v->kind = Json::kBool, true;
    if (lit("null")) return true;
    const size_t start = i_;
    while (i_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[i_])) || std::strchr("+-.eE", s_[i_]) != nullptr)) {
      ++i_;
    }
    if (start == i_) return false;
    const std::string t = s_.substr(start, i_ - start);
    v->kind = Json::kNum;
    v->num = std::stod(t);
    if (t.find_first_not_of("0123456789") == std::string::npos) v->u = std::stoull(t);
    return true;
  }
  const std::string& s_;
  size_t i_ = 0;
};

struct SnapBlock {
  uint64_t addr, size, requested;
  bool active;
};
struct SnapSegment {
  uint64_t addr, size;
  bool large;
  std::vector<SnapBlock> blocks;
};

// Parses a caching-allocator snapshot and checks its invariants: segments sorted and disjoint,
// blocks tiling each segment exactly, no two neighbouring free blocks (merging), 64-byte
// alignment, requested <= size, and agreement with stats(). Returns the segments.
std::vector<SnapSegment> check_snapshot(const std::string& j, const tsr_memory_stats_t* st) {
  std::vector<SnapSegment> segs;
  Json root;
  EXPECT_TRUE(JsonReader(j).parse(&root)) << "not JSON: " << j;
  EXPECT_EQ(root.kind, Json::kObj);
  EXPECT_EQ(root["device"].kind, Json::kStr);
  EXPECT_EQ(root["allocator"].kind, Json::kStr);
  EXPECT_EQ(root["segments"].kind, Json::kArr);
  uint64_t reserved = 0, allocated = 0, prev_end = 0;
  for (const Json& s : root["segments"].arr) {
    SnapSegment seg{s["address"].u, s["size"].u, s["pool"].str == "large", {}};
    EXPECT_GE(seg.addr, prev_end) << "segments overlap or are unsorted";
    prev_end = seg.addr + seg.size;
    reserved += seg.size;
    uint64_t at = seg.addr;
    bool prev_free = false;
    for (const Json& b : s["blocks"].arr) {
      SnapBlock blk{b["address"].u, b["size"].u, b["requested"].u, b["state"].str == "active"};
      EXPECT_TRUE(b["state"].str == "active" || b["state"].str == "inactive");
      EXPECT_EQ(blk.addr, at) << "blocks do not tile the segment";
      EXPECT_EQ(blk.addr % 64, 0u);
      EXPECT_EQ(blk.size % 64, 0u);
      EXPECT_GT(blk.size, 0u);
      EXPECT_LE(blk.requested, blk.size);
      EXPECT_FALSE(!blk.active && prev_free) << "two neighbouring free blocks";
      if (!blk.active) {
        EXPECT_EQ(blk.requested, 0u);
      }
      prev_free = !blk.active;
      if (blk.active) allocated += blk.size;
      at += blk.size;
      seg.blocks.push_back(blk);
    }
    EXPECT_EQ(at, seg.addr + seg.size) << "blocks do not cover the segment";
    segs.push_back(std::move(seg));
  }
  if (st != nullptr) {
    EXPECT_EQ(reserved, static_cast<uint64_t>(st->reserved_bytes));
    EXPECT_EQ(allocated, static_cast<uint64_t>(st->allocated_bytes));
    EXPECT_EQ(segs.size(), static_cast<size_t>(st->num_segments));
  }
  return segs;
}

TEST_F(CachingAllocatorTest, ZeroAndNullAndUnknownPointer) {
  auto a = make();
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(a->allocate(0, &p), nullptr);
  EXPECT_EQ(p, nullptr);
  a->deallocate(nullptr);
  int local = 0;
  a->deallocate(&local);  // unknown: ignored
  void* q = alloc(a.get(), 100);
  a->deallocate(static_cast<char*>(q) + 64);  // interior pointer: unknown, ignored
  auto s = stats(a.get());
  EXPECT_EQ(s.num_allocs, 1);
  EXPECT_EQ(s.num_frees, 0);
  EXPECT_EQ(s.allocated_bytes, 512);
  a->deallocate(q);
  a->deallocate(q);  // double free: ignored
  s = stats(a.get());
  EXPECT_EQ(s.num_frees, 1);
  EXPECT_EQ(s.allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, ReuseHitsTheCache) {
  auto a = make();
  void* p = alloc(a.get(), 1000);
  a->deallocate(p);
  void* q = alloc(a.get(), 1000);
  EXPECT_EQ(p, q);
  EXPECT_EQ(raw_.allocs(), 1);
  auto s = stats(a.get());
  EXPECT_EQ(s.num_raw_allocs, 1);
  EXPECT_EQ(s.num_cache_hits, 1);
  a->deallocate(q);
}

TEST_F(CachingAllocatorTest, SplittingServesSmallAllocsFromOneSegment) {
  auto a = make();
  char* p = static_cast<char*>(alloc(a.get(), 1000));  // rounded to 1024
  char* q = static_cast<char*>(alloc(a.get(), 100));   // rounded to 512
  EXPECT_EQ(q, p + 1024);
  EXPECT_EQ(raw_.allocs(), 1);
  EXPECT_EQ(raw_.last_sizes(), std::vector<size_t>{2 * kMiB});
  auto s = stats(a.get());
  EXPECT_EQ(s.num_splits, 2);
  EXPECT_EQ(s.allocated_bytes, 1536);
  a->deallocate(p);
  a->deallocate(q);
}

TEST_F(CachingAllocatorTest, MergingFreeNeighbours) {
  auto a = make();
  char* x = static_cast<char*>(alloc(a.get(), 512 * kKiB));
  char* y = static_cast<char*>(alloc(a.get(), 512 * kKiB));
  char* z = static_cast<char*>(alloc(a.get(), 512 * kKiB));
  EXPECT_EQ(y, x + 512 * kKiB);
  EXPECT_EQ(z, y + 512 * kKiB);
  a->deallocate(y);
  a->deallocate(x);  // merges with y
  char* w = static_cast<char*>(alloc(a.get(), 1 * kMiB));
  EXPECT_EQ(w, x);
  EXPECT_EQ(raw_.allocs(), 1);
  // Free everything: the segment is one free block again.
  a->deallocate(w);
  a->deallocate(z);
  const std::string j = a->snapshot_json();
  EXPECT_NE(
      j.find("\"blocks\":[{\"address\":" + addr(x) + ",\"size\":2097152,\"requested\":0,\"state\":\"inactive\"}]"),
      std::string::npos)
      << j;
  char* v = static_cast<char*>(alloc(a.get(), 1 * kMiB));  // best fit: the merged segment
  EXPECT_EQ(v, x);
  a->deallocate(v);
}

TEST_F(CachingAllocatorTest, SmallAndLargePools) {
  auto a = make();
  void* s1 = alloc(a.get(), 1 * kMiB);         // small pool: 2 MiB segment
  void* l1 = alloc(a.get(), 1 * kMiB + 1);     // large: 20 MiB segment
  void* l2 = alloc(a.get(), 3 * kMiB);         // large: same 20 MiB segment
  void* l3 = alloc(a.get(), 17 * kMiB);        // > the shared remainder: own 18 MiB segment
  void* l4 = alloc(a.get(), 24 * kMiB + 512);  // own segment, 26 MiB (remainder 2 MiB - 512 split)
  EXPECT_EQ(raw_.last_sizes(), (std::vector<size_t>{2 * kMiB, 20 * kMiB, 18 * kMiB, 26 * kMiB}));
  EXPECT_EQ(static_cast<char*>(l2), static_cast<char*>(l1) + 1 * kMiB + 512);
  auto s = stats(a.get());
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(66 * kMiB));
  EXPECT_EQ(s.num_segments, 4);
  a->deallocate(s1);
  // A free small-pool block never serves a large request.
  void* l5 = alloc(a.get(), 1 * kMiB + 512);
  EXPECT_NE(l5, s1);
  EXPECT_EQ(raw_.allocs(), 4);  // from the 20 MiB segment's remainder
  // And a free large block never serves a small request.
  a->deallocate(l3);
  void* s2 = alloc(a.get(), 64 * kKiB);
  EXPECT_EQ(s2, s1);
  for (void* p : {l1, l2, l4, l5, s2}) a->deallocate(p);
  EXPECT_EQ(stats(a.get()).allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, StatsExactInScriptedSequence) {
  auto a = make();
  void* pa = alloc(a.get(), 1000);  // 1024, new small segment, split
  void* pb = alloc(a.get(), 3000);  // 3072, hit, split
  a->deallocate(pa);
  void* pc = alloc(a.get(), 500);  // 512 from a's 1024 block: hit, split
  EXPECT_EQ(pc, pa);
  void* pd = alloc(a.get(), 2 * kMiB);  // large: new 20 MiB segment, split
  a->deallocate(pb);
  a->deallocate(pc);
  a->deallocate(pd);
  auto s = stats(a.get());
  EXPECT_EQ(s.struct_size, sizeof(tsr_memory_stats_t));
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(2 * kMiB + 3072 + 512));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(22 * kMiB));
  EXPECT_EQ(s.peak_reserved_bytes, static_cast<int64_t>(22 * kMiB));
  EXPECT_EQ(s.num_allocs, 4);
  EXPECT_EQ(s.num_frees, 4);
  EXPECT_EQ(s.num_raw_allocs, 2);
  EXPECT_EQ(s.num_raw_frees, 0);
  EXPECT_EQ(s.num_cache_hits, 2);
  EXPECT_EQ(s.num_splits, 4);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.num_segments, 2);
  EXPECT_EQ(s.limit_bytes, 0);
  a->empty_cache();
  s = stats(a.get());
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.peak_reserved_bytes, static_cast<int64_t>(22 * kMiB));
  EXPECT_EQ(s.num_raw_frees, 2);
  EXPECT_EQ(s.num_segments, 0);
  EXPECT_EQ(raw_.outstanding(), 0u);
}

TEST_F(CachingAllocatorTest, SnapshotJson) {
  auto a = make();
  char* p = static_cast<char*>(alloc(a.get(), 1000));
  char* q = static_cast<char*>(alloc(a.get(), 3000));
  const std::string j = a->snapshot_json();
  EXPECT_EQ(j.rfind("{\"device\":\"cpu:0\",\"allocator\":\"caching\"", 0), 0u) << j;
  const std::string seg = "{\"address\":" + addr(p) + ",\"size\":2097152,\"pool\":\"small\"";
  EXPECT_NE(j.find(seg), std::string::npos) << j;
  const std::string blocks = "\"blocks\":[{\"address\":" + addr(p) +
                             ",\"size\":1024,\"requested\":1000,\"state\":\"active\"},{\"address\":" + addr(q) +
                             ",\"size\":3072,\"requested\":3000,\"state\":\"active\"},{\"address\":" + addr(q + 3072) +
                             ",\"size\":" + std::to_string(2 * kMiB - 4096) +
                             ",\"requested\":0,\"state\":\"inactive\"}]}]}";
  EXPECT_NE(j.find(blocks), std::string::npos) << j;
  EXPECT_EQ(j.substr(j.size() - 5), "}]}]}");
  int depth = 0;
  for (char c : j) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  a->deallocate(p);
  a->deallocate(q);
  a->empty_cache();
  EXPECT_NE(a->snapshot_json().find("\"segments\":[]}"), std::string::npos);
}

TEST_F(CachingAllocatorTest, EmptyCacheReturnsOnlyWhollyFreeSegments) {
  auto a = make();
  void* s1 = alloc(a.get(), 4 * kKiB);
  void* s2 = alloc(a.get(), 4 * kKiB);
  void* l1 = alloc(a.get(), 12 * kMiB);
  void* l2 = alloc(a.get(), 2 * kMiB);  // 20 MiB segment
  EXPECT_EQ(raw_.allocs(), 3);
  a->deallocate(s1);  // small segment still holds s2
  a->deallocate(l1);
  a->deallocate(l2);
  a->empty_cache();
  EXPECT_EQ(raw_.frees(), 2);
  auto s = stats(a.get());
  EXPECT_EQ(s.num_segments, 1);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(2 * kMiB));
  a->deallocate(s2);
  a->empty_cache();
  EXPECT_EQ(raw_.frees(), 3);
  EXPECT_EQ(raw_.outstanding(), 0u);
}

TEST_F(CachingAllocatorTest, LimitOomReportsNumbersAndStaysUsable) {
  AllocConf conf;
  conf.limit_bytes = 16 * kMiB;
  auto a = make(conf);
  void* big = alloc(a.get(), 12 * kMiB);  // 12 MiB segment
  void* p = reinterpret_cast<void*>(0x1234);
  tsr_status_t st = a->allocate(5 * kMiB, &p);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(p, reinterpret_cast<void*>(0x1234));  // untouched
  EXPECT_EQ(st->message.rfind("out of memory on cpu:0 allocating 5.00 MiB (requested 5242880 "
                              "bytes): 12.0 MiB allocated, 12.0 MiB reserved, limit 16.0 MiB",
                              0),
            0u)
      << st->message;
  delete st;
  auto s = stats(a.get());
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.limit_bytes, static_cast<int64_t>(16 * kMiB));
  EXPECT_EQ(raw_.failures(), 0);  // the cap is checked before calling the raw allocator
  // Still usable: small allocations fit under the cap.
  void* small = alloc(a.get(), 1000);
  a->deallocate(small);
  // After freeing, the 12 MiB segment is flushed and a segment for 5 MiB fits (6 MiB: the
  // shared 20 MiB segment would exceed the limit).
  a->deallocate(big);
  void* q = alloc(a.get(), 5 * kMiB);
  s = stats(a.get());
  EXPECT_LE(s.reserved_bytes, static_cast<int64_t>(16 * kMiB));
  EXPECT_EQ(s.num_ooms, 1);
  a->deallocate(q);
  // A request bigger than the limit itself.
  st = a->allocate(17 * kMiB, &p);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(st->message.find("limit 16.0 MiB"), std::string::npos) << st->message;
  delete st;
}

TEST_F(CachingAllocatorTest, HugeRequestIsAStatus) {
  auto a = make();
  void* p = nullptr;
  for (size_t n : {SIZE_MAX, SIZE_MAX / 2, size_t(1) << 62}) {
    tsr_status_t st = a->allocate(n, &p);
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
    EXPECT_NE(st->message.find("requested " + std::to_string(n) + " bytes"), std::string::npos);
    delete st;
  }
  // Big but representable: the raw allocator refuses it; its message is passed on.
  raw_.set_budget(1 * kMiB * 1024);
  tsr_status_t st = a->allocate(size_t(1) << 40, &p);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(st->message.find("allocating 1.00 TiB"), std::string::npos) << st->message;
  EXPECT_NE(st->message.find("no limit"), std::string::npos) << st->message;
  EXPECT_NE(st->message.find("fake: fake device is full"), std::string::npos) << st->message;
  delete st;
  EXPECT_EQ(stats(a.get()).num_ooms, 4);
}

TEST_F(CachingAllocatorTest, RawFailureFlushesCacheAndRetries) {
  raw_.set_budget(26 * kMiB);
  auto a = make();
  void* p = alloc(a.get(), 12 * kMiB);  // 12 MiB segment
  a->deallocate(p);                     // cached
  void* q = alloc(a.get(), 13 * kMiB);  // 14 MiB: 12 + 14 > 26? no: fits
  a->deallocate(q);
  EXPECT_EQ(raw_.failures(), 0);
  void* r = alloc(a.get(), 15 * kMiB);  // 16 MiB: 26 + 16 > 26 -> flush both, retry
  EXPECT_EQ(raw_.failures(), 1);
  auto s = stats(a.get());
  EXPECT_EQ(s.num_raw_frees, 2);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(16 * kMiB));
  // When the flush cannot free enough: RESOURCE_EXHAUSTED with the raw message, then usable.
  void* x = nullptr;
  tsr_status_t st = a->allocate(11 * kMiB, &x);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(st->message.find("16.0 MiB allocated, 16.0 MiB reserved, no limit"), std::string::npos) << st->message;
  EXPECT_NE(st->message.find("fake device is full"), std::string::npos) << st->message;
  delete st;
  a->deallocate(r);
  void* y = alloc(a.get(), 11 * kMiB);
  a->deallocate(y);
  EXPECT_EQ(stats(a.get()).num_ooms, 1);
}

TEST_F(CachingAllocatorTest, SharedSegmentFallsBackToSmallestFit) {
  raw_.set_budget(8 * kMiB);
  auto a = make();
  void* p = alloc(a.get(), 3 * kMiB);  // 20 MiB refused by the device -> 4 MiB segment
  EXPECT_EQ(raw_.last_sizes(), std::vector<size_t>{4 * kMiB});
  a->deallocate(p);
}

TEST_F(CachingAllocatorTest, MaxSplitSizeRespected) {
  {
    // Default: a cached 40 MiB block is split for a 21 MiB request.
    auto a = make();
    void* p = alloc(a.get(), 40 * kMiB);
    a->deallocate(p);
    void* q = alloc(a.get(), 21 * kMiB);
    EXPECT_EQ(q, p);
    auto s = stats(a.get());
    EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(21 * kMiB));
    EXPECT_EQ(s.num_splits, 1);
    a->deallocate(q);
  }
  AllocConf conf;
  conf.max_split_size = 32 * kMiB;
  auto a = make(conf);
  void* p = alloc(a.get(), 40 * kMiB);
  a->deallocate(p);
  // Oversize request (> max_split_size), waste < 20 MiB: reuses the block whole, unsplit.
  void* q = alloc(a.get(), 33 * kMiB);
  EXPECT_EQ(q, p);
  auto s = stats(a.get());
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(40 * kMiB));
  EXPECT_EQ(s.num_splits, 0);
  a->deallocate(q);
  // A normal request never takes an unsplittable block: new segment of its own.
  void* r = alloc(a.get(), 21 * kMiB);
  EXPECT_NE(r, p);
  EXPECT_EQ(raw_.last_sizes().back(), 22 * kMiB);
  a->deallocate(r);
  // Blocks up to max_split_size are split as usual.
  void* r2 = alloc(a.get(), 2 * kMiB);
  EXPECT_EQ(r2, r);
  EXPECT_EQ(stats(a.get()).num_splits, 1);
  a->deallocate(r2);
  // Oversize request that would waste >= 20 MiB of a cached block: new segment.
  void* u = alloc(a.get(), 64 * kMiB);
  a->deallocate(u);
  void* v = alloc(a.get(), 41 * kMiB);  // the 64 MiB block would waste 23 MiB
  EXPECT_NE(v, u);
  EXPECT_EQ(raw_.last_sizes().back(), 42 * kMiB);
  a->deallocate(v);
  EXPECT_EQ(stats(a.get()).num_splits, 1);
  // max_split below 20 MiB: large requests get segments of their own size.
  AllocConf conf2;
  conf2.max_split_size = 4 * kMiB;
  auto b = make(conf2);
  void* w = alloc(b.get(), 3 * kMiB);
  EXPECT_EQ(raw_.last_sizes().back(), 4 * kMiB);
  b->deallocate(w);
}

TEST_F(CachingAllocatorTest, GarbageCollectionThreshold) {
  AllocConf conf;
  conf.limit_bytes = 64 * kMiB;
  conf.gc_threshold = 0.5;
  auto a = make(conf);
  void* p = alloc(a.get(), 22 * kMiB);
  a->deallocate(p);
  void* q = alloc(a.get(), 23 * kMiB);  // 22 + 24 > 32: the cached 22 MiB goes first
  auto s = stats(a.get());
  EXPECT_EQ(s.num_raw_frees, 1);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(24 * kMiB));
  a->deallocate(q);
  // Without the threshold both stay cached (46 MiB <= 64 MiB limit).
  conf.gc_threshold = 0.0;
  auto b = make(conf);
  p = alloc(b.get(), 22 * kMiB);
  b->deallocate(p);
  q = alloc(b.get(), 23 * kMiB);
  s = stats(b.get());
  EXPECT_EQ(s.num_raw_frees, 0);
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(46 * kMiB));
  b->deallocate(q);
}

TEST_F(CachingAllocatorTest, Rounding) {
  AllocConf conf;
  conf.roundup_bytes = 64;
  auto a = make(conf);
  void* p = alloc(a.get(), 100);
  EXPECT_EQ(stats(a.get()).allocated_bytes, 128);
  a->deallocate(p);
  conf.roundup_bytes = 1000;  // not a multiple of 64: still 64-aligned blocks
  auto b = make(conf);
  char* x = static_cast<char*>(alloc(b.get(), 1));
  char* y = static_cast<char*>(alloc(b.get(), 1));
  EXPECT_EQ(stats(b.get()).allocated_bytes, 2048);
  EXPECT_EQ(y, x + 1024);
  b->deallocate(x);
  b->deallocate(y);
  auto c = make();  // default 512
  p = alloc(c.get(), 513);
  EXPECT_EQ(stats(c.get()).allocated_bytes, 1024);
  c->deallocate(p);
}

TEST_F(CachingAllocatorTest, DestructorReleasesOnlyFreeSegments) {
  void* kept = nullptr;
  {
    auto a = make();
    kept = alloc(a.get(), 100);               // small segment stays active
    void* freed = alloc(a.get(), 12 * kMiB);  // large segment, freed before destruction
    a->deallocate(freed);
  }
  EXPECT_EQ(raw_.frees(), 1);
  EXPECT_EQ(raw_.size_of(kept), 2 * kMiB);  // segment base == first block
  raw_.release(kept);
  EXPECT_EQ(raw_.outstanding(), 0u);
}

TEST_F(CachingAllocatorTest, MultithreadedStressDetectsOverlap) {
  auto a = make();
  constexpr int kThreads = 4;
  constexpr int kIters = 10000;
  std::atomic<int64_t> corrupt{0};
  std::atomic<bool> done{false};
  auto fill = [](uint64_t* w, size_t n, uint64_t tag) {
    for (size_t i = 0; i + 1 < n; i += 8) w[i] = tag ^ i;  // one word per 64 bytes
    w[n - 1] = ~tag;
  };
  auto check = [](const uint64_t* w, size_t n, uint64_t tag) {
    for (size_t i = 0; i + 1 < n; i += 8) {
      if (w[i] != (tag ^ i)) return false;
    }
    return w[n - 1] == ~tag;
  };
  auto worker = [&](int t) {
    std::mt19937_64 rng(1234 + t);
    struct Live {
      uint64_t* p;
      size_t words;
      uint64_t tag;
    };
    std::vector<Live> live;
    for (int it = 0; it < kIters; ++it) {
      const bool do_alloc = live.empty() || (live.size() < 64 && rng() % 2 == 0);
      if (do_alloc) {
        const unsigned r = rng() % 100;
        size_t n;
        if (r < 90) {
          n = 8 + rng() % (8 * kKiB);
        } else if (r < 99) {
          n = 8 * kKiB + rng() % (504 * kKiB);
        } else {
          n = 1 * kMiB + rng() % (2 * kMiB);
        }
        void* p = nullptr;
        tsr_status_t st = a->allocate(n, &p);
        if (st != nullptr || p == nullptr || reinterpret_cast<uintptr_t>(p) % 64 != 0) {
          delete st;
          ++corrupt;
          continue;
        }
        const size_t words = n / 8 == 0 ? 1 : n / 8;
        const uint64_t tag = (uint64_t(t) << 56) | (uint64_t(it) << 8) | 0x5a;
        fill(static_cast<uint64_t*>(p), words, tag);
        live.push_back({static_cast<uint64_t*>(p), words, tag});
      } else {
        const size_t k = rng() % live.size();
        if (!check(live[k].p, live[k].words, live[k].tag)) ++corrupt;
        a->deallocate(live[k].p);
        live[k] = live.back();
        live.pop_back();
      }
    }
    for (const Live& l : live) {
      if (!check(l.p, l.words, l.tag)) ++corrupt;
      a->deallocate(l.p);
    }
  };
  std::thread observer([&] {
    while (!done.load()) {
      tsr_memory_stats_t s;
      a->stats(&s);
      if (s.allocated_bytes > s.reserved_bytes) ++corrupt;
      check_snapshot(a->snapshot_json(), nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  done = true;
  observer.join();
  EXPECT_EQ(corrupt.load(), 0);
  auto s = stats(a.get());
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.num_allocs, s.num_frees);
  EXPECT_EQ(s.num_allocs, s.num_cache_hits + s.num_raw_allocs);
  EXPECT_EQ(s.num_raw_allocs - s.num_raw_frees, s.num_segments);
  // Everything merged back: each segment is a single free block.
  const std::string j = a->snapshot_json();
  for (const auto& seg : check_snapshot(j, &s)) EXPECT_EQ(seg.blocks.size(), 1u);
  EXPECT_EQ(j.find("\"active\""), std::string::npos);
  size_t blocks = 0;
  for (size_t pos = j.find("\"state\""); pos != std::string::npos; pos = j.find("\"state\"", pos + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, static_cast<size_t>(s.num_segments));
  a->empty_cache();
  EXPECT_EQ(stats(a.get()).reserved_bytes, 0);
  EXPECT_EQ(raw_.outstanding(), 0u);
}

// A reference model of the placement policy, checked against snapshots taken before and after
// each call: best fit by (size, address) within the pool, max_split_size rules, split
// thresholds, segment sizes.
void run_model(FakeRaw* raw, const AllocConf& conf, uint32_t seed, int ops) {
  auto a = tsr::core::make_caching_allocator(raw->table(), tsr_device_t{0, 0}, "cpu:0", conf);
  std::mt19937 rng(seed);
  std::vector<void*> live;
  const size_t R = std::max<size_t>(conf.roundup_bytes, 64);
  const size_t ms = conf.max_split_size;
  for (int op = 0; op < ops; ++op) {
    if (live.empty() || (live.size() < 40 && rng() % 2 == 0)) {
      const unsigned r = rng() % 100;
      size_t n = r < 60   ? 1 + rng() % (64 * kKiB)
                 : r < 90 ? 64 * kKiB + rng() % (1200 * kKiB)
                          : 1 * kMiB + rng() % (30 * kMiB);
      size_t size = (n + R - 1) / R * R;
      size = (size + 63) / 64 * 64;
      const bool large = size > 1 * kMiB;
      tsr_memory_stats_t st;
      a->stats(&st);
      const auto before = check_snapshot(a->snapshot_json(), &st);
      const SnapBlock* best = nullptr;
      for (const auto& seg : before) {
        if (seg.large != large) continue;
        for (const auto& b : seg.blocks) {
          if (b.active || b.size < size) continue;
          if (best == nullptr || b.size < best->size || (b.size == best->size && b.addr < best->addr)) {
            best = &b;
          }
        }
      }
      if (best != nullptr && large && ms != SIZE_MAX) {
        if (size <= ms && best->size > ms)
          best = nullptr;
        else if (size > ms && best->size - size >= 20 * kMiB)
          best = nullptr;
      }
      uint64_t block_size;
      if (best != nullptr) {
        block_size = best->size;
      } else if (!large) {
        block_size = 2 * kMiB;
      } else if (size < 10 * kMiB && 20 * kMiB <= ms) {
        block_size = 20 * kMiB;
      } else {
        block_size = (size + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
      }
      const uint64_t rest = block_size - size;
      const bool split = large ? (block_size <= ms && rest > 1 * kMiB) : rest >= 512;
      const uint64_t expect_size = split ? size : block_size;

      void* p = nullptr;
      tsr_status_t s = a->allocate(n, &p);
      ASSERT_EQ(s, nullptr);
      live.push_back(p);
      a->stats(&st);
      const auto after = check_snapshot(a->snapshot_json(), &st);
      const uint64_t pa = reinterpret_cast<uintptr_t>(p);
      if (best != nullptr) {
        ASSERT_EQ(pa, best->addr) << "not the best fit, op " << op << " size " << size;
      } else {
        for (const auto& seg : before) {
          ASSERT_FALSE(pa >= seg.addr && pa < seg.addr + seg.size) << "expected a new segment";
        }
      }
      bool found = false;
      for (const auto& seg : after) {
        for (const auto& b : seg.blocks) {
          if (b.addr == pa) {
            found = true;
            EXPECT_TRUE(b.active);
            EXPECT_EQ(b.requested, n);
            EXPECT_EQ(b.size, expect_size) << "op " << op << " size " << size;
            if (best == nullptr) {
              EXPECT_EQ(seg.size, block_size);
            }
          }
        }
      }
      ASSERT_TRUE(found);
    } else {
      const size_t k = rng() % live.size();
      a->deallocate(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  for (void* p : live) a->deallocate(p);
  tsr_memory_stats_t st;
  a->stats(&st);
  const auto end = check_snapshot(a->snapshot_json(), &st);
  for (const auto& seg : end) EXPECT_EQ(seg.blocks.size(), 1u);
  a->empty_cache();
  a->stats(&st);
  EXPECT_EQ(st.reserved_bytes, 0);
}

TEST_F(CachingAllocatorTest, RandomizedPlacementMatchesModel) {
  AllocConf def;
  run_model(&raw_, def, 1, 1500);
  run_model(&raw_, def, 2, 1500);
  AllocConf fine;
  fine.roundup_bytes = 64;
  run_model(&raw_, fine, 3, 1500);
  AllocConf split;
  split.max_split_size = 8 * kMiB;
  run_model(&raw_, split, 4, 1500);
  AllocConf split2;
  split2.max_split_size = 24 * kMiB;
  run_model(&raw_, split2, 5, 1500);
  EXPECT_EQ(raw_.outstanding(), 0u);
}

// Not a benchmark, a guard: a cache hit (alloc + free) must stay cheap. Prints the cost.
TEST_F(CachingAllocatorTest, HitPathCost) {
  auto a = make();
  void* warm = alloc(a.get(), 256);
  a->deallocate(warm);
  constexpr int kN = 200000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kN; ++i) {
    void* p = nullptr;
    tsr_status_t st = a->allocate(256, &p);
    if (st != nullptr) {
      delete st;
      FAIL();
    }
    a->deallocate(p);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kN;
  std::printf("[ info     ] alloc+free cache hit: %.1f ns\n", ns);
  RecordProperty("hit_ns", std::to_string(ns));
  EXPECT_EQ(raw_.allocs(), 1);
}

// ---- Pass-through ----------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, PassthroughStatsLimitAndSnapshot) {
  AllocConf conf;
  conf.limit_bytes = 1 * kMiB;
  auto a = tsr::core::make_passthrough_allocator(raw_.table(), tsr_device_t{0, 1}, "cpu:1", conf);
  void* z = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(a->allocate(0, &z), nullptr);
  EXPECT_EQ(z, nullptr);
  void* p = alloc(a.get(), 1000);
  void* q = alloc(a.get(), 2000);
  EXPECT_EQ(raw_.allocs(), 2);
  EXPECT_EQ(raw_.size_of(p), 1000u);
  void* r = nullptr;
  tsr_status_t st = a->allocate(1 * kMiB, &r);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(st->message.find("out of memory on cpu:1 allocating 1.00 MiB (requested 1048576 "
                             "bytes): 2.93 KiB allocated, 2.93 KiB reserved, limit 1.00 MiB"),
            std::string::npos)
      << st->message;
  delete st;
  auto s = stats(a.get());
  EXPECT_EQ(s.struct_size, sizeof(tsr_memory_stats_t));
  EXPECT_EQ(s.allocated_bytes, 3000);
  EXPECT_EQ(s.reserved_bytes, 3000);
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.num_raw_allocs, 2);
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.num_segments, 2);
  EXPECT_EQ(s.num_cache_hits, 0);
  EXPECT_EQ(s.limit_bytes, static_cast<int64_t>(1 * kMiB));
  const std::string j = a->snapshot_json();
  EXPECT_EQ(j.rfind("{\"device\":\"cpu:1\",\"allocator\":\"fake\",\"segments\":[", 0), 0u) << j;
  EXPECT_NE(j.find("{\"address\":" + addr(p) + ",\"size\":1000,\"blocks\":[{\"address\":" + addr(p) +
                   ",\"size\":1000,\"requested\":1000,\"state\":\"active\"}]}"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"size\":2000"), std::string::npos) << j;
  int unknown = 0;
  a->deallocate(&unknown);
  a->deallocate(nullptr);
  a->deallocate(p);
  a->empty_cache();
  a->deallocate(q);
  s = stats(a.get());
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.peak_allocated_bytes, 3000);
  EXPECT_EQ(s.num_frees, 2);
  EXPECT_EQ(s.num_raw_frees, 2);
  EXPECT_EQ(s.num_segments, 0);
  EXPECT_EQ(raw_.outstanding(), 0u);
  // Raw failure is a status too.
  raw_.set_budget(100);
  st = a->allocate(200, &r);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(st->message.find("fake device is full"), std::string::npos) << st->message;
  delete st;
}

// ---- TESSERA_ALLOC_CONF ----------------------------------------------------------------------

AllocConf parse_ok(const std::string& text, const std::string& type = "cpu") {
  AllocConf c;
  c.limit_bytes = 12345;  // overwritten
  tsr_status_t st = tsr::core::parse_alloc_conf(text, type, &c);
  EXPECT_EQ(st, nullptr) << text << ": " << (st ? st->message : "");
  delete st;
  return c;
}

std::string parse_err(const std::string& text, const std::string& type = "cpu") {
  AllocConf c;
  c.limit_bytes = 777;
  tsr_status_t st = tsr::core::parse_alloc_conf(text, type, &c);
  EXPECT_NE(st, nullptr) << text;
  if (st == nullptr) return "";
  EXPECT_EQ(st->code, TSR_INVALID_ARGUMENT) << text;
  EXPECT_EQ(c.limit_bytes, 777u) << "output changed on error: " << text;
  std::string m = st->message;
  delete st;
  return m;
}

TEST(AllocConfTest, EmptyGivesDefaults) {
  for (const char* text : {"", "   ", ",", " , ,"}) {
    AllocConf c = parse_ok(text);
    EXPECT_EQ(c.allocator, "");
    EXPECT_EQ(c.max_split_size, SIZE_MAX);
    EXPECT_EQ(c.limit_bytes, 0u);
    EXPECT_EQ(c.gc_threshold, 0.0);
    EXPECT_EQ(c.roundup_bytes, 512u);
  }
}

TEST(AllocConfTest, AllKeys) {
  AllocConf c = parse_ok(
      "allocator:caching,max_split_size_mb:64,limit_mb:512,garbage_collection_threshold:0.8,"
      "roundup_bytes:256");
  EXPECT_EQ(c.allocator, "caching");
  EXPECT_EQ(c.max_split_size, 64 * kMiB);
  EXPECT_EQ(c.limit_bytes, 512 * kMiB);
  EXPECT_DOUBLE_EQ(c.gc_threshold, 0.8);
  EXPECT_EQ(c.roundup_bytes, 256u);
  c = parse_ok("  allocator : native ,\tlimit_mb:  0 , garbage_collection_threshold:1 ,");
  EXPECT_EQ(c.allocator, "native");
  EXPECT_EQ(c.limit_bytes, 0u);
  EXPECT_DOUBLE_EQ(c.gc_threshold, 1.0);
  c = parse_ok("limit_mb:1,limit_mb:2");  // last wins
  EXPECT_EQ(c.limit_bytes, 2 * kMiB);
  EXPECT_EQ(parse_ok("").guard_bytes, 0u);
  EXPECT_EQ(parse_ok("guard_bytes:4096").guard_bytes, 4096u);
  EXPECT_EQ(parse_ok("guard_bytes:0").guard_bytes, 0u);
}

TEST(AllocConfTest, TypePrefixes) {
  const std::string text = "cuda.limit_mb:1024,limit_mb:512,cuda.allocator:async,roundup_bytes:128";
  AllocConf cuda = parse_ok(text, "cuda");
  EXPECT_EQ(cuda.limit_bytes, 1024 * kMiB);  // the type-specific entry wins, whatever the order
  EXPECT_EQ(cuda.allocator, "async");
  EXPECT_EQ(cuda.roundup_bytes, 128u);
  AllocConf cpu = parse_ok(text, "cpu");
  EXPECT_EQ(cpu.limit_bytes, 512 * kMiB);
  EXPECT_EQ(cpu.allocator, "");
  EXPECT_EQ(cpu.roundup_bytes, 128u);
  AllocConf c = parse_ok(" cpu . max_split_size_mb : 32 ", "cpu");
  EXPECT_EQ(c.max_split_size, 32 * kMiB);
}

TEST(AllocConfTest, Errors) {
  EXPECT_EQ(parse_err("foo:1"), "TESSERA_ALLOC_CONF: unknown key 'foo'");
  EXPECT_EQ(parse_err("limit_mb:1, cuda.foo:2"), "TESSERA_ALLOC_CONF: unknown key 'cuda.foo'");
  std::string m = parse_err("limit_mb:abc");
  EXPECT_NE(m.find("'limit_mb'"), std::string::npos) << m;
  EXPECT_NE(m.find("'abc'"), std::string::npos) << m;
  // Entries for other device types are still checked.
  m = parse_err("cuda.limit_mb:12x", "cpu");
  EXPECT_NE(m.find("cuda.limit_mb"), std::string::npos) << m;
  EXPECT_NE(m.find("12x"), std::string::npos) << m;
  for (const char* bad :
       {"limit_mb:-1", "limit_mb:", "limit_mb:1.5", "limit_mb:99999999999999999999999", "limit_mb:1 2",
        "max_split_size_mb:0", "max_split_size_mb:+4", "garbage_collection_threshold:1.5",
        "garbage_collection_threshold:-0.1", "garbage_collection_threshold:nan", "garbage_collection_threshold:x",
        "roundup_bytes:32", "roundup_bytes:100", "guard_bytes:100", "guard_bytes:-64", "guard_bytes:2097152",
        "allocator:", "limit_mb", "limit_mb 5", ".limit_mb:5", "cuda.:5",
        "limit_mb:1,,bogus"}) {
    m = parse_err(bad);
    EXPECT_EQ(m.rfind("TESSERA_ALLOC_CONF: ", 0), 0u) << bad << " -> " << m;
  }
  EXPECT_NE(parse_err("limit_mb 5").find("limit_mb 5"), std::string::npos);
  EXPECT_NE(parse_err("garbage_collection_threshold:2").find("garbage_collection_threshold"), std::string::npos);
}

}  // namespace
