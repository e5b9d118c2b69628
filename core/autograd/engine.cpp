// The backward engine: dependency counting over the graph reachable from the roots, then
// nodes in reverse creation order (a node runs once all its gradients arrived), gradients
// fitted to each input (sum over broadcast dims, dtype/device cast) and accumulated into
// leaves or captured for autograd_grad.
#include <queue>
#include <unordered_map>

#include "autograd/engine.hpp"
#include "autograd/node.hpp"

namespace tsr::core {

namespace {
thread_local bool t_grad_mode = true;
thread_local bool t_inference_mode = false;
}  // namespace

bool grad_mode() { return t_grad_mode && !t_inference_mode; }
void set_grad_mode(bool on) { t_grad_mode = on; }
bool inference_mode() { return t_inference_mode; }
void set_inference_mode(bool on) { t_inference_mode = on; }
bool GradModeGuard::grad_mode_raw() { return t_grad_mode; }

namespace {

std::string sizes_str(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }

// Makes g fit the input a node recorded: same shape (summing dims the forward broadcast),
// dtype and device.
tsr::Tensor fit_gradient(const Node* node, size_t slot, tsr::Tensor g) {
  const InputMeta& m = node->input_meta[slot];
  const Tensor* gt = g.get();
  if (gt->ndim == m.ndim && gt->dtype == m.dtype && gt->device.type == m.device.type &&
      gt->device.index == m.device.index && std::equal(m.sizes, m.sizes + m.ndim, gt->sizes))
    return g;  // the common case: nothing to fit
  std::vector<int64_t> gs = g.sizes();
  std::vector<int64_t> want(m.sizes, m.sizes + m.ndim);
  if (gs != want) {
    bool ok = gs.size() >= want.size();
    std::vector<int64_t> dims;
    size_t lead = ok ? gs.size() - want.size() : 0;
    for (size_t d = 0; ok && d < gs.size(); ++d) {
      if (d < lead) {
        dims.push_back(static_cast<int64_t>(d));
      } else if (want[d - lead] != gs[d]) {
        if (want[d - lead] == 1)
          dims.push_back(static_cast<int64_t>(d));
        else
          ok = false;
      }
    }
    if (!ok)
      throw tsr::Error(TSR_INTERNAL, std::string(node->name) + " returned a gradient of shape " + sizes_str(gs) +
                                         " for input " + std::to_string(slot) + ", which has shape " + sizes_str(want));
    if (!dims.empty()) g = tsr::sum(g, dims, true);
    g = g.reshape(want);
  }
  if (g.dtype() != m.dtype || !(g.device() == tsr::Device(m.device))) g = g.to(tsr::Device(m.device), m.dtype);
  return g;
}

tsr::Tensor run_hooks(TensorHooks* h, tsr::Tensor g) {
  if (!h) return g;
  for (Hook& hook : h->hooks) {
    tsr_tensor_t* rep = nullptr;
    tsr_status_t st = hook.fn(hook.user, g.get(), &rep);
    if (st) {
      tsr::Error e(st->code, std::string("gradient hook: ") + st->message);
      free_status(st);
      throw e;
    }
    if (rep) g = tsr::Tensor::adopt(rep);
  }
  return g;
}

tsr::Tensor accumulate(const tsr::Tensor& a, const tsr::Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return tsr::add(a, b);
}

struct Task {
  bool retain_graph = false, create_graph = false;
  bool capture_only = false;  // autograd_grad: no .grad accumulation
  std::unordered_map<const Tensor*, size_t> leaf_capture;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, size_t>>> node_capture;
  std::vector<tsr::Tensor> captured;
  // Per-pass state of each node the pass reaches. It belongs to the pass, not to the node, so
  // that passes running at once over one shared graph (retain_graph) do not mix their counts
  // and gradients. unordered_map keeps references to its elements valid as it grows.
  struct NodeState {
    int32_t deps = 0;                 // edges from nodes of this pass whose gradient has not arrived
    std::vector<tsr::Tensor> buffer;  // gradient of each output, accumulated as edges deliver
    // Per buffer slot: the tensor there was made by this pass (a sum, a region buffer) and nothing
    // else refers to it, so later deliveries may add into it in place. A gradient delivered as it
    // came (a node's output, a root's gradient) may be shared and is never written.
    std::vector<char> owned;
  };
  std::unordered_map<Node*, NodeState> nodes;
  // Leaves with post-accumulate-grad hooks that this pass reaches: the deliveries still to come
  // (edges from nodes of the pass, and roots) and whether any brought a gradient. Their hooks
  // run when the last delivery is settled.
  struct LeafState {
    int32_t pending = 0;
    bool got = false;
  };
  std::unordered_map<Tensor*, LeafState> hooked_leaves;
};

bool has_post_accumulate_hooks(const Tensor* leaf) {
  const AutogradMeta* m = leaf->autograd;
  return m && m->hooks && !m->hooks->post_accumulate.empty();
}

// One delivery to a hooked leaf is done (`delivered`: it carried a gradient); after the last,
// the leaf's .grad is complete for this pass and its post-accumulate hooks run.
void settle_leaf(Task& task, Tensor* leaf, bool delivered) {
  if (task.hooked_leaves.empty()) return;
  auto it = task.hooked_leaves.find(leaf);
  if (it == task.hooked_leaves.end()) return;
  it->second.got = it->second.got || delivered;
  if (--it->second.pending > 0 || !it->second.got) return;
  const std::vector<PostAccumulateHook> hooks = leaf->autograd->hooks->post_accumulate;  // a hook may remove itself
  for (const PostAccumulateHook& h : hooks) {
    if (tsr_status_t st = h.fn(h.user, leaf)) {
      tsr::Error e(st->code, std::string("post-accumulate-grad hook: ") + st->message);
      free_status(st);
      throw e;
    }
  }
}

void deliver_to_leaf(Task& task, Tensor* leaf, tsr::Tensor g) {
  AutogradMeta* m = leaf->autograd;
  g = run_hooks(m ? m->hooks : nullptr, std::move(g));
  auto cap = task.leaf_capture.find(leaf);
  if (cap != task.leaf_capture.end()) task.captured[cap->second] = accumulate(task.captured[cap->second], g);
  if (task.capture_only || !m) return;
  std::lock_guard<std::mutex> lock(m->grad_mu);
  if (!m->grad) {
    Tensor* gt = g.get();
    // A gradient shared with another consumer (or a broadcast view) would be changed by an
    // in-place update of this .grad (optimizers, zero_): keep a private dense copy.
    if (!task.create_graph && (gt->refs.load() > 1 || !gt->contiguous)) g = g.clone();
    m->grad = g.release();
  } else {
    tsr::Tensor sum = tsr::add(tsr::Tensor::borrow(m->grad), g);
    m->grad->release();
    m->grad = sum.release();
  }
}

// A node joins a task when first reached: its state is created then. Returns whether it was new.
bool join(Task& task, Node* n, Task::NodeState** state) {
  auto [it, fresh] = task.nodes.try_emplace(n);
  if (fresh) {
    it->second.buffer.resize(n->num_outputs);
    it->second.owned.assign(n->num_outputs, 0);
  }
  *state = &it->second;
  return fresh;
}

// A slice or select whose gradient goes into another node's buffer: adds it into that buffer's
// region, the buffer made once (of the base's size) and owned by the pass, instead of apply()'s
// zero tensor of the base's size per view.
void add_into_region_of_buffer(Task& task, const Node* view, const tsr::Tensor& g) {
  const Edge& e = view->next[0];
  Task::NodeState& st = task.nodes[e.node];
  tsr::Tensor& slot = st.buffer[e.input_nr];
  const InputMeta& m = view->input_meta[0];
  if (!slot.defined())
    slot = tsr::zeros(std::vector<int64_t>(m.sizes, m.sizes + m.ndim), m.dtype, tsr::Device(m.device));
  else if (!st.owned[e.input_nr])
    slot = slot.clone();  // delivered as it came: possibly shared, so not written in place
  st.owned[e.input_nr] = 1;
  view->add_into_region(g, slot);
}

tsr_status_t run(Task& task, const std::vector<Tensor*>& roots, std::vector<tsr::Tensor>& root_grads) {
  // Seed: leaves receive their gradient directly; other roots fill their node's buffer.
  std::vector<Node*> stack, seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    AutogradMeta* m = roots[i]->autograd;
    if (!m->grad_fn) continue;
    Task::NodeState* st = nullptr;
    if (join(task, m->grad_fn, &st)) {
      stack.push_back(m->grad_fn);
      seeds.push_back(m->grad_fn);
    }
    tsr::Tensor& slot = st->buffer[m->output_nr];
    slot = accumulate(slot, root_grads[i]);
  }
  // Dependencies: how many edges into each node come from nodes that will run.
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (Edge& e : n->next) {
      if (e.leaf && !task.capture_only && has_post_accumulate_hooks(e.leaf)) ++task.hooked_leaves[e.leaf].pending;
      if (!e.node) continue;
      Task::NodeState* st = nullptr;
      if (join(task, e.node, &st)) stack.push_back(e.node);
      ++st->deps;
    }
  }
  for (Tensor* r : roots)
    if (!r->autograd->grad_fn && !task.capture_only && has_post_accumulate_hooks(r)) ++task.hooked_leaves[r].pending;
  for (size_t i = 0; i < roots.size(); ++i) {
    AutogradMeta* m = roots[i]->autograd;
    if (!m->grad_fn) {
      deliver_to_leaf(task, roots[i], root_grads[i]);
      settle_leaf(task, roots[i], true);
    }
  }
  auto later_first = [](const Node* a, const Node* b) { return a->seq < b->seq; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  for (Node* n : seeds)
    if (task.nodes[n].deps == 0) ready.push(n);
  GradModeGuard mode(task.create_graph);
  std::vector<tsr::Tensor> grads_in;
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    std::vector<tsr::Tensor> grads = std::move(task.nodes[n].buffer);
    grads.resize(n->num_outputs);
    std::unique_lock<std::mutex> node_lock(n->mu);
    bool any = false;
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) continue;
      any = true;
      if (i < n->out_hooks.size() && n->out_hooks[i]) {
        TensorHooks* h = n->out_hooks[i];
        grads[i] = run_hooks(h, grads[i]);
        if (h->retains_grad) {
          std::lock_guard<std::mutex> lock(h->retained_mu);
          if (h->retained_grad) h->retained_grad->release();
          h->retained_grad = tsr::Tensor(grads[i]).release();
        }
      }
    }
    if (!task.node_capture.empty()) {
      auto cap = task.node_capture.find(n);
      if (cap != task.node_capture.end())
        for (auto& [out_nr, idx] : cap->second)
          if (out_nr < grads.size()) task.captured[idx] = accumulate(task.captured[idx], grads[out_nr]);
    }
    grads_in.clear();
    if (any) {
      if (n->released)
        throw tsr::Error(TSR_FAILED_PRECONDITION,
                         "trying to backward through the graph a second time (" + std::string(n->name) +
                             "'s saved tensors were freed after the first backward); pass retain_graph=true to the "
                             "first backward if you need to backward twice");
      if (!task.create_graph && n->is_region_view() && n->next.size() == 1 && n->next[0].node)
        add_into_region_of_buffer(task, n, grads[0]);  // grads_in stays empty: the edge below only counts down
      else
        n->apply(grads, grads_in, task.create_graph);
      if (!task.retain_graph) {
        n->release_saved();
        n->released = true;
      }
    }
    node_lock.unlock();  // the edges below are this pass's own state and the leaves' locks
    for (size_t j = 0; j < n->next.size(); ++j) {
      Edge& e = n->next[j];
      if (!e.valid()) continue;
      tsr::Tensor g = j < grads_in.size() ? std::move(grads_in[j]) : tsr::Tensor();
      if (g.defined()) g = fit_gradient(n, j, std::move(g));
      if (e.node) {
        Task::NodeState& st = task.nodes[e.node];
        if (g.defined()) {
          tsr::Tensor& slot = st.buffer[e.input_nr];
          if (slot.defined() && st.owned[e.input_nr] && !task.create_graph) {
            tsr::add_(slot, g);  // this pass's own sum: no new tensor per delivery
          } else {
            const bool sum = slot.defined();
            slot = accumulate(slot, g);
            st.owned[e.input_nr] = sum ? 1 : 0;  // a sum is new; a first delivery is the sender's
          }
        }
        if (--st.deps == 0) ready.push(e.node);
      } else {
        const bool delivered = g.defined();
        if (delivered) deliver_to_leaf(task, e.leaf, std::move(g));
        settle_leaf(task, e.leaf, delivered);
      }
    }
  }
  return nullptr;
}

