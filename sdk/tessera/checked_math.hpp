// Checked size arithmetic: the one place sizes, element counts, byte counts, strides and view
// extents are multiplied or added. Every function returns false (and leaves *out unspecified)
// when the exact result does not fit in int64_t, so a caller turns overflow into a status
// instead of an under-allocated buffer or a view past its storage.
//
// Header-only and dependency-free: the core, the SDK and backend plugins share it. Functions
// are pure and thread-safe.
#pragma once

#include <cstdint>

namespace tsr {

// *out = a * b. False on overflow.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// *out = a + b. False on overflow.
inline bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// *out = a - b. False on overflow.
inline bool checked_sub(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }

// Product of sizes[0..ndim). False when a size is negative or the product overflows. A zero
// size makes the product 0 whatever the other sizes are (as an empty tensor's numel is), but
// the other sizes must still be non-negative.
inline bool checked_numel(int ndim, const int64_t* sizes, int64_t* out) {
  int64_t n = 1;
  bool overflow = false;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] < 0) return false;
    if (!overflow && !checked_mul(n, sizes[d], &n)) overflow = true;
    if (sizes[d] == 0) {
      n = 0;
      overflow = false;  // stays 0 whatever follows
      for (int e = d + 1; e < ndim; ++e)
        if (sizes[e] < 0) return false;
      break;
    }
  }
  if (overflow) return false;
  *out = n;
  return true;
}

// numel * itemsize as a byte count. False when numel or itemsize is negative or on overflow.
inline bool checked_nbytes(int64_t numel, int64_t itemsize, int64_t* out) {
  if (numel < 0 || itemsize < 0) return false;
  return checked_mul(numel, itemsize, out);
}

// The largest element offset a strided view reaches: offset + sum((sizes[d]-1) * strides[d]),
// over dims with sizes[d] > 0, and the smallest (offset plus the negative stride terms). For an
// empty view (some size 0) *max_off = *min_off = offset. False on overflow or negative size.
inline bool checked_view_extent(int ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                                int64_t* min_off, int64_t* max_off) {
  int64_t lo = offset, hi = offset;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] < 0) return false;
    if (sizes[d] == 0) {
      *min_off = *max_off = offset;
      return true;
    }
  }
  for (int d = 0; d < ndim; ++d) {
    int64_t span = 0;
    if (!checked_mul(sizes[d] - 1, strides[d], &span)) return false;
    if (!checked_add(span >= 0 ? hi : lo, span, span >= 0 ? &hi : &lo)) return false;
  }
  *min_off = lo;
  *max_off = hi;
  return true;
}

}  // namespace tsr
