#include "status.hpp"

#include <cstdint>
#include <new>

namespace tsr::core {

std::string shape_str(const int64_t* sizes, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

}  // namespace tsr::core
