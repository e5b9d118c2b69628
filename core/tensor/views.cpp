// View operations: new geometry over the same storage (no data movement).
#include "tensor/views.hpp"

#include <algorithm>

#include "ops/op_impl.hpp"
#include "tessera/checked_math.hpp"

namespace tsr::core {

static tsr_status_t bad(const char* op, const std::string& msg) {
  return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": " + msg);
}

tsr_status_t view_as_strided(Tensor* t, int ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                             Tensor** out) {
  int64_t numel = 0;
  TSR_RETURN_IF_ERROR(check_shape("as_strided", ndim, sizes, &numel));
  if (ndim > 0 && !strides) return bad("as_strided", "strides is NULL");
  if (offset < 0) return bad("as_strided", "negative storage offset " + std::to_string(offset));
  for (int d = 0; d < ndim; ++d)
    if (strides[d] < 0) return bad("as_strided", "negative stride " + std::to_string(strides[d]));
  // Every reachable element must lie inside the storage; the extent is computed with checked
  // arithmetic because a wrapped sum would pass the bound and address other memory.
  int64_t min_off = 0, max_off = 0;
  int64_t avail = static_cast<int64_t>(t->storage->nbytes / dtype_size(t->dtype));
  bool fits = checked_view_extent(ndim, sizes, strides, offset, &min_off, &max_off);
  if (numel > 0 && (!fits || max_off >= avail))
    return bad("as_strided", "view " + shape_str(sizes, ndim) + " with strides " + shape_str(strides, ndim) +
                                 " and offset " + std::to_string(offset) + " needs " +
                                 (fits ? std::to_string(max_off + 1) : std::string("more than 2^63")) +
                                 " elements but the storage holds " + std::to_string(avail));
  *out = make_view(t, ndim, sizes, strides, offset);
  return nullptr;
}

// Resolves a -1 in sizes against numel.
static tsr_status_t infer_size(const char* op, const Tensor* t, int ndim, const int64_t* in, int64_t* sizes) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS) return bad(op, "ndim " + std::to_string(ndim) + " out of range");
  if (ndim > 0 && !in) return bad(op, "sizes is NULL");
  int infer = -1;
  int64_t prod = 1;
  for (int d = 0; d < ndim; ++d) {
    sizes[d] = in[d];
    if (in[d] == -1) {
      if (infer >= 0) return bad(op, "only one dimension can be inferred in " + shape_str(in, ndim));
      infer = d;
    } else if (in[d] < 0) {
      return bad(op, "invalid size " + std::to_string(in[d]) + " in " + shape_str(in, ndim));
    } else if (!checked_mul(prod, in[d], &prod)) {
      // A wrapped product could equal numel and let an impossible shape through.
      return bad(op, "shape " + shape_str(in, ndim) + " is invalid for input of size " + std::to_string(t->numel) +
                         " (its element count overflows)");
    }
  }
  if (infer >= 0) {
    if (prod == 0 || t->numel % prod != 0)
      return bad(op, "shape " + shape_str(in, ndim) + " is invalid for input of size " + std::to_string(t->numel));
    sizes[infer] = t->numel / prod;
  } else if (prod != t->numel) {
    return bad(op, "shape " + shape_str(in, ndim) + " is invalid for input of size " + std::to_string(t->numel) +
                       " (input shape " + shape_str(t->sizes, t->ndim) + ")");
  }
  return nullptr;
}

// ATen's computeStride: strides for a view of t with new sizes, if expressible.
static bool view_strides(const Tensor* t, int ndim, const int64_t* sizes, int64_t* strides) {
  if (t->numel == 0) {
    contiguous_strides(ndim, sizes, strides);
    return true;
  }
  int64_t view_d = ndim - 1;
  int64_t chunk_base_stride = t->ndim > 0 ? t->strides[t->ndim - 1] : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = t->ndim - 1; td >= 0; --td) {
    tensor_numel *= t->sizes[td];
    if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = t->strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    // remaining size-1 dims (for a 0-dim source)
    while (view_d >= 0) {
      if (sizes[view_d] != 1) return false;
      strides[view_d--] = 1;
    }
  }
  return true;
}

