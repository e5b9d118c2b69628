#include "runtime/status.hpp"

#include <cstdint>
#include <new>

namespace tsr::core {

tsr_status_t out_of_host_memory_status() {
  static tsr_status_s oom{TSR_RESOURCE_EXHAUSTED, "out of host memory (while reporting an error)"};
  return &oom;
}

std::string shape_str(const int64_t* sizes, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

}  // namespace tsr::core
