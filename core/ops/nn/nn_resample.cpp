// upsample_nearest2d, upsample_bilinear2d and the interpolate composite. Both resamplings are
// separable linear maps, out = Ah @ x @ Aw^T with host-built [out, in] matrices (one-hot rows
// for nearest, two taps for bilinear), so the backward is Ah^T @ g @ Aw.
#include <cmath>

#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

enum class Mode { Nearest, Bilinear };

// PyTorch's source-index scale: 1/scale when a scale factor was given, else in/out.
double area_scale(int64_t in, int64_t out, const std::optional<double>& scale) {
  if (scale && *scale > 0) return 1.0 / *scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

Tensor resample_matrix(Mode mode, int64_t in, int64_t out, bool align, const std::optional<double>& scale,
                       const Tensor& like) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    double* row = m.data() + i * in;
    if (mode == Mode::Nearest) {
      int64_t src =
          std::min(static_cast<int64_t>(std::floor(static_cast<double>(i) * area_scale(in, out, scale))), in - 1);
      row[src] = 1.0;
      continue;
    }
    double src;
    if (align) {
      src = out > 1 ? static_cast<double>(i) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    } else {
      src = std::max(0.0, (static_cast<double>(i) + 0.5) * area_scale(in, out, scale) - 0.5);
    }
    int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    int64_t i1 = std::min(i0 + 1, in - 1);
    double l1 = src - static_cast<double>(i0);
    row[i0] += 1.0 - l1;
    row[i1] += l1;
  }
  return tsr::from_vector(m, {out, in}).to(like.device(), like.dtype());
}

struct Resample {
  Tensor ah, aw;
};

// args: self, output_size, [align_corners,] scales_h, scales_w
Resample resample_args(const char* op, Mode mode, const Tensor& x, const std::vector<int64_t>& os, bool align,
                       std::optional<double> sh, std::optional<double> sw) {
  nn::require_floating(op, "input", x);
  if (x.dim() != 4) nn::fail(op, "expected a 4-D input [N, C, H, W], got " + nn::shp(x));
  auto o = nn::expand_param(op, "output_size", os, 2);
  if (o[0] <= 0 || o[1] <= 0) nn::fail(op, "output_size must be positive, got " + nn::shp(o));
  if (x.size(2) <= 0 || x.size(3) <= 0) nn::fail(op, "input " + nn::shp(x) + " has an empty spatial dimension");
  nn::check_separable_output(op, x, o);
  return {resample_matrix(mode, x.size(2), o[0], align, sh, x), resample_matrix(mode, x.size(3), o[1], align, sw, x)};
}

template <Mode M>
Tensor resample_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  size_t s = M == Mode::Bilinear ? 3 : 2;
  Resample r = resample_args(a.op(), M, x, a.ints(1), M == Mode::Bilinear && a.bool_arg(2), a.opt_double(s),
                             a.opt_double(s + 1));
  return nn::matmul(nn::matmul(r.ah, x), r.aw.t());
}

template <Mode M>
void resample_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  size_t s = M == Mode::Bilinear ? 3 : 2;
  auto od = [&](size_t i) { return c.is_none(i) ? std::nullopt : std::optional<double>(c.double_arg(i)); };
  Resample r =
      resample_args(c.op_name(), M, c.input(0), c.ints(1), M == Mode::Bilinear && c.bool_arg(2), od(s), od(s + 1));
  c.set(0, nn::matmul(nn::matmul(r.ah.t(), c.grad(0)), r.aw));
}

Tensor interpolate_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() != 4) nn::fail(a.op(), "only 4-D inputs [N, C, H, W] are supported, got " + nn::shp(x));
  bool has_size = !a.is_none(1), has_scale = !a.is_none(2);
  if (has_size == has_scale) nn::fail(a.op(), "exactly one of size and scale_factor must be given");
  std::string mode = a.str(3);
  std::vector<int64_t> out;
  std::optional<double> scale;
  if (has_size) {
    out = nn::expand_param(a.op(), "size", a.ints(1), 2);
  } else {
    scale = a.double_arg(2);
    if (!(*scale > 0)) nn::fail(a.op(), "scale_factor must be positive, got " + std::to_string(*scale));
    out = {static_cast<int64_t>(std::floor(static_cast<double>(x.size(2)) * *scale)),
           static_cast<int64_t>(std::floor(static_cast<double>(x.size(3)) * *scale))};
  }
  if (mode == "nearest") {
    if (!a.is_none(4)) nn::fail(a.op(), "align_corners can only be set with mode 'bilinear'");
    static const tsr::Op op("upsample_nearest2d");
    return tsr::call(op, {x, out, scale, scale});
  }
  if (mode == "bilinear") {
    static const tsr::Op op("upsample_bilinear2d");
    return tsr::call(op, {x, out, a.is_none(4) ? false : a.bool_arg(4), scale, scale});
  }
  nn::fail(a.op(), "mode must be 'nearest' or 'bilinear', got '" + mode + "'");
}

}  // namespace

TSR_CORE_OPS(nn_resample) {
  v.push_back(
      nn::prim("upsample_nearest2d(Tensor self, int[2] output_size, float? scales_h=None, "
               "float? scales_w=None) -> Tensor",
               composite<resample_fwd<Mode::Nearest>>, TSR_GRAD(resample_bwd<Mode::Nearest>)));
  v.push_back(
      nn::prim("upsample_bilinear2d(Tensor self, int[2] output_size, bool align_corners, "
               "float? scales_h=None, float? scales_w=None) -> Tensor",
               composite<resample_fwd<Mode::Bilinear>>, TSR_GRAD(resample_bwd<Mode::Bilinear>)));
  v.push_back(
      composite_op("interpolate(Tensor input, int[]? size=None, float? scale_factor=None, str mode='nearest', "
                   "bool? align_corners=None) -> Tensor",
                   composite<interpolate_fn>));
}

}  // namespace tsr::core
