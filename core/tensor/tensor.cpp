#include "tensor/tensor.hpp"

#include <new>
#include <string>

#include "runtime/status.hpp"
#include "runtime/thread_local.hpp"
#include "tessera/checked_math.hpp"

namespace tsr::core {

// ---- tensor blocks -------------------------------------------------------------------------
// Each thread keeps up to kBlockPool freed blocks in a list threaded through their memory,
// whichever thread allocated them: glibc's malloc and free of the block were 11 ns of a
// 250 ns recorded 1-element add, the pool's pop and push about 2. After the pool's owner is
// gone (thread exit) blocks are deleted. Sanitizer builds do not pool (TSR_OBJECT_POOLS).
namespace {

constexpr size_t kBlockPool = TSR_OBJECT_POOLS ? 256 : 0;

struct FreeBlock {
  FreeBlock* next;
};
static_assert(sizeof(FreeBlock) <= sizeof(TensorBlock), "a freed block holds the list link");

// One thread-local struct: one TLS address computation per call, not one per field.
struct BlockPool {
  FreeBlock* head;
  size_t count;
  bool live;  // the owner exists: freed blocks may be kept
};
TSR_TLS_HOT BlockPool t_blocks = {nullptr, 0, false};

// Created on a thread's first block, behind the flag test; its destructor returns the pool to
// the heap (after that, the guard of its static keeps it from being made again).
struct BlockPoolOwner {
  BlockPoolOwner() { t_blocks.live = true; }
  ~BlockPoolOwner() {
    BlockPool& p = t_blocks;
    p.live = false;
    while (FreeBlock* b = p.head) {
      p.head = b->next;
      // Unsized: clang declares the sized form only with -fsized-deallocation.
      ::operator delete(static_cast<void*>(b));
    }
    p.count = 0;
  }
};

}  // namespace

TensorBlock* new_tensor_block() {
  BlockPool& p = t_blocks;
  if (FreeBlock* b = p.head) {
    p.head = b->next;
    --p.count;
    return new (static_cast<void*>(b)) TensorBlock;
  }
  if (!p.live) {
    static thread_local BlockPoolOwner owner;
  }
  return new TensorBlock;
}

void TensorBlock::free_block(Storage* s) {
  auto* block = reinterpret_cast<TensorBlock*>(reinterpret_cast<char*>(s) - offsetof(TensorBlock, storage));
  BlockPool& p = t_blocks;
  if (!p.live || p.count >= kBlockPool) {
    delete block;
    return;
  }
  block->~TensorBlock();
  auto* b = reinterpret_cast<FreeBlock*>(block);
  b->next = p.head;
  p.head = b;
  ++p.count;
}

// ---- layout --------------------------------------------------------------------------------

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
  // Every new tensor comes through here: the overflow test is a multiply's flag, not a
  // division per dim (about 5 ns of a 1-element op).
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    if (__builtin_mul_overflow(s, sizes[i] > 0 ? sizes[i] : 1, &s)) return -1;
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