tsr_status_t prepare_roots(const char* what, size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads,
                           std::vector<Tensor*>& roots, std::vector<tsr::Tensor>& root_grads) {
  for (size_t i = 0; i < n; ++i) {
    Tensor* t = tensors ? tensors[i] : nullptr;
    if (!t) return make_status(TSR_INVALID_ARGUMENT, std::string(what) + ": tensor " + std::to_string(i) + " is NULL");
    if (!requires_grad(t))
      return make_status(TSR_INVALID_ARGUMENT, std::string(what) + ": element " + std::to_string(i) +
                                                   " of tensors does not require grad and does not have a grad_fn");
    Tensor* g = grads ? grads[i] : nullptr;
    tsr::Tensor gt;
    if (!g) {
      if (t->numel != 1)
        return make_status(TSR_INVALID_ARGUMENT, std::string(what) +
                                                     ": grad can be implicitly created only for "
                                                     "one-element outputs, got " +
                                                     shape_str(t->sizes, t->ndim));
      tsr::RuntimeScope scope(t->runtime);
      gt = tsr::full(std::vector<int64_t>(t->sizes, t->sizes + t->ndim), 1.0, t->dtype, tsr::Device(t->device));
    } else {
      bool same = g->ndim == t->ndim && std::equal(g->sizes, g->sizes + g->ndim, t->sizes);
      if (!same)
        return make_status(TSR_INVALID_ARGUMENT, std::string(what) + ": mismatch in shape: grad_output[" +
                                                     std::to_string(i) + "] has shape " + shape_str(g->sizes, g->ndim) +
                                                     " and output[" + std::to_string(i) + "] has shape " +
                                                     shape_str(t->sizes, t->ndim));
      gt = tsr::Tensor::borrow(g);
    }
    roots.push_back(t);
    root_grads.push_back(std::move(gt));
  }
  return nullptr;
}

