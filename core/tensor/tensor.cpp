#include "tensor/tensor.hpp"

#include <string>

#include "runtime/status.hpp"
#include "tessera/checked_math.hpp"

namespace tsr::core {

void refresh_layout(Tensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->sizes[i];
  t->numel = n;
  bool contig = true;
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->sizes[i] == 1) continue;
    if (t->strides[i] != expected) {
      contig = false;
      break;
    }
    expected *= t->sizes[i];
  }
  t->contiguous = contig || n == 0;
}

int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    if (sizes[i] != 0 && s > INT64_MAX / (sizes[i] > 0 ? sizes[i] : 1)) return -1;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= sizes[i];
  return n;
}

tsr_status_t check_shape(const char* op, int ndim, const int64_t* sizes, int64_t* numel) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": ndim " + std::to_string(ndim) + " is outside [0, " +
                                                 std::to_string(TSR_MAX_DIMS) + "]");
  if (ndim > 0 && sizes == nullptr) return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": sizes is NULL");
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] < 0)
      return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": negative size " + std::to_string(sizes[i]) +
                                                   " in shape " + shape_str(sizes, ndim));
  // The element count must leave room for any element size (16 bytes at most) so that the
  // byte count computed from it later cannot wrap.
  int64_t n = 0;
  if (!checked_numel(ndim, sizes, &n) || n > kMaxNumel)
    return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": shape " + shape_str(sizes, ndim) +
                                                 " is too large (more than " + std::to_string(kMaxNumel) +
                                                 " elements)");
  if (numel) *numel = n;
  return nullptr;
}

Tensor* make_view(const Tensor* t, int ndim, const int64_t* sizes, const int64_t* strides, int64_t offset) {
  Tensor* v = new Tensor;
  v->runtime = t->runtime;
  v->dtype = t->dtype;
  v->device = t->device;
  v->storage = t->storage;
  v->storage->retain();
  v->offset = offset;
  v->ndim = ndim;
  for (int i = 0; i < ndim; ++i) {
    v->sizes[i] = sizes[i];
    v->strides[i] = strides[i];
  }
  refresh_layout(v);
  return v;
}

tsr_status_t wrap_dim(const char* op, int64_t dim, int ndim, int* out) {
  int64_t n = ndim == 0 ? 1 : ndim;  // a 0-dim tensor accepts dim 0 / -1, as in PyTorch
  if (dim < -n || dim >= n)
    return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": dimension " + std::to_string(dim) +
                                                 " out of range (expected to be in [" + std::to_string(-n) + ", " +
                                                 std::to_string(n - 1) + "] for a " + std::to_string(ndim) +
                                                 "-d tensor)");
  *out = static_cast<int>(dim < 0 ? dim + n : dim);
  return nullptr;
}

}  // namespace tsr::core
