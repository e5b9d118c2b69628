// The control table of the "fakeasync" test device (plugins/fakeasync.cpp), published as the
// extension "fakeasync.control" of each runtime that loads the plugin. Tests read the
// counters to see which stream the core handed to kernels and copies, and set the kernel delay
// that makes ordering bugs visible. Both sides are built by the same compiler.
#pragma once

#include <atomic>
#include <cstdint>

struct FakeAsyncControl {
  std::atomic<int> kernel_delay_us{0};             // every kernel sleeps this long before working
  std::atomic<void*> last_kernel_stream{nullptr};  // stream handle of the latest kernel call
  std::atomic<void*> last_copy_stream{nullptr};    // stream handle of the latest copy call
  std::atomic<long> kernel_calls{0};
  std::atomic<long> copy_calls{0};
  // Steady-clock nanoseconds when the last kernel finished executing (worker side).
  std::atomic<int64_t> last_kernel_end_ns{0};
  // The "fakeasync_async" raw allocator (alloc_async/free_async).
  std::atomic<long> async_allocs{0};
  std::atomic<long> async_frees{0};  // executed (in stream order), not just enqueued
  std::atomic<int64_t> last_async_free_ns{0};
  std::atomic<void*> last_async_alloc_stream{nullptr};
  std::atomic<void*> last_async_free_stream{nullptr};
  // Bytes held by the raw allocators (the device has 64 MiB).
  std::atomic<int64_t> raw_bytes{0};
};
