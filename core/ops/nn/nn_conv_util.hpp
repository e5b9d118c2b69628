// Patch geometry shared by convolution and pooling (ops/nn/nn_conv.cpp, ops/nn/nn_pool.cpp):
// kernel, stride, padding, dilation per spatial dim, and the SDK calls of the im2col/col2im
// kernels.
#pragma once

#include "ops/nn/nn_util.hpp"

namespace tsr::core::nn {

struct Geo {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  std::vector<int64_t> kernel() const { return {kh, kw}; }
  std::vector<int64_t> stride() const { return {sh, sw}; }
  std::vector<int64_t> padding() const { return {ph, pw}; }
  std::vector<int64_t> dilation() const { return {dh, dw}; }
};

inline Geo make_geo(const char* op, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                    std::vector<int64_t> d) {
  k = expand_param(op, "kernel_size", k, 2);
  s = expand_param(op, "stride", s, 2);
  p = expand_param(op, "padding", p, 2);
  d = expand_param(op, "dilation", d, 2);
  for (int i = 0; i < 2; ++i) {
    if (k[i] <= 0) fail(op, "kernel size must be positive, got " + shp(k));
    if (s[i] <= 0) fail(op, "stride must be positive, got " + shp(s));
    if (p[i] < 0) fail(op, "padding must be non-negative, got " + shp(p));
    if (d[i] <= 0) fail(op, "dilation must be positive, got " + shp(d));
  }
  return Geo{k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]};
}

// [N, C, H, W] -> [N, C*kh*kw, OH*OW]; out-of-bounds taps read pad.
inline tsr::Tensor im2col(const tsr::Tensor& x, const Geo& g, int64_t oh, int64_t ow, double pad = 0.0) {
  static const tsr::Op op("_nn_im2col");
  return tsr::call(op, {x, g.kernel(), g.dilation(), g.padding(), g.stride(), std::vector<int64_t>{oh, ow}, pad});
}

// [N, C*kh*kw, OH*OW] -> [N, C, H, W], summing overlapping taps.
inline tsr::Tensor col2im(const tsr::Tensor& cols, int64_t h, int64_t w, const Geo& g, int64_t oh, int64_t ow) {
  static const tsr::Op op("_nn_col2im");
  return tsr::call(op, {cols, std::vector<int64_t>{h, w}, g.kernel(), g.dilation(), g.padding(), g.stride(),
                        std::vector<int64_t>{oh, ow}});
}

}  // namespace tsr::core::nn
