// C++ wrappers over the ABI 1.2 streams and events (header-only; see abi/tessera/api.h).
//
//   tsr::Stream s(tsr::Device("cuda"));      // a new stream, destroyed with the object
//   {
//     tsr::StreamGuard g(s);                  // ops of this thread on s's device run on s
//     y = tsr::matmul(a, b);
//     tsr::record_stream(a, s);               // if a was made on another stream
//   }
//   tsr::Event start(dev, /*timing=*/true), end(dev, true);
//   start.record(s); ...; end.record(s); end.synchronize();
//   float ms = start.elapsed_time(end);
//
// Ownership: Stream and Event own their handle unless made with borrow()/default_stream();
// they are move-only. They belong to the runtime that was current when they were made
// (tsr::runtime()) and must be destroyed before it. Errors throw tsr::Error. Thread-safety: a
// stream or event may be used from several threads; the current stream is per thread.
#pragma once

#include <cstdint>
#include <utility>

#include "tessera/tessera.hpp"

namespace tsr {

class Event;

class Stream {
 public:
  // A new stream on `device` (priority 0 = normal, negative = higher). On a device without
  // streams (cpu) it is a synchronous dummy.
  explicit Stream(Device device, int32_t priority = 0) : rt_(runtime()), dev_(device), owned_(true) {
    check(api()->stream_create(rt_, dev_.d, priority, &s_));
  }
  // Refers to a stream owned elsewhere (NULL = the default stream); not destroyed here.
  static Stream borrow(Device device, tsr_stream_t* stream) { return Stream(runtime(), device, stream); }
  static Stream default_stream(Device device) { return borrow(device, nullptr); }

  Stream(Stream&& o) noexcept : rt_(o.rt_), dev_(o.dev_), s_(o.s_), owned_(o.owned_) { o.owned_ = false; }
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = o.rt_;
      dev_ = o.dev_;
      s_ = o.s_;
      owned_ = o.owned_;
      o.owned_ = false;
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { reset(); }

  tsr_stream_t* get() const { return s_; }
  Device device() const { return dev_; }
  tsr_runtime_t* runtime_handle() const { return rt_; }
  // Waits for all work enqueued on the stream.
  void synchronize() const { check(api()->stream_synchronize(rt_, dev_.d, s_)); }
  // True when all work enqueued on the stream has finished.
  bool query() const {
    int32_t done = 0;
    check(api()->stream_query(rt_, dev_.d, s_, &done));
    return done != 0;
  }
  // Later work on this stream waits for the event's recorded point (no host block).
  inline void wait(const Event& e) const;

 private:
  Stream(tsr_runtime_t* rt, Device device, tsr_stream_t* s) : rt_(rt), dev_(device), s_(s), owned_(false) {}
  void reset() {
    if (owned_ && s_) {
      tsr_status_t st = api()->stream_destroy(rt_, dev_.d, s_);
      if (st) api()->status_free(st);  // a destructor cannot report it
    }
    owned_ = false;
    s_ = nullptr;
  }
  tsr_runtime_t* rt_ = nullptr;
  Device dev_;
  tsr_stream_t* s_ = nullptr;
  bool owned_ = false;
};

class Event {
 public:
  // timing: the event records a timestamp (elapsed_time).
  explicit Event(Device device, bool timing = false) : rt_(runtime()), dev_(device) {
    check(api()->event_create(rt_, dev_.d, timing ? TSR_EVENT_TIMING : TSR_EVENT_DEFAULT, &e_));
  }
  Event(Event&& o) noexcept : rt_(o.rt_), dev_(o.dev_), e_(o.e_) { o.e_ = nullptr; }
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = o.rt_;
      dev_ = o.dev_;
      e_ = o.e_;
      o.e_ = nullptr;
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { reset(); }

  tsr_event_t* get() const { return e_; }
  Device device() const { return dev_; }
  // Records the point after the work enqueued so far on `s`.
  void record(const Stream& s) const { check(api()->event_record(rt_, dev_.d, e_, s.get())); }
  // Records on the calling thread's current stream of the event's device.
  void record() const {
    tsr_stream_t* s = nullptr;
    check(api()->stream_get_current(rt_, dev_.d, &s));
    check(api()->event_record(rt_, dev_.d, e_, s));
  }
  void synchronize() const { check(api()->event_synchronize(rt_, dev_.d, e_)); }
  // True when the recorded work has finished (also for a never-recorded event).
  bool query() const {
    int32_t done = 0;
    check(api()->event_query(rt_, dev_.d, e_, &done));
    return done != 0;
  }
  // Milliseconds from this event to `end` (both timing events, recorded and complete).
  float elapsed_time(const Event& end) const {
    float ms = 0;
    check(api()->event_elapsed_ms(rt_, dev_.d, e_, end.e_, &ms));
    return ms;
  }

 private:
  void reset() {
    if (e_) {
      tsr_status_t st = api()->event_destroy(rt_, dev_.d, e_);
      if (st) api()->status_free(st);
    }
    e_ = nullptr;
  }
  tsr_runtime_t* rt_ = nullptr;
  Device dev_;
  tsr_event_t* e_ = nullptr;
};

inline void Stream::wait(const Event& e) const { check(api()->stream_wait_event(rt_, dev_.d, s_, e.get())); }

// The calling thread's current stream of `device` (borrowed; NULL handle = default stream).
inline Stream current_stream(Device device) {
  tsr_stream_t* s = nullptr;
  check(api()->stream_get_current(runtime(), device.d, &s));
  return Stream::borrow(device, s);
}

// Waits for all work on every stream of the device.
inline void synchronize(Device device) { check(api()->device_synchronize(runtime(), device.d)); }

// Makes `s` the calling thread's current stream of its device for the guard's scope, then
// restores the previous one (as c10::cuda::CUDAStreamGuard).
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s) : rt_(s.runtime_handle()), dev_(s.device()) {
    check(api()->stream_get_current(rt_, dev_.d, &prev_));
    check(api()->stream_set_current(rt_, dev_.d, s.get()));
  }
  ~StreamGuard() {
    tsr_status_t st = api()->stream_set_current(rt_, dev_.d, prev_);
    if (st) api()->status_free(st);
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  tsr_runtime_t* rt_;
  Device dev_;
  tsr_stream_t* prev_ = nullptr;
};

// Marks the tensor's memory as used by work on `s` (PyTorch's Tensor.record_stream): the
// caching allocator reuses it, after the tensor is freed, only once that work is done.
inline void record_stream(const Tensor& t, const Stream& s) { check(api()->tensor_record_stream(t.get(), s.get())); }

}  // namespace tsr
