// Autograd graph: per-tensor state (AutogradMeta), graph nodes and edges. Internal to the core.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"
#include "tessera/tessera.hpp"

namespace tsr::core {

struct Node;

// A gradient hook registered through the API.
struct Hook {
  tsr_status_t (*fn)(void*, tsr_tensor_t*, tsr_tensor_t**) = nullptr;
  void* user = nullptr;
  void (*free_user)(void*) = nullptr;
};

// A post-accumulate-grad hook (leaves): told when a pass has finished accumulating .grad.
struct PostAccumulateHook {
  tsr_status_t (*fn)(void*, tsr_tensor_t*) = nullptr;
  void* user = nullptr;
  void (*free_user)(void*) = nullptr;
  uint64_t id = 0;
};

// Hooks and retain_grad of one tensor, shared with the node that produces the tensor (so the
// node can run them without holding the tensor, which would be a reference cycle).
struct TensorHooks {
  std::atomic<int32_t> refs{1};
  std::vector<Hook> hooks;
  std::vector<PostAccumulateHook> post_accumulate;  // leaves only
  uint64_t next_post_id = 1;
  bool retains_grad = false;
  std::mutex retained_mu;           // guards retained_grad: backward passes and tensor_grad race on it
  Tensor* retained_grad = nullptr;  // owned
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release();
};

struct AutogradMeta {
  bool requires_grad = false;  // leaves: the user's flag; non-leaves: true (grad_fn set)
  Node* grad_fn = nullptr;     // owned reference; null for leaves
  uint32_t output_nr = 0;
  // Guards grad. Backward passes on several threads may accumulate into one leaf at once (one
  // module shared by workers); PyTorch serializes that accumulation per leaf, and so do we.
  std::mutex grad_mu;
  Tensor* grad = nullptr;        // owned; accumulated by backward (leaves), under grad_mu
  TensorHooks* hooks = nullptr;  // owned reference; created on demand
  bool in_block = false;         // built in its tensor's TensorBlock (destroyed, not deleted)
};

// Where a gradient goes: into node's input buffer slot input_nr, or into a leaf's .grad.
struct Edge {
  Node* node = nullptr;    // owned reference
  Tensor* leaf = nullptr;  // owned reference (a leaf that requires grad)
  uint32_t input_nr = 0;
  bool valid() const { return node || leaf; }
};

// What the forward saw of a differentiable input, to validate and fit returned gradients.
struct InputMeta {
  // Copies t's shape, dtype and device. Only the first ndim sizes are written: recording a call
  // zeroed the whole array before, a slow `rep stos` on every recorded input.
  explicit InputMeta(const Tensor* t) : ndim(t->ndim), dtype(t->dtype), device(t->device) {
    for (int d = 0; d < t->ndim; ++d) sizes[d] = t->sizes[d];
  }
  int32_t ndim;
  int64_t sizes[TSR_MAX_DIMS];
  tsr_dtype_t dtype;
  tsr_device_t device;
};

struct Node {
  std::atomic<int32_t> refs{1};
  uint64_t seq = 0;                   // creation order: later nodes run first
  const char* name = "";              // "MulBackward" (static or owned by the op)
  std::vector<Edge> next;             // one per input slot
  std::vector<InputMeta> input_meta;  // parallel to next
  uint32_t num_outputs = 1;
  std::vector<TensorHooks*> out_hooks;  // per output, owned references (may be null)
  // Held while the node runs: passes over one shared graph (retain_graph) run it one at a time,
  // and a pass without retain_graph frees the saved tensors only after the others are done with
  // them (they then find `released` and fail with a clear error). The per-pass bookkeeping
  // (dependency counts, gradient buffers) lives in the pass, not here (autograd/engine.cpp).
  std::mutex mu;
  bool released = false;  // under mu: saved tensors freed after a backward without retain_graph

  virtual ~Node();
  // Called when the last reference goes (through delete_node, which frees chains iteratively):
  // deletes the node, or gives it back to a pool for reuse (OpNode).
  virtual void destroy() { delete this; }
  // Gives up what the node holds of others (its edges' references, its outputs' hooks) and
  // empties those lists, keeping their capacity.
  void drop_links();
  // grads_out[i]: gradient of output i (undefined = zero). Fills grads_in (size next.size()).
  virtual void apply(std::vector<tsr::Tensor>& grads_out, std::vector<tsr::Tensor>& grads_in, bool create_graph) = 0;
  virtual void release_saved() {}
  // A view whose gradient is zero outside one region of its input (slice, select, narrow):
  // is_region_view() says so, and add_into_region adds the output's gradient `g` into that region
  // of `full`, a buffer of the input's size and dtype that the engine owns. The engine calls it
  // instead of apply(), which would build a zero tensor of the input's size for every such view,
  // when the gradient goes into another node's buffer and no graph of the backward is being
  // built: several pieces of one tensor (an LSTM's gates, chunk) then fill one buffer.
  virtual bool is_region_view() const { return false; }
  virtual void add_into_region(const tsr::Tensor& g, tsr::Tensor& full) const {
    (void)g;
    (void)full;
  }
  // For a region view whose region is the rows [*begin, *end) of one dim *dim of the input (a
  // slice with step 1, a select), says so; copy_into_region then writes `g` there. The engine
  // uses them to fill a buffer that disjoint pieces cover without zeroing it first (then every
  // piece is a copy, not an add).
  virtual bool region_rows(int64_t* dim, int64_t* begin, int64_t* end) const {
    (void)dim;
    (void)begin;
    (void)end;
    return false;
  }
  virtual void copy_into_region(const tsr::Tensor& g, tsr::Tensor& full) const {
    (void)g;
    (void)full;
  }
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release();  // frees chains iteratively (autograd/graph.cpp)
};

// Next creation sequence number.
uint64_t next_node_seq();
inline bool requires_grad(const Tensor* t) { return t->autograd && t->autograd->requires_grad; }
// Fills e (an empty Edge) for a tensor input: its grad_fn output, its leaf accumulation, or
// none. Inline and in place: recording builds one per input, and an Edge returned by a call
// through memory was read back as one 16-byte load from two 8-byte stores (a store-forwarding
// stall on every recorded input).
inline void set_gradient_edge(Tensor* t, Edge& e) {
  if (!requires_grad(t)) return;
  AutogradMeta* m = t->autograd;
  if (m->grad_fn) {
    m->grad_fn->retain();
    e.node = m->grad_fn;
    e.input_nr = m->output_nr;
  } else {
    t->retain();
    e.leaf = t;
  }
}
inline Edge gradient_edge(Tensor* t) {
  Edge e;
  set_gradient_edge(t, e);
  return e;
}
// Gives t (which has no grad_fn yet) the history (node, output_nr): t then requires grad.
// set_history takes a new reference to node; adopt_history takes over one the caller holds.
void set_history(Tensor* t, Node* node, uint32_t output_nr);
void adopt_history(Tensor* t, Node* node, uint32_t output_nr);
AutogradMeta* ensure_meta(Tensor* t);

}  // namespace tsr::core
