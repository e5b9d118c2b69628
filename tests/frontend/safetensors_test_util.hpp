// Helpers of the safetensors and checkpoint tests: scratch paths, raw files written byte by
// byte (as the format spec describes them), tensors' raw bytes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/serialize.hpp"

namespace sttest {

using Bytes = std::vector<unsigned char>;

// A fresh path in gtest's temp dir, unique per process and call.
inline std::string scratch(const std::string& stem) {
  static int counter = 0;
  return ::testing::TempDir() + "tsr_" + stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
         ".safetensors";
}

inline void write_file(const std::string& path, const Bytes& bytes) {
  // A new inode each time: rewriting a file in place through O_TRUNC makes ext4 flush it on
  // close (its replace-via-truncate heuristic), which turns the fuzz loop into seconds of I/O.
  std::remove(path.c_str());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
inline Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// 8-byte little-endian header length, the header text, then the data section.
inline Bytes make_file(const std::string& header, const Bytes& data) {
  Bytes out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The tensor's elements in row-major order, as bytes (what a safetensors data section holds).
inline Bytes raw(const tsr::Tensor& t) {
  Bytes b(static_cast<size_t>(t.numel()) * tsr::itemsize(t.dtype()));
  tsr::check(tsr::api()->tensor_copy_to_host(t.get(), b.data(), b.size()));
  return b;
}

// A tensor holding exactly `bytes` (any bit pattern, NaN payloads included).
inline tsr::Tensor from_raw(const Bytes& bytes, std::vector<int64_t> shape, tsr_dtype_t dt) {
  tsr_tensor_t* out = nullptr;
  tsr::check(tsr::api()->tensor_from_host(tsr::runtime(), bytes.data(), static_cast<int32_t>(shape.size()),
                                          shape.data(), dt, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, &out));
  return tsr::Tensor::adopt(out);
}

// Little-endian bytes of a value.
template <class T>
void put(Bytes& b, T v) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}

}  // namespace sttest
