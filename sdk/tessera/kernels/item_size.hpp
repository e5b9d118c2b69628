// Tessera SDK: pure data movement by element size, shared by the CPU and CUDA kernels of the
// shape and index families (flip, tril, triu, gather, index_select, embedding): they need no
// dtype, only an unsigned type of the element's size. Host only (header-only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/dtype.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

// Calls f(TypeTag<W>{}) with W the unsigned type of `size` bytes and returns true; returns false
// (calling nothing) for any other size. W8 is the 8-byte type (CUDA's atomics take unsigned long
// long).
template <class W8 = uint64_t, class F>
bool with_uint_of_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      f(TypeTag<uint8_t>{});
      return true;
    case 2:
      f(TypeTag<uint16_t>{});
      return true;
    case 4:
      f(TypeTag<uint32_t>{});
      return true;
    case 8:
      f(TypeTag<W8>{});
      return true;
    default:
      return false;
  }
}

// The shape family's form: f(W{}) for the element size of `dtype`; an unsupported size fails
// as "OP: unsupported element size N".
template <class F>
void by_element_size(int32_t dtype, const char* op, F&& f) {
  if (!with_uint_of_size(itemsize(dtype), [&](auto w) { f(typename decltype(w)::type{}); }))
    fail(TSR_UNIMPLEMENTED, op, ": unsupported element size ", itemsize(dtype));
}

}  // namespace tsr::kernels
