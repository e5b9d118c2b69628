// Tessera SDK: the swizzled layout of block-scale matrices that cuBLASLt's block-scaled GEMMs
// (MXFP8, NVFP4) read, shared by the core's checks, the CPU reference kernels and the CUDA
// kernels (TSR_HOST_DEVICE). docs/low-precision.md draws it.
//
// A scale matrix has one row per row of the operand (M for self, N for mat2) and one column per
// block of 32 (MXFP8) or 16 (NVFP4) elements along K. It is padded with zero bytes to
// [round_up(rows, 128), round_up(cols, 4)] and stored as 128x4 tiles of 512 bytes, tiles in
// row-major order; inside a tile, scale (r, c) sits at (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4
// (torchao's to_blocked; cuBLAS's "1D block scaling factors layout").
#pragma once

#include <cstdint>

#include "tessera/dtype.hpp"

namespace tsr::kernels {

constexpr int64_t kScaleTileRows = 128;
constexpr int64_t kScaleTileCols = 4;
constexpr int64_t kScaleTileBytes = kScaleTileRows * kScaleTileCols;
constexpr int64_t kMxBlock = 32;     // MXFP8: elements along K per e8m0 scale
constexpr int64_t kNvfp4Block = 16;  // NVFP4: elements along K per e4m3 scale

TSR_HOST_DEVICE constexpr int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Rows and columns of the padded (swizzled) scale matrix for `rows` x `cols` scales.
TSR_HOST_DEVICE constexpr int64_t scale_padded_rows(int64_t rows) { return round_up(rows, kScaleTileRows); }
TSR_HOST_DEVICE constexpr int64_t scale_padded_cols(int64_t cols) { return round_up(cols, kScaleTileCols); }

// Offset of scale (r, c) in the swizzled buffer of a matrix with `cols` columns (unpadded or
// padded: only its padded value matters).
TSR_HOST_DEVICE constexpr int64_t swizzled_scale_offset(int64_t r, int64_t c, int64_t cols) {
  const int64_t tiles_per_row = scale_padded_cols(cols) / kScaleTileCols;
  const int64_t tile = (r / kScaleTileRows) * tiles_per_row + c / kScaleTileCols;
  return tile * kScaleTileBytes + (r % 32) * 16 + ((r % kScaleTileRows) / 32) * 4 + c % kScaleTileCols;
}

}  // namespace tsr::kernels