tsr_status_t view_shape(Tensor* t, int ndim, const int64_t* in_sizes, Tensor** out) {
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  TSR_RETURN_IF_ERROR(infer_size("view", t, ndim, in_sizes, sizes));
  if (!view_strides(t, ndim, sizes, strides))
    return bad("view", "view size " + shape_str(sizes, ndim) + " is not compatible with input size " +
                           shape_str(t->sizes, t->ndim) + " and strides " + shape_str(t->strides, t->ndim) +
                           "; use reshape instead");
  *out = make_view(t, ndim, sizes, strides, t->offset);
  return nullptr;
}

tsr_status_t reshape(Tensor* t, int ndim, const int64_t* in_sizes, Tensor** out) {
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  TSR_RETURN_IF_ERROR(infer_size("reshape", t, ndim, in_sizes, sizes));
  if (view_strides(t, ndim, sizes, strides)) {
    *out = make_view(t, ndim, sizes, strides, t->offset);
    return nullptr;
  }
  Tensor* c = nullptr;
  TSR_RETURN_IF_ERROR(make_contiguous(t->runtime, t, "reshape", &c));
  contiguous_strides(ndim, sizes, strides);
  *out = make_view(c, ndim, sizes, strides, c->offset);
  c->release();
  return nullptr;
}

tsr_status_t permute(Tensor* t, int ndim, const int64_t* dims, Tensor** out) {
  if (ndim != t->ndim)
    return bad("permute", "number of dims " + std::to_string(ndim) + " does not match the tensor's " +
                              std::to_string(t->ndim) + " (shape " + shape_str(t->sizes, t->ndim) + ")");
  if (ndim > 0 && !dims) return bad("permute", "dims is NULL");
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  bool seen[TSR_MAX_DIMS] = {};
  for (int i = 0; i < ndim; ++i) {
    int d = 0;
    TSR_RETURN_IF_ERROR(wrap_dim("permute", dims[i], ndim, &d));
    if (seen[d]) return bad("permute", "repeated dim " + std::to_string(d) + " in " + shape_str(dims, ndim));
    seen[d] = true;
    sizes[i] = t->sizes[d];
    strides[i] = t->strides[d];
  }
  *out = make_view(t, ndim, sizes, strides, t->offset);
  return nullptr;
}

tsr_status_t transpose(Tensor* t, int64_t d0, int64_t d1, Tensor** out) {
  int a = 0, b = 0;
  TSR_RETURN_IF_ERROR(wrap_dim("transpose", d0, t->ndim, &a));
  TSR_RETURN_IF_ERROR(wrap_dim("transpose", d1, t->ndim, &b));
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  std::copy(t->sizes, t->sizes + t->ndim, sizes);
  std::copy(t->strides, t->strides + t->ndim, strides);
  if (t->ndim > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  *out = make_view(t, t->ndim, sizes, strides, t->offset);
  return nullptr;
}

tsr_status_t expand(Tensor* t, int ndim, const int64_t* want, Tensor** out) {
  if (ndim < t->ndim || ndim > TSR_MAX_DIMS)
    return bad("expand", "the number of sizes provided (" + std::to_string(ndim) +
                             ") must be greater or equal to the number of dimensions in the tensor (" +
                             std::to_string(t->ndim) + ")");
  if (ndim > 0 && !want) return bad("expand", "sizes is NULL");
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int off = ndim - t->ndim;
  for (int d = ndim - 1; d >= 0; --d) {
    int td = d - off;
    int64_t w = want[d];
    if (td < 0) {
      if (w < 0) return bad("expand", "-1 is not allowed in a leading, non-existing dimension " + std::to_string(d));
      sizes[d] = w;
      strides[d] = 0;
    } else {
      int64_t s = t->sizes[td];
      if (w == -1) w = s;
      if (s == w) {
        sizes[d] = s;
        strides[d] = t->strides[td];
      } else if (s == 1 && w >= 0) {
        sizes[d] = w;
        strides[d] = 0;
      } else {
        return bad("expand",
                   "the expanded size of the tensor (" + std::to_string(w) + ") must match the existing size (" +
                       std::to_string(s) + ") at non-singleton dimension " + std::to_string(d) +
                       ". Target sizes: " + shape_str(want, ndim) + ". Tensor sizes: " + shape_str(t->sizes, t->ndim));
      }
    }
  }
  TSR_RETURN_IF_ERROR(check_shape("expand", ndim, sizes, nullptr));
  *out = make_view(t, ndim, sizes, strides, t->offset);
  return nullptr;
}

tsr_status_t slice(Tensor* t, int64_t dim, int64_t start, int64_t end, int64_t step, Tensor** out) {
  if (t->ndim == 0) return bad("slice", "cannot slice a 0-d tensor");
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim("slice", dim, t->ndim, &d));
  if (step <= 0) return bad("slice", "step must be positive, got " + std::to_string(step));
  int64_t n = t->sizes[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  std::copy(t->sizes, t->sizes + t->ndim, sizes);
  std::copy(t->strides, t->strides + t->ndim, strides);
  // ceil((end - start) / step) without forming end - start + step - 1, which wraps for a huge
  // step; 0 <= start <= end <= n, so end - start cannot overflow.
  int64_t len = end - start;
  sizes[d] = len == 0 ? 0 : 1 + (len - 1) / step;
  int64_t offset = 0, start_off = 0;
  bool ok = checked_mul(start, t->strides[d], &start_off) && checked_add(t->offset, start_off, &offset);
  if (!checked_mul(t->strides[d], step, &strides[d])) {
    strides[d] = t->strides[d];  // with one element or none the step never addresses memory
    ok = ok && sizes[d] <= 1;
  }
  if (!ok)
    return bad("slice", "step " + std::to_string(step) + " or start " + std::to_string(start) +
                            " overflows the strides " + shape_str(t->strides, t->ndim));
  *out = make_view(t, t->ndim, sizes, strides, offset);
  return nullptr;
}

tsr_status_t narrow(Tensor* t, int64_t dim, int64_t start, int64_t length, Tensor** out) {
  if (t->ndim == 0) return bad("narrow", "cannot narrow a 0-d tensor");
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim("narrow", dim, t->ndim, &d));
  int64_t n = t->sizes[d];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start > n || length > n - start)
    return bad("narrow", "start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                             ") exceeds dimension size (" + std::to_string(n) + ") of " + shape_str(t->sizes, t->ndim));
  return slice(t, d, start, start + length, 1, out);
}

