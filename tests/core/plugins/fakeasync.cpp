// Test plugin: "fakeasync", an asynchronous device over host memory, to test the core's stream
// semantics (ABI 1.2) on machines without a GPU.
//  - Streams are worker threads executing a FIFO of closures; the default stream (NULL) is one
//    more worker. Kernels and copies enqueue on the stream the core hands them and return.
//  - Events mark a position in a stream's queue: recording enqueues a closure that completes
//    the event (with a timestamp); stream_wait_event enqueues a closure that blocks that
//    stream's worker until the event completes.
//  - Properties: 64 MiB of "device" memory (the raw allocators enforce it).
//  - Kernels (f32, contiguous only): _fill, _copy, add; each sleeps kernel_delay_us first, so
//    that missing stream ordering shows up as wrong values.
//  - Raw allocators: "fakeasync" (default; under the core's caching allocator) and
//    "fakeasync_async" (alloc_async/free_async, caches itself: the free runs in stream order).
// The control table (fakeasync.h) is published as extension "fakeasync.control".
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "fakeasync.h"
#include "tessera/plugin.hpp"

namespace {

constexpr int64_t kTotalMemory = 64ll << 20;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Stream {
 public:
  Stream() : th_([this] { loop(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    th_.join();
  }
  void enqueue(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> l(m_);
      q_.push_back(std::move(f));
    }
    cv_.notify_all();
  }
  void sync() {
    std::unique_lock<std::mutex> l(m_);
    idle_cv_.wait(l, [this] { return q_.empty() && !busy_; });
  }
  bool idle() {
    std::lock_guard<std::mutex> l(m_);
    return q_.empty() && !busy_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;  // stop requested and drained
      std::function<void()> f = std::move(q_.front());
      q_.pop_front();
      busy_ = true;
      l.unlock();
      f();
      l.lock();
      busy_ = false;
      if (q_.empty()) idle_cv_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> q_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread th_;  // last: started after the other members exist
};

struct Event {
  std::mutex m;
  std::condition_variable cv;
  uint64_t recorded = 0;   // generation of the latest record
  uint64_t completed = 0;  // highest generation whose closure has run
  bool timing = false;
  int64_t t_ns = 0;
  int refs = 1;  // the handle, plus each enqueued record or wait that has not run yet
};

// Drops one reference to `e`, whose mutex `l` holds; releases the lock, and the event with the
// last reference (the ABI lets a caller destroy an event while waits on it are still enqueued,
// as CUDA does: the core's stream-ordered free does).
void unref(Event* e, std::unique_lock<std::mutex>& l) {
  const bool last = --e->refs == 0;
  l.unlock();
  if (last) delete e;
}

struct Device {
  const tsr_api_t* api = nullptr;
  FakeAsyncControl control;
  Stream default_stream;
  std::mutex m;
  std::set<Stream*> streams;

  Stream* stream(tsr_stream_t* s) { return s ? reinterpret_cast<Stream*>(s) : &default_stream; }
  tsr_status_t error(tsr_code_t code, const std::string& msg) const { return api->status_create(code, msg.c_str()); }
  ~Device() {
    for (Stream* s : streams) delete s;
  }
};

Device* dev_of(void* self) { return static_cast<Device*>(self); }

// ---- device type callbacks ------------------------------------------------------------------

tsr_status_t fa_copy(void* self, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t nbytes,
                     tsr_stream_t* stream) {
  Device* d = dev_of(self);
  d->control.last_copy_stream.store(stream);
  d->control.copy_calls++;
  d->stream(stream)->enqueue([dst, src, nbytes] { std::memcpy(dst, src, nbytes); });
  return nullptr;
}

tsr_status_t fa_synchronize(void* self, tsr_device_t) {
  Device* d = dev_of(self);
  std::lock_guard<std::mutex> l(d->m);
  d->default_stream.sync();
  for (Stream* s : d->streams) s->sync();
  return nullptr;
}

void fa_describe(void*, tsr_device_t, char* buf, size_t len) { std::snprintf(buf, len, "fake async device"); }

tsr_status_t fa_properties(void*, tsr_device_t, tsr_device_properties_t* out) {
  std::snprintf(out->name, sizeof out->name, "FakeAsync Device");
  out->total_memory_bytes = kTotalMemory;
  out->multiprocessor_count = 4;
  out->async_engines = 1;
  out->warp_size = 1;
  return nullptr;
}

tsr_status_t fa_stream_create(void* self, tsr_device_t, int32_t, tsr_stream_t** out) {
  Device* d = dev_of(self);
  Stream* s = new Stream;
  std::lock_guard<std::mutex> l(d->m);
  d->streams.insert(s);
  *out = reinterpret_cast<tsr_stream_t*>(s);
  return nullptr;
}

tsr_status_t fa_stream_destroy(void* self, tsr_device_t, tsr_stream_t* stream) {
  Device* d = dev_of(self);
  Stream* s = reinterpret_cast<Stream*>(stream);
  {
    std::lock_guard<std::mutex> l(d->m);
    if (!d->streams.erase(s)) return d->error(TSR_INVALID_ARGUMENT, "fakeasync: unknown stream");
  }
  delete s;  // drains its queue first
  return nullptr;
}

tsr_status_t fa_stream_synchronize(void* self, tsr_device_t, tsr_stream_t* stream) {
  dev_of(self)->stream(stream)->sync();
  return nullptr;
}

tsr_status_t fa_stream_query(void* self, tsr_device_t, tsr_stream_t* stream, int32_t* done) {
  *done = dev_of(self)->stream(stream)->idle() ? 1 : 0;
  return nullptr;
}

tsr_status_t fa_stream_wait_event(void* self, tsr_device_t, tsr_stream_t* stream, tsr_event_t* event) {
  Event* e = reinterpret_cast<Event*>(event);
  uint64_t target;
  {
    std::lock_guard<std::mutex> l(e->m);
    target = e->recorded;
    if (e->completed >= target) return nullptr;
    ++e->refs;
  }
  dev_of(self)->stream(stream)->enqueue([e, target] {
    std::unique_lock<std::mutex> l(e->m);
    e->cv.wait(l, [&] { return e->completed >= target; });
    unref(e, l);
  });
  return nullptr;
}

tsr_status_t fa_event_create(void*, tsr_device_t, uint32_t flags, tsr_event_t** out) {
  Event* e = new Event;
  e->timing = (flags & TSR_EVENT_TIMING) != 0;
  *out = reinterpret_cast<tsr_event_t*>(e);
  return nullptr;
}

tsr_status_t fa_event_destroy(void*, tsr_device_t, tsr_event_t* event) {
  // Returns once the recorded work completed; waits still enqueued on other streams keep the
  // event alive until they have run (see unref).
  Event* e = reinterpret_cast<Event*>(event);
  std::unique_lock<std::mutex> l(e->m);
  e->cv.wait(l, [&] { return e->completed >= e->recorded; });
  unref(e, l);
  return nullptr;
}

tsr_status_t fa_event_record(void* self, tsr_device_t, tsr_event_t* event, tsr_stream_t* stream) {
  Event* e = reinterpret_cast<Event*>(event);
  uint64_t gen;
  {
    std::lock_guard<std::mutex> l(e->m);
    gen = ++e->recorded;
    ++e->refs;
  }
  dev_of(self)->stream(stream)->enqueue([e, gen] {
    // Notified under the lock, and nothing touches `e` after unref: event_destroy may free it
    // as soon as it can take the lock.
    std::unique_lock<std::mutex> l(e->m);
    if (gen > e->completed) e->completed = gen;
    e->t_ns = now_ns();
    e->cv.notify_all();
    unref(e, l);
  });
  return nullptr;
}

tsr_status_t fa_event_synchronize(void*, tsr_device_t, tsr_event_t* event) {
  Event* e = reinterpret_cast<Event*>(event);
  std::unique_lock<std::mutex> l(e->m);
  const uint64_t target = e->recorded;
  e->cv.wait(l, [&] { return e->completed >= target; });
  return nullptr;
}

tsr_status_t fa_event_query(void*, tsr_device_t, tsr_event_t* event, int32_t* done) {
  Event* e = reinterpret_cast<Event*>(event);
  std::lock_guard<std::mutex> l(e->m);
  *done = e->completed >= e->recorded ? 1 : 0;
  return nullptr;
}

tsr_status_t fa_event_elapsed_ms(void* self, tsr_device_t, tsr_event_t* start, tsr_event_t* end, float* ms) {
  Event* a = reinterpret_cast<Event*>(start);
  Event* b = reinterpret_cast<Event*>(end);
  std::lock_guard<std::mutex> la(a->m);
  std::unique_lock<std::mutex> lb(b->m, std::defer_lock);
  if (a != b) lb.lock();
  if (!a->timing || !b->timing)
    return dev_of(self)->error(TSR_INVALID_ARGUMENT, "fakeasync: event_elapsed_ms needs TSR_EVENT_TIMING events");
  if (a->recorded == 0 || b->recorded == 0 || a->completed < a->recorded || b->completed < b->recorded)
    return dev_of(self)->error(TSR_FAILED_PRECONDITION, "fakeasync: event not recorded or not complete");
  *ms = static_cast<float>(static_cast<double>(b->t_ns - a->t_ns) / 1e6);
  return nullptr;
}

// ---- raw allocators -------------------------------------------------------------------------

tsr_status_t take_bytes(Device* d, size_t nbytes, void** out) {
  const int64_t n = static_cast<int64_t>((nbytes + 63) / 64 * 64);
  if (d->control.raw_bytes.fetch_add(n) + n > kTotalMemory) {
    d->control.raw_bytes.fetch_sub(n);
    return d->error(TSR_RESOURCE_EXHAUSTED, "fakeasync: device memory exhausted");
  }
  void* p = std::aligned_alloc(64, static_cast<size_t>(n));
  if (!p) {
    d->control.raw_bytes.fetch_sub(n);
    return d->error(TSR_RESOURCE_EXHAUSTED, "fakeasync: host allocation failed");
  }
  *out = p;
  return nullptr;
}

void give_bytes(Device* d, void* p, size_t nbytes) {
  std::free(p);
  d->control.raw_bytes.fetch_sub(static_cast<int64_t>((nbytes + 63) / 64 * 64));
}

tsr_status_t fa_alloc(void* self, tsr_device_t, size_t nbytes, void** out) {
  return take_bytes(dev_of(self), nbytes, out);
}
void fa_free(void* self, tsr_device_t, void* p, size_t nbytes) { give_bytes(dev_of(self), p, nbytes); }

tsr_status_t fa_alloc_async(void* self, tsr_device_t, size_t nbytes, tsr_stream_t* stream, void** out) {
  Device* d = dev_of(self);
  d->control.last_async_alloc_stream.store(stream);
  if (tsr_status_t st = take_bytes(d, nbytes, out)) return st;
  d->control.async_allocs++;
  return nullptr;
}

void fa_free_async(void* self, tsr_device_t, void* p, size_t nbytes, tsr_stream_t* stream) {
  Device* d = dev_of(self);
  d->control.last_async_free_stream.store(stream);
  d->stream(stream)->enqueue([d, p, nbytes] {
    d->control.last_async_free_ns.store(now_ns());
    d->control.async_frees++;
    give_bytes(d, p, nbytes);
  });
}

// ---- kernels (f32, contiguous) --------------------------------------------------------------

int64_t numel_of(const tsr_tensor_view_t& v) {
  int64_t n = 1;
  for (int i = 0; i < v.ndim; ++i) n *= v.sizes[i];
  return n;
}

void require_contiguous(tsr::KernelCall& k) {
  TSR_CHECK(!k.has_iter() || k.iter().contiguous, TSR_UNIMPLEMENTED, k.op_name(),
            ": fakeasync kernels need contiguous same-shape operands");
}

Device* device_of(tsr::KernelCall& k) { return static_cast<Device*>(k.user_data()); }

void finish_kernel(Device* d) { d->control.last_kernel_end_ns.store(now_ns()); }

void launch(tsr::KernelCall& k, std::function<void()> body) {
  Device* d = device_of(k);
  d->control.last_kernel_stream.store(k.stream());
  d->control.kernel_calls++;
  const int delay = d->control.kernel_delay_us.load();
  d->stream(k.stream())->enqueue([d, delay, body = std::move(body)] {
    if (delay > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    body();
    finish_kernel(d);
  });
}

void fill_kernel(tsr::KernelCall& k) {
  require_contiguous(k);
  const tsr_tensor_view_t& out = k.output(0);
  float* p = static_cast<float*>(out.data);
  const int64_t n = numel_of(out);
  const float v = k.arg_scalar<float>(1);
  launch(k, [p, n, v] {
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
}

void copy_kernel(tsr::KernelCall& k) {
  require_contiguous(k);
  const tsr_tensor_view_t& out = k.output(0);
  const tsr_tensor_view_t& in = k.input(0);
  TSR_CHECK(numel_of(in) == numel_of(out) && in.dtype == out.dtype, TSR_UNIMPLEMENTED,
            "_copy: fakeasync copies same-shape same-dtype tensors only");
  float* dst = static_cast<float*>(out.data);
  const float* src = static_cast<const float*>(in.data);
  const int64_t n = numel_of(out);
  launch(k, [dst, src, n] { std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); });
}

void add_kernel(tsr::KernelCall& k) {
  require_contiguous(k);
  const tsr_tensor_view_t& out = k.output(0);
  const int64_t n = numel_of(out);
  TSR_CHECK(numel_of(k.input(0)) == n && numel_of(k.input(1)) == n, TSR_UNIMPLEMENTED,
            "add: fakeasync adds same-shape tensors only");
  const float* a = static_cast<const float*>(k.input(0).data);
  const float* b = static_cast<const float*>(k.input(1).data);
  float* o = static_cast<float*>(out.data);
  const float alpha = k.num_args() > 2 ? k.arg_scalar<float>(2) : 1.0f;
  launch(k, [a, b, o, n, alpha] {
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] + alpha * b[i];
  });
}

void* init(tsr::Registrar& r) {
  auto* d = new Device;
  d->api = r.api();
  tsr_device_type_def_t t{};
  t.name = "fakeasync";
  t.device_count = 1;
  t.self = d;
  t.copy = fa_copy;
  t.synchronize = fa_synchronize;
  t.describe = fa_describe;
  t.properties = fa_properties;
  t.stream_create = fa_stream_create;
  t.stream_destroy = fa_stream_destroy;
  t.stream_synchronize = fa_stream_synchronize;
  t.stream_query = fa_stream_query;
  t.stream_wait_event = fa_stream_wait_event;
  t.event_create = fa_event_create;
  t.event_destroy = fa_event_destroy;
  t.event_record = fa_event_record;
  t.event_synchronize = fa_event_synchronize;
  t.event_query = fa_event_query;
  t.event_elapsed_ms = fa_event_elapsed_ms;
  const int32_t type = r.device_type(t);
  tsr_raw_allocator_t a{};
  a.name = "fakeasync";
  a.device_type = type;
  a.self = d;
  a.alloc = fa_alloc;
  a.free = fa_free;
  r.allocator(a);
  tsr_raw_allocator_t b = a;
  b.name = "fakeasync_async";
  b.flags = TSR_ALLOCATOR_CACHES_ITSELF;
  b.alloc_async = fa_alloc_async;
  b.free_async = fa_free_async;
  r.allocator(b);
  const uint32_t f32 = TSR_DTYPE_BIT(TSR_F32);
  r.kernel("_fill", "fakeasync::fill", type, f32, TSR_KERNEL(fill_kernel), 0, nullptr, d);
  r.kernel("_copy", "fakeasync::copy", type, f32, TSR_KERNEL(copy_kernel), 0, nullptr, d);
  r.kernel("add", "fakeasync::add", type, f32, TSR_KERNEL(add_kernel), 0, nullptr, d);
  r.extension("fakeasync.control", &d->control);
  return d;
}

void shutdown(void* state) { delete static_cast<Device*>(state); }

}  // namespace

TSR_DEFINE_PLUGIN("fakeasync", "1.0", "asynchronous fake device over host memory (test plugin)", nullptr, init,
                  shutdown)
