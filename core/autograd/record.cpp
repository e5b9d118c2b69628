// Recording op calls into the autograd graph: one OpNode per primitive call whose inputs
// require grad; its backward runs the op's formula (GradCtx) over the saved values.
#include <algorithm>
#include <cstring>

#include "autograd/autograd.hpp"
#include "autograd/engine.hpp"
#include "autograd/node.hpp"
#include "tensor/dtype.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "runtime/thread_local.hpp"

namespace tsr::core {

namespace {

struct SavedTensor {
  tsr::Tensor t;
  uint32_t version = 0;
  bool is_output = false;
  uint32_t output_nr = 0;
};

SavedTensor save_tensor(Tensor* t, bool is_output, uint32_t output_nr) {
  SavedTensor s;
  s.version = t->storage ? t->storage->version.load(std::memory_order_relaxed) : 0;
  s.is_output = is_output;
  s.output_nr = output_nr;
  if (is_output) {
    // An output saved by its own node would own the node that owns it: keep an alias without
    // history instead; unpacking re-attaches the history when a graph of the backward is built.
    s.t = tsr::Tensor::adopt(make_view(t, t->ndim, t->sizes, t->strides, t->offset));
  } else {
    s.t = tsr::Tensor::borrow(t);
  }
  return s;
}

// The GradCtx of OpNode::apply: one per thread, reused. Its fixed arrays (two of 16 tensors and
// the metadata, about 700 bytes) cost more to zero on every call than all of a pass-through
// formula like add's; emptying the few entries a call used is cheap. A call made while the
// thread's context is in use (a formula that runs a backward of its own) gets a fresh one.
class GradCtxLease {
 public:
  GradCtxLease() {
    static thread_local Slot slot;
    // After the thread's slot is destroyed (a backward run from another thread-local's
    // destructor at thread exit), calls get a fresh context, as nested ones do.
    if (!t_slot_gone && !slot.busy) {
      slot.busy = true;
      slot_ = &slot;
      ctx_ = &slot.ctx;
    } else {
      ctx_ = new GradCtx;
    }
  }
  ~GradCtxLease() {
    if (!slot_) {
      delete ctx_;
      return;
    }
    GradCtx& g = *ctx_;
    // Entries past nargs_ are never filled: set() is called only for the call's arguments.
    const size_t n = g.nargs_ < GradCtx::kMaxArgs ? g.nargs_ : GradCtx::kMaxArgs;
    for (size_t i = 0; i < n; ++i) {
      if (g.saved_inputs_[i].defined()) g.saved_inputs_[i] = tsr::Tensor();
      if (g.results_[i].defined()) g.results_[i] = tsr::Tensor();
      g.in_sizes_[i] = nullptr;
      g.in_ndim_[i] = 0;
      g.needs_[i] = 0;
    }
    g.saved_lists_.clear();
    g.list_needs_.clear();
    g.list_results_.clear();
    g.saved_outputs_.clear();
    g.grads_ = nullptr;
    g.args_ = nullptr;
    g.nargs_ = 0;
    slot_->busy = false;
  }
  GradCtxLease(const GradCtxLease&) = delete;
  GradCtxLease& operator=(const GradCtxLease&) = delete;
  GradCtx& operator*() const { return *ctx_; }

 private:
  struct Slot {
    GradCtx ctx;
    bool busy = false;
    ~Slot() { t_slot_gone = true; }
  };
  static thread_local bool t_slot_gone;
  Slot* slot_ = nullptr;
  GradCtx* ctx_ = nullptr;
};
thread_local bool GradCtxLease::t_slot_gone = false;

struct OpNode : Node {
  tsr_op_s* op = nullptr;
  // Fixed arrays (ops have at most kMaxArgs arguments): no allocation per recorded call.
  tsr_value_t args[kMaxArgs];
  size_t nargs = 0;
  std::vector<std::vector<int64_t>> int_lists;  // storage of list args
  std::vector<std::string> strings;             // storage of str args
  SavedTensor saved_inputs[kMaxArgs];           // per arg (undefined when not saved)
  std::vector<std::vector<SavedTensor>> saved_lists;
  std::vector<SavedTensor> saved_outputs;
  int first_slot[kMaxArgs];  // per arg: first input slot, -1 if none
  bool has_lists = false;

