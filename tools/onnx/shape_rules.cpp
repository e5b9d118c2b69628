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
    s.starts = ctx.attr_ints("starts", {});
    s.ends = ctx.attr_ints("ends", {});
    s.axes = ctx.attr_ints("axes", {});
  } else {
    s.starts = ctx.constant(1, "starts").ints("starts");
    s.ends = ctx.constant(2, "ends").ints("ends");
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

std::vector<int64_t> reshape_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target, bool allowzero) {
  if (target.dims.size() != 1) ctx.fail("the shape input is not 1-D");
  std::vector<int64_t> out;
  // Entries known only at run time, and which of them is the one symbol `sym` (a copied input
  // dim, or a symbol from a Shape chain): they may cancel against the input's dims below.
  std::vector<size_t> unknown;
  std::vector<std::string> sym;
  int explicit_infer = -1;
  for (size_t k = 0; k < target.elems.size(); ++k) {
    const Elem& e = target.elems[k];
    int64_t v = -1;
    std::string s;
    if (e.kind == Elem::Int && e.i == 0 && !allowzero) {
      // 0 copies the input's dim k.
      if (!in.has_rank || k >= in.dims.size()) ctx.fail("shape entry " + std::to_string(k) + " is 0 past the input's rank");
      const Dim& d = in.dims[k];
      if (d.is_static()) v = d.size;
      else s = d.sym.empty() ? "?" : d.sym;
    } else if (e.kind == Elem::Int) {
      if (e.i < -1) ctx.fail("shape entry " + std::to_string(e.i) + " is negative");
      v = e.i;
      if (v == -1) {
        if (explicit_infer >= 0) ctx.fail("the shape has two -1 entries");
        explicit_infer = static_cast<int>(k);
      }
    } else if (e.kind == Elem::Float) {
      ctx.fail("the shape input holds floats");
    } else {
      s = e.kind == Elem::Sym ? e.sym : "?";
    }
    if (v == -1) unknown.push_back(k), sym.push_back(s);
    out.push_back(v);
  }
  if (unknown.size() <= 1) return out;  // the one unknown (if any) is -1 already
  // Several: the explicit -1 can still be computed here when every other unknown entry is an
  // input symbol that cancels one of the input's dims, and the input's other dims are static
  // (reshape(x, [0, -1]) of a [batch, 3, 4] input is [batch, 12]). Then one symbol stays -1.
  if (explicit_infer >= 0 && in.has_rank) {
    std::vector<bool> used(in.dims.size(), false);
    bool ok = true;
    for (size_t j = 0; j < unknown.size() && ok; ++j) {
      if (static_cast<int>(unknown[j]) == explicit_infer) continue;
      ok = false;
      for (size_t d = 0; d < in.dims.size() && !ok; ++d)
        if (!used[d] && sym[j] != "?" && in.dims[d].sym == sym[j]) used[d] = ok = true;
    }
    int64_t rest = 1, known = 1;
    for (size_t d = 0; d < in.dims.size() && ok; ++d)
      if (!used[d]) ok = in.dims[d].is_static(), rest *= in.dims[d].size;
    for (int64_t v : out)
      if (v >= 0) known *= v;
    if (ok && known > 0 && rest % known == 0) {
      out[static_cast<size_t>(explicit_infer)] = rest / known;
      if (unknown.size() == 2) return out;  // the symbol left is the -1
    }
  }
  ctx.unsupported("the Reshape target has " + std::to_string(unknown.size()) +
                  " sizes known only at run time; the importer can leave one to be inferred");
}

std::vector<int64_t> expand_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target) {
  if (target.dims.size() != 1) ctx.fail("the shape input is not 1-D");
  if (!in.has_rank) ctx.fail("the input's rank is unknown");
  const size_t r = std::max(in.dims.size(), target.elems.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    const bool has_in = k >= r - in.dims.size();
    const Dim din = has_in ? in.dims[k - (r - in.dims.size())] : Dim{1, {}};
    const bool has_t = k >= r - target.elems.size();
    const Elem et = has_t ? target.elems[k - (r - target.elems.size())] : Elem::of_int(1);
    if (et.kind == Elem::Int) {
      if (et.i == 1) {
        out[k] = has_in ? -1 : 1;  // the input's dim, whatever it is
      } else if (din.is_static() && din.size != 1 && din.size != et.i) {
        ctx.fail("cannot expand a dim of size " + std::to_string(din.size) + " to " + std::to_string(et.i));
      } else {
        out[k] = et.i;
      }
    } else if (et.kind == Elem::Float) {
      ctx.fail("the shape input holds floats");
    } else if (has_in && !(din.is_static() && din.size == 1)) {
      // A run-time size that must be 1 or the input's own dim: either way the input's dim.
      out[k] = -1;
    } else {
      ctx.unsupported("the Expand target size of dim " + std::to_string(k) + " is known only at run time");
    }
  }
  return out;
}

}  // namespace tsr::onnx::detail
