// Shape and data-movement ops: Reshape, Flatten, Transpose, Gather, (Un)squeeze, Concat, Slice,
// Expand, Split, Pad, Tile, Cast, Constant, Identity, and the shape computations that only fold
// (fold.cpp does them; a node of these left here is computed at run time, which the importer
// cannot map).
#include <algorithm>
#include <limits>

#include "converter.hpp"
#include "shape_rules.hpp"

namespace tsr::onnx::detail {

using ::onnx::TensorProto;

namespace {

void reshape(NodeCtx& c) {
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  const Folded& target = c.constant(1, "the target shape");
  // Static result dims (shape inference) are the simplest target; otherwise the shape input,
  // with sizes that follow the inputs' symbols and at most one left to infer.
  std::vector<int64_t> dims;
  const std::string sizes =
      all_static(c.out_info(0).shape, &dims) ? lit(dims) : lit(reshape_sizes(c, c.in(0).shape, target, allowzero));
  c.emit("reshape", {c.tensor(0), sizes}, 0);
}

void flatten(NodeCtx& c) {
  const int r = c.rank(0);
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -r || axis > r) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  std::vector<int64_t> dims;
  if (all_static(c.in(0).shape, &dims)) {
    int64_t a = 1, b = 1;
    for (int k = 0; k < r; ++k) (k < axis ? a : b) *= dims[static_cast<size_t>(k)];
    c.emit("reshape", {c.tensor(0), lit(std::vector<int64_t>{a, b})}, 0);
  } else if (axis == 0) {
    c.emit("reshape", {c.tensor(0), "[1, -1]"}, 0);
  } else if (axis == r) {
    c.emit("reshape", {c.tensor(0), "[-1, 1]"}, 0);
  } else {
    // [d0..d(axis-1), rest] then the leading dims together.
    const std::string tail = c.emit("flatten", {c.tensor(0), lit(axis), "-1"});
    c.emit("flatten", {tail, "0", lit(axis - 1)}, 0);
  }
}

void transpose(NodeCtx& c) {
  const int r = c.rank(0);
  std::vector<int64_t> perm;
  for (int k = r - 1; k >= 0; --k) perm.push_back(k);
  perm = c.attr_ints("perm", perm);
  if (static_cast<int>(perm.size()) != r) c.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(r));
  c.emit("permute", {c.tensor(0), lit(perm)}, 0);
}

std::string int64_indices(NodeCtx& c, int i) {
  const std::string idx = c.tensor(i);
  return c.dtype(i) == TensorProto::INT64 ? idx : c.emit("to", {idx, "int64"});
}

void gather(NodeCtx& c) {
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), r);
  const Dim dim = c.in(0).shape.dims[static_cast<size_t>(axis)];
  // A single index known at import time: select.
  if (c.is_constant(1) && c.in(1).shape.has_rank && c.in(1).shape.dims.empty()) {
    int64_t i = c.constant(1, "the index").ints("the index").at(0);
    if (dim.is_static()) {
      if (i < -dim.size || i >= dim.size) c.fail("index " + std::to_string(i) + " is out of range");
      if (i < 0) i += dim.size;
    }
    c.emit("select", {c.tensor(0), lit(axis), lit(i)}, 0);
    return;
  }
  const int k = c.rank(1);
  // Tessera's index (torch's x[idx]) gathers along dim 0: move `axis` there, gather, and move
  // the index dims back to where `axis` was.
  if (axis == 0) {
    c.emit("index", {c.tensor(0), "[" + int64_indices(c, 1) + "]"}, 0);
    return;
  }
  std::vector<int64_t> front{axis};
  for (int d = 0; d < r; ++d)
    if (d != axis) front.push_back(d);
  const std::string moved = c.emit("permute", {c.tensor(0), lit(front)});
  const std::string g = c.emit("index", {moved, "[" + int64_indices(c, 1) + "]"});
  std::vector<int64_t> back;
  for (int d = 0; d < axis; ++d) back.push_back(k + d);
  for (int d = 0; d < k; ++d) back.push_back(d);
  for (int d = k + static_cast<int>(axis); d < k + r - 1; ++d) back.push_back(d);
  c.emit("permute", {g, lit(back)}, 0);
}

void gather_elements(NodeCtx& c) {
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.rank(0));
  c.emit("gather", {c.tensor(0), lit(axis), int64_indices(c, 1)}, 0);
}

