// swizzle_block_scales and unswizzle_block_scales: between a plain [R, C] block-scale matrix
// and the padded, swizzled layout the block-scaled GEMMs read (tessera/kernels/
// block_scale_layout.hpp): pad to [round_up(R, 128), round_up(C, 4)] with zero bytes, cut into
// 128x4 tiles in row-major order, and within a tile put (r, c) at (r % 32) * 16 + (r / 32) * 4 + c
// (torchao's to_blocked). Composites of zeros, copy_ and views, so they run on every backend and
// for every dtype a copy moves.
#include "ops/composite.hpp"
#include "tessera/kernels/quant_checks.hpp"

namespace tsr::core {
namespace {

std::string shp(const tsr::Tensor& t) {
  auto s = t.sizes();
  return shape_str(s.data(), static_cast<int>(s.size()));
}

tsr::Tensor swizzle_fn(CArgs& a) {
  tsr::Tensor s = a.tensor(0);
  if (s.dim() != 2)
    a.fail(TSR_INVALID_ARGUMENT,
           "expected a 2-D scale matrix [rows, blocks], got " + shp(s) + " " + dtype_name(s.dtype()));
  const int64_t R = s.size(0), C = s.size(1);
  if (R > kernels::kMaxQuantDim || C > kernels::kMaxQuantDim)
    a.fail(TSR_INVALID_ARGUMENT, "scale matrix " + shp(s) + " has a dimension larger than 2^56");
  const int64_t Rp = kernels::scale_padded_rows(R), Cp = kernels::scale_padded_cols(C);
  tsr::Tensor padded = tsr::zeros({Rp, Cp}, s.dtype(), s.device());
  if (R == 0 || C == 0) return padded;
  padded.narrow(0, 0, R).narrow(1, 0, C).copy_(s);
  // [Rp/128, 128, Cp/4, 4] -> tiles [Rp/128, Cp/4, 128, 4] -> rows r = 32a + b as [t, a, b, c] ->
  // [t, b, a, c]: offset b * 16 + a * 4 + c within the tile.
  return padded.reshape({Rp / 128, 128, Cp / 4, 4})
      .permute({0, 2, 1, 3})
      .reshape({-1, 4, 32, 4})
      .transpose(1, 2)
      .reshape({Rp, Cp});
}

tsr::Tensor unswizzle_fn(CArgs& a) {
  tsr::Tensor s = a.tensor(0);
  const int64_t R = a.int_arg(1), C = a.int_arg(2);
  if (R < 0 || C < 0)
    a.fail(TSR_INVALID_ARGUMENT,
           "rows and cols must be non-negative, got " + std::to_string(R) + " and " + std::to_string(C));
  if (R > kernels::kMaxQuantDim || C > kernels::kMaxQuantDim)
    a.fail(TSR_INVALID_ARGUMENT,
           "rows and cols must be at most 2^56, got " + std::to_string(R) + " and " + std::to_string(C));
  const int64_t Rp = kernels::scale_padded_rows(R), Cp = kernels::scale_padded_cols(C);
  int64_t n = 0;
  if (!checked_mul(Rp, Cp, &n) || s.numel() != n)
    a.fail(TSR_INVALID_ARGUMENT, "a swizzled scale matrix for [" + std::to_string(R) + ", " + std::to_string(C) +
                                     "] holds round_up(rows, 128) * round_up(cols, 4) = " + std::to_string(Rp) + " * " +
                                     std::to_string(Cp) + " elements, got " + shp(s) + " " + dtype_name(s.dtype()));
  if (Rp == 0 || Cp == 0) return tsr::zeros({R, C}, s.dtype(), s.device());
  return s.reshape({-1, 32, 4, 4})
      .transpose(1, 2)
      .reshape({Rp / 128, Cp / 4, 128, 4})
      .permute({0, 2, 1, 3})
      .reshape({Rp, Cp})
      .narrow(0, 0, R)
      .narrow(1, 0, C)
      .contiguous();
}

}  // namespace

TSR_CORE_OPS(quant_swizzle) {
  v.push_back(composite_op("swizzle_block_scales(Tensor scale) -> Tensor", composite<swizzle_fn>));
  v.push_back(
      composite_op("unswizzle_block_scales(Tensor scale, int rows, int cols) -> Tensor", composite<unswizzle_fn>));
}

}  // namespace tsr::core
