// Autograd graph bookkeeping: per-tensor state, node lifetime, edges and histories.
#include <vector>

#include "autograd/engine.hpp"
#include "autograd/node.hpp"

namespace tsr::core {

namespace {
std::atomic<uint64_t> g_seq{0};
// Nodes freed while another node is being freed are queued here and freed by the outermost
// call: a long chain (a million-step graph) is then freed iteratively, not recursively.
thread_local std::vector<Node*>* t_pending_deletes = nullptr;
// The queue's storage, kept for the thread's life so that freeing a node allocates nothing.
// t_queue is a plain pointer (valid until the thread ends): a node freed after the owner's
// destruction (by another thread-local's destructor) uses a queue of its own.
thread_local std::vector<Node*>* t_queue = nullptr;
struct QueueOwner {
  std::vector<Node*> v;
  QueueOwner() { t_queue = &v; }
  ~QueueOwner() { t_queue = nullptr; }
};
}  // namespace

uint64_t next_node_seq() { return g_seq.fetch_add(1, std::memory_order_relaxed) + 1; }

void delete_node(Node* n) {
  if (t_pending_deletes) {
    t_pending_deletes->push_back(n);
    return;
  }
  static thread_local QueueOwner owner;
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

void Node::release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete_node(this);
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
  delete m;
}

AutogradMeta* ensure_meta(Tensor* t) {
  if (!t->autograd) t->autograd = new AutogradMeta;
  return t->autograd;
}

Edge gradient_edge(Tensor* t) {
  Edge e;
  if (!requires_grad(t)) return e;
  AutogradMeta* m = t->autograd;
  if (m->grad_fn) {
    m->grad_fn->retain();
    e.node = m->grad_fn;
    e.input_nr = m->output_nr;
  } else {
    t->retain();
    e.leaf = t;
  }
  return e;
}

void set_history(Tensor* t, Node* node, uint32_t output_nr) {
  AutogradMeta* m = ensure_meta(t);
  node->retain();
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
