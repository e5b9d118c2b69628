// Tessera SDK: plain structs as hash-map keys, compared and hashed by their bytes (FNV-1a): the
// caches of kernel plans that backends key by a problem's shapes and settings. The key type must
// have no padding bytes (checked at compile time), so that equal values have equal bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tsr {

template <class T>
struct BytesHash {
  static_assert(std::has_unique_object_representations_v<T>, "a bytes key must have no padding");
  size_t operator()(const T& k) const {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&k);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(T); ++i) h = (h ^ p[i]) * 1099511628211ull;
    return size_t(h);
  }
};

template <class T>
bool bytes_equal(const T& a, const T& b) {
  static_assert(std::has_unique_object_representations_v<T>, "a bytes key must have no padding");
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace tsr
