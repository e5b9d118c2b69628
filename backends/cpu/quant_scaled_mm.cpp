// scaled_mm's CPU reference kernel: every mode (tensorwise, rowwise, MXFP8, NVFP4) with float64
// accumulation, reading operands and scales with any strides, so the GPU kernels have an oracle.
// The plan (mode, M, N, K, out dtype) is re-derived from the views with the core's own rules
// (tessera/kernels/quant_checks.hpp). use_fast_accum is accepted and ignored: the CPU always
// accumulates in float64.
#include <vector>

#include "quant_util.hpp"
#include "tessera/kernels/quant_checks.hpp"

namespace tsr::cpu {
namespace {

using kernels::ScaleMode;

kernels::QTensor qt(const tsr_tensor_view_t& v) { return kernels::QTensor(v.dtype, v.ndim, v.sizes); }

// Operand values as float64, row r of `rows` holding its K values contiguously: self as [M, K],
// mat2 transposed to [N, K] (so each output element is a dot product of two rows).
std::vector<double> decode_operand(const tsr_tensor_view_t& v, bool transposed, int64_t rows, int64_t K) {
  std::vector<double> out(static_cast<size_t>(rows * K));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) {
      double x;
      if (v.dtype == TSR_F4_E2M1FN_X2) {
        // Two values per byte along K: value k is byte k / 2's low (even k) or high nibble.
        const uint8_t b = transposed ? quant::byte_at(v, k / 2, r) : quant::byte_at(v, r, k / 2);
        x = detail::e2m1_bits_to_f32(static_cast<uint8_t>(k % 2 ? b >> 4 : b & 0xfu));
      } else {
        const uint8_t b = transposed ? quant::byte_at(v, k, r) : quant::byte_at(v, r, k);
        x = v.dtype == TSR_F8_E4M3FN ? detail::e4m3fn_bits_to_f32(b) : detail::e5m2_bits_to_f32(b);
      }
      out[static_cast<size_t>(r * K + k)] = x;
    }
  return out;
}

// Block scales [rows, K / block] as float64, read from the swizzled layout.
std::vector<double> decode_block_scales(const tsr_tensor_view_t& v, int64_t rows, int64_t nblocks) {
  std::vector<double> out(static_cast<size_t>(rows * nblocks));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < nblocks; ++c) {
      const uint8_t b =
          static_cast<const uint8_t*>(v.data)[quant::flat_offset(v, kernels::swizzled_scale_offset(r, c, nblocks))];
      out[static_cast<size_t>(r * nblocks + c)] =
          v.dtype == TSR_F8_E8M0FNU ? detail::e8m0fnu_bits_to_f32(b) : detail::e4m3fn_bits_to_f32(b);
    }
  return out;
}

void store(void* data, int32_t dtype, int64_t off, double v) {
  const float f = static_cast<float>(v);
  switch (dtype) {
    case TSR_F16:
      static_cast<Half*>(data)[off] = Half(f);
      break;
    case TSR_BF16:
      static_cast<BFloat16*>(data)[off] = BFloat16(f);
      break;
    case TSR_F32:
      static_cast<float*>(data)[off] = f;
      break;
    case TSR_F8_E4M3FN:  // float8 results saturate, as cuBLASLt's float8 outputs
      static_cast<uint8_t*>(data)[off] = f32_to_e4m3fn_sat_bits(f);
      break;
    case TSR_F8_E5M2:
      static_cast<uint8_t*>(data)[off] = f32_to_e5m2_sat_bits(f);
      break;
    default:
      fail(TSR_INTERNAL, "scaled_mm: unexpected out dtype ", dtype_name(dtype));
  }
}

void scaled_mm_kernel(KernelCall& c) {
  const auto& a = c.input(0);
  const auto& b = c.input(1);
  const auto& sa = c.input(2);
  const auto& sb = c.input(3);
  const bool has_bias = !c.arg_is_none(4), has_sr = !c.arg_is_none(5);
  const tsr_tensor_view_t* bias = has_bias ? &c.input(4) : nullptr;
  const tsr_tensor_view_t* sr = has_sr ? &c.input(has_bias ? 5 : 4) : nullptr;
  kernels::ScaledMmPlan p;
  const std::string err = kernels::check_scaled_mm(qt(a), qt(b), qt(sa), qt(sb), bias ? qt(*bias) : kernels::QTensor(),
                                                   sr ? qt(*sr) : kernels::QTensor(), c.arg_dtype(6), &p);
  if (!err.empty()) fail(TSR_INTERNAL, c.op_name(), ": ", err);
  const auto& out = c.output(0);
  const int64_t M = p.M, N = p.N, K = p.K;
  const std::vector<double> A = decode_operand(a, false, M, K), B = decode_operand(b, true, N, K);
  const bool block = p.mode == ScaleMode::MXFP8 || p.mode == ScaleMode::NVFP4;
  const int64_t bs = block ? kernels::scale_block(p.mode) : (K > 0 ? K : 1);
  const int64_t nb = block ? K / bs : 1;
  std::vector<double> SA, SB;  // per (row, block) for block modes
  if (block) {
    SA = decode_block_scales(sa, M, nb);
    SB = decode_block_scales(sb, N, nb);
  }
  const double result_scale = sr ? *static_cast<const float*>(sr->data) : 1.0;
  const double tensor_scale = p.mode == ScaleMode::Tensorwise ? double(*static_cast<const float*>(sa.data)) *
                                                                    double(*static_cast<const float*>(sb.data))
                                                              : 1.0;
  parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, N * K)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t n = 0; n < N; ++n) {
        const double* ar = A.data() + m * K;
        const double* br = B.data() + n * K;
        double acc = 0;
        for (int64_t blk = 0; blk < nb && K > 0; ++blk) {
          double s = 0;
          for (int64_t k = blk * bs; k < (blk + 1) * bs; ++k) s += ar[k] * br[k];
          acc += block ? SA[static_cast<size_t>(m * nb + blk)] * SB[static_cast<size_t>(n * nb + blk)] * s : s;
        }
        double scale = tensor_scale;
        if (p.mode == ScaleMode::Rowwise)
          scale = double(static_cast<const float*>(sa.data)[m * sa.strides[0]]) *
                  double(static_cast<const float*>(sb.data)[n * sb.strides[1]]);
        double v = result_scale * (scale * acc);
        if (bias) v += quant::load_float(*bias, n * bias->strides[0]);
        store(out.data, p.out_dtype, m * N + n, v);
      }
  });
}

}  // namespace

TSR_CPU_KERNELS(quant_scaled_mm) {
  r.kernel("scaled_mm", "cpu::scaled_mm", device_type, kFloat8Mask | kFloat4Mask, TSR_KERNEL(scaled_mm_kernel));
}

}  // namespace tsr::cpu
