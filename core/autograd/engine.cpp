// The backward engine: dependency counting over the graph reachable from the roots, then
// nodes in reverse creation order (a node runs once all its gradients arrived), gradients
// fitted to each input (sum over broadcast dims, dtype/device cast) and accumulated into
// leaves or captured for autograd_grad.
#include <algorithm>
#include <unordered_map>

#include "autograd/engine.hpp"
#include "autograd/node.hpp"

namespace tsr::core {

TSR_TLS_HOT bool t_grad_mode = true;
TSR_TLS_HOT bool t_inference_mode = false;

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

// Per-pass index from a node to its slot in the pass's tables: open addressing over one array,
// so reaching a node costs no allocation (a node-based map cost one per node, plus its state's
// two vectors, about a third of a backward through small ops).
class NodeIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  // The value of n, which must be present.
  uint32_t find(const Node* n) const {
    for (size_t i = hash(n);; i = (i + 1) & mask())
      if (keys_[i] == n) return vals_[i];
  }
  // Inserts n with value v unless present; returns the value stored and whether it was new.
  uint32_t insert(const Node* n, uint32_t v, bool* fresh) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    for (size_t i = hash(n);; i = (i + 1) & mask()) {
      if (keys_[i] == n) {
        *fresh = false;
        return vals_[i];
      }
      if (!keys_[i]) {
        keys_[i] = n;
        vals_[i] = v;
        ++used_;
        *fresh = true;
        return v;
      }
    }
  }
  // Empties the index, keeping its capacity when small (a thread's passes reuse it).
  void clear() {
    if (keys_.size() > kKeepSlots) {
      keys_ = {};
      vals_ = {};
    } else {
      std::fill(keys_.begin(), keys_.end(), nullptr);
    }
    used_ = 0;
  }

 private:
  static constexpr size_t kKeepSlots = size_t{1} << 16;
  size_t mask() const { return keys_.size() - 1; }
  size_t hash(const Node* n) const {
    // Nodes are heap objects: the low bits carry no information, the multiply spreads the rest.
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask();
  }
  void grow() {
    std::vector<const Node*> old_keys = std::move(keys_);
    std::vector<uint32_t> old_vals = std::move(vals_);
    keys_.assign(old_keys.empty() ? 64 : 2 * old_keys.size(), nullptr);
    vals_.assign(keys_.size(), 0);
    used_ = 0;
    bool fresh = false;
    for (size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i]) insert(old_keys[i], old_vals[i], &fresh);
  }
  std::vector<const Node*> keys_;
  std::vector<uint32_t> vals_;
  size_t used_ = 0;
};

struct Task {
  bool retain_graph = false, create_graph = false;
  bool capture_only = false;  // autograd_grad: no .grad accumulation
  std::unordered_map<const Tensor*, size_t> leaf_capture;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, size_t>>> node_capture;
  std::vector<tsr::Tensor> captured;
  // Leaves with post-accumulate-grad hooks that this pass reaches: the deliveries still to come
  // (edges from nodes of the pass, and roots) and whether any brought a gradient. Their hooks
  // run when the last delivery is settled.
  struct LeafState {
    int32_t pending = 0;
    bool got = false;
  };
  std::unordered_map<Tensor*, LeafState> hooked_leaves;
};

