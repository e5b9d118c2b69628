// Neural-network layers: convolutions, pooling, normalizations (with LRN), softmax and Hardmax,
// dropout at inference.
#include <cmath>

#include "converter.hpp"
#include "shape_rules.hpp"

namespace tsr::onnx::detail {

namespace {

// Spatial padding of Conv/pooling: ONNX pads are [begin..., end...] per spatial dim, or
// auto_pad. Tessera pads symmetrically; asymmetric pads are applied by constant_pad_nd first.
struct Padding {
  std::vector<int64_t> sym;    // per spatial dim, for the op
  std::vector<int64_t> extra;  // constant_pad_nd's pad list (last dim first), empty when none
};

Padding read_pads(NodeCtx& c, int spatial, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& dilations) {
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
  if (pads.size() != static_cast<size_t>(2 * spatial)) c.fail("pads has " + std::to_string(pads.size()) + " entries");
  if (auto_pad == "VALID") {
    pads.assign(pads.size(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output size ceil(in / stride): the total padding is split, the extra one at the end
    // (UPPER) or the beginning (LOWER).
    const std::vector<int64_t> dims = c.static_dims(0, "auto_pad " + auto_pad);
    for (int k = 0; k < spatial; ++k) {
      const int64_t in = dims[static_cast<size_t>(k + 2)], s = strides[static_cast<size_t>(k)];
      const int64_t eff = (kernel[static_cast<size_t>(k)] - 1) * dilations[static_cast<size_t>(k)] + 1;
      const int64_t total = std::max<int64_t>(((in + s - 1) / s - 1) * s + eff - in, 0);
      const int64_t small = total / 2, big = total - small;
      pads[static_cast<size_t>(k)] = auto_pad == "SAME_UPPER" ? small : big;
      pads[static_cast<size_t>(k + spatial)] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad " + auto_pad + " is not an ONNX value");
  }
  Padding p;
  bool symmetric = true;
  for (int k = 0; k < spatial; ++k) symmetric = symmetric && pads[static_cast<size_t>(k)] == pads[static_cast<size_t>(k + spatial)];
  if (symmetric) {
    p.sym.assign(pads.begin(), pads.begin() + spatial);
    return p;
  }
  p.sym.assign(static_cast<size_t>(spatial), 0);
  for (int k = spatial - 1; k >= 0; --k) {
    p.extra.push_back(pads[static_cast<size_t>(k)]);
    p.extra.push_back(pads[static_cast<size_t>(k + spatial)]);
  }
  return p;
}

std::string padded(NodeCtx& c, const std::string& x, const Padding& p, const std::string& value) {
  if (p.extra.empty()) return x;
  return c.emit("constant_pad_nd", {x, lit(p.extra), value});
}

void conv(NodeCtx& c) {
  const int r = c.rank(0);
  if (r != 3 && r != 4) c.unsupported("only 1-D and 2-D convolutions are supported (input rank " + std::to_string(r) + ")");
  const int spatial = r - 2;
  const std::vector<int64_t> w = c.static_dims(1, "Conv's weight");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape", {}) != kernel)
    c.fail("kernel_shape does not match the weight's dims");
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  const std::vector<int64_t> strides = c.attr_ints("strides", ones), dilations = c.attr_ints("dilations", ones);
  const int64_t group = c.attr_int("group", 1);
  const Padding p = read_pads(c, spatial, kernel, strides, dilations);
  const std::string x = padded(c, c.tensor(0), p, "0");
  c.emit(spatial == 2 ? "conv2d" : "conv1d",
         {x, c.tensor(1), c.has_input(2) ? c.tensor(2) : "None", lit(strides), lit(p.sym), lit(dilations), lit(group)}, 0);
}

void conv_transpose(NodeCtx& c) {
  const int r = c.rank(0);
  if (r != 3 && r != 4) c.unsupported("only 1-D and 2-D transposed convolutions are supported");
  const int spatial = r - 2;
  const std::vector<int64_t> w = c.static_dims(1, "ConvTranspose's weight");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape", {}) != kernel)
    c.fail("kernel_shape does not match the weight's dims");
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1), zeros(static_cast<size_t>(spatial), 0);
  std::vector<int64_t> strides = c.attr_ints("strides", ones), dilations = c.attr_ints("dilations", ones);
  std::vector<int64_t> out_pad = c.attr_ints("output_padding", zeros);
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = c.attr_ints("output_shape", {});
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The output is input * stride; the padding follows as for output_shape.
    const std::vector<int64_t> in = c.static_dims(0, "auto_pad " + auto_pad);
    out_shape.clear();
    for (int k = 0; k < spatial; ++k) out_shape.push_back(in[static_cast<size_t>(k + 2)] * strides[static_cast<size_t>(k)]);
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    c.fail("auto_pad " + auto_pad + " is not an ONNX value");
  }
  if (!out_shape.empty()) {
    // ONNX: total padding = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - output,
    // split evenly (the odd one at the end, or at the start for SAME_LOWER). Tessera pads
    // symmetrically: an odd total is not supported; a negative one is more output padding.
    const std::vector<int64_t> in = c.static_dims(0, "output_shape");
    if (static_cast<int>(out_shape.size()) == r) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (static_cast<int>(out_shape.size()) != spatial) c.fail("output_shape has the wrong length");
    for (int k = 0; k < spatial; ++k) {
      const size_t i = static_cast<size_t>(k);
      const int64_t total = strides[i] * (in[i + 2] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - out_shape[i];
      if (total < 0) {
        out_pad[i] -= total;
        pads[i] = pads[i + static_cast<size_t>(spatial)] = 0;
      } else if (total % 2) {
        c.unsupported("an output_shape that needs asymmetric padding is not supported");
      } else {
        pads[i] = pads[i + static_cast<size_t>(spatial)] = total / 2;
      }
    }
  }
  for (int k = 0; k < spatial; ++k)
    if (pads[static_cast<size_t>(k)] != pads[static_cast<size_t>(k + spatial)])
      c.unsupported("asymmetric pads are not supported");
  std::vector<int64_t> sym(pads.begin(), pads.begin() + spatial);
  std::string x = c.tensor(0), weight = c.tensor(1);
  // 1-D as 2-D over [N, C, 1, L] with a [C, O, 1, K] weight.
  if (spatial == 1) {
    x = c.emit("unsqueeze", {x, "2"});
    weight = c.emit("unsqueeze", {weight, "2"});
    for (auto* v : {&strides, &dilations}) v->insert(v->begin(), 1);
    out_pad.insert(out_pad.begin(), 0);
    sym.insert(sym.begin(), 0);
  }
  const std::string y = c.emit("conv_transpose2d", {x, weight, c.has_input(2) ? c.tensor(2) : "None", lit(strides),
                                                    lit(sym), lit(out_pad), lit(c.attr_int("group", 1)), lit(dilations)},
                               spatial == 1 ? -1 : 0);
  if (spatial == 1) c.emit("squeeze", {y, "2"}, 0);
}

void pool(NodeCtx& c) {
  const bool is_max = c.op_type() == "MaxPool";
  const int r = c.rank(0);
  if (r != 3 && r != 4) c.unsupported("only 1-D and 2-D pooling are supported (input rank " + std::to_string(r) + ")");
  const int spatial = r - 2;
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape", {});
  if (static_cast<int>(kernel.size()) != spatial) c.fail("kernel_shape must have " + std::to_string(spatial) + " entries");
  // ONNX's strides default to 1, Tessera's (torch's) to the kernel: always written.
  std::vector<int64_t> strides = c.attr_ints("strides", ones), dilations = c.attr_ints("dilations", ones);
  const bool ceil = c.attr_int("ceil_mode", 0) != 0;
  Padding p = read_pads(c, spatial, kernel, strides, dilations);
  if (!is_float_dtype(c.dtype(0))) c.unsupported("Tessera pools floating-point tensors only");
  // 1-D pooling is 2-D pooling of [N, C, 1, L] (the explicit pads already name the last dim).
  std::string x = c.tensor(0);
  std::vector<int64_t> dims;
  if (spatial == 1) {
    kernel.insert(kernel.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    p.sym.insert(p.sym.begin(), 0);
    x = c.emit("unsqueeze", {x, "2"});
  }
  const int out = spatial == 1 ? -1 : 0;
  // Tessera (like torch) allows at most half the kernel as padding: more is padded explicitly.
  if (p.extra.empty() && (p.sym[0] > kernel[0] / 2 || p.sym[1] > kernel[1] / 2)) {
    p.extra = {p.sym[1], p.sym[1], p.sym[0], p.sym[0]};
    p.sym = {0, 0};
  }
  std::string y;
  if (is_max && c.output_used(1)) {
    // Indices: Tessera's count within each (n, c) plane of the input, ONNX's across the whole
    // row-major tensor: add (n * C + c) * H * W (static dims, 2-D, no explicit padding).
    if (spatial != 2 || !p.extra.empty()) c.unsupported("Indices of 1-D or explicitly padded max pooling are not supported");
    if (c.attr_int("storage_order", 0)) c.unsupported("storage_order=1 (column-major Indices) is not supported");
    const std::vector<int64_t> d = c.static_dims(0, "MaxPool's Indices");
    const std::vector<std::string> yi = c.emit_multi(
        "max_pool2d_with_indices", {x, lit(kernel), lit(strides), lit(p.sym), lit(dilations), lit_bool(ceil)}, {0, -1});
    const std::string base = c.emit("reshape", {c.emit("arange", {"0", lit(d[0] * d[1] * d[2] * d[3]), lit(d[2] * d[3]), "int64"}),
                                                lit(std::vector<int64_t>{d[0], d[1], 1, 1})});
    c.emit("add", {yi[1], base}, 1);
    return;
  }
  if (is_max) {
    c.ignore_attr("storage_order");  // only matters for the Indices output
    y = c.emit("max_pool2d", {padded(c, x, p, "-inf"), lit(kernel), lit(strides), lit(p.sym), lit(dilations), lit_bool(ceil)},
               out);
  } else {
    if (dilations != std::vector<int64_t>{1, 1}) c.unsupported("dilated average pooling is not supported");
    const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
    if (!p.extra.empty() && !include_pad) {
      // Explicit padding counts the pads: divide by the pool of a padded tensor of ones instead,
      // which counts each window's real elements (static dims).
      dims = c.static_dims(0, "average pooling with asymmetric pads");
      if (spatial == 1) dims.insert(dims.begin() + 2, 1);
      const std::string ones_t = padded(c, c.emit("full", {lit(dims), "1", dtype_lit(c.dtype(0))}), p, "0");
      const std::vector<std::string> args{lit(kernel), lit(strides), lit(p.sym), lit_bool(ceil), "true"};
      std::vector<std::string> sum_args{padded(c, x, p, "0")}, count_args{ones_t};
      sum_args.insert(sum_args.end(), args.begin(), args.end());
      count_args.insert(count_args.end(), args.begin(), args.end());
      y = c.emit("div", {c.emit("avg_pool2d", sum_args), c.emit("avg_pool2d", count_args)}, out);
    } else {
      y = c.emit("avg_pool2d", {padded(c, x, p, "0"), lit(kernel), lit(strides), lit(p.sym), lit_bool(ceil),
                                lit_bool(include_pad)},
                 out);
    }
  }
  if (spatial == 1) c.emit("squeeze", {y, "2"}, 0);
}

void global_pool(NodeCtx& c) {
  const int r = c.rank(0);
  std::vector<int64_t> dims;
  for (int k = 2; k < r; ++k) dims.push_back(k);
  c.emit(c.op_type() == "GlobalAveragePool" ? "mean" : "amax", {c.tensor(0), lit(dims), "true"}, 0);
}

void batch_norm(NodeCtx& c) {
  if (c.attr_int("training_mode", 0)) c.unsupported("training_mode=1 is not supported (inference only)");
  if (c.opset() < 9 && c.attr_int("spatial", 1) != 1) c.unsupported("spatial=0 is not supported");
  c.ignore_attr("momentum");  // only updates running statistics in training
  const float eps = c.attr_float("epsilon", 1e-5f);
  c.emit("batch_norm", {c.tensor(0), c.tensor(1), c.tensor(2), c.tensor(3), c.tensor(4), "false", "0.1", lit_float(eps)},
         0);
}

void instance_norm(NodeCtx& c) {
  // Instance norm is group norm with one channel per group.
  const std::vector<int64_t> s = c.static_dims(1, "InstanceNormalization's scale");
  if (s.size() != 1) c.fail("scale must be 1-D");
  c.emit("group_norm", {c.tensor(0), lit(s[0]), c.tensor(1), c.tensor(2), lit_float(c.attr_float("epsilon", 1e-5f))}, 0);
}

void layer_norm(NodeCtx& c) {
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), r);
  c.ignore_attr("stash_type");  // the statistics' precision: Tessera computes them in float32 or wider anyway
  // The normalized shape: the input's trailing dims, else the scale's dims.
  std::vector<int64_t> shape;
  const Value& x = c.in(0);
  for (int k = static_cast<int>(axis); k < r; ++k) {
    const Dim& d = x.shape.dims[static_cast<size_t>(k)];
    if (!d.is_static()) {
      shape.clear();
      break;
    }
    shape.push_back(d.size);
  }
  if (shape.empty() && axis < r) {
    shape = c.static_dims(1, "LayerNormalization's normalized shape");
    if (static_cast<int64_t>(shape.size()) != r - axis) c.unsupported("a scale that broadcasts is not supported");
  }
  const float eps = c.attr_float("epsilon", 1e-5f);
  c.emit("layer_norm", {c.tensor(0), lit(shape), c.tensor(1), c.has_input(2) ? c.tensor(2) : "None", lit_float(eps)}, 0);
  if (!c.output_used(1) && !c.output_used(2)) return;
  // Mean and InvStdDev (training outputs), over the normalized dims with them kept as 1s:
  // mean(x) and 1 / sqrt(mean((x - mean)^2) + eps).
  std::vector<int64_t> dims;
  for (int64_t k = axis; k < r; ++k) dims.push_back(k);
  const std::string xt = c.tensor(0);
  const std::string mean = c.emit("mean", {xt, lit(dims), "true"}, c.output_used(1) ? 1 : -1);
  if (!c.output_used(2)) return;
  const std::string d = c.emit("sub", {xt, mean});
  const std::string var = c.emit("mean", {c.emit("mul", {d, d}), lit(dims), "true"});
  c.emit("rsqrt", {c.emit("add", {var, c.scalar(c.dtype(0), eps)})}, 2);
}

void softmax(NodeCtx& c) {
  const std::string op = c.op_type() == "Softmax" ? "softmax" : "log_softmax";
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", c.opset() < 13 ? 1 : -1), r);
  // Before opset 13 the input is seen as 2-D [prod(dims < axis), prod(dims >= axis)].
  if (c.opset() >= 13 || axis == r - 1) {
    c.emit(op, {c.tensor(0), lit(axis)}, 0);
    return;
  }
  const Value& x = c.in(0);
  std::vector<int64_t> back;
  int unknown = 0;
  for (const Dim& d : x.shape.dims) {
    back.push_back(d.is_static() ? d.size : -1);
    unknown += !d.is_static();
  }
  if (unknown > 1) c.unsupported("softmax over several dims needs at most one dim known only at run time");
  const std::string flat = c.emit("flatten", {c.tensor(0), lit(axis), "-1"});
  const std::string y = c.emit(op, {flat, lit(axis)});
  c.emit("reshape", {y, lit(back)}, 0);
}

void dropout(NodeCtx& c) {
  // Inference: the identity. A training_mode known to be true is refused.
  c.ignore_attr("seed");
  if (c.opset() < 12) c.ignore_attr("ratio");
  if (c.opset() < 7) c.ignore_attr("is_test");
  if (c.has_input(2)) {
    if (!c.is_constant(2)) c.unsupported("training_mode computed at run time is not supported");
    if (c.constant(2, "training_mode").elems.at(0).i) c.unsupported("training_mode=true is not supported (inference only)");
  }
  c.forward(0, 0);
  if (c.output_used(1)) {
    // The mask keeps every element at inference: all true, of the input's shape.
    const std::string nan = c.emit("isnan", {c.tensor(0)});
    c.emit("logical_or", {nan, c.emit("logical_not", {nan})}, 1);
  }
}

void hardmax(NodeCtx& c) {
  // one_hot(argmax) in the input's dtype, moved back to `axis` (first index wins ties, as ONNX).
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", c.opset() < 13 ? 1 : -1), r);
  if (c.opset() < 13 && axis != r - 1) c.unsupported("Hardmax before opset 13 over several dims is not supported");
  const Dim n = c.in(0).shape.dims[static_cast<size_t>(axis)];
  if (!n.is_static()) c.unsupported("Hardmax over a dim known only at run time is not supported");
  const std::string i = c.emit("argmax", {c.tensor(0), lit(axis), "false"});
  const std::string oh = c.emit("to", {c.emit("one_hot", {i, lit(n.size)}), dtype_lit(c.dtype(0))}, axis == r - 1 ? 0 : -1);
  if (axis != r - 1) c.emit_axis_from_last(oh, axis, r);
}

// Local response normalization across channels, on static dims: the sum of squares over a window
// of `size` channels is an average pool over [N, 1, C, H*W] padded along C.
void lrn(NodeCtx& c) {
  const std::vector<int64_t> d = c.static_dims(0, "LRN");
  if (d.size() < 3) c.fail("the input must have a channel dim and spatial dims");
  const int64_t size = c.attr_int("size", 0);
  if (size <= 0) c.fail("size must be positive");
  const float alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0f);
  int64_t hw = 1;
  for (size_t k = 2; k < d.size(); ++k) hw *= d[k];
  const std::string x = c.tensor(0);
  const std::string sq = c.emit("reshape", {c.emit("mul", {x, x}), lit(std::vector<int64_t>{d[0], 1, d[1], hw})});
  // ONNX's window: channels c - floor((size-1)/2) .. c + ceil((size-1)/2).
  const std::vector<int64_t> pad{0, 0, (size - 1) / 2, size - 1 - (size - 1) / 2};
  const std::string avg = c.emit("avg_pool2d", {c.emit("constant_pad_nd", {sq, lit(pad), "0"}),
                                                lit(std::vector<int64_t>{size, 1}), "[1, 1]", "[0, 0]", "false", "true"});
  const std::string scaled = c.emit("add", {c.emit("mul", {avg, c.scalar(c.dtype(0), alpha)}), c.scalar(c.dtype(0), bias)});
  const std::string den = c.emit("pow", {c.emit("reshape", {scaled, lit(d)}), c.scalar(c.dtype(0), beta)});
  c.emit("div", {x, den}, 0);
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["LRN"] = lrn;
  t["Hardmax"] = hardmax;
  t["Conv"] = conv;
  t["ConvTranspose"] = conv_transpose;
  t["MaxPool"] = pool;
  t["AveragePool"] = pool;
  t["GlobalAveragePool"] = global_pool;
  t["GlobalMaxPool"] = global_pool;
  t["BatchNormalization"] = batch_norm;
  t["InstanceNormalization"] = instance_norm;
  t["LayerNormalization"] = layer_norm;
  t["Softmax"] = softmax;
  t["LogSoftmax"] = softmax;
  t["Dropout"] = dropout;
}

}  // namespace tsr::onnx::detail
