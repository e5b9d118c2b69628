// Image resampling and rearrangement: Resize/Upsample, DepthToSpace/SpaceToDepth.
#include <cmath>

#include "converter.hpp"

namespace tsr::onnx::detail {

namespace {

// Resize (and the older Upsample) of 4-D NCHW inputs, where ONNX's sampling is torch's:
// nearest with asymmetric coordinates and floor (PyTorch's export of nearest), and linear with
// half_pixel, pytorch_half_pixel or align_corners coordinates (bilinear).
void resize(NodeCtx& c) {
  if (c.rank(0) != 4) c.unsupported("only 4-D (NCHW) inputs are supported");
  const bool upsample = c.op_type() == "Upsample";
  const std::string mode = c.attr_string("mode", "nearest");
  const std::string coords = upsample ? "asymmetric" : c.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = upsample ? "floor" : c.attr_string("nearest_mode", "round_prefer_floor");
  c.ignore_attr("cubic_coeff_a");  // cubic only
  c.ignore_attr("extrapolation_value");  // tf_crop_and_resize only
  if (c.attr_int("exclude_outside", 0)) c.unsupported("exclude_outside=1 is not supported");
  // Scales (per dim) or sizes, known at import time.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (upsample && c.opset() < 9) {
    for (float f : c.attr_floats("scales")) scales.push_back(f);
  } else {
    const int scales_input = upsample || c.opset() < 11 ? 1 : 2;
    if (c.has_input(scales_input) && c.constant(scales_input, "scales").numel() > 0)
      for (const Elem& e : c.constant(scales_input, "scales").elems) scales.push_back(e.as_double());
    if (!upsample && c.opset() >= 11 && c.has_input(3)) sizes = c.constant(3, "sizes").ints("sizes");
  }
  if (!upsample && c.opset() >= 11 && c.has_input(1) && c.constant(1, "roi").numel() && coords != "tf_crop_and_resize")
    c.ignore_attr("roi");  // roi matters only for tf_crop_and_resize
  std::vector<int64_t> out_hw;
  std::string sh = "None", sw = "None";
  if (!sizes.empty()) {
    if (sizes.size() != 4) c.fail("sizes must have 4 entries");
    const std::vector<int64_t> in = c.static_dims(0, "Resize");
    if (sizes[0] != in[0] || sizes[1] != in[1]) c.unsupported("resizing the batch or channel dims is not supported");
    out_hw = {sizes[2], sizes[3]};
  } else {
    if (scales.size() != 4) c.fail("scales must have 4 entries");
    if (scales[0] != 1 || scales[1] != 1) c.unsupported("resizing the batch or channel dims is not supported");
    const std::vector<int64_t> in = c.static_dims(0, "Resize by scales");
    out_hw = {static_cast<int64_t>(std::floor(static_cast<double>(in[2]) * scales[2])),
              static_cast<int64_t>(std::floor(static_cast<double>(in[3]) * scales[3]))};
    // torch samples with 1/scale when given scales, as ONNX does.
    sh = lit_double(scales[2]);
    sw = lit_double(scales[3]);
  }
  if (mode == "nearest") {
    if (coords != "asymmetric" || nearest != "floor")
      c.unsupported("nearest resizing with coordinate_transformation_mode '" + coords + "' and nearest_mode '" +
                    nearest + "' is not supported (only asymmetric with floor, as PyTorch exports)");
    c.emit("upsample_nearest2d", {c.tensor(0), lit(out_hw), sh, sw}, 0);
  } else if (mode == "linear") {
    const bool align = coords == "align_corners";
    // ONNX's align_corners divides by the unrounded in * scale - 1, torch's by the output size - 1.
    if (align && !scales.empty() && (std::floor(static_cast<double>(c.static_dims(0, "Resize")[2]) * scales[2]) !=
                                         static_cast<double>(c.static_dims(0, "Resize")[2]) * scales[2] ||
                                     std::floor(static_cast<double>(c.static_dims(0, "Resize")[3]) * scales[3]) !=
                                         static_cast<double>(c.static_dims(0, "Resize")[3]) * scales[3]))
      c.unsupported("align_corners with scales that do not give whole sizes is not supported");
    if (!align && coords != "half_pixel" && coords != "pytorch_half_pixel")
      c.unsupported("linear resizing with coordinate_transformation_mode '" + coords + "' is not supported");
    if (coords == "pytorch_half_pixel" && (out_hw[0] == 1 || out_hw[1] == 1))
      c.unsupported("pytorch_half_pixel to a size of 1 is not supported");
    c.emit("upsample_bilinear2d", {c.tensor(0), lit(out_hw), lit_bool(align), align ? "None" : sh, align ? "None" : sw},
           0);
  } else {
    c.unsupported("mode '" + mode + "' is not supported");
  }
}

// DepthToSpace / SpaceToDepth on static NCHW dims: a reshape, a permute and a reshape.
void depth_space(NodeCtx& c) {
  const std::vector<int64_t> d = c.static_dims(0, c.op_type());
  if (d.size() != 4) c.fail("the input must be 4-D");
  const int64_t b = c.attr_int("blocksize", 0), n = d[0], ch = d[1], h = d[2], w = d[3];
  if (b <= 0) c.fail("blocksize must be positive");
  std::vector<int64_t> s1, perm, s2;
  if (c.op_type() == "DepthToSpace") {
    if (ch % (b * b)) c.fail("channels are not a multiple of blocksize^2");
    const std::string mode = c.attr_string("mode", "DCR");
    if (mode == "DCR") s1 = {n, b, b, ch / (b * b), h, w}, perm = {0, 3, 4, 1, 5, 2};
    else if (mode == "CRD") s1 = {n, ch / (b * b), b, b, h, w}, perm = {0, 1, 4, 2, 5, 3};
    else c.fail("mode '" + mode + "'");
    s2 = {n, ch / (b * b), h * b, w * b};
  } else {
    if (h % b || w % b) c.fail("height and width are not multiples of blocksize");
    s1 = {n, ch, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    s2 = {n, ch * b * b, h / b, w / b};
  }
  const std::string r = c.emit("reshape", {c.tensor(0), lit(s1)});
  c.emit("reshape", {c.emit("permute", {r, lit(perm)}), lit(s2)}, 0);
}

}  // namespace

void add_resize_ops(OpTable& t) {
  t["Resize"] = resize;
  t["Upsample"] = resize;
  t["DepthToSpace"] = depth_space;
  t["SpaceToDepth"] = depth_space;
}

}  // namespace tsr::onnx::detail
