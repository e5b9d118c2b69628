// The core's device-agnostic caching allocator (in the manner of PyTorch's CUDACachingAllocator)
// over a backend's tsr_raw_allocator_t. See allocator.hpp for the contract;
// passthrough_allocator.cpp and alloc_conf.cpp hold the other allocator and the configuration.
//
// Caching allocator layout:
//  - A segment is one raw allocation. Its memory is tiled by a doubly linked list of blocks
//    (address order); every block is either active (handed out) or free (cached).
//  - Free blocks live in one ordered set per pool (small: requests <= 1 MiB, from 2 MiB
//    segments; large: the rest), ordered by (size, address), so lower_bound is best fit.
//  - Active blocks are found from their pointer through an open-addressing hash table.
//  - The hit path does no heap allocation: Block nodes are recycled through a spare list, and
//    every Block owns the std::set node it needs (a C++17 node handle), moving it into a pool
//    on insert and back out on extract. The hash table is sized ahead of the number of Blocks.
//  - Splitting a cached block for a request, and merging it back on free, update the free
//    block's key in place when its position in the ordered set does not change (the common
//    churn on one big free block), so the hit path rarely rebalances the tree.
//  - Everything that may throw (making Blocks, Segments, messages) happens before the state is
//    changed, so a std::bad_alloc leaves the allocator consistent; it is turned into a status.
//  - Streams (PyTorch's stream-ordered reuse): a segment belongs to the stream of the request
//    that made it, and so do its blocks; the free-set key starts with (private pool, stream),
//    so best fit only ever finds blocks of the requesting stream. A block that
//    record_stream() marked as used on other streams is not cached when freed: an event is
//    recorded on each of those streams and the block waits in pending_ ("pending_free") until
//    they are all complete (polled with event_query when allocating: only when pending_ is not
//    empty, so the hit path pays one branch; synchronized on OOM and empty_cache).
//  - Private pools (graph capture): while a pool is begun for a stream, requests on that
//    stream get blocks from segments tagged with the pool (its id is the first key field, so
//    they never mix with the device cache). When the pool has no claims left and no block in
//    use, its segments are re-tagged as ordinary cache.
//  - The destructor returns wholly free segments to the raw allocator. Segments that still
//    hold active blocks (leaked by the caller) are not returned: their memory may still be in
//    use; only the bookkeeping is released.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allocator.hpp"
#include "allocator_util.hpp"
#include "spin_mutex.hpp"
#include "status.hpp"