void unsqueeze(NodeCtx& c) {
  std::optional<std::vector<int64_t>> axes = read_axes(c, 1, 13);
  if (!axes) c.fail("Unsqueeze has no axes");
  const int64_t out_rank = c.rank(0) + static_cast<int64_t>(axes->size());
  for (int64_t& a : *axes) a = normalize_axis(c, a, out_rank);
  std::sort(axes->begin(), axes->end());
  // Inserting in increasing order keeps each axis' meaning in the final result.
  std::string x = c.tensor(0);
  for (size_t k = 0; k < axes->size(); ++k)
    x = c.emit("unsqueeze", {x, lit((*axes)[k])}, k + 1 == axes->size() ? 0 : -1);
}

void squeeze(NodeCtx& c) {
  std::optional<std::vector<int64_t>> axes = read_axes(c, 1, 13);
  if (!axes) {
    c.emit("squeeze", {c.tensor(0)}, 0);
    return;
  }
  const int r = c.rank(0);
  for (int64_t& a : *axes) a = normalize_axis(c, a, r);
  std::sort(axes->rbegin(), axes->rend());  // from the last, so earlier axes keep their index
  std::string x = c.tensor(0);
  if (axes->empty()) {
    c.alias(0, x);
    return;
  }
  for (size_t k = 0; k < axes->size(); ++k)
    x = c.emit("squeeze", {x, lit((*axes)[k])}, k + 1 == axes->size() ? 0 : -1);
}

void concat(NodeCtx& c) {
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.rank(0));
  std::string list = "[";
  for (int i = 0; i < c.num_inputs(); ++i) list += (i ? ", " : "") + c.tensor(i);
  c.emit("cat", {list + "]", lit(axis)}, 0);
}

void slice(NodeCtx& c) {
  const int r = c.rank(0);
  const SliceSpec s = read_slice(c, r);
  std::string x = c.tensor(0);
  for (size_t k = 0; k < s.axes.size(); ++k) {
    const int64_t a = s.axes[k], step = s.steps[k];
    const Dim d = c.in(0).shape.dims[static_cast<size_t>(a)];
    const int out = k + 1 == s.axes.size() ? 0 : -1;
    if (s.starts[k].kind == Elem::Sym || s.ends[k].kind == Elem::Sym) {
      // Bounds that follow the inputs' sizes (x[:t]) are written as such; the runtime clamps.
      if (step < 0) c.unsupported("a negative step with bounds known only at run time is not supported");
      x = c.emit("slice", {x, lit(a), s.starts[k].text(), s.ends[k].text(), lit(step)}, out);
      continue;
    }
    int64_t b = s.starts[k].i, e = s.ends[k].i;
    if (d.is_static()) {
      clamp_slice(d.size, step, &b, &e);
    } else if (step > 0) {
      // The runtime clamps like ONNX for positive steps; keep the values in its range.
      const int64_t big = std::numeric_limits<int64_t>::max() / 2;
      b = std::clamp(b, -big, big);
      e = std::clamp(e, -big, big);
    } else {
      c.unsupported("a negative step over a dim known only at run time is not supported");
    }
    if (step > 0) {
      x = c.emit("slice", {x, lit(a), lit(b), lit(e), lit(step)}, out);
      continue;
    }
    // Negative step: flip, then slice forward. Index i of x is n-1-i of the flipped tensor.
    const int64_t n = slice_count(b, e, step), first = d.size - 1 - b;
    const std::string f = c.emit("flip", {x, lit(std::vector<int64_t>{a})});
    x = c.emit("slice", {f, lit(a), lit(n ? first : 0), lit(n ? first + (n - 1) * -step + 1 : 0), lit(-step)}, out);
  }
  if (s.axes.empty()) c.alias(0, x);
}

void expand(NodeCtx& c) {
  const Folded& target = c.constant(1, "the target shape");
  std::vector<int64_t> dims;
  const std::string sizes = all_static(c.out_info(0).shape, &dims) ? lit(dims) : lit(expand_sizes(c, c.in(0).shape, target));
  c.emit("expand", {c.tensor(0), sizes}, 0);
}

void tile(NodeCtx& c) { c.emit("tile", {c.tensor(0), lit(c.constant(1, "repeats").ints("repeats"))}, 0); }