  tsr::Tensor unpack(const SavedTensor& s, bool create_graph) {
    if (!s.t.defined()) return s.t;
    Tensor* t = s.t.get();
    uint32_t now = t->storage ? t->storage->version.load(std::memory_order_relaxed) : 0;
    if (now != s.version)
      throw tsr::Error(TSR_FAILED_PRECONDITION,
                       "one of the tensors needed for gradient computation has been modified by an in-place "
                       "operation: the " +
                           std::string(dtype_name(t->dtype)) + " " + shape_str(t->sizes, t->ndim) + " " +
                           (s.is_output ? "output " + std::to_string(s.output_nr) : std::string("input")) + " of " +
                           std::string(name) + " is at version " + std::to_string(now) + "; expected version " +
                           std::to_string(s.version) + " instead");
    if (s.is_output && create_graph) {
      Tensor* alias = make_view(t, t->ndim, t->sizes, t->strides, t->offset);
      set_history(alias, this, s.output_nr);
      return tsr::Tensor::adopt(alias);
    }
    return s.t;
  }

  void apply(std::vector<tsr::Tensor>& grads_out, std::vector<tsr::Tensor>& grads_in, bool create_graph) override {
    GradCtxLease lease;
    GradCtx& g = *lease;
    g.op_ = op;
    g.op_name_ = op->schema.name.c_str();
    g.runtime_ = op->runtime;
    g.args_ = args;
    size_t n = nargs;
    g.nargs_ = n;
    bool lists = !saved_lists.empty() || has_lists;
    if (lists) {
      g.saved_lists_.resize(n);
      g.list_needs_.resize(n);
      g.list_results_.resize(n);
    }
    for (size_t i = 0; i < n; ++i) {
      if (saved_inputs[i].t.defined()) g.saved_inputs_[i] = unpack(saved_inputs[i], create_graph);
      if (i < saved_lists.size())
        for (const SavedTensor& s : saved_lists[i]) g.saved_lists_[i].push_back(unpack(s, create_graph));
      int slot = first_slot[i];
      if (slot < 0) continue;
      if (args[i].tag == TSR_VALUE_TENSOR_LIST) {
        size_t len = static_cast<size_t>(args[i].u.tensors.len);
        g.list_needs_[i].resize(len);
        for (size_t k = 0; k < len; ++k) g.list_needs_[i][k] = next[slot + k].valid();
      } else {
        const InputMeta& m = input_meta[slot];
        g.in_sizes_[i] = m.sizes;
        g.in_ndim_[i] = m.ndim;
        g.in_dtypes_[i] = m.dtype;
        g.needs_[i] = next[slot].valid();
      }
    }
    for (const SavedTensor& s : saved_outputs) g.saved_outputs_.push_back(unpack(s, create_graph));
    g.grads_ = &grads_out;
    op->backward(g);
    grads_in.resize(next.size());
    for (size_t i = 0; i < n; ++i) {
      int slot = first_slot[i];
      if (slot < 0) continue;
      if (args[i].tag == TSR_VALUE_TENSOR_LIST) {
        if (i < g.list_results_.size())
          for (size_t k = 0; k < g.list_results_[i].size(); ++k)
            if (g.needs(i, k)) grads_in[slot + k] = std::move(g.list_results_[i][k]);
      } else if (g.needs_[i]) {
        grads_in[slot] = std::move(g.results_[i]);
      }
    }
  }

  void release_saved() override {
    for (size_t i = 0; i < nargs; ++i)
      if (saved_inputs[i].t.defined()) saved_inputs[i] = SavedTensor();
    saved_lists.clear();
    saved_outputs.clear();
  }