namespace tsr::core {
namespace {

constexpr size_t kSmallSize = 1 * kMiB;       // requests <= this use the small pool
constexpr size_t kSmallSegment = 2 * kMiB;    // segment size of the small pool
constexpr size_t kMinLargeAlloc = 10 * kMiB;  // large requests below this share 20 MiB segments
constexpr size_t kLargeSegment = 20 * kMiB;
constexpr size_t kRoundLarge = 2 * kMiB;           // bigger requests: own segment, 2 MiB multiple
constexpr size_t kMinSmallRemainder = 512;         // small pool: split if remainder >= this
constexpr size_t kMinLargeRemainder = kSmallSize;  // large pool: split if remainder > this
// An oversize request (> max_split_size) may reuse an oversize cached block only if it wastes
// less than this much.
constexpr size_t kLargeBuffer = 20 * kMiB;
// Requests above this are refused outright (keeps all rounding arithmetic overflow-free).

// ---- Caching allocator --------------------------------------------------------------------

struct Block;

// An entry of a pool's free set: the block's key, copied so that the tree search does not
// chase Block pointers. The key fields are mutable so that a block can be resized in place
// when its position in the order does not change.
struct FreeKey {
  uint64_t pool;     // private pool id, 0 = the device cache
  uintptr_t stream;  // the segment's stream
  mutable size_t size;
  mutable uintptr_t addr;
  Block* block;
};

struct BySizeAddr {
  bool operator()(const FreeKey& a, const FreeKey& b) const {
    if (a.pool != b.pool) return a.pool < b.pool;
    if (a.stream != b.stream) return a.stream < b.stream;
    return a.size != b.size ? a.size < b.size : a.addr < b.addr;
  }
};

using FreeSet = std::set<FreeKey, BySizeAddr>;

// Active blocks by address: open addressing with linear probing, a power-of-two table and
// Fibonacci hashing (std::unordered_map's prime modulo costs two divisions per free). The
// owner keeps the capacity at least twice the number of Blocks in existence, so insert never
// grows the table and never throws.
class ActiveMap {
 public:
  // Makes room for n entries at load <= 1/2. May throw std::bad_alloc (then unchanged).
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap <= slots_.size()) return;
    std::vector<Slot> old(cap);
    old.swap(slots_);
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    mask_ = cap - 1;
    for (const Slot& sl : old) {
      if (sl.key != nullptr) put(sl.key, sl.val);
    }
  }
  // Requires reserve() room and key not present.
  void insert(void* key, Block* val) {
    put(key, val);
    ++count_;
  }
  // Removes key and returns its value; nullptr if absent.
  Block* erase(void* key) {
    if (slots_.empty()) return nullptr;
    size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return nullptr;
      i = (i + 1) & mask_;
    }
    Block* val = slots_[i].val;
    // Backward-shift deletion: no tombstones.
    for (size_t j = (i + 1) & mask_; slots_[j].key != nullptr; j = (j + 1) & mask_) {
      const size_t k = home(slots_[j].key);
      const bool movable = (i <= j) ? (k <= i || k > j) : (k <= i && k > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --count_;
    return val;
  }
  size_t size() const { return count_; }
  Block* find(const void* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].val;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

 private:
  struct Slot {
    void* key = nullptr;
    Block* val = nullptr;
  };
  size_t home(const void* key) const {
    const uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) >> 6;
    return static_cast<size_t>((x * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void put(void* key, Block* val) {
    size_t i = home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, val};
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

struct PrivatePool {
  uint64_t id = 0;
  int64_t claims = 1;  // memory_pool_create and each memory_pool_begin hold one
  int64_t in_use = 0;  // blocks allocated from the pool and not yet back in its free set
};

struct Segment {
  char* base = nullptr;
  size_t size = 0;
  bool large = false;
  tsr_stream_t* stream = nullptr;  // the stream its blocks are cached for
  PrivatePool* pool = nullptr;     // private pool, nullptr = the device cache
  uint64_t pool_id = 0;
  Block* head = nullptr;    // lowest-address block
  Segment* prev = nullptr;  // segment list, creation order
  Segment* next = nullptr;
};

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;  // bytes asked for (active blocks)
  Segment* seg = nullptr;
  Block* prev = nullptr;  // neighbours in the segment (address order)
  Block* next = nullptr;  // (also links the spare list)
  bool allocated = false;
  bool pending = false;  // freed, waiting for events on other streams (neither active nor free)
  std::vector<tsr_stream_t*> uses;     // record_stream: other streams using the block
  std::vector<tsr_event_t*> events;    // pending: events still to complete
  FreeSet::iterator free_it;     // position in its pool while free
  FreeSet::node_type free_node;  // owned while the block is not in a free set
};

class CachingAllocator final : public DeviceAllocator {
 public:
  CachingAllocator(const tsr_raw_allocator_t* raw, tsr_device_t device, std::string name,
                   const AllocConf& conf, const tsr_device_type_def_t* dev)
      : raw_(raw), device_(device), name_(std::move(name)), conf_(conf),
        dev_(device_has_streams(dev) ? dev : nullptr) {
    round_ = std::max(conf_.roundup_bytes, kMinAlign);
    round_pow2_ = (round_ & (round_ - 1)) == 0;
    round_twice_ = round_ % kMinAlign != 0;
    if (conf_.max_split_size < kMinAlign) conf_.max_split_size = kMinAlign;
    if (!(conf_.gc_threshold > 0.0)) conf_.gc_threshold = 0.0;  // also maps NaN to "off"
  }

  ~CachingAllocator() override {
    if (!pending_.empty()) process_events(true);
    if (dev_ != nullptr) {
      for (tsr_event_t* e : event_cache_) free_status(dev_->event_destroy(dev_->self, device_, e));
    }
    // Pools still claimed at shutdown: their free segments go back like the others.
    for (Segment* s = seg_head_; s != nullptr; s = s->next) retag_segment(s, nullptr);
    release_free_segments(0);
    // Segments with active blocks are left to the raw allocator's owner (see file comment).
    for (Segment* s = seg_head_; s != nullptr;) {
      Segment* next = s->next;
      for (Block* b = s->head; b != nullptr;) {
        Block* bn = b->next;
        delete b;
        b = bn;
      }
      delete s;
      s = next;
    }
    while (spare_ != nullptr) {
      Block* b = spare_;
      spare_ = b->next;
      delete b;
    }
  }

  tsr_status_t allocate(size_t nbytes, tsr_stream_t* stream, void** out) override {
    if (nbytes == 0) {
      *out = nullptr;
      return nullptr;
    }
    // A device without streams runs everything in order: one cache for all "streams".
    if (dev_ == nullptr) stream = nullptr;
    try {
      std::lock_guard<SpinMutex> lock(mu_);
      if (nbytes > kMaxRequest) {
        ++num_ooms_;
        return make_status(TSR_RESOURCE_EXHAUSTED, oom(nbytes, nbytes));
      }
      const size_t size = round_size(nbytes);
      if (num_spare_ < 2) refill_spares();  // may throw: nothing changed yet
      if (!pending_.empty()) process_events(false);
      PrivatePool* pp = capturing_.empty() ? nullptr : capture_pool(stream);
      const uint64_t pid = pp != nullptr ? pp->id : 0;
      const bool large = size > kSmallSize;
      FreeSet& pool = large ? large_free_ : small_free_;
      Block* b = nullptr;
      auto it = find_fit(pool, large, size, pid, stream);
      if (it != pool.end()) {
        ++num_cache_hits_;
        b = it->block;
        if (should_split(b, large, size)) {
          b = split_front(pool, it, size);
        } else {
          b->free_node = pool.extract(it);
        }
      } else {
        tsr_status_t st = nullptr;
        b = new_segment(large, size, nbytes, stream, pp, &st);
        if (b == nullptr) return st;
        // From here on nothing throws.
        if (should_split(b, large, size)) split_back(b, pool, size);
      }
      b->allocated = true;
      b->requested = nbytes;
      if (pp != nullptr) ++pp->in_use;
      active_.insert(b->ptr, b);
      allocated_ += static_cast<int64_t>(b->size);
      if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
      ++num_allocs_;
      *out = b->ptr;
      return nullptr;
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, nbytes);
    }
  }

  void deallocate(void* ptr) override {
    if (ptr == nullptr) return;
    std::lock_guard<SpinMutex> lock(mu_);
    Block* b = active_.erase(ptr);
    if (b == nullptr) return;  // not ours (a bug elsewhere): ignore
    allocated_ -= static_cast<int64_t>(b->size);
    ++num_frees_;
    b->allocated = false;
    b->requested = 0;
    if (!b->uses.empty() && defer_free(b)) return;
    finish_free(b);
  }

  tsr_status_t record_stream(void* ptr, tsr_stream_t* stream) override {
    if (ptr == nullptr || dev_ == nullptr) return nullptr;
    std::lock_guard<SpinMutex> lock(mu_);
    Block* b = active_.find(ptr);
    if (b == nullptr) {
      return make_status(TSR_INVALID_ARGUMENT,
                         "record_stream: the tensor's memory is not an active block of " + name_);
    }
    if (stream == b->seg->stream) return nullptr;
    for (tsr_stream_t* s : b->uses) {
      if (s == stream) return nullptr;
    }
    try {
      b->uses.push_back(stream);
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, 0);
    }
    return nullptr;
  }

  void set_limit(size_t bytes, const std::string& why) override {
    std::lock_guard<SpinMutex> lock(mu_);
    conf_.limit_bytes = bytes;
    limit_why_ = why;
  }

  tsr_status_t pool_create(uint64_t* id) override {
    try {
      std::lock_guard<SpinMutex> lock(mu_);
      auto p = std::make_unique<PrivatePool>();
      p->id = next_pool_id_++;
      *id = p->id;
      pools_.push_back(std::move(p));
      return nullptr;
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, 0);
    }
  }