// Per-pass state of the nodes a pass reaches, in flat tables indexed by the node's slot (its
// order of arrival). It belongs to the pass, not to the node, so that passes running at once
// over one shared graph (retain_graph) do not mix their counts and gradients. A thread keeps its
// tables between passes (PassTables::Lease), so a backward in the steady state allocates
// nothing for its bookkeeping.
struct PassTables {
  struct NodeState {
    Node* node = nullptr;
    int32_t deps = 0;     // edges from nodes of this pass whose gradient has not arrived
    uint32_t first = 0;   // its outputs' gradients: buffer[first, first + num_outputs)
    uint32_t edges = 0;   // its edges' target slots: targets[edges, edges + next.size())
  };
  NodeIndex index;
  std::vector<NodeState> states;
  std::vector<tsr::Tensor> buffer;  // gradient of each output of each node, accumulated as edges deliver
  // Per buffer slot: kShared, a gradient delivered as it came (a node's output, a root's
  // gradient), which may be shared and is never written; kOwned, made by this pass (a sum, a
  // region buffer) and referred to by nothing else, so later deliveries may add into it in place;
  // kCovered, an owned region buffer of which only the rows in its `covers` entry are written
  // yet (the rest is uninitialized until complete_cover zeroes it).
  enum : char { kShared = 0, kOwned = 1, kCovered = 2 };
  std::vector<char> owned;
  // The written rows of each kCovered slot: pieces of one dim, disjoint ([begin, end) pairs).
  struct Cover {
    uint32_t slot;
    int64_t dim;
    std::vector<std::pair<int64_t, int64_t>> rows;
  };
  std::vector<Cover> covers;
  Cover& cover_of(uint32_t b) {
    for (Cover& c : covers)
      if (c.slot == b) return c;
    throw tsr::Error(TSR_INTERNAL, "autograd: region buffer without its cover");
  }
  // Zeroes the rows of kCovered slot b that no piece wrote: it becomes an ordinary owned sum.
  void complete_cover(uint32_t b) {
    Cover& c = cover_of(b);
    std::sort(c.rows.begin(), c.rows.end());
    tsr::Tensor& t = buffer[b];
    int64_t at = 0;
    auto zero = [&](int64_t from, int64_t to) {
      if (to > from) t.narrow(c.dim, from, to - from).fill_(0.0);
    };
    for (const auto& [begin, end] : c.rows) {
      zero(at, begin);
      at = std::max(at, end);
    }
    zero(at, t.size(c.dim));
    covers.erase(covers.begin() + (&c - covers.data()));
    owned[b] = kOwned;
  }
  std::vector<uint32_t> targets;  // per edge of each node: the slot of its node, or kNone
  std::vector<uint32_t> stack;
  std::vector<tsr::Tensor> grads, grads_in;  // the running node's gradients in and out

  // A node joins the pass when first reached: its state is made then, its gradient slots are
  // counted (the buffer is sized once all nodes are known). Returns its slot.
  uint32_t join(Node* n, bool* fresh) {
    uint32_t slot = index.insert(n, static_cast<uint32_t>(states.size()), fresh);
    if (*fresh) {
      NodeState st;
      st.node = n;
      st.first = nslots;
      states.push_back(st);
      nslots += n->num_outputs;
    }
    return slot;
  }
  uint32_t nslots = 0;  // gradient slots of the nodes joined so far
  void clear() {
    nslots = 0;
    index.clear();
    states.clear();
    buffer.clear();
    owned.clear();
    covers.clear();
    targets.clear();
    stack.clear();
    grads.clear();
    grads_in.clear();
    if (states.capacity() > kKeepNodes) *this = PassTables();
  }
  static constexpr size_t kKeepNodes = size_t{1} << 15;

  // This thread's tables, or new ones while they are in use (a hook or formula that runs a
  // backward of its own). Given back, emptied, when the lease ends.
  class Lease {
   public:
    Lease() : tables_(t_free ? t_free : new PassTables) { t_free = nullptr; }
    ~Lease() {
      tables_->clear();
      static thread_local Keeper keeper;  // frees the kept tables when the thread ends
      if (!t_free && !t_thread_ending)
        t_free = tables_;
      else
        delete tables_;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    PassTables& operator*() const { return *tables_; }

   private:
    PassTables* tables_;
  };

