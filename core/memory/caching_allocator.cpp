// The core's device-agnostic caching allocator (in the manner of PyTorch's CUDACachingAllocator)
// over a backend's tsr_raw_allocator_t. See memory/allocator.hpp for the contract;
// memory/passthrough_allocator.cpp and memory/alloc_conf.cpp hold the other allocator and the configuration;
// memory/caching_allocator_impl.hpp holds the data structures and the class, and
// memory/caching_allocator_streams.cpp its stream-ordered part (record_stream, pending frees, events,
// private pools).
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

#include "memory/allocator.hpp"
#include "memory/allocator_util.hpp"
#include "memory/caching_allocator_impl.hpp"
#include "memory/spin_mutex.hpp"
#include "runtime/status.hpp"

namespace tsr::core {
namespace caching_detail {
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

}  // namespace

CachingAllocator::CachingAllocator(const tsr_raw_allocator_t* raw, tsr_device_t device, std::string name,
                                   const AllocConf& conf, const tsr_device_type_def_t* dev)
    : raw_(raw), device_(device), name_(std::move(name)), conf_(conf), dev_(device_has_streams(dev) ? dev : nullptr) {
  round_ = std::max(conf_.roundup_bytes, kMinAlign);
  round_pow2_ = (round_ & (round_ - 1)) == 0;
  round_twice_ = round_ % kMinAlign != 0;
  if (conf_.max_split_size < kMinAlign) conf_.max_split_size = kMinAlign;
  if (!(conf_.gc_threshold > 0.0)) conf_.gc_threshold = 0.0;  // also maps NaN to "off"
}

CachingAllocator::~CachingAllocator() {
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

tsr_status_t CachingAllocator::allocate(size_t nbytes, tsr_stream_t* stream, void** out) {
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

void CachingAllocator::deallocate(void* ptr) {
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

void CachingAllocator::set_limit(size_t bytes, const std::string& why) {
  std::lock_guard<SpinMutex> lock(mu_);
  conf_.limit_bytes = bytes;
  limit_why_ = why;
}

void CachingAllocator::stats(tsr_memory_stats_t* out) {
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

std::string CachingAllocator::snapshot_json() {
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
           : b->pending ? ",\"state\":\"pending_free\"}"
                        : ",\"state\":\"inactive\"}";
    }
    j += "]}";
  }
  j += "]}";
  return j;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<SpinMutex> lock(mu_);
  if (!pending_.empty()) process_events(true);
  release_free_segments(0);
}

size_t CachingAllocator::round_size(size_t n) const {
  size_t r = round_pow2_ ? (n + round_ - 1) & ~(round_ - 1) : (n + round_ - 1) / round_ * round_;
  if (round_twice_) r = (r + kMinAlign - 1) & ~(kMinAlign - 1);
  return r;
}

size_t CachingAllocator::segment_size(size_t size) const {
  if (size <= kSmallSize) return kSmallSegment;
  // A shared 20 MiB segment is only useful if it may be split.
  if (size < kMinLargeAlloc && kLargeSegment <= conf_.max_split_size) return kLargeSegment;
  return (size + kRoundLarge - 1) & ~(kRoundLarge - 1);
}

// Makes sure at least two spare Blocks exist (a new segment's head plus a split remainder),
// each owning its free-set node, and that the active map never needs to grow on insert.
void CachingAllocator::refill_spares() {
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

void CachingAllocator::push_spare(Block* b) {
  b->next = spare_;
  spare_ = b;
  ++num_spare_;
}

Block* CachingAllocator::pop_spare() {
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

FreeKey CachingAllocator::key_of(const Block* b, const char* ptr, size_t size) {
  return FreeKey{b->seg->pool_id, reinterpret_cast<uintptr_t>(b->seg->stream), size, reinterpret_cast<uintptr_t>(ptr),
                 const_cast<Block*>(b)};
}

void CachingAllocator::insert_free(FreeSet& pool, Block* b) {
  b->free_node.value() = key_of(b, b->ptr, b->size);
  b->free_it = pool.insert(std::move(b->free_node)).position;
}

void CachingAllocator::erase_free(FreeSet& pool, Block* b) { b->free_node = pool.extract(b->free_it); }

// Best fit by (size, address), honouring max_split_size; pool.end() if nothing fits.
FreeSet::iterator CachingAllocator::find_fit(FreeSet& pool, bool large, size_t size, uint64_t pid,
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

bool CachingAllocator::should_split(const Block* b, bool large, size_t size) const {
  const size_t remaining = b->size - size;
  if (!large) return remaining >= kMinSmallRemainder;
  return b->size <= conf_.max_split_size && remaining > kMinLargeRemainder;
}

// Splits the free block at `it` (still in `pool`) and returns its first `size` bytes as a new
// block outside the pool. The remainder keeps the old block's node; when its new
// (size, address) key still sorts after its predecessor it is updated in place, so the
// common alloc/free churn on one big free block does not rebalance the tree.
Block* CachingAllocator::split_front(FreeSet& pool, FreeSet::iterator it, size_t size) {
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
void CachingAllocator::split_back(Block* b, FreeSet& pool, size_t size) {
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
void CachingAllocator::grow_free(FreeSet& pool, Block* k, char* ptr, size_t size) {
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
void CachingAllocator::free_block(Block* b) {
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
void CachingAllocator::release_free_segments(size_t target) {
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

void CachingAllocator::unlink_segment(Segment* s) {
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

bool CachingAllocator::try_reserve(size_t seg_size, void** p, std::string* raw_msg) {
  if (conf_.limit_bytes != 0 && static_cast<size_t>(reserved_) + seg_size > conf_.limit_bytes) {
    return false;
  }
  return raw_alloc(raw_, device_, seg_size, p, raw_msg);
}

// A new segment for a request of `size` (rounded) bytes; returns its single free block
// (not in any pool), or nullptr with *st set.
Block* CachingAllocator::new_segment(bool large, size_t size, size_t nbytes, tsr_stream_t* stream, PrivatePool* pp,
                                     tsr_status_t* st) {
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
      if (conf_.limit_bytes != 0 && static_cast<size_t>(reserved_) + seg_size > conf_.limit_bytes) {
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

std::string CachingAllocator::oom(size_t size, size_t nbytes) const {
  std::string m = oom_message(name_, size, nbytes, allocated_, reserved_, conf_.limit_bytes);
  if (conf_.limit_bytes != 0 && !limit_why_.empty()) m += " (" + limit_why_ + ")";
  return m;
}

// b (not active, not pending) goes back to its free set; a private pool may become empty.
void CachingAllocator::finish_free(Block* b) {
  PrivatePool* pp = b->seg->pool;
  b->uses.clear();
  free_block(b);
  if (pp != nullptr && --pp->in_use == 0 && pp->claims == 0) return_pool(pp);
}

}  // namespace caching_detail

std::unique_ptr<DeviceAllocator> make_caching_allocator(const tsr_raw_allocator_t* raw, tsr_device_t device,
                                                        std::string device_name, const AllocConf& conf,
                                                        const tsr_device_type_def_t* dev) {
  return std::make_unique<caching_detail::CachingAllocator>(raw, device, std::move(device_name), conf, dev);
}

}  // namespace tsr::core
