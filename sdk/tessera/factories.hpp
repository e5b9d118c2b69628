// Tessera SDK: tensor factories (empty, full, zeros, ones, arange, rand, randn, from_vector,
// from_bools). Part of tessera/tessera.hpp, which includes it; include that header.
// New tensors are made in tsr::runtime() on `dev` (the CPU by default); errors are tsr::Error.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

inline Tensor empty(std::vector<int64_t> sizes, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  tsr_tensor_t* out = nullptr;
  check(api()->tensor_empty(runtime(), static_cast<int32_t>(sizes.size()), sizes.data(), dt, dev.d, &out));
  return Tensor::adopt(out);
}
inline Tensor full(std::vector<int64_t> sizes, double value, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  static const Op op("full");
  return call(op, {std::move(sizes), value, dt, dev});
}
inline Tensor zeros(std::vector<int64_t> sizes, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  return full(std::move(sizes), 0.0, dt, dev);
}
inline Tensor ones(std::vector<int64_t> sizes, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  return full(std::move(sizes), 1.0, dt, dev);
}
inline Tensor arange(double start, double end, double step = 1, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  static const Op op("arange");
  return call(op, {start, end, step, dt, dev});
}
inline Tensor arange(int64_t end, tsr_dtype_t dt = TSR_I64, Device dev = {}) {
  static const Op op("arange");
  return call(op, {int64_t{0}, end, int64_t{1}, dt, dev});
}
inline Tensor rand(std::vector<int64_t> sizes, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  static const Op op("rand");
  return call(op, {std::move(sizes), dt, dev});
}
inline Tensor randn(std::vector<int64_t> sizes, tsr_dtype_t dt = TSR_F32, Device dev = {}) {
  static const Op op("randn");
  return call(op, {std::move(sizes), dt, dev});
}
template <class T>
Tensor from_vector(const std::vector<T>& data, std::vector<int64_t> sizes, Device dev = {}) {
  static_assert(dtype_of<T> != TSR_DTYPE_UNDEFINED, "from_vector: unsupported element type");
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  if (n != static_cast<int64_t>(data.size()))
    throw Error(TSR_INVALID_ARGUMENT, "from_vector: " + std::to_string(data.size()) +
                                          " values do not fill the requested shape (" + std::to_string(n) +
                                          " elements)");
  tsr_tensor_t* out = nullptr;
  check(api()->tensor_from_host(runtime(), data.data(), static_cast<int32_t>(sizes.size()), sizes.data(), dtype_of<T>,
                                dev.d, &out));
  return Tensor::adopt(out);
}
template <class T>
Tensor from_vector(const std::vector<T>& data) {
  return from_vector(data, {static_cast<int64_t>(data.size())});
}
// std::vector<bool> is not contiguous: use uint8 storage.
inline Tensor from_bools(const std::vector<bool>& data, std::vector<int64_t> sizes, Device dev = {}) {
  std::vector<uint8_t> bytes(data.begin(), data.end());
  tsr_tensor_t* out = nullptr;
  check(api()->tensor_from_host(runtime(), bytes.data(), static_cast<int32_t>(sizes.size()), sizes.data(), TSR_BOOL,
                                dev.d, &out));
  return Tensor::adopt(out);
}

}  // namespace tsr