 private:
  struct Keeper {
    ~Keeper() {
      t_thread_ending = true;
      delete t_free;
      t_free = nullptr;
    }
  };
  static thread_local PassTables* t_free;  // kept between passes; null while a pass uses them
  static thread_local bool t_thread_ending;
};
thread_local PassTables* PassTables::t_free = nullptr;
thread_local bool PassTables::t_thread_ending = false;

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
  if (!task.leaf_capture.empty()) {
    auto cap = task.leaf_capture.find(leaf);
    if (cap != task.leaf_capture.end()) task.captured[cap->second] = accumulate(task.captured[cap->second], g);
  }
  if (task.capture_only || !m) return;
  std::lock_guard<std::mutex> lock(m->grad_mu);
  Tensor* old = m->grad;
  if (!old) {
    Tensor* gt = g.get();
    // A gradient shared with another consumer (or a broadcast view) would be changed by an
    // in-place update of this .grad (optimizers, zero_): keep a private dense copy.
    if (!task.create_graph && (gt->refs.load() > 1 || !gt->contiguous)) g = g.clone();
    m->grad = g.release();
  } else if (!task.create_graph && old->refs.load() == 1 && old->contiguous && !old->autograd &&
             old->dtype == g.dtype() && std::equal(old->sizes, old->sizes + old->ndim, g.get()->sizes) &&
             old->ndim == g.get()->ndim) {
    // Only .grad refers to the old sum: add into it (PyTorch's AccumulateGrad does the same
    // outside grad mode), no new tensor per pass.
    tsr::Tensor acc = tsr::Tensor::borrow(old);
    tsr::add_(acc, g);
  } else {
    tsr::Tensor sum = tsr::add(tsr::Tensor::borrow(old), g);
    old->release();
    m->grad = sum.release();
  }
}

// A slice or select whose gradient goes into another node's buffer: adds it into that buffer's
// region, the buffer made once (of the base's size) and owned by the pass, instead of apply()'s
// zero tensor of the base's size per view. Pieces of one dim that do not overlap (chunk, split,
// the q/k/v thirds of one projection) are copied into a buffer that was not zeroed; the first
// piece that overlaps or lies along another dim zeroes the rows none wrote (complete_cover), as
// does any other reader of the buffer, and adds. The GPT's qkv gradient: a zero fill and three
// adds per layer became three copies.
void add_into_region_of_buffer(PassTables& p, uint32_t target, const Node* view, const tsr::Tensor& g) {
  const Edge& e = view->next[0];
  const uint32_t b = p.states[target].first + e.input_nr;
  tsr::Tensor& slot = p.buffer[b];
  const InputMeta& m = view->input_meta[0];
  int64_t dim = 0, begin = 0, end = 0;
  const bool rows = view->region_rows(&dim, &begin, &end);
  if (!slot.defined()) {
    const std::vector<int64_t> sizes(m.sizes, m.sizes + m.ndim);
    if (rows) {
      slot = tsr::empty(sizes, m.dtype, tsr::Device(m.device));
      p.owned[b] = PassTables::kCovered;
      p.covers.push_back({b, dim, {{begin, end}}});
      view->copy_into_region(g, slot);
      return;
    }
    slot = tsr::zeros(sizes, m.dtype, tsr::Device(m.device));
  } else if (p.owned[b] == PassTables::kCovered) {
    PassTables::Cover& c = p.cover_of(b);
    const bool disjoint =
        rows && dim == c.dim && std::all_of(c.rows.begin(), c.rows.end(), [&](const std::pair<int64_t, int64_t>& r) {
          return end <= r.first || r.second <= begin;
        });
    if (disjoint) {
      c.rows.emplace_back(begin, end);
      view->copy_into_region(g, slot);
      return;
    }
    p.complete_cover(b);
  } else if (p.owned[b] == PassTables::kShared) {
    slot = slot.clone();  // delivered as it came: possibly shared, so not written in place
  }
  p.owned[b] = PassTables::kOwned;
  view->add_into_region(g, slot);
}

// Runs node n's backward with its gradients p.grads; fills p.grads_in (empty when none arrived).
void run_node(Task& task, PassTables& p, uint32_t s) {
  Node* n = p.states[s].node;
  std::vector<tsr::Tensor>& grads = p.grads;
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
  p.grads_in.clear();
  if (!any) return;
  if (n->released)
    throw tsr::Error(TSR_FAILED_PRECONDITION,
                     "trying to backward through the graph a second time (" + std::string(n->name) +
                         "'s saved tensors were freed after the first backward); pass retain_graph=true to the "
                         "first backward if you need to backward twice");
  if (!task.create_graph && n->is_region_view() && n->next.size() == 1 && n->next[0].node)
    add_into_region_of_buffer(p, p.targets[p.states[s].edges], n, grads[0]);  // grads_in stays empty: the edge only counts down
  else
    n->apply(grads, p.grads_in, task.create_graph);
  if (!task.retain_graph) {
    n->release_saved();
    n->released = true;
  }
}