  void destroy() override;
};

// Recorded nodes are reused: each thread keeps up to kNodePool freed OpNodes, whose vectors keep
// their capacity, so recording an op allocates no node and no edge storage in the steady state.
// t_node_pool is a plain pointer, valid until the thread ends; after the pool's owner is gone
// (thread exit) nodes are deleted. Sanitizer builds do not pool (TSR_OBJECT_POOLS).
constexpr size_t kNodePool = TSR_OBJECT_POOLS ? 512 : 0;
// The owner is created on the thread's first recorded call, behind the pointer test (off the
// path of every later call; after its destruction its guard keeps it from being made again).
TSR_TLS_HOT std::vector<OpNode*>* t_node_pool = nullptr;
struct NodePoolOwner {
  std::vector<OpNode*> v;
  NodePoolOwner() { t_node_pool = &v; }
  ~NodePoolOwner() {
    t_node_pool = nullptr;
    for (OpNode* n : v) delete n;
  }
};

OpNode* new_op_node() {
  if (!t_node_pool) {
    static thread_local NodePoolOwner owner;
  }
  if (t_node_pool && !t_node_pool->empty()) {
    OpNode* n = t_node_pool->back();
    t_node_pool->pop_back();
    return n;
  }
  return new OpNode;
}

void OpNode::destroy() {
  if (!t_node_pool || t_node_pool->size() >= kNodePool) {
    delete this;
    return;
  }
  drop_links();  // may queue more nodes for delete_node
  input_meta.clear();
  release_saved();
  int_lists.clear();
  strings.clear();
  op = nullptr;
  nargs = 0;
  has_lists = false;
  released = false;
  num_outputs = 1;
  name = "";
  seq = 0;
  refs.store(1, std::memory_order_relaxed);
  t_node_pool->push_back(this);
}

// For primitives with floating outputs but no formula: fails when reached.
struct NotImplementedNode : Node {
  std::string op;
  void apply(std::vector<tsr::Tensor>&, std::vector<tsr::Tensor>&, bool) override {
    throw tsr::Error(TSR_UNIMPLEMENTED, "the derivative for '" + op + "' is not implemented");
  }
};

bool is_differentiable_dtype(tsr_dtype_t d) { return is_floating(d); }

}  // namespace

bool should_record(const CallCtx& ctx) {
  if (!grad_mode()) return false;
  for (size_t i = 0; i < ctx.nargs; ++i) {
    const tsr_value_t& v = ctx.args[i];
    if (v.tag == TSR_VALUE_TENSOR) {
      if (v.u.tensor && requires_grad(v.u.tensor)) return true;
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      for (int64_t k = 0; k < v.u.tensors.len; ++k)
        if (requires_grad(v.u.tensors.data[k])) return true;
    }
  }
  return false;
}

tsr_status_t check_out_autograd(const CallCtx& ctx) {
  bool any_out = false;
  for (size_t i = 0; i < ctx.nouts; ++i) any_out |= ctx.out_slot(i) != nullptr;
  if (!any_out || !should_record(ctx)) return nullptr;
  return ctx.error(TSR_INVALID_ARGUMENT,
                   "functions with out=... arguments don't support automatic differentiation, but one of the "
                   "arguments requires grad (call it under a no-grad guard or without out=)");
}

tsr_status_t check_inplace_allowed(const CallCtx& ctx, Tensor* self) {
  if (!grad_mode() || !requires_grad(self)) return nullptr;
  if (!self->autograd->grad_fn)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "a leaf tensor that requires grad is being used in an in-place operation "
                     "(" +
                         describe(ctx.rt, self) + ")");
  if (is_view_node(self->autograd->grad_fn))
    return ctx.error(TSR_UNIMPLEMENTED,
                     "in-place operation on a view of a tensor that requires grad is not supported; "
                     "apply the operation out of place or on the base tensor");
  return nullptr;
}

tsr_status_t rebase_history(Tensor* self, Tensor* result) {
  if (!result->autograd || !result->autograd->grad_fn) return nullptr;
  set_history(self, result->autograd->grad_fn, result->autograd->output_nr);
  return nullptr;
}