  tsr_status_t pool_begin(uint64_t id, tsr_stream_t* stream) override {
    if (dev_ == nullptr) stream = nullptr;  // as in allocate()
    try {
      std::lock_guard<SpinMutex> lock(mu_);
      PrivatePool* p = find_pool(id);
      if (p == nullptr) return unknown_pool("memory_pool_begin", id);
      for (const auto& c : capturing_) {
        if (c.first == stream) {
          return make_status(TSR_FAILED_PRECONDITION,
                             "memory_pool_begin: a memory pool (" + std::to_string(c.second->id) +
                                 ") is already begun for this stream of " + name_);
        }
      }
      capturing_.emplace_back(stream, p);
      ++p->claims;
      return nullptr;
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, 0);
    }
  }

  tsr_status_t pool_end(uint64_t id, tsr_stream_t* stream) override {
    if (dev_ == nullptr) stream = nullptr;
    std::lock_guard<SpinMutex> lock(mu_);
    for (auto it = capturing_.begin(); it != capturing_.end(); ++it) {
      if (it->first == stream && it->second->id == id) {
        capturing_.erase(it);
        return nullptr;
      }
    }
    return make_status(TSR_FAILED_PRECONDITION, "memory_pool_end: memory pool " +
                                                    std::to_string(id) +
                                                    " is not begun for this stream of " + name_);
  }

  tsr_status_t pool_release(uint64_t id) override {
    std::lock_guard<SpinMutex> lock(mu_);
    PrivatePool* p = find_pool(id);
    if (p == nullptr) return unknown_pool("memory_pool_release", id);
    if (--p->claims > 0) return nullptr;
    for (size_t i = 0; i < capturing_.size();) {
      if (capturing_[i].second == p) {
        capturing_.erase(capturing_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (p->in_use == 0) return_pool(p);
    return nullptr;
  }

  void stats(tsr_memory_stats_t* out) override {
    std::lock_guard<SpinMutex> lock(mu_);
    out->struct_size = sizeof(tsr_memory_stats_t);
    out->allocated_bytes = allocated_;
    out->peak_allocated_bytes = peak_allocated_;
    out->reserved_bytes = reserved_;
    out->peak_reserved_bytes = peak_reserved_;
    out->num_allocs = num_allocs_;
    out->num_frees = num_frees_;
    out->num_raw_allocs = num_raw_allocs_;
    out->num_raw_frees = num_raw_frees_;
    out->num_cache_hits = num_cache_hits_;
    out->num_splits = num_splits_;
    out->num_ooms = num_ooms_;
    out->num_segments = num_segments_;
    out->limit_bytes = static_cast<int64_t>(conf_.limit_bytes);
  }

  std::string snapshot_json() override {
    std::lock_guard<SpinMutex> lock(mu_);
    std::vector<const Segment*> segs;
    segs.reserve(static_cast<size_t>(num_segments_));
    for (const Segment* s = seg_head_; s != nullptr; s = s->next) segs.push_back(s);
    std::sort(segs.begin(), segs.end(), [](const Segment* a, const Segment* b) {
      return reinterpret_cast<uintptr_t>(a->base) < reinterpret_cast<uintptr_t>(b->base);
    });
    std::string j = "{\"device\":";
    append_json_string(j, name_);
    j += ",\"allocator\":\"caching\",\"raw_allocator\":";
    append_json_string(j, raw_name(raw_));
    // Blocks freed with record_stream that wait for events on other streams.
    j += ",\"limit\":";
    append_uint(j, conf_.limit_bytes);
    j += ",\"pending_free_blocks\":";
    append_uint(j, pending_.size());
    size_t nev = 0;
    for (const Block* b : pending_) nev += b->events.size();
    j += ",\"pending_events\":";
    append_uint(j, nev);
    j += ",\"segments\":[";
    bool first_seg = true;
    for (const Segment* s : segs) {
      if (!first_seg) j += ',';
      first_seg = false;
      j += "{\"address\":";
      append_uint(j, reinterpret_cast<uintptr_t>(s->base));
      j += ",\"size\":";
      append_uint(j, s->size);
      j += s->large ? ",\"pool\":\"large\"" : ",\"pool\":\"small\"";
      j += ",\"stream\":";
      append_uint(j, reinterpret_cast<uintptr_t>(s->stream));
      j += ",\"private_pool\":";
      append_uint(j, s->pool_id);
      j += ",\"blocks\":[";
      for (const Block* b = s->head; b != nullptr; b = b->next) {
        if (b != s->head) j += ',';
        j += "{\"address\":";
        append_uint(j, reinterpret_cast<uintptr_t>(b->ptr));
        j += ",\"size\":";
        append_uint(j, b->size);
        j += ",\"requested\":";
        append_uint(j, b->requested);
        if (b->pending) {
          j += ",\"pending_events\":";
          append_uint(j, b->events.size());
        }
        j += b->allocated ? ",\"state\":\"active\"}"
                          : b->pending ? ",\"state\":\"pending_free\"}" : ",\"state\":\"inactive\"}";
      }
      j += "]}";
    }
    j += "]}";
    return j;
  }

  void empty_cache() override {
    std::lock_guard<SpinMutex> lock(mu_);
    if (!pending_.empty()) process_events(true);
    release_free_segments(0);
  }

 private:
  size_t round_size(size_t n) const {
    size_t r = round_pow2_ ? (n + round_ - 1) & ~(round_ - 1) : (n + round_ - 1) / round_ * round_;
    if (round_twice_) r = (r + kMinAlign - 1) & ~(kMinAlign - 1);
    return r;
  }

  size_t segment_size(size_t size) const {
    if (size <= kSmallSize) return kSmallSegment;
    // A shared 20 MiB segment is only useful if it may be split.
    if (size < kMinLargeAlloc && kLargeSegment <= conf_.max_split_size) return kLargeSegment;
    return (size + kRoundLarge - 1) & ~(kRoundLarge - 1);
  }

  // Makes sure at least two spare Blocks exist (a new segment's head plus a split remainder),
  // each owning its free-set node, and that the active map never needs to grow on insert.
  void refill_spares() {
    while (num_spare_ < 2) {
      Block* b = new Block;
      try {
        FreeSet tmp_set;
        tmp_set.insert(FreeKey{0, 0, 0, 0, b});
        b->free_node = tmp_set.extract(tmp_set.begin());
      } catch (...) {
        delete b;
        throw;
      }
      push_spare(b);
      ++num_blocks_;
    }
    if (num_blocks_ > active_capacity_) {
      const size_t want = std::max<size_t>(64, 2 * num_blocks_);
      active_.reserve(want);
      active_capacity_ = want;
    }
  }

  void push_spare(Block* b) {
    b->next = spare_;
    spare_ = b;
    ++num_spare_;
  }

  Block* pop_spare() {
    Block* b = spare_;
    spare_ = b->next;
    --num_spare_;
    b->prev = b->next = nullptr;
    b->seg = nullptr;
    b->allocated = false;
    b->pending = false;
    b->requested = 0;
    b->uses.clear();
    b->events.clear();
    return b;
  }

  static FreeKey key_of(const Block* b, const char* ptr, size_t size) {
    return FreeKey{b->seg->pool_id, reinterpret_cast<uintptr_t>(b->seg->stream), size,
                   reinterpret_cast<uintptr_t>(ptr), const_cast<Block*>(b)};
  }

  void insert_free(FreeSet& pool, Block* b) {
    b->free_node.value() = key_of(b, b->ptr, b->size);
    b->free_it = pool.insert(std::move(b->free_node)).position;
  }

  void erase_free(FreeSet& pool, Block* b) { b->free_node = pool.extract(b->free_it); }

  // Best fit by (size, address), honouring max_split_size; pool.end() if nothing fits.
  FreeSet::iterator find_fit(FreeSet& pool, bool large, size_t size, uint64_t pid,
                             tsr_stream_t* stream) {
    const uintptr_t sk = reinterpret_cast<uintptr_t>(stream);
    auto it = pool.lower_bound(FreeKey{pid, sk, size, 0, nullptr});
    if (it == pool.end() || it->pool != pid || it->stream != sk) return pool.end();
    if (large && conf_.max_split_size != SIZE_MAX) {
      const Block* b = it->block;
      const bool req_oversize = size > conf_.max_split_size;
      const bool blk_oversize = b->size > conf_.max_split_size;
      // Unsplittable blocks are kept for big requests, and even then not wasted on ones much
      // smaller than the block. (All later candidates are larger still.)
      if (!req_oversize && blk_oversize) return pool.end();
      if (req_oversize && b->size - size >= kLargeBuffer) return pool.end();
    }
    return it;
  }

  bool should_split(const Block* b, bool large, size_t size) const {
    const size_t remaining = b->size - size;
    if (!large) return remaining >= kMinSmallRemainder;
    return b->size <= conf_.max_split_size && remaining > kMinLargeRemainder;
  }

  // Splits the free block at `it` (still in `pool`) and returns its first `size` bytes as a new
  // block outside the pool. The remainder keeps the old block's node; when its new
  // (size, address) key still sorts after its predecessor it is updated in place, so the
  // common alloc/free churn on one big free block does not rebalance the tree.
  Block* split_front(FreeSet& pool, FreeSet::iterator it, size_t size) {
    Block* b = it->block;
    const FreeKey rest = key_of(b, b->ptr + size, b->size - size);
    if (it != pool.begin() && !BySizeAddr()(*std::prev(it), rest)) {
      b->free_node = pool.extract(it);
      split_back(b, pool, size);
      return b;
    }
    Block* f = pop_spare();
    f->ptr = b->ptr;
    f->size = size;
    f->seg = b->seg;
    f->prev = b->prev;
    f->next = b;
    if (f->prev != nullptr) {
      f->prev->next = f;
    } else {
      f->seg->head = f;
    }
    b->prev = f;
    b->ptr += size;
    b->size -= size;
    it->size = rest.size;
    it->addr = rest.addr;
    ++num_splits_;
    return f;
  }

  // Splits block b (not in any pool) into its first `size` bytes and a free remainder.
  void split_back(Block* b, FreeSet& pool, size_t size) {
    Block* r = pop_spare();
    r->ptr = b->ptr + size;
    r->size = b->size - size;
    r->seg = b->seg;
    r->prev = b;
    r->next = b->next;
    if (r->next != nullptr) r->next->prev = r;
    b->next = r;
    b->size = size;
    insert_free(pool, r);
    ++num_splits_;
  }

  // Gives free block k (in `pool`) the key (size, ptr) with size >= its current size: in place
  // when the order allows, else by reinsertion.
  void grow_free(FreeSet& pool, Block* k, char* ptr, size_t size) {
    auto nx = std::next(k->free_it);
    const FreeKey key = key_of(k, ptr, size);
    if (nx == pool.end() || BySizeAddr()(key, *nx)) {
      k->ptr = ptr;
      k->size = size;
      k->free_it->size = key.size;
      k->free_it->addr = key.addr;
      return;
    }
    k->free_node = pool.extract(k->free_it);
    k->ptr = ptr;
    k->size = size;
    insert_free(pool, k);
  }

  // b was just freed (not in any pool): merge it with free neighbours and cache the result.
  void free_block(Block* b) {
    FreeSet& pool = b->seg->large ? large_free_ : small_free_;
    Block* p = b->prev;
    Block* n = b->next;
    if (p != nullptr && (p->allocated || p->pending)) p = nullptr;
    if (n != nullptr && (n->allocated || n->pending)) n = nullptr;
    if (p == nullptr && n == nullptr) {
      insert_free(pool, b);
      return;
    }
    if (p != nullptr) {
      // p absorbs b (and n).
      size_t size = p->size + b->size;
      Block* after = b->next;
      if (n != nullptr) {
        erase_free(pool, n);
        size += n->size;
        after = n->next;
        push_spare(n);
      }
      p->next = after;
      if (after != nullptr) after->prev = p;
      push_spare(b);
      grow_free(pool, p, p->ptr, size);
    } else {
      // n absorbs b.
      n->prev = b->prev;
      if (n->prev != nullptr) {
        n->prev->next = n;
      } else {
        n->seg->head = n;
      }
      char* ptr = b->ptr;
      const size_t size = n->size + b->size;
      push_spare(b);
      grow_free(pool, n, ptr, size);
    }
  }

  // Returns wholly free segments, oldest first, until reserved_ <= target (0: all of them).
  void release_free_segments(size_t target) {
    for (Segment* s = seg_head_; s != nullptr && static_cast<size_t>(reserved_) > target;) {
      Segment* next = s->next;
      Block* h = s->head;
      if (s->pool == nullptr && !h->allocated && !h->pending && h->next == nullptr) {
        erase_free(s->large ? large_free_ : small_free_, h);
        unlink_segment(s);
        raw_->free(raw_->self, device_, s->base, s->size);
        ++num_raw_frees_;
        reserved_ -= static_cast<int64_t>(s->size);
        --num_segments_;
        push_spare(h);
        delete s;
      }
      s = next;
    }
  }

  void unlink_segment(Segment* s) {
    if (s->prev != nullptr) {
      s->prev->next = s->next;
    } else {
      seg_head_ = s->next;
    }
    if (s->next != nullptr) {
      s->next->prev = s->prev;
    } else {
      seg_tail_ = s->prev;
    }
  }

  bool try_reserve(size_t seg_size, void** p, std::string* raw_msg) {
    if (conf_.limit_bytes != 0 && static_cast<size_t>(reserved_) + seg_size > conf_.limit_bytes) {
      return false;
    }
    return raw_alloc(raw_, device_, seg_size, p, raw_msg);
  }

  // A new segment for a request of `size` (rounded) bytes; returns its single free block
  // (not in any pool), or nullptr with *st set.
  Block* new_segment(bool large, size_t size, size_t nbytes, tsr_stream_t* stream,
                     PrivatePool* pp, tsr_status_t* st) {
    size_t seg_size = segment_size(size);
    // The smallest segment that holds the request: the fallback when a shared 20 MiB one does
    // not fit under the limit or in the device.
    const size_t min_size = large ? (size + kRoundLarge - 1) & ~(kRoundLarge - 1) : seg_size;
    auto seg = std::make_unique<Segment>();  // may throw: nothing changed yet
    if (conf_.limit_bytes != 0 && conf_.gc_threshold > 0.0) {
      const double threshold = conf_.gc_threshold * static_cast<double>(conf_.limit_bytes);
      if (static_cast<double>(reserved_) + static_cast<double>(seg_size) > threshold) {
        const double target = threshold - static_cast<double>(seg_size);
        release_free_segments(target > 0.0 ? static_cast<size_t>(target) : 0);
      }
    }
    void* p = nullptr;
    std::string raw_msg;
    bool ok = try_reserve(seg_size, &p, &raw_msg);
    if (!ok) {
      // Flush the cache and retry once (with the smallest fitting segment if that differs).
      // Blocks waiting for other streams are waited for first, so that they can be released.
      if (!pending_.empty()) process_events(true);
      release_free_segments(0);
      raw_msg.clear();
      ok = try_reserve(seg_size, &p, &raw_msg);
      if (!ok && min_size < seg_size) {
        seg_size = min_size;
        raw_msg.clear();
        ok = try_reserve(seg_size, &p, &raw_msg);
      }
    }
    if (!ok) {
      ++num_ooms_;
      try {
        std::string m = oom(size, nbytes);
        if (conf_.limit_bytes != 0 &&
            static_cast<size_t>(reserved_) + seg_size > conf_.limit_bytes) {
          m += "; a new " + format_bytes(seg_size) + " segment would exceed the limit";
        } else if (!raw_msg.empty()) {
          m += "; " + raw_name(raw_) + ": " + raw_msg;
        }
        *st = make_status(TSR_RESOURCE_EXHAUSTED, std::move(m));
      } catch (const std::bad_alloc&) {
        *st = host_oom_status(name_, nbytes);
      }
      return nullptr;
    }
    ++num_raw_allocs_;
    reserved_ += static_cast<int64_t>(seg_size);
    if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
    ++num_segments_;
    Segment* s = seg.release();
    s->base = static_cast<char*>(p);
    s->size = seg_size;
    s->large = large;
    s->stream = stream;
    s->pool = pp;
    s->pool_id = pp != nullptr ? pp->id : 0;
    s->prev = seg_tail_;
    if (seg_tail_ != nullptr) {
      seg_tail_->next = s;
    } else {
      seg_head_ = s;
    }
    seg_tail_ = s;
    Block* b = pop_spare();
    b->ptr = s->base;
    b->size = seg_size;
    b->seg = s;
    s->head = b;
    return b;
  }

  std::string oom(size_t size, size_t nbytes) const {
    std::string m = oom_message(name_, size, nbytes, allocated_, reserved_, conf_.limit_bytes);
    if (conf_.limit_bytes != 0 && !limit_why_.empty()) m += " (" + limit_why_ + ")";
    return m;
  }

  // The pool begun for `stream`, if any.
  PrivatePool* capture_pool(tsr_stream_t* stream) const {
    for (const auto& c : capturing_) {
      if (c.first == stream) return c.second;
    }
    return nullptr;
  }

  PrivatePool* find_pool(uint64_t id) const {
    for (const auto& p : pools_) {
      if (p->id == id) return p.get();
    }
    return nullptr;
  }

  tsr_status_t unknown_pool(const char* where, uint64_t id) const {
    return make_status(TSR_INVALID_ARGUMENT, std::string(where) + ": no memory pool " +
                                                 std::to_string(id) + " on " + name_);
  }

  // Moves a wholly free segment of a pool into pool `to` (nullptr: the device cache).
  void retag_segment(Segment* s, PrivatePool* to) {
    if (s->pool == to) return;
    Block* h = s->head;
    if (h->allocated || h->pending || h->next != nullptr) return;  // blocks still in use
    FreeSet& set = s->large ? large_free_ : small_free_;
    erase_free(set, h);
    s->pool = to;
    s->pool_id = to != nullptr ? to->id : 0;
    insert_free(set, h);
  }

  // A released pool without blocks in use: its segments become ordinary cache.
  void return_pool(PrivatePool* p) {
    for (Segment* s = seg_head_; s != nullptr; s = s->next) {
      if (s->pool == p) retag_segment(s, nullptr);
    }
    for (auto it = pools_.begin(); it != pools_.end(); ++it) {
      if (it->get() == p) {
        pools_.erase(it);
        break;
      }
    }
  }

  // b (not active, not pending) goes back to its free set; a private pool may become empty.
  void finish_free(Block* b) {
    PrivatePool* pp = b->seg->pool;
    b->uses.clear();
    free_block(b);
    if (pp != nullptr && --pp->in_use == 0 && pp->claims == 0) return_pool(pp);
  }

  // b was used on other streams: record an event on each and keep it out of the cache until
  // they complete. Returns false when the block may be freed at once (the events could not be
  // made: the streams were synchronized instead).
  bool defer_free(Block* b) {
    const size_t n = b->uses.size();
    try {
      pending_.reserve(pending_.size() + 1);
      b->events.reserve(n);
      event_cache_.reserve(num_events_ + n);  // so that returning events never allocates
    } catch (const std::bad_alloc&) {
      sync_uses(b);
      return false;
    }
    for (tsr_stream_t* s : b->uses) {
      tsr_event_t* e = nullptr;
      if (!event_cache_.empty()) {
        e = event_cache_.back();
        event_cache_.pop_back();
      } else if (tsr_status_t st = dev_->event_create(dev_->self, device_, TSR_EVENT_DEFAULT, &e)) {
        free_status(st);
        e = nullptr;
      } else {
        ++num_events_;
        try {
          event_cache_.reserve(num_events_);
        } catch (const std::bad_alloc&) {
        }
      }
      if (e != nullptr) {
        if (tsr_status_t st = dev_->event_record(dev_->self, device_, e, s)) {
          free_status(st);
          event_cache_.push_back(e);
          e = nullptr;
        }
      }
      if (e == nullptr) {  // no event: wait for the stream's work here instead
        free_status(dev_->stream_synchronize(dev_->self, device_, s));
        continue;
      }
      b->events.push_back(e);
    }
    b->uses.clear();
    if (b->events.empty()) return false;
    b->pending = true;
    pending_.push_back(b);
    return true;
  }

  void sync_uses(Block* b) {
    for (tsr_stream_t* s : b->uses) free_status(dev_->stream_synchronize(dev_->self, device_, s));
    b->uses.clear();
  }

  // Frees the pending blocks whose events are complete (all of them when `wait`).
  void process_events(bool wait) {
    size_t keep = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      Block* b = pending_[i];
      bool done = true;
      while (!b->events.empty()) {
        tsr_event_t* e = b->events.back();
        int32_t complete = 1;
        tsr_status_t st = wait ? dev_->event_synchronize(dev_->self, device_, e)
                               : dev_->event_query(dev_->self, device_, e, &complete);
        // An error belongs to the work on that stream (it surfaces at its next synchronizing
        // call); the block is no longer waited for.
        if (st != nullptr) {
          free_status(st);
          complete = 1;
        }
        if (complete == 0) {
          done = false;
          break;
        }
        b->events.pop_back();
        event_cache_.push_back(e);  // capacity reserved in defer_free
      }
      if (done) {
        b->pending = false;
        finish_free(b);
      } else {
        pending_[keep++] = b;
      }
    }
    pending_.resize(keep);
  }

  const tsr_raw_allocator_t* raw_;
  const tsr_device_t device_;
  const std::string name_;
  AllocConf conf_;
  const tsr_device_type_def_t* dev_;  // null when the device has no streams
  std::string limit_why_;
  std::vector<Block*> pending_;           // freed blocks waiting for events
  std::vector<tsr_event_t*> event_cache_;  // completed events for reuse
  size_t num_events_ = 0;                  // events made (cached or pending)
  std::vector<std::unique_ptr<PrivatePool>> pools_;
  std::vector<std::pair<tsr_stream_t*, PrivatePool*>> capturing_;  // begun pools
  uint64_t next_pool_id_ = 1;
  size_t round_ = 512;
  bool round_pow2_ = true;
  bool round_twice_ = false;

  SpinMutex mu_;  // hot path: see spin_mutex.hpp
  FreeSet small_free_;
  FreeSet large_free_;
  ActiveMap active_;
  size_t active_capacity_ = 0;
  Segment* seg_head_ = nullptr;
  Segment* seg_tail_ = nullptr;
  Block* spare_ = nullptr;
  size_t num_spare_ = 0;
  size_t num_blocks_ = 0;  // Blocks ever made (in segments or spare)

  int64_t allocated_ = 0;
  int64_t peak_allocated_ = 0;
  int64_t reserved_ = 0;
  int64_t peak_reserved_ = 0;
  int64_t num_allocs_ = 0;
  int64_t num_frees_ = 0;
  int64_t num_raw_allocs_ = 0;
  int64_t num_raw_frees_ = 0;
  int64_t num_cache_hits_ = 0;
  int64_t num_splits_ = 0;
  int64_t num_ooms_ = 0;
  int64_t num_segments_ = 0;
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_caching_allocator(const tsr_raw_allocator_t* raw,
                                                        tsr_device_t device,
                                                        std::string device_name,
                                                        const AllocConf& conf,
                                                        const tsr_device_type_def_t* dev) {
  return std::make_unique<CachingAllocator>(raw, device, std::move(device_name), conf, dev);
}

}  // namespace tsr::core
