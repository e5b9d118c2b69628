// Autograd graph bookkeeping: per-tensor state, node lifetime, edges and histories.
#include <new>
#include <vector>

#include "autograd/engine.hpp"
#include "autograd/node.hpp"
#include "runtime/thread_local.hpp"

namespace tsr::core {

namespace {
std::atomic<uint64_t> g_seq{0};
// Nodes freed while another node is being freed are queued here and freed by the outermost
// call: a long chain (a million-step graph) is then freed iteratively, not recursively.
TSR_TLS_HOT std::vector<Node*>* t_pending_deletes = nullptr;
// The queue's storage, kept for the thread's life so that freeing a node allocates nothing.
// t_queue is a plain pointer (valid until the thread ends): a node freed after the owner's
// destruction (by another thread-local's destructor) uses a queue of its own.
// The owner is created on the thread's first free, behind the pointer test (its guard check
// stays off the path of every later free; after its destruction the guard keeps it from being
// made again).
TSR_TLS_HOT std::vector<Node*>* t_queue = nullptr;
struct QueueOwner {
  std::vector<Node*> v;
  QueueOwner() { t_queue = &v; }
  ~QueueOwner() { t_queue = nullptr; }
};
}  // namespace

// Each thread takes sequence numbers from blocks of the global counter: one atomic update per
// kSeqBlock recorded nodes instead of one per node (the update was 2% of a recorded 1-element
// add, and a line every recording thread writes). Numbers stay unique and grow along each
// thread's recording; between threads they follow the blocks, not the clock, which the engine
// allows: seq only orders nodes that are ready at once (dependencies are counted), as PyTorch's
// per-thread sequence numbers do.
static constexpr uint64_t kSeqBlock = 1024;
static TSR_TLS_HOT uint64_t t_seq_next = 0;
static TSR_TLS_HOT uint64_t t_seq_end = 0;
uint64_t next_node_seq() {
  if (t_seq_next == t_seq_end) {
    t_seq_next = g_seq.fetch_add(kSeqBlock, std::memory_order_relaxed) + 1;
    t_seq_end = t_seq_next + kSeqBlock;
  }
  return t_seq_next++;
}

void delete_node(Node* n) {
  if (t_pending_deletes) {
    t_pending_deletes->push_back(n);
    return;
  }
  if (!t_queue) {
    static thread_local QueueOwner owner;
  }
  std::vector<Node*> own;
  std::vector<Node*>& pending = t_queue ? *t_queue : own;
  pending.push_back(n);
  t_pending_deletes = &pending;
  while (!pending.empty()) {
    Node* x = pending.back();
    pending.pop_back();
    x->destroy();  // may push more
  }
  t_pending_deletes = nullptr;
}

// A count of 1 means we hold the only reference (as in Tensor::release): the last release of a
// node, the common one when an op's output dies, then skips the atomic read-modify-write.
void Node::release() {
  if (refs.load(std::memory_order_acquire) == 1 || refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete_node(this);
}

Node::~Node() { drop_links(); }

void Node::drop_links() {
  for (Edge& e : next) {
    if (e.node) e.node->release();
    if (e.leaf) e.leaf->release();
  }
  next.clear();
  for (TensorHooks* h : out_hooks)
    if (h) h->release();
  out_hooks.clear();
}

void TensorHooks::release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (Hook& h : hooks)
    if (h.free_user) h.free_user(h.user);
  for (PostAccumulateHook& h : post_accumulate)
    if (h.free_user) h.free_user(h.user);
  if (retained_grad) retained_grad->release();
  delete this;
}

void free_autograd_meta(AutogradMeta* m) {
  if (m->grad_fn) m->grad_fn->release();
  if (m->grad) m->grad->release();
  if (m->hooks) m->hooks->release();
  if (m->in_block)
    m->~AutogradMeta();
  else
    delete m;
}

static_assert(sizeof(AutogradMeta) <= sizeof(TensorBlock::meta_space) &&
                  alignof(AutogradMeta) <= alignof(TensorBlock),
              "TensorBlock::meta_space must hold an AutogradMeta");

// A tensor allocated in a TensorBlock (every op output) builds its autograd state in the block:
// no allocation per recorded output.
AutogradMeta* ensure_meta(Tensor* t) {
  if (t->autograd) return t->autograd;
  if (t->in_block) {
    auto* block = reinterpret_cast<TensorBlock*>(reinterpret_cast<char*>(t) - offsetof(TensorBlock, tensor));
    t->autograd = new (block->meta_space) AutogradMeta;
    t->autograd->in_block = true;
  } else {
    t->autograd = new AutogradMeta;
  }
  return t->autograd;
}

void set_history(Tensor* t, Node* node, uint32_t output_nr) {
  node->retain();
  adopt_history(t, node, output_nr);
}

void adopt_history(Tensor* t, Node* node, uint32_t output_nr) {
  AutogradMeta* m = ensure_meta(t);
  if (m->grad_fn) m->grad_fn->release();
  m->grad_fn = node;
  m->output_nr = output_nr;
  m->requires_grad = true;
  if (m->hooks) {  // hooks registered on t before (in-place rebase) follow it to the new node
    if (node->out_hooks.size() <= output_nr) node->out_hooks.resize(output_nr + 1, nullptr);
    if (!node->out_hooks[output_nr]) {
      m->hooks->retain();
      node->out_hooks[output_nr] = m->hooks;
    }
  }
}

}  // namespace tsr::core