tsr_status_t call_recorded(CallCtx& ctx) {
  TSR_RETURN_IF_ERROR(check_out_autograd(ctx));
  const Schema& s = ctx.op->schema;
  const bool mutates = ctx.op->mutates;
  for (size_t i = 0; mutates && i < ctx.nargs && i < s.args.size(); ++i)
    if (s.args[i].mutable_ && ctx.args[i].tag == TSR_VALUE_TENSOR && requires_grad(ctx.args[i].u.tensor))
      return ctx.error(TSR_INVALID_ARGUMENT, "in-place update of argument '" + s.args[i].name +
                                                 "', which requires grad, is not differentiable (run it under a "
                                                 "no-grad guard, as optimizers do)");
  tsr_status_t st;
  {
    GradModeGuard off(false);
    st = ctx.op->impl(ctx);
  }
  if (st || mutates) return st;
  size_t nout = ctx.nouts;
  bool any_diff = false;
  for (size_t i = 0; i < nout; ++i) any_diff |= ctx.outs[i] && is_differentiable_dtype(ctx.outs[i]->dtype);
  if (!any_diff) return nullptr;

  Node* node = nullptr;
  OpNode* opn = nullptr;
  if (ctx.op->backward) {
    opn = new_op_node();
    node = opn;
  } else {
    auto* ni = new NotImplementedNode;
    ni->op = s.name;
    node = ni;
  }
  node->seq = next_node_seq();
  node->name = ctx.op->backward_name.c_str();
  node->num_outputs = static_cast<uint32_t>(nout);
  const uint32_t save = ctx.op->save;
  size_t n = ctx.nargs;
  size_t nslots = 0;
  bool has_lists = false, has_owned = false;
  for (size_t i = 0; i < n; ++i) {
    int32_t tag = ctx.args[i].tag;
    if (tag == TSR_VALUE_TENSOR) ++nslots;
    if (tag == TSR_VALUE_TENSOR_LIST) {
      nslots += static_cast<size_t>(ctx.args[i].u.tensors.len);
      has_lists = true;
    }
    has_owned |= tag == TSR_VALUE_INT_LIST || tag == TSR_VALUE_STRING;
  }
  node->next.reserve(nslots);
  node->input_meta.reserve(nslots);
  if (opn) {
    opn->op = ctx.op;
    std::copy(ctx.args, ctx.args + n, opn->args);
    opn->nargs = n;
    opn->has_lists = has_lists;
    if (has_owned) {
      opn->int_lists.resize(n);
      opn->strings.resize(n);
    }
    std::fill(opn->first_slot, opn->first_slot + n, -1);  // read only for the call's n arguments
    if ((save & kSaveInputs) && has_lists) opn->saved_lists.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    tsr_value_t& v = ctx.args[i];
    if (v.tag == TSR_VALUE_TENSOR) {
      Tensor* t = v.u.tensor;
      if (opn) {
        opn->first_slot[i] = static_cast<int>(node->next.size());
        if (save & kSaveInputs) opn->saved_inputs[i] = save_tensor(t, false, 0);
        opn->args[i].u.tensor = nullptr;  // formulas read tensors through GradCtx only
      }
      Edge& e = node->next.emplace_back();
      if (is_differentiable_dtype(t->dtype)) set_gradient_edge(t, e);
      node->input_meta.emplace_back(t);
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      if (opn) opn->first_slot[i] = static_cast<int>(node->next.size());
      for (int64_t k = 0; k < v.u.tensors.len; ++k) {
        Tensor* t = v.u.tensors.data[k];
        if (opn && (save & kSaveInputs)) opn->saved_lists[i].push_back(save_tensor(t, false, 0));
        Edge& e = node->next.emplace_back();
        if (is_differentiable_dtype(t->dtype)) set_gradient_edge(t, e);
        node->input_meta.emplace_back(t);
      }
      if (opn) {
        opn->args[i].u.tensors.data = nullptr;
      }
    } else if (opn && v.tag == TSR_VALUE_INT_LIST) {
      opn->int_lists[i].assign(v.u.ints.data, v.u.ints.data + v.u.ints.len);
      opn->args[i].u.ints.data = opn->int_lists[i].data();
    } else if (opn && v.tag == TSR_VALUE_STRING) {
      opn->strings[i] = v.u.str ? v.u.str : "";
      opn->args[i].u.str = opn->strings[i].c_str();
    }
  }
  // An output that is one of the inputs (an op returning its argument unchanged) must not take
  // the new history itself: hand the caller an alias instead.
  for (size_t i = 0; i < nout; ++i) {
    Tensor* o = ctx.outs[i];
    if (!o) continue;
    bool is_input = false;
    for (size_t a = 0; a < n && !is_input; ++a) {
      const tsr_value_t& v = ctx.args[a];
      is_input = v.tag == TSR_VALUE_TENSOR && v.u.tensor == o;
      for (int64_t k = 0; v.tag == TSR_VALUE_TENSOR_LIST && k < v.u.tensors.len && !is_input; ++k)
        is_input = v.u.tensors.data[k] == o;
    }
    if (is_input) {
      ctx.outs[i] = make_view(o, o->ndim, o->sizes, o->strides, o->offset);
      o->release();
    }
  }
  if (opn && (save & kSaveOutputs))
    for (size_t i = 0; i < nout; ++i)
      opn->saved_outputs.push_back(save_tensor(ctx.outs[i], true, static_cast<uint32_t>(i)));
  // The first output takes over the node's creation reference, the others take their own (two
  // atomic updates fewer per recorded call than a retain per output and a release here).
  bool adopted = false;
  for (size_t i = 0; i < nout; ++i) {
    if (!ctx.outs[i] || !is_differentiable_dtype(ctx.outs[i]->dtype)) continue;
    if (adopted) {
      set_history(ctx.outs[i], node, static_cast<uint32_t>(i));
    } else {
      adopt_history(ctx.outs[i], node, static_cast<uint32_t>(i));
      adopted = true;
    }
  }
  if (!adopted) node->release();
  return nullptr;
}

}  // namespace tsr::core
