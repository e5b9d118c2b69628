// Memory overlap checks (see overlap.hpp), after PyTorch's ATen/MemoryOverlap.cpp.
#include "tensor/overlap.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "runtime/status.hpp"

namespace tsr::core {

namespace {

struct Dim {
  int64_t size, stride;
};

// The dims of size > 1, by increasing stride; returns their count.
int sorted_dims(const Tensor* t, Dim* dims) {
  int n = 0;
  for (int d = 0; d < t->ndim; ++d)
    if (t->sizes[d] > 1) dims[n++] = {t->sizes[d], t->strides[d]};
  std::sort(dims, dims + n, [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  return n;
}

// Strides that nest (each larger than everything the smaller dims reach) give every element
// its own address, and each address one decomposition: dense tensors, slices with steps,
// transposes of those.
bool nests(const Dim* dims, int n) {
  int64_t reach = 0;
  for (int i = 0; i < n; ++i) {
    if (dims[i].stride <= reach) return false;
    reach += (dims[i].size - 1) * dims[i].stride;
  }
  return true;
}

// Every element slot between t's first and last element is one of t's elements, once.
bool dense(const Tensor* t) {
  if (t->contiguous) return true;
  Dim dims[TSR_MAX_DIMS];
  int n = sorted_dims(t, dims);
  int64_t expected = 1;
  for (int i = 0; i < n; ++i) {
    if (dims[i].stride != expected) return false;
    expected *= dims[i].size;
  }
  return true;
}

// The element offset of t's last element from its first (strides are never negative).
int64_t span(const Tensor* t) {
  int64_t s = 0;
  for (int d = 0; d < t->ndim; ++d)
    if (t->sizes[d] > 1) s += (t->sizes[d] - 1) * t->strides[d];
  return s;
}

// Same elements in the same places: same first byte and element size, and, aligned from the
// right as broadcasting aligns them, the same sizes and (where the size is > 1) the same strides.
bool same_view(const Tensor* a, const Tensor* b) {
  if (a->data() != b->data() || dtype_size(a->dtype) != dtype_size(b->dtype)) return false;
  int n = std::max(a->ndim, b->ndim);
  for (int d = 0; d < n; ++d) {
    int da = d - (n - a->ndim), db = d - (n - b->ndim);
    int64_t sa = da < 0 ? 1 : a->sizes[da], sb = db < 0 ? 1 : b->sizes[db];
    if (sa != sb) return false;
    if (sa > 1 && a->strides[da] != b->strides[db]) return false;
  }
  return true;
}

// Whether element offset `off` (from t's first element) is one of t's elements, for t whose
// strides nest: then the greedy decomposition from the largest stride down is the only one.
// false when they do not nest (no answer).
bool nested_contains(const Tensor* t, int64_t off) {
  Dim dims[TSR_MAX_DIMS];
  int n = sorted_dims(t, dims);
  if (!nests(dims, n)) return false;
  for (int i = n - 1; i >= 0 && off > 0; --i) off -= std::min(off / dims[i].stride, dims[i].size - 1) * dims[i].stride;
  return off == 0;
}

// Whether the first or the last element of `other` is provably memory of `t`: inside t's byte
// range when t is dense (it holds every byte of its range), or one of t's elements when t's
// strides nest and the element sizes agree.
bool end_element_inside(const Tensor* t, const Tensor* other) {
  const size_t it = dtype_size(t->dtype), io = dtype_size(other->dtype);
  const char* lo = static_cast<const char*>(t->data());
  const char* hi = lo + static_cast<size_t>(span(t)) * it + it;
  const char* first = static_cast<const char*>(other->data());
  const char* last = first + static_cast<size_t>(span(other)) * io;
  if (dense(t)) return (first < hi && lo < first + io) || (last < hi && lo < last + io);
  if (it != io) return false;
  for (const char* e : {first, last}) {
    if (e < lo || e >= hi || (e - lo) % static_cast<ptrdiff_t>(it) != 0) continue;
    if (nested_contains(t, (e - lo) / static_cast<ptrdiff_t>(it))) return true;
  }
  return false;
}

std::string layout(const Tensor* t) {
  return shape_str(t->sizes, t->ndim) + " " + dtype_name(t->dtype) + " with strides " + shape_str(t->strides, t->ndim) +
         " at element offset " + std::to_string(t->offset);
}

}  // namespace

MemOverlap has_internal_overlap(const Tensor* t) {
  if (t->contiguous || t->numel <= 1) return MemOverlap::No;
  Dim dims[TSR_MAX_DIMS];
  int n = sorted_dims(t, dims);
  if (n > 0 && dims[0].stride == 0) return MemOverlap::Yes;  // sorted: a stride 0 comes first
  if (nests(dims, n)) return MemOverlap::No;
  // Element k*(s_j) along dim j is element 1 along dim k when s_k = m * s_j with m < size_j.
  for (int j = 0; j < n; ++j)
    for (int k = j + 1; k < n; ++k)
      if (dims[k].stride % dims[j].stride == 0 && dims[k].stride / dims[j].stride <= dims[j].size - 1)
        return MemOverlap::Yes;
  return MemOverlap::TooHard;
}

MemOverlapStatus get_overlap_status(const Tensor* a, const Tensor* b) {
  if (a == b) return MemOverlapStatus::Full;
  if (a->storage != b->storage || !a->storage) return MemOverlapStatus::No;
  if (a->numel == 0 || b->numel == 0) return MemOverlapStatus::No;
  const size_t ia = dtype_size(a->dtype), ib = dtype_size(b->dtype);
  const char* a_begin = static_cast<const char*>(a->data());
  const char* b_begin = static_cast<const char*>(b->data());
  const char* a_end = a_begin + static_cast<size_t>(span(a)) * ia + ia;
  const char* b_end = b_begin + static_cast<size_t>(span(b)) * ib + ib;
  if (!(a_begin < b_end && b_begin < a_end)) return MemOverlapStatus::No;
  if (same_view(a, b)) return MemOverlapStatus::Full;
  if (dense(a) && dense(b)) return MemOverlapStatus::Partial;
  // One end element (the first or the last) of either that is provably memory of the other.
  if (end_element_inside(a, b) || end_element_inside(b, a)) return MemOverlapStatus::Partial;
  return MemOverlapStatus::TooHard;
}

tsr_status_t assert_no_internal_overlap(const Tensor* t, const char* op, const char* written) {
  if (has_internal_overlap(t) != MemOverlap::Yes) return nullptr;
  return make_status(TSR_INVALID_ARGUMENT,
                     std::string(op) +
                         ": unsupported operation: more than one element of the written-to tensor refers to a single "
                         "memory location. Please clone() the tensor before performing the operation. (written-to: " +
                         written + ", " + layout(t) + ")");
}

tsr_status_t assert_no_partial_overlap(const Tensor* written_t, const Tensor* input_t, const char* op,
                                       const char* written, const char* input) {
  if (get_overlap_status(written_t, input_t) != MemOverlapStatus::Partial) return nullptr;
  return make_status(TSR_INVALID_ARGUMENT,
                     std::string(op) +
                         ": unsupported operation: some elements of the input tensor and the written-to tensor refer "
                         "to a single memory location. Please clone() the tensor before performing the operation. "
                         "(input: " +
                         input + ", " + layout(input_t) + "; written-to: " + written + ", " + layout(written_t) + ")");
}

}  // namespace tsr::core
