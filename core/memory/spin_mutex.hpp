// A small test-and-test-and-set lock for short critical sections on hot paths (the caching
// allocator's): one atomic exchange to lock and a plain release store to unlock, where
// std::mutex costs two read-modify-writes. Waiters spin briefly, then yield the CPU, so a
// holder that is slow (a raw device allocation) does not burn the other cores.
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TSR_CPU_RELAX() _mm_pause()
#else
#define TSR_CPU_RELAX() ((void)0)
#endif

namespace tsr::core {

class SpinMutex {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64)
          TSR_CPU_RELAX();
        else
          std::this_thread::yield();
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace tsr::core
