// Autograd of views and copies made through the API (view, reshape, transpose, permute,
// expand, slice, select, narrow, squeeze, unsqueeze, as_strided, contiguous, to, copy_).
#include <algorithm>

#include "autograd/engine.hpp"
#include "autograd/node.hpp"

namespace tsr::core {

namespace {

struct ViewNode : Node {
  ViewKind kind = ViewKind::Identity;
  ViewParams p;
  // Geometry for AsStrided: the base's and the view's, offsets relative to the base.
  std::vector<int64_t> base_sizes, base_strides, view_sizes, view_strides;
  int64_t rel_offset = 0;

  tsr::Tensor region_of(const tsr::Tensor& full) const {
    return kind == ViewKind::Slice ? full.slice(p.a, p.b, p.c, p.d) : full.select(p.a, p.b);
  }
  bool is_region_view() const override { return kind == ViewKind::Slice || kind == ViewKind::Select; }
  // add with out= the region, written in place: add_ (inplace_impl) would compute into a
  // temporary and copy it over the strided region. Called without create_graph only (the
  // engine's region buffers), where out= is allowed.
  void add_into_region(const tsr::Tensor& g, tsr::Tensor& full) const override {
    static const tsr::Op add("add");
    tsr::Tensor region = region_of(full);
    tsr::call_multi(add, {region, g}, {region});
  }
  // The region of the input a slice or select reads: dim, [begin, end) and step, normalized as
  // the slice op does (a select is one row).
  struct Bounds {
    int64_t dim, begin, end, step;
  };
  Bounds bounds() const {
    const InputMeta& m = input_meta[0];
    const int64_t d = p.a < 0 ? p.a + m.ndim : p.a;
    const int64_t n = m.sizes[d];
    const int64_t b = p.b < 0 ? p.b + n : p.b;
    if (kind == ViewKind::Select) return {d, b, b + 1, 1};
    const int64_t begin = std::clamp<int64_t>(b, 0, n);
    return {d, begin, std::clamp<int64_t>(p.c < 0 ? p.c + n : p.c, begin, n), p.d};
  }
  bool region_rows(int64_t* dim, int64_t* begin, int64_t* end) const override {
    const Bounds r = bounds();
    if (r.step != 1) return false;
    *dim = r.dim;
    *begin = r.begin;
    *end = r.end;
    return true;
  }
  void copy_into_region(const tsr::Tensor& g, tsr::Tensor& full) const override {
    tsr::Tensor region = region_of(full);
    region.copy_(g);
  }

  // The base-shaped gradient of a slice or select built from differentiable ops (zero blocks
  // concatenated around g; for a step > 1, g interleaved with zeros by a reshape), so that a
  // create_graph backward records it. The plain path copies g into a zero tensor instead, which
  // is cheaper but leaves no history.
  tsr::Tensor region_grad_recorded(tsr::Tensor g, const std::vector<int64_t>& in_sizes) const {
    const Bounds r = bounds();
    const int64_t d = r.dim, len = in_sizes[static_cast<size_t>(d)], start = r.begin, step = r.step;
    if (kind == ViewKind::Select) g = g.unsqueeze(d);
    auto zeros_along = [&](const tsr::Tensor& like, int64_t dim, int64_t k) {
      std::vector<int64_t> shape = like.sizes();
      shape[static_cast<size_t>(dim)] = k;
      return tsr::zeros(shape, like.dtype(), like.device());
    };
    const int64_t n = g.size(d);
    if (step > 1 && n > 0) {  // [.., n, ..] -> [.., n, step, ..] (g, then zeros) -> (n-1)*step+1 rows
      tsr::Tensor u = g.unsqueeze(d + 1);
      std::vector<int64_t> merged = g.sizes();
      merged[static_cast<size_t>(d)] = n * step;
      g = tsr::cat({u, zeros_along(u, d + 1, step - 1)}, d + 1).reshape(merged).narrow(d, 0, (n - 1) * step + 1);
    }
    const int64_t after = len - start - g.size(d);
    std::vector<tsr::Tensor> parts;
    if (start > 0) parts.push_back(zeros_along(g, d, start));
    parts.push_back(g);
    if (after > 0) parts.push_back(zeros_along(g, d, after));
    return parts.size() == 1 ? g : tsr::cat(parts, d);
  }