void split(NodeCtx& c) {
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), r);
  std::vector<int64_t> sizes;
  if (c.opset() < 13) sizes = c.attr_ints("split", {});
  else if (c.has_input(1)) sizes = c.constant(1, "split").ints("split");
  const int n = c.num_outputs();
  if (sizes.empty()) {
    // Equal parts of a static dim.
    const Dim d = c.in(0).shape.dims[static_cast<size_t>(axis)];
    if (!d.is_static()) c.unsupported("an equal split of a dim known only at run time is not supported");
    if (d.size % n) c.fail("dim of size " + std::to_string(d.size) + " does not split in " + std::to_string(n) + " equal parts");
    sizes.assign(static_cast<size_t>(n), d.size / n);
  }
  if (static_cast<int>(sizes.size()) != n) c.fail("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
  const std::string x = c.tensor(0);
  int64_t start = 0;
  for (int k = 0; k < n; ++k) {
    if (!c.node().output(k).empty()) c.emit("narrow", {x, lit(axis), lit(start), lit(sizes[static_cast<size_t>(k)])}, k);
    start += sizes[static_cast<size_t>(k)];
  }
}

void pad(NodeCtx& c) {
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") c.unsupported("mode '" + mode + "' is not supported");
  const int r = c.rank(0);
  std::vector<int64_t> pads;
  std::string value = "0";
  if (c.opset() < 11) {
    pads = c.attr_ints("pads", {});
    value = lit_float(c.attr_float("value", 0));
  } else {
    pads = c.constant(1, "pads").ints("pads");
    if (c.has_input(2)) {
      const Elem e = c.constant(2, "constant_value").elems.at(0);
      value = e.kind == Elem::Float ? lit_float(static_cast<float>(e.f)) : lit(e.i);
    }
  }
  if (static_cast<int>(pads.size()) != 2 * r) c.fail("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(r));
  // ONNX: [begin per dim..., end per dim...]; constant_pad_nd: (begin, end) pairs from the last dim.
  std::vector<int64_t> tp;
  for (int k = r - 1; k >= 0; --k) {
    tp.push_back(pads[static_cast<size_t>(k)]);
    tp.push_back(pads[static_cast<size_t>(k + r)]);
  }
  if (mode == "constant") {
    c.emit("constant_pad_nd", {c.tensor(0), lit(tp), value}, 0);
    return;
  }
  // reflect / edge (replicate) pad the trailing dims only: drop the unpadded leading ones.
  while (tp.size() > 2 && tp[tp.size() - 1] == 0 && tp[tp.size() - 2] == 0) tp.resize(tp.size() - 2);
  c.emit("pad", {c.tensor(0), lit(tp), mode == "edge" ? "\"replicate\"" : "\"reflect\""}, 0);
}

void cast(NodeCtx& c) {
  const int32_t to = c.op_type() == "CastLike" ? c.dtype(1) : static_cast<int32_t>(c.attr_int("to", 0));
  if (to == c.dtype(0)) {
    c.forward(0, 0);
    return;
  }
  c.emit("to", {c.tensor(0), dtype_lit(to)}, 0);
}

void constant(NodeCtx& c) {
  Folded f;
  if (c.has_attr("value")) {
    c.define_data(0, c.attr_tensor("value"));
    return;
  }
  if (c.has_attr("value_float")) {
    f.dtype = TensorProto::FLOAT;
    f.elems = {Elem::of_float(c.attr_float("value_float", 0))};
  } else if (c.has_attr("value_int")) {
    f.dtype = TensorProto::INT64;
    f.elems = {Elem::of_int(c.attr_int("value_int", 0))};
  } else if (c.has_attr("value_floats")) {
    f.dtype = TensorProto::FLOAT;
    for (float v : c.attr_floats("value_floats")) f.elems.push_back(Elem::of_float(v));
    f.dims = {static_cast<int64_t>(f.elems.size())};
  } else if (c.has_attr("value_ints")) {
    f.dtype = TensorProto::INT64;
    for (int64_t v : c.attr_ints("value_ints", {})) f.elems.push_back(Elem::of_int(v));
    f.dims = {static_cast<int64_t>(f.elems.size())};
  } else {
    return;  // sparse_value, value_string(s): left unread, so reported as unsupported attributes
  }
  c.define_folded(0, std::move(f));
}

void constant_of_shape(NodeCtx& c) {
  // Reached when the result is too large to fold, or its sizes follow the inputs: full().
  const Folded& shape = c.constant(0, "the shape");
  for (const Elem& e : shape.elems)
    if (!e.integral()) c.unsupported("the shape is computed at run time");
  int32_t dtype = TensorProto::FLOAT;
  std::string value = "0.0";
  if (c.has_attr("value")) {
    const TensorProto& t = c.attr_tensor("value");
    dtype = t.data_type();
    const Elem e = fold_tensor(t, ".").elems.at(0);
    value = is_float_dtype(dtype) ? lit_float(static_cast<float>(e.f)) : lit(e.i);
  }
  c.emit("full", {lit(shape.elems), value, dtype_lit(dtype)}, 0);
}

void range(NodeCtx& c) {
  // Reached when a bound follows the inputs' sizes (arange(t)): integer ranges only.
  std::vector<std::string> args;
  for (int i = 0; i < 3; ++i) {
    if (!c.is_constant(i) || c.constant(i, "a bound").elems.size() != 1 || !c.constant(i, "a bound").elems[0].integral())
      c.unsupported("its inputs are computed at run time; the importer maps Range when they are integers known at "
                    "import time or sizes that follow the inputs");
    args.push_back(c.constant(i, "a bound").elems[0].text());
  }
  args.push_back(dtype_lit(c.dtype(0)));
  c.emit("arange", args, 0);
}

void identity(NodeCtx& c) { c.forward(0, 0); }

void one_hot(NodeCtx& c) {
  // values[0] where the index is not hot, values[1] where it is; negative indices count from
  // the end of depth.
  const Elem depth_e = c.constant(1, "depth").elems.at(0);
  const int64_t depth = depth_e.kind == Elem::Float ? static_cast<int64_t>(depth_e.f) : depth_e.i;
  std::string idx = c.tensor(0);
  if (c.dtype(0) != TensorProto::INT64) idx = c.emit("to", {idx, "int64"});
  const std::string neg = c.emit("lt", {idx, c.scalar(TensorProto::INT64, 0)});
  idx = c.emit("where", {neg, c.emit("add", {idx, c.scalar(TensorProto::INT64, static_cast<double>(depth))}), idx});
  const std::string hot = c.emit("to", {c.emit("one_hot", {idx, lit(depth)}), dtype_lit(c.dtype(2))});
  const std::string v = c.tensor(2);
  const std::string off = c.emit("select", {v, "0", "0"}), on = c.emit("select", {v, "0", "1"});
  const int r = c.rank(0) + 1;
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), r);
  const std::string y = c.emit("add", {c.emit("mul", {hot, c.emit("sub", {on, off})}), off}, axis == r - 1 ? 0 : -1);
  if (axis != r - 1) c.emit_axis_from_last(y, axis, r);
}

