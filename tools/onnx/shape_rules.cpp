#include "shape_rules.hpp"

#include <algorithm>
#include <limits>

namespace tsr::onnx::detail {

int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    ctx.fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_dims(const NodeCtx& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      ctx.fail("shapes " + lit(a) + " and " + lit(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::optional<std::vector<int64_t>> read_axes(NodeCtx& ctx, int input, int input_since) {
  if (ctx.opset() < input_since) {
    if (!ctx.has_attr("axes")) return std::nullopt;
    return ctx.attr_ints("axes", {});
  }
  if (!ctx.has_input(input)) return std::nullopt;
  return ctx.constant(input, "axes").ints("axes");
}

SliceSpec read_slice(NodeCtx& ctx, int rank) {
  SliceSpec s;
  if (ctx.opset() < 10) {
    for (int64_t v : ctx.attr_ints("starts", {})) s.starts.push_back(Elem::of_int(v));
    for (int64_t v : ctx.attr_ints("ends", {})) s.ends.push_back(Elem::of_int(v));
    s.axes = ctx.attr_ints("axes", {});
  } else {
    // Bounds may follow the inputs' sizes (x[:, :t] with a dynamic t).
    for (int i : {1, 2})
      for (const Elem& e : ctx.constant(i, i == 1 ? "starts" : "ends").elems) {
        if (!e.integral()) ctx.unsupported(std::string(i == 1 ? "starts" : "ends") + " is computed at run time");
        (i == 1 ? s.starts : s.ends).push_back(e);
      }
    if (ctx.has_input(3)) s.axes = ctx.constant(3, "axes").ints("axes");
    if (ctx.has_input(4)) s.steps = ctx.constant(4, "steps").ints("steps");
  }
  if (s.axes.empty())
    for (size_t k = 0; k < s.starts.size(); ++k) s.axes.push_back(static_cast<int64_t>(k));
  if (s.steps.empty()) s.steps.assign(s.starts.size(), 1);
  if (s.ends.size() != s.starts.size() || s.axes.size() != s.starts.size() || s.steps.size() != s.starts.size())
    ctx.fail("starts, ends, axes and steps differ in length");
  for (size_t k = 0; k < s.axes.size(); ++k) {
    s.axes[k] = normalize_axis(ctx, s.axes[k], rank, "slice axis");
    if (s.steps[k] == 0) ctx.fail("a slice step is 0");
    for (size_t j = 0; j < k; ++j)
      if (s.axes[j] == s.axes[k]) ctx.fail("axis " + std::to_string(s.axes[k]) + " is sliced twice");
  }
  return s;
}

void clamp_slice(int64_t n, int64_t step, int64_t* start, int64_t* end) {
  // ONNX: negative values count from the end, then clamp.
  int64_t s = *start, e = *end;
  if (s < 0) s = s < std::numeric_limits<int64_t>::min() + n ? -1 : s + n;
  if (e < 0) e = e < std::numeric_limits<int64_t>::min() + n ? -1 : e + n;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
  } else {
    s = std::clamp<int64_t>(s, 0, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
  }
  *start = s;
  *end = e;
}

int64_t slice_count(int64_t start, int64_t end, int64_t step) {
  if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

bool all_static(const Shape& s, std::vector<int64_t>* dims) {
  if (!s.has_rank) return false;
  std::vector<int64_t> d;
  for (const Dim& x : s.dims) {
    if (!x.is_static()) return false;
    d.push_back(x.size);
  }
  if (dims) *dims = d;
  return true;
}

std::vector<Elem> reshape_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target, bool allowzero) {
  if (target.dims.size() != 1) ctx.fail("the shape input is not 1-D");
  std::vector<Elem> out;
  int unknown = 0;
  for (size_t k = 0; k < target.elems.size(); ++k) {
    const Elem& e = target.elems[k];
    Elem v = Elem::of_int(-1);
    if (e.kind == Elem::Int && e.i == 0 && !allowzero) {
      // 0 copies the input's dim k: its size or its symbol.
      if (!in.has_rank || k >= in.dims.size()) ctx.fail("shape entry " + std::to_string(k) + " is 0 past the input's rank");
      const Dim& d = in.dims[k];
      if (d.is_static()) v = Elem::of_int(d.size);
      else if (!d.sym.empty()) v = Elem::of_sym(d.sym);
    } else if (e.kind == Elem::Int) {
      if (e.i < -1) ctx.fail("shape entry " + std::to_string(e.i) + " is negative");
      v = e;
    } else if (e.kind == Elem::Float) {
      ctx.fail("the shape input holds floats");
    } else if (e.kind == Elem::Sym) {
      v = e;
    }
    unknown += v.kind == Elem::Int && v.i == -1;
    out.push_back(v);
  }
  // At most one size may be left for the runtime to infer.
  if (unknown > 1)
    ctx.unsupported("the Reshape target has " + std::to_string(unknown) +
                    " sizes known only at run time; the importer can leave one to be inferred");
  return out;
}

std::string lit(const std::vector<Elem>& sizes) {
  std::string s = "[";
  for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + sizes[k].text();
  return s + "]";
}

std::vector<Elem> expand_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target) {
  if (target.dims.size() != 1) ctx.fail("the shape input is not 1-D");
  if (!in.has_rank) ctx.fail("the input's rank is unknown");
  const size_t r = std::max(in.dims.size(), target.elems.size());
  std::vector<Elem> out(r);
  for (size_t k = 0; k < r; ++k) {
    const bool has_in = k >= r - in.dims.size();
    const Dim din = has_in ? in.dims[k - (r - in.dims.size())] : Dim{1, {}};
    const bool has_t = k >= r - target.elems.size();
    const Elem et = has_t ? target.elems[k - (r - target.elems.size())] : Elem::of_int(1);
    if (et.kind == Elem::Int) {
      if (et.i == 1) {
        out[k] = Elem::of_int(has_in ? -1 : 1);  // the input's dim, whatever it is
      } else if (din.is_static() && din.size != 1 && din.size != et.i) {
        ctx.fail("cannot expand a dim of size " + std::to_string(din.size) + " to " + std::to_string(et.i));
      } else {
        out[k] = et;
      }
    } else if (et.kind == Elem::Float) {
      ctx.fail("the shape input holds floats");
    } else if (has_in && !(din.is_static() && din.size == 1)) {
      // A run-time size that must be 1 or the input's own dim: either way the input's dim.
      out[k] = Elem::of_int(-1);
    } else if (et.kind == Elem::Sym) {
      out[k] = et;  // a size that follows the inputs
    } else {
      ctx.unsupported("the Expand target size of dim " + std::to_string(k) + " is known only at run time");
    }
  }
  return out;
}

}  // namespace tsr::onnx::detail