tsr_status_t select(Tensor* t, int64_t dim, int64_t index, Tensor** out) {
  if (t->ndim == 0) return bad("select", "cannot select on a 0-d tensor");
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim("select", dim, t->ndim, &d));
  int64_t n = t->sizes[d];
  if (index < -n || index >= n)
    return bad("select", "index " + std::to_string(index) + " out of range for dimension " + std::to_string(d) +
                             " with size " + std::to_string(n) + " (shape " + shape_str(t->sizes, t->ndim) + ")");
  if (index < 0) index += n;
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < t->ndim; ++i)
    if (i != d) {
      sizes[k] = t->sizes[i];
      strides[k++] = t->strides[i];
    }
  *out = make_view(t, k, sizes, strides, t->offset + index * t->strides[d]);
  return nullptr;
}

tsr_status_t squeeze(Tensor* t, int64_t dim, Tensor** out) {
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int k = 0, target = -1;
  if (dim != TSR_ALL_DIMS) TSR_RETURN_IF_ERROR(wrap_dim("squeeze", dim, t->ndim, &target));
  for (int i = 0; i < t->ndim; ++i) {
    bool drop = t->sizes[i] == 1 && (dim == TSR_ALL_DIMS || i == target);
    if (!drop) {
      sizes[k] = t->sizes[i];
      strides[k++] = t->strides[i];
    }
  }
  *out = make_view(t, k, sizes, strides, t->offset);
  return nullptr;
}

tsr_status_t unsqueeze(Tensor* t, int64_t dim, Tensor** out) {
  if (t->ndim >= TSR_MAX_DIMS) return bad("unsqueeze", "tensor already has the maximum number of dims");
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim("unsqueeze", dim, t->ndim + 1, &d));
  int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  int k = 0;
  for (int i = 0; i <= t->ndim; ++i) {
    if (i == d) {
      sizes[k] = 1;
      // The stride of a size-1 dim never addresses memory; a wrapped product is harmless but
      // would be reported, so fall back to 1.
      int64_t st = 1;
      if (i < t->ndim && !checked_mul(t->sizes[i], t->strides[i], &st)) st = 1;
      strides[k++] = st;
    }
    if (i < t->ndim) {
      sizes[k] = t->sizes[i];
      strides[k++] = t->strides[i];
    }
  }
  *out = make_view(t, k, sizes, strides, t->offset);
  return nullptr;
}

}  // namespace tsr::core