template <class F>
tsr_status_t guarded(const char* what, F&& f) {
  try {
    return f();
  } catch (const tsr::Error& e) {
    return make_status(e.code(), std::string(what) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return make_status(TSR_OUT_OF_MEMORY, std::string(what) + ": out of host memory");
  } catch (const std::exception& e) {
    return make_status(TSR_INTERNAL, std::string(what) + ": " + e.what());
  }
}

}  // namespace

tsr_status_t backward(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads, bool retain_graph,
                      bool create_graph) {
  return guarded("backward", [&]() -> tsr_status_t {
    if (n == 0) return nullptr;
    tsr::RuntimeScope scope(tensors && tensors[0] ? tensors[0]->runtime : nullptr);
    std::vector<Tensor*> roots;
    std::vector<tsr::Tensor> root_grads;
    TSR_RETURN_IF_ERROR(prepare_roots("backward", n, tensors, grads, roots, root_grads));
    Task task;
    task.retain_graph = retain_graph || create_graph;
    task.create_graph = create_graph;
    return run(task, roots, root_grads);
  });
}

tsr_status_t grad(size_t noutputs, tsr_tensor_t* const* outputs, tsr_tensor_t* const* grad_outputs, size_t ninputs,
                  tsr_tensor_t* const* inputs, bool retain_graph, bool create_graph, bool allow_unused,
                  tsr_tensor_t** grads_out) {
  return guarded("grad", [&]() -> tsr_status_t {
    if (ninputs > 0 && (!inputs || !grads_out))
      return make_status(TSR_INVALID_ARGUMENT, "grad: inputs and grads_out are required");
    for (size_t i = 0; i < ninputs; ++i) grads_out[i] = nullptr;
    if (noutputs == 0) return make_status(TSR_INVALID_ARGUMENT, "grad: no outputs given");
    tsr::RuntimeScope scope(outputs && outputs[0] ? outputs[0]->runtime : nullptr);
    std::vector<Tensor*> roots;
    std::vector<tsr::Tensor> root_grads;
    TSR_RETURN_IF_ERROR(prepare_roots("grad", noutputs, outputs, grad_outputs, roots, root_grads));
    Task task;
    task.retain_graph = retain_graph || create_graph;
    task.create_graph = create_graph;
    task.capture_only = true;
    task.captured.resize(ninputs);
    for (size_t i = 0; i < ninputs; ++i) {
      Tensor* t = inputs[i];
      if (!t || !requires_grad(t))
        return make_status(TSR_INVALID_ARGUMENT, "grad: input " + std::to_string(i) + " does not require grad");
      if (t->autograd->grad_fn)
        task.node_capture[t->autograd->grad_fn].push_back({t->autograd->output_nr, i});
      else
        task.leaf_capture[t] = i;
    }
    TSR_RETURN_IF_ERROR(run(task, roots, root_grads));
    for (size_t i = 0; i < ninputs; ++i)
      if (!task.captured[i].defined() && !allow_unused)
        return make_status(TSR_INVALID_ARGUMENT, "grad: input " + std::to_string(i) +
                                                     " was not used in the graph of the outputs (pass allow_unused)");
    for (size_t i = 0; i < ninputs; ++i) grads_out[i] = task.captured[i].release();
    return nullptr;
  });
}

}  // namespace tsr::core
