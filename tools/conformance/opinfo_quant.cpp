// OpInfos of the quantization family (scaled_mm, quantize_/dequantize_ mxfp8 and nvfp4,
// swizzle_block_scales and its inverse). Float8 and float4 inputs are not floating dtypes for
// the runner, so they keep their dtype and only move to the device (and to non-contiguous
// layouts); the dtype under test is the out dtype (scaled_mm, dequantize_*: run_at) or the
// input's (quantize_*, swizzle). Float8/float4 results are compared through float64 values
// (dequantized data, scales as numbers), since the runner's exact path is for integers.
// Tolerances, in units in the last place of the formats (docs/low-precision.md):
//   scaled_mm: 2 ulps of the out dtype, plus float32 accumulation over K (GPU) as atol;
//   dequantize_*: half an ulp of the out dtype (one rounding of an exact product);
//   quantize_*: one e4m3 ulp relative (2^-3) for a device that rounds a tie differently; the
//   CPU matches its own recipe exactly.
#include <cmath>
#include <random>
#include <string>

#include "opinfo.hpp"
#include "tessera/ops/quant.hpp"

namespace tsr::conformance {
namespace {

using tsr::Tensor;

int64_t rup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Random codes of moderate magnitude (|x| < 8), never all zeros, as a tensor of `dt`.
Tensor codes(const Shape& shape, tsr_dtype_t dt, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 17);
  std::vector<uint8_t> b(static_cast<size_t>(n));
  for (auto& c : b) {
    const uint8_t sign = static_cast<uint8_t>(g() & 0x80);
    c = dt == TSR_F8_E4M3FN    ? static_cast<uint8_t>(sign | (g() % 10) << 3 | g() % 8)
        : dt == TSR_F8_E5M2    ? static_cast<uint8_t>(sign | (g() % 18) << 2 | g() % 4)
        : dt == TSR_F8_E8M0FNU ? static_cast<uint8_t>(124 + g() % 7)
                               : static_cast<uint8_t>(g());
  }
  if (n > 0) b[0] = dt == TSR_F8_E8M0FNU ? 127 : 0x38;
  switch (dt) {
    case TSR_F8_E4M3FN: {
      std::vector<Float8_e4m3fn> v;
      for (uint8_t c : b) v.push_back(Float8_e4m3fn::from_raw(c));
      return tsr::from_vector(v, shape);
    }
    case TSR_F8_E5M2: {
      std::vector<Float8_e5m2> v;
      for (uint8_t c : b) v.push_back(Float8_e5m2::from_raw(c));
      return tsr::from_vector(v, shape);
    }
    case TSR_F8_E8M0FNU: {
      std::vector<Float8_e8m0fnu> v;
      for (uint8_t c : b) v.push_back(Float8_e8m0fnu::from_raw(c));
      return tsr::from_vector(v, shape);
    }
    default: {
      std::vector<Float4_e2m1fn_x2> v;
      for (uint8_t c : b) v.push_back(Float4_e2m1fn_x2::from_raw(c));
      return tsr::from_vector(v, shape);
    }
  }
}

// Positive e4m3fn block scales in [2^-3, 2^3) (NVFP4), as a tensor.
Tensor e4m3_scales(int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<Float8_e4m3fn> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(Float8_e4m3fn::from_raw(static_cast<uint8_t>(0x20 + g() % 0x30)));
  return tsr::from_vector(v, {n});
}

std::map<tsr_dtype_t, Tol> out_ulps(double ulps, double atol_f32, double atol_half) {
  return {{TSR_F32, {ulps * std::ldexp(1.0, -23), atol_f32}},
          {TSR_BF16, {ulps * std::ldexp(1.0, -7), atol_half}},
          {TSR_F16, {ulps * std::ldexp(1.0, -10), atol_half}},
          {TSR_F64, {ulps * std::ldexp(1.0, -52), 0}}};
}

enum class Mode { Tensorwise, Rowwise, MX, NV };

// scaled_mm sample: inputs {self, mat2, scale_a, scale_b, bias, scale_result}; the float32
// scales are floating inputs (converted to the dtype under test, then back to float32 here), the
// bias and the out dtype follow the dtype under test.
Sample scaled_mm_sample(Mode mode, int64_t M, int64_t K, int64_t N, tsr_dtype_t adt, tsr_dtype_t bdt, uint64_t seed) {
  Sample s;
  const bool nv = mode == Mode::NV;
  const int64_t Kb = nv ? K / 2 : K;
  Tensor a = codes({M, Kb}, adt, seed), b = codes({Kb, N}, bdt, seed + 1);
  Tensor sa, sb;
  if (mode == Mode::Tensorwise) {
    sa = random_f64({}, seed + 2, 0.25, 2);
    sb = random_f64({1}, seed + 3, 0.25, 2);
  } else if (mode == Mode::Rowwise) {
    sa = random_f64({M, 1}, seed + 2, 0.25, 2);
    sb = random_f64({1, N}, seed + 3, 0.25, 2);
  } else if (mode == Mode::MX) {
    sa = codes({rup(M, 128), rup(K / 32, 4)}, TSR_F8_E8M0FNU, seed + 2);
    sb = codes({rup(N, 128) * rup(K / 32, 4)}, TSR_F8_E8M0FNU, seed + 3);
  } else {
    sa = e4m3_scales(rup(M, 128) * rup(K / 16, 4), seed + 2);
    sb = e4m3_scales(rup(N, 128) * rup(K / 16, 4), seed + 3);
  }
  const char* names[] = {"tensorwise", "rowwise", "mxfp8", "nvfp4"};
  s.desc = std::string(names[int(mode)]) + " [" + std::to_string(M) + ", " + std::to_string(Kb) + "] " +
           tsr::dtype_name(adt) + " x [" + std::to_string(Kb) + ", " + std::to_string(N) + "] " + tsr::dtype_name(bdt);
  s.inputs = {a, b, sa, sb, random_f64({N}, seed + 4), tsr::from_vector(std::vector<double>{0.5}, {})};
  const bool f32_scales = mode == Mode::Tensorwise || mode == Mode::Rowwise;
  s.run_at = [f32_scales](const Tensors& in, const Where& w) -> Tensors {
    Tensor sa = f32_scales ? in[2].to(TSR_F32) : in[2], sb = f32_scales ? in[3].to(TSR_F32) : in[3];
    return {tsr::scaled_mm(in[0], in[1], sa, sb, in[4], in[5].to(TSR_F32), w.dtype)};
  };
  // float64: the dequantized operands' product, scaled.
  s.reference = [mode](const Tensors& in) -> Tensors {
    Tensor prod;
    if (mode == Mode::MX)
      prod =
          tsr::mm(tsr::dequantize_mxfp8(in[0], in[2], TSR_F64), tsr::dequantize_mxfp8(in[1].t(), in[3], TSR_F64).t());
    else if (mode == Mode::NV) {
      Tensor one = tsr::from_vector(std::vector<float>{1.0f}, {});
      prod = tsr::mm(tsr::dequantize_nvfp4(in[0], in[2], one, TSR_F64),
                     tsr::dequantize_nvfp4(in[1].t(), in[3], one, TSR_F64).t());
    } else {
      prod = tsr::mm(in[0].to(TSR_F64), in[1].to(TSR_F64)) * in[2].to(TSR_F64) * in[3].to(TSR_F64);
    }
    return {prod * in[5].to(TSR_F64) + in[4].to(TSR_F64)};
  };
  return s;
}

OpInfo scaled_mm_info() {
  OpInfo o;
  o.name = "scaled_mm";
  o.dtypes = {TSR_F32, TSR_BF16, TSR_F16};
  o.differentiable = false;
  o.tol = out_ulps(2, 1e-3, 1e-2);
  o.samples = [](uint64_t seed) {
    return std::vector<Sample>{
        scaled_mm_sample(Mode::Tensorwise, 3, 64, 5, TSR_F8_E4M3FN, TSR_F8_E4M3FN, seed),
        scaled_mm_sample(Mode::Tensorwise, 2, 32, 7, TSR_F8_E5M2, TSR_F8_E4M3FN, seed + 10),
        scaled_mm_sample(Mode::Rowwise, 129, 32, 5, TSR_F8_E4M3FN, TSR_F8_E5M2, seed + 20),
        scaled_mm_sample(Mode::MX, 3, 96, 5, TSR_F8_E4M3FN, TSR_F8_E4M3FN, seed + 30),
        scaled_mm_sample(Mode::MX, 129, 64, 3, TSR_F8_E5M2, TSR_F8_E4M3FN, seed + 40),
        scaled_mm_sample(Mode::NV, 3, 64, 5, TSR_F4_E2M1FN_X2, TSR_F4_E2M1FN_X2, seed + 50),
    };
  };
  return o;
}

// quantize_*: the dequantized data and the scales, as float64.
OpInfo quantize_info(bool nvfp4) {
  OpInfo o;
  o.name = nvfp4 ? "quantize_nvfp4" : "quantize_mxfp8";
  o.dtypes = {TSR_F32, TSR_BF16, TSR_F16, TSR_F64};
  o.differentiable = false;
  for (tsr_dtype_t dt : o.dtypes) o.tol[dt] = {0.125, 0};
  o.samples = [nvfp4](uint64_t seed) {
    std::vector<Sample> v;
    for (Shape sh : {Shape{3, 64}, Shape{129, 32}, Shape{2, 96}}) {
      Sample s;
      s.desc = "[" + std::to_string(sh[0]) + ", " + std::to_string(sh[1]) + "]";
      s.inputs = {random_f64(sh, seed + sh[0], -4, 4)};
      if (nvfp4)
        s.run = [](const Tensors& in) -> Tensors {
          auto [d, sc, g] = tsr::quantize_nvfp4(in[0]);
          return {tsr::dequantize_nvfp4(d, sc, g, TSR_F64), sc.to(TSR_F64), g.to(TSR_F64)};
        };
      else
        s.run = [](const Tensors& in) -> Tensors {
          auto [d, sc] = tsr::quantize_mxfp8(in[0]);
          return {tsr::dequantize_mxfp8(d, sc, TSR_F64), sc.to(TSR_F64)};
        };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

OpInfo dequantize_info(bool nvfp4) {
  OpInfo o;
  o.name = nvfp4 ? "dequantize_nvfp4" : "dequantize_mxfp8";
  o.dtypes = {TSR_F32, TSR_BF16, TSR_F16, TSR_F64};
  o.differentiable = false;
  o.tol = out_ulps(0.5, 0, 0);
  o.samples = [nvfp4](uint64_t seed) {
    std::vector<Sample> v;
    for (int64_t M : {3, 129}) {
      const int64_t K = 64;
      Sample s;
      s.desc = "[" + std::to_string(M) + ", " + std::to_string(K) + "]";
      if (nvfp4) {
        s.inputs = {codes({M, K / 2}, TSR_F4_E2M1FN_X2, seed + M), e4m3_scales(rup(M, 128) * rup(K / 16, 4), seed),
                    tsr::from_vector(std::vector<double>{0.75}, {})};
        s.run_at = [](const Tensors& in, const Where& w) -> Tensors {
          return {tsr::dequantize_nvfp4(in[0], in[1], in[2].to(TSR_F32), w.dtype)};
        };
      } else {
        s.inputs = {codes({M, K}, TSR_F8_E4M3FN, seed + M), codes({rup(M, 128), rup(K / 32, 4)}, TSR_F8_E8M0FNU, seed)};
        s.run_at = [](const Tensors& in, const Where& w) -> Tensors {
          return {tsr::dequantize_mxfp8(in[0], in[1], w.dtype)};
        };
      }
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

OpInfo swizzle_info(bool inverse) {
  OpInfo o;
  o.name = inverse ? "unswizzle_block_scales" : "swizzle_block_scales";
  o.dtypes = {TSR_F32, TSR_BF16, TSR_F16, TSR_F64};
  o.differentiable = false;
  o.samples = [inverse](uint64_t seed) {
    std::vector<Sample> v;
    for (auto [R, C] : {std::pair<int64_t, int64_t>{3, 5}, {129, 7}}) {
      Sample s;
      s.desc = "[" + std::to_string(R) + ", " + std::to_string(C) + "]";
      if (inverse) {
        s.inputs = {random_f64({rup(R, 128), rup(C, 4)}, seed + R)};
        s.run = [R = R, C = C](const Tensors& in) -> Tensors { return {tsr::unswizzle_block_scales(in[0], R, C)}; };
      } else {
        s.inputs = {random_f64({R, C}, seed + R)};
        s.run = [](const Tensors& in) -> Tensors { return {tsr::swizzle_block_scales(in[0])}; };
      }
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

// Float values for casts to float8: magnitudes 2^[-12, 10] (e4m3fn's and e5m2's subnormals and
// normals) and the landmarks where PyTorch's casts round to NaN or inf, with random signs.
Tensor cast_source(const Shape& shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 29);
  std::uniform_real_distribution<double> e(-12, 10);
  const double landmarks[] = {448, 464, 470, 480, 57344, 61440};
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    const double m = i % 7 == 3 ? landmarks[(i / 7) % 6] : std::exp2(e(g));
    v[i] = (g() & 1) ? -m : m;
  }
  return tsr::from_vector(v, shape);
}

// `_copy` between the dtype under test (a float) and the float8 dtypes, both ways: what Tensor::to
// runs on every device (the CPU's and CUDA's copy kernels instantiate the SDK's conversions).
// Exact: a float8 value is exact in every float dtype here (the e8m0 codes are kept near 1), and
// a cast to float8 rounds once from a value the dtype under test holds exactly (results are
// compared as float64 values, NaN where PyTorch's cast gives NaN).
std::string dims(const Shape& s) {
  std::string d = "[";
  for (size_t i = 0; i < s.size(); ++i) d += (i ? ", " : "") + std::to_string(s[i]);
  return d + "]";
}

OpInfo float8_cast_info() {
  OpInfo o;
  o.name = "_copy";
  o.dtypes = {TSR_F32, TSR_BF16, TSR_F16, TSR_F64};
  o.differentiable = false;
  o.tol = {{TSR_F32, {0, 0}}, {TSR_BF16, {0, 0}}, {TSR_F16, {0, 0}}, {TSR_F64, {0, 0}}};
  o.samples = [](uint64_t seed) {
    std::vector<Sample> v;
    uint64_t k = 0;
    for (const Shape& shape : {Shape{0}, Shape{37}, Shape{5, 9}}) {
      for (tsr_dtype_t f8 : {TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F8_E8M0FNU}) {
        Sample to8;
        to8.desc = dims(shape) + " to " + tsr::dtype_name(f8);
        to8.inputs = {cast_source(shape, seed + ++k)};
        to8.run = [f8](const Tensors& in) -> Tensors { return {in[0].to(f8).to(TSR_F64)}; };
        v.push_back(std::move(to8));
        Sample from8;
        from8.desc = dims(shape) + " from " + tsr::dtype_name(f8);
        from8.inputs = {codes(shape, f8, seed + ++k)};
        from8.run_at = [](const Tensors& in, const Where& w) -> Tensors { return {in[0].to(w.dtype)}; };
        v.push_back(std::move(from8));
      }
    }
    return v;
  };
  return o;
}

}  // namespace

TSR_OPINFOS(quant) {
  v.push_back(float8_cast_info());
  v.push_back(scaled_mm_info());
  v.push_back(quantize_info(false));
  v.push_back(quantize_info(true));
  v.push_back(dequantize_info(false));
  v.push_back(dequantize_info(true));
  v.push_back(swizzle_info(false));
  v.push_back(swizzle_info(true));
}

}  // namespace tsr::conformance
