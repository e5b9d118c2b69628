// tessera_bench --sweep (sweep.cpp): cost curves of add, sum, softmax and copy against size.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct SweepOptions {
  int threads = 1;                    // OpenMP threads for both libraries (set by the caller)
  int64_t max_elements = 100000000;  // the largest size (1e8 by default)
  std::string svg;                    // where to draw the curves ("" = no plot)
};

// Prints the table (and the ratios against libtorch when built with it); returns 0.
int run_sweep(const SweepOptions& o);

}  // namespace bench