  void apply(std::vector<tsr::Tensor>& gout, std::vector<tsr::Tensor>& gin, bool create_graph) override {
    gin.assign(1, tsr::Tensor());
    tsr::Tensor g = gout[0];
    if (!g.defined()) return;
    const InputMeta& m = input_meta[0];
    std::vector<int64_t> in_sizes(m.sizes, m.sizes + m.ndim);
    switch (kind) {
      case ViewKind::Reshape:
        gin[0] = g.reshape(in_sizes);
        break;
      case ViewKind::Transpose:
        gin[0] = g.transpose(p.a, p.b);
        break;
      case ViewKind::Permute: {
        std::vector<int64_t> inv(p.dims.size());
        for (size_t i = 0; i < p.dims.size(); ++i) inv[static_cast<size_t>(p.dims[i])] = static_cast<int64_t>(i);
        gin[0] = g.permute(inv);
        break;
      }
      case ViewKind::Expand:
      case ViewKind::Identity:
        gin[0] = g;
        break;  // the engine sums / casts to the input
      case ViewKind::Slice:
      case ViewKind::Select: {
        if (create_graph) {
          gin[0] = region_grad_recorded(g, in_sizes);
          break;
        }
        tsr::Tensor z = tsr::zeros(in_sizes, m.dtype, tsr::Device(m.device));
        region_of(z).copy_(g);
        gin[0] = z;
        break;
      }
      case ViewKind::AsStrided: {
        // Dims the view broadcasts (stride 0) receive the sum of their gradients.
        std::vector<int64_t> vs = view_sizes, vst = view_strides;
        for (size_t d = 0; d < vs.size(); ++d)
          if (vst[d] == 0 && vs[d] > 1) {
            g = tsr::sum(g, {static_cast<int64_t>(d)}, true);
            vs[d] = 1;
          }
        int64_t extent = 1;
        for (size_t d = 0; d < base_sizes.size(); ++d) {
          if (base_sizes[d] == 0) extent = 0;
          if (extent) extent += (base_sizes[d] - 1) * base_strides[d];
        }
        tsr::Tensor buf = tsr::zeros({extent}, m.dtype, tsr::Device(m.device));
        if (extent > 0) buf.as_strided(vs, vst, rel_offset).copy_(g);
        gin[0] = buf.as_strided(base_sizes, base_strides, 0);
        break;
      }
    }
  }
};

// The base's elements must not overlap for the AsStrided gradient to be well defined.
bool non_overlapping(const Tensor* t) {
  std::vector<int> order;
  for (int d = 0; d < t->ndim; ++d)
    if (t->sizes[d] > 1) order.push_back(d);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return t->strides[a] < t->strides[b]; });
  int64_t span = 1;
  for (int d : order) {
    if (t->strides[d] < span) return false;
    span = t->strides[d] * t->sizes[d];
  }
  return true;
}

struct CopyNode : Node {  // dst.copy_(src): the gradient goes to src only (dst's old values are gone)
  void apply(std::vector<tsr::Tensor>& gout, std::vector<tsr::Tensor>& gin, bool) override {
    gin.assign(next.size(), tsr::Tensor());
    if (gout[0].defined() && !next.empty()) gin[0] = gout[0];
  }
};

const char* view_name(ViewKind k) {
  switch (k) {
    case ViewKind::Reshape:
      return "ViewBackward";
    case ViewKind::Transpose:
      return "TransposeBackward";
    case ViewKind::Permute:
      return "PermuteBackward";
    case ViewKind::Expand:
      return "ExpandBackward";
    case ViewKind::Slice:
      return "SliceBackward";
    case ViewKind::Select:
      return "SelectBackward";
    case ViewKind::AsStrided:
      return "AsStridedBackward";
    case ViewKind::Identity:
      return "CloneBackward";
  }
  return "ViewBackward";
}

}  // namespace

bool is_view_node(const Node* n) {
  const ViewNode* v = dynamic_cast<const ViewNode*>(n);
  return v && v->kind != ViewKind::Identity;
}

tsr_status_t record_view(Tensor* base, Tensor* view, ViewKind kind, const ViewParams& p) {
  if (!grad_mode() || !requires_grad(base) || !is_floating(base->dtype)) return nullptr;
  if (view == base) return nullptr;
  if (kind == ViewKind::AsStrided && !non_overlapping(base))
    return make_status(TSR_UNIMPLEMENTED,
                       "as_strided: the gradient of a strided view of a tensor whose elements "
                       "overlap (" +
                           shape_str(base->sizes, base->ndim) + " with strides " +
                           shape_str(base->strides, base->ndim) + ") is not supported");
  auto* n = new ViewNode;
  n->kind = kind;
  n->p = p;
  n->seq = next_node_seq();
  n->name = view_name(kind);
  n->next.push_back(gradient_edge(base));
  n->input_meta.emplace_back(base);
  if (kind == ViewKind::AsStrided) {
    n->base_sizes.assign(base->sizes, base->sizes + base->ndim);
    n->base_strides.assign(base->strides, base->strides + base->ndim);
    n->view_sizes.assign(view->sizes, view->sizes + view->ndim);
    n->view_strides.assign(view->strides, view->strides + view->ndim);
    n->rel_offset = view->offset - base->offset;
  }
  set_history(view, n, 0);
  n->release();
  return nullptr;
}

tsr_status_t check_copy_allowed(Tensor* dst, Tensor* src) {
  if (!grad_mode() || !(requires_grad(dst) || requires_grad(src))) return nullptr;
  if (requires_grad(dst) && !dst->autograd->grad_fn)
    return make_status(TSR_INVALID_ARGUMENT,
                       "copy_: a leaf tensor that requires grad is being used in an in-place "
                       "operation");
  if (requires_grad(dst) && is_view_node(dst->autograd->grad_fn))
    return make_status(TSR_UNIMPLEMENTED,
                       "copy_: in-place copy into a view of a tensor that requires grad is not "
                       "supported");
  return nullptr;
}

tsr_status_t record_copy(Tensor* dst, Tensor* src) {
  if (!grad_mode() || !(requires_grad(dst) || requires_grad(src))) return nullptr;
  if (!is_floating(dst->dtype)) return nullptr;
  auto* n = new CopyNode;
  n->seq = next_node_seq();
  n->name = "CopyBackward";
  n->next.push_back(is_floating(src->dtype) ? gradient_edge(src) : Edge{});
  n->input_meta.emplace_back(src);
  set_history(dst, n, 0);
  n->release();
  return nullptr;
}

}  // namespace tsr::core