tsr_status_t run(Task& task, const std::vector<Tensor*>& roots, std::vector<tsr::Tensor>& root_grads) {
  PassTables::Lease lease;
  PassTables& p = *lease;
  // The roots' nodes are the seeds, slots [0, nseeds).
  for (size_t i = 0; i < roots.size(); ++i) {
    AutogradMeta* m = roots[i]->autograd;
    if (!m->grad_fn) continue;
    bool fresh = false;
    uint32_t s = p.join(m->grad_fn, &fresh);
    if (fresh) p.stack.push_back(s);
  }
  const size_t nseeds = p.states.size();
  // Dependencies: how many edges into each node come from nodes that will run. Each node's edge
  // targets are written once here, so the run below looks nothing up.
  while (!p.stack.empty()) {
    const uint32_t s = p.stack.back();
    p.stack.pop_back();
    Node* n = p.states[s].node;
    p.states[s].edges = static_cast<uint32_t>(p.targets.size());
    for (Edge& e : n->next) {
      if (e.leaf && !task.capture_only && has_post_accumulate_hooks(e.leaf)) ++task.hooked_leaves[e.leaf].pending;
      uint32_t t = NodeIndex::kNone;
      if (e.node) {
        bool fresh = false;
        t = p.join(e.node, &fresh);
        if (fresh) p.stack.push_back(t);
        ++p.states[t].deps;
      }
      p.targets.push_back(t);
    }
  }
  p.buffer.resize(p.nslots);
  p.owned.assign(p.nslots, PassTables::kShared);
  // Seed: other roots fill their node's buffer; leaves receive their gradient directly.
  for (size_t i = 0; i < roots.size(); ++i) {
    AutogradMeta* m = roots[i]->autograd;
    if (!m->grad_fn) continue;
    tsr::Tensor& slot = p.buffer[p.states[p.index.find(m->grad_fn)].first + m->output_nr];
    slot = accumulate(slot, root_grads[i]);
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
  // Ready nodes, later creation first (a max-heap on seq over slots).
  auto later_first = [&p](uint32_t a, uint32_t b) { return p.states[a].node->seq < p.states[b].node->seq; };
  std::vector<uint32_t>& ready = p.stack;
  for (uint32_t s = 0; s < nseeds; ++s)
    if (p.states[s].deps == 0) {
      ready.push_back(s);
      std::push_heap(ready.begin(), ready.end(), later_first);
    }
  GradModeGuard mode(task.create_graph);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later_first);
    const uint32_t s = ready.back();
    ready.pop_back();
    Node* n = p.states[s].node;
    const size_t first = p.states[s].first;
    p.grads.clear();
    for (size_t i = 0; i < n->num_outputs; ++i) {
      if (p.owned[first + i] == PassTables::kCovered) p.complete_cover(static_cast<uint32_t>(first + i));
      p.grads.push_back(std::move(p.buffer[first + i]));
    }
    run_node(task, p, s);
    const uint32_t edges = p.states[s].edges;
    for (size_t j = 0; j < n->next.size(); ++j) {
      Edge& e = n->next[j];
      if (!e.valid()) continue;
      tsr::Tensor g = j < p.grads_in.size() ? std::move(p.grads_in[j]) : tsr::Tensor();
      if (g.defined()) g = fit_gradient(n, j, std::move(g));
      if (e.node) {
        const uint32_t t = p.targets[edges + j];
        if (g.defined()) {
          const uint32_t b = p.states[t].first + e.input_nr;
          tsr::Tensor& slot = p.buffer[b];
          if (p.owned[b] == PassTables::kCovered) p.complete_cover(b);
          if (!slot.defined()) {
            slot = std::move(g);
            p.owned[b] = PassTables::kShared;  // a first delivery is the sender's
          } else if (p.owned[b] == PassTables::kOwned && !task.create_graph) {
            tsr::add_(slot, g);  // this pass's own sum: no new tensor per delivery
          } else {
            slot = tsr::add(slot, g);
            p.owned[b] = PassTables::kOwned;  // a sum is new
          }
        }
        if (--p.states[t].deps == 0) {
          ready.push_back(t);
          std::push_heap(ready.begin(), ready.end(), later_first);
        }
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
