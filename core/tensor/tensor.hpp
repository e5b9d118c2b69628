// Tensors inside the core: ref-counted storage plus a strided view of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstddef>
#include <cstring>

#include "memory/allocator.hpp"
#include "tensor/dtype.hpp"
#include "tessera/api.h"

struct tsr_runtime_s;

namespace tsr::core {

struct AutogradMeta;  // autograd/node.hpp
void free_autograd_meta(AutogradMeta* m);

// A block of device memory shared by every view of it.
struct Storage {
  std::atomic<int64_t> refs{1};
  // Bumped by every in-place write through any view (autograd's saved-tensor check).
  std::atomic<uint32_t> version{0};
  void* data = nullptr;
  size_t nbytes = 0;
  DeviceAllocator* allocator = nullptr;  // frees data; nullptr = not owned
  tsr_device_t device{};
  tsr_stream_t* stream = nullptr;  // the stream the memory was allocated for
  // tensor_from_blob: called once with (deleter_ctx, data) when the storage dies.
  void (*deleter)(void* ctx, void* data) = nullptr;
  void* deleter_ctx = nullptr;
  // Set when this storage was allocated in one block with the tensor that created it (see
  // TensorBlock): the block is freed when the storage dies, which is always after that tensor.
  void (*free_block)(Storage*) = nullptr;

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  // A count of 1 means we hold the only reference: nobody else can race us, so the common
  // "last owner" case skips the atomic read-modify-write.
  void release() {
    if (refs.load(std::memory_order_acquire) == 1 || refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (allocator)
        allocator->deallocate(data);
      else if (deleter)
        deleter(deleter_ctx, data);
      if (free_block)
        free_block(this);
      else
        delete this;
    }
  }
};

}  // namespace tsr::core

struct tsr_tensor_s {
  std::atomic<int32_t> refs{1};
  int32_t ndim = 0;
  tsr_dtype_t dtype = TSR_F32;
  tsr_device_t device{};
  bool wrapped_number = false;  // a C++/Python scalar for type promotion
  bool contiguous = true;       // cached: row-major dense
  tsr_runtime_s* runtime = nullptr;
  tsr::core::Storage* storage = nullptr;
  int64_t offset = 0;  // elements
  int64_t numel = 1;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];

  void* data() const {
    return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(tsr::core::dtype_size(dtype));
  }
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  bool in_block = false;                        // allocated inside a TensorBlock with its storage
  tsr::core::AutogradMeta* autograd = nullptr;  // null unless the tensor is part of a graph

  void bump_version() {
    if (storage) storage->version.fetch_add(1, std::memory_order_relaxed);
  }

  void release() {  // same "sole owner" shortcut as Storage::release
    if (refs.load(std::memory_order_acquire) == 1 || refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (autograd) {
        tsr::core::free_autograd_meta(autograd);
        autograd = nullptr;
      }
      // A tensor in a block holds a storage reference until here, so the storage (which
      // frees the block) always outlives it.
      tsr::core::Storage* s = storage;
      if (!in_block) delete this;
      if (s) s->release();
    }
  }
};

namespace tsr::core {

// A new tensor and its storage in one allocation: one allocation per op output instead of
// two (the 1-element op path is dominated by such costs). The tensor's autograd state, when it
// gets one (the output of a recorded op), is built in meta_space too (autograd/graph.cpp).
// Blocks come from new_tensor_block() and go back through free_block (tensor/tensor.cpp).
//
// A CPU tensor of at most kInlineBytes (a scalar, a loss, a step count) keeps its data in the
// block too, where the device's allocator allows it (DeviceAllocator::small_tensors_inline):
// the caching allocator's lock, best-fit search and split, and the merge on free were 27 ns of
// a 250 ns recorded 1-element add. Such storage has no allocator: it is not in the device's
// memory statistics, snapshot or limit.
struct TensorBlock {
  static constexpr size_t kInlineBytes = 16;  // the largest element size (kMaxNumel)
  tsr_tensor_s tensor;
  Storage storage;
  alignas(16) unsigned char meta_space[96];
  alignas(16) unsigned char inline_data[kInlineBytes];
  static void free_block(Storage* s);
};

// A default-constructed block, reused from this thread's pool of freed blocks when it has one
// (no malloc, no free in the steady state of a loop of ops). Throws std::bad_alloc.
TensorBlock* new_tensor_block();

}  // namespace tsr::core

namespace tsr::core {

using Tensor = tsr_tensor_s;

// Recomputes numel and the contiguous flag from sizes/strides.
void refresh_layout(Tensor* t);
// Fills row-major strides for sizes; returns numel (or -1 on overflow).
int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides);
// The largest element count a tensor may have: numel * 16 (the largest element size) fits in
// int64_t, so byte counts derived from a checked shape never wrap.
constexpr int64_t kMaxNumel = INT64_MAX >> 4;

// Validates a shape (ndim range, non-negative sizes, numel overflow); names `op` in errors.
tsr_status_t check_shape(const char* op, int ndim, const int64_t* sizes, int64_t* numel);
// New tensor sharing t's storage with a new geometry.
Tensor* make_view(const Tensor* t, int ndim, const int64_t* sizes, const int64_t* strides, int64_t offset);
// Wraps a negative dim; error names op and the valid range.
tsr_status_t wrap_dim(const char* op, int64_t dim, int ndim, int* out);

}  // namespace tsr::core