void eye_like(NodeCtx& c) {
  // Known at import time from the input's static dims.
  const std::vector<int64_t> d = c.static_dims(0, "EyeLike");
  if (d.size() != 2) c.fail("the input must be 2-D");
  const int64_t k = c.attr_int("k", 0);
  Folded f;
  f.dtype = static_cast<int32_t>(c.attr_int("dtype", c.dtype(0)));
  f.dims = d;
  const bool is_float = is_float_dtype(f.dtype);
  for (int64_t i = 0; i < d[0]; ++i)
    for (int64_t j = 0; j < d[1]; ++j) f.elems.push_back(is_float ? Elem::of_float(j - i == k) : Elem::of_int(j - i == k));
  c.define_folded(0, std::move(f));
}

void compress(NodeCtx& c) {
  // The slices where the condition holds: index_select with the condition's nonzero positions.
  std::string x = c.tensor(0);
  int64_t axis = 0;
  if (c.has_attr("axis")) axis = normalize_axis(c, c.attr_int("axis", 0), c.rank(0));
  else x = c.emit("reshape", {x, "[-1]"});
  const std::string idx = c.emit("reshape", {c.emit("nonzero", {c.tensor(1)}), "[-1]"});
  c.emit("index_select", {x, lit(axis), idx}, 0);
}

// Shape and Size always fold (fold.cpp).
void folds_only(NodeCtx& c) {
  c.unsupported("its inputs are computed at run time; the importer maps " + c.op_type() +
                " only when it can compute it at import time");
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Transpose"] = transpose;
  t["Gather"] = gather;
  t["GatherElements"] = gather_elements;
  t["Unsqueeze"] = unsqueeze;
  t["Squeeze"] = squeeze;
  t["Concat"] = concat;
  t["Slice"] = slice;
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["Split"] = split;
  t["Pad"] = pad;
  t["Cast"] = cast;
  t["CastLike"] = cast;
  t["Constant"] = constant;
  t["ConstantOfShape"] = constant_of_shape;
  t["Identity"] = identity;
  t["OneHot"] = one_hot;
  t["EyeLike"] = eye_like;
  t["Compress"] = compress;
  t["Range"] = range;
  for (const char* op : {"Shape", "Size"}) t[op] = folds_only;
}

}  // namespace tsr::onnx::detail
