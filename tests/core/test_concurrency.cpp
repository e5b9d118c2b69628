// Several threads dispatching and allocating at once, each result checked.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tessera/tessera.hpp"

TEST(Concurrency, ThreadsDispatchAndAllocate) {
  constexpr int kThreads = 4, kIters = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      try {
        for (int i = 0; i < kIters; ++i) {
          int64_t n = 1 + (i * 7 + t * 13) % 97;
          tsr::Tensor a = tsr::full({n}, double(t + 1));
          tsr::Tensor b = tsr::full({n}, double(i));
          tsr::Tensor c = a * b + 1.0;
          double expect = double(t + 1) * i + 1;
          tsr::Tensor s = tsr::sum(c);
          if (std::abs(s.item<float>() - expect * n) > 1e-3 * std::abs(expect * n) + 1e-3) failures++;
        }
      } catch (const std::exception&) {
        failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}
