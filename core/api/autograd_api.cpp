// The API table's autograd entries.
#include "autograd/engine.hpp"
#include "autograd/node.hpp"
#include "tensor/dtype.hpp"

namespace tsr::core::ag_api {

namespace {

TensorHooks* ensure_hooks(Tensor* t) {
  AutogradMeta* m = ensure_meta(t);
  if (!m->hooks) m->hooks = new TensorHooks;
  if (m->grad_fn) {
    Node* n = m->grad_fn;
    if (n->out_hooks.size() <= m->output_nr) n->out_hooks.resize(m->output_nr + 1, nullptr);
    if (!n->out_hooks[m->output_nr]) {
      m->hooks->retain();
      n->out_hooks[m->output_nr] = m->hooks;
    }
  }
  return m->hooks;
}

}  // namespace

int32_t tensor_requires_grad(const tsr_tensor_t* t) { return t && requires_grad(t) ? 1 : 0; }

tsr_status_t tensor_set_requires_grad(tsr_tensor_t* t, int32_t on) {
  if (!t) return make_status(TSR_INVALID_ARGUMENT, "requires_grad_: tensor is NULL");
  if (t->autograd && t->autograd->grad_fn) {
    if (on) return nullptr;
    return make_status(TSR_INVALID_ARGUMENT,
                       "requires_grad_: you can only change requires_grad flags of leaf tensors "
                       "(use detach() to get a tensor outside the graph)");
  }
  if (on && !is_floating(t->dtype))
    return make_status(TSR_INVALID_ARGUMENT, std::string("requires_grad_: only tensors of floating point dtype can "
                                                         "require gradients, got ") +
                                                 dtype_name(t->dtype));
  if (!on && !t->autograd) return nullptr;
  ensure_meta(t)->requires_grad = on != 0;
  return nullptr;
}

int32_t tensor_is_leaf(const tsr_tensor_t* t) { return !(t && t->autograd && t->autograd->grad_fn); }

tsr_status_t tensor_grad(const tsr_tensor_t* t, tsr_tensor_t** out) {
  if (!t || !out) return make_status(TSR_INVALID_ARGUMENT, "grad: tensor and out are required");
  *out = nullptr;
  AutogradMeta* m = t->autograd;
  if (!m) return nullptr;
  {
    std::lock_guard<std::mutex> lock(m->grad_mu);  // a backward on another thread may replace it
    if (m->grad) {
      m->grad->retain();
      *out = m->grad;
      return nullptr;
    }
  }
  if (m->hooks && m->hooks->retains_grad) {
    std::lock_guard<std::mutex> lock(m->hooks->retained_mu);
    if (Tensor* g = m->hooks->retained_grad) {
      g->retain();
      *out = g;
    }
  }
  return nullptr;
}

tsr_status_t tensor_set_grad(tsr_tensor_t* t, tsr_tensor_t* grad) {
  if (!t) return make_status(TSR_INVALID_ARGUMENT, "set_grad: tensor is NULL");
  if (grad) {
    bool same = grad->ndim == t->ndim && std::equal(grad->sizes, grad->sizes + grad->ndim, t->sizes) &&
                grad->dtype == t->dtype && grad->device.type == t->device.type && grad->device.index == t->device.index;
    if (!same)
      return make_status(TSR_INVALID_ARGUMENT, "set_grad: assigned grad " + describe(t->runtime, grad) +
                                                   " does not match the tensor " + describe(t->runtime, t));
    grad->retain();
  }
  if (!grad && !t->autograd) return nullptr;
  AutogradMeta* m = ensure_meta(t);
  std::lock_guard<std::mutex> lock(m->grad_mu);
  if (m->grad) m->grad->release();
  m->grad = grad;
  return nullptr;
}

const char* tensor_grad_fn_name(const tsr_tensor_t* t) {
  return t && t->autograd && t->autograd->grad_fn ? t->autograd->grad_fn->name : nullptr;
}

tsr_status_t tensor_detach(tsr_tensor_t* t, tsr_tensor_t** out) {
  if (!t || !out) return make_status(TSR_INVALID_ARGUMENT, "detach: tensor and out are required");
  try {
    *out = make_view(t, t->ndim, t->sizes, t->strides, t->offset);
    (*out)->wrapped_number = t->wrapped_number;
  } catch (const std::bad_alloc&) {
    return make_status(TSR_OUT_OF_MEMORY, "detach: out of host memory");
  }
  return nullptr;
}

tsr_status_t tensor_retain_grad(tsr_tensor_t* t) {
  if (!t) return make_status(TSR_INVALID_ARGUMENT, "retain_grad: tensor is NULL");
  if (!requires_grad(t))
    return make_status(TSR_INVALID_ARGUMENT, "retain_grad: can't retain_grad on a tensor that has requires_grad=False");
  if (!t->autograd->grad_fn) return nullptr;  // leaves keep .grad anyway
  ensure_hooks(t)->retains_grad = true;
  return nullptr;
}

tsr_status_t tensor_register_hook(tsr_tensor_t* t, tsr_status_t (*fn)(void*, tsr_tensor_t*, tsr_tensor_t**), void* user,
                                  void (*free_user)(void*)) {
  if (!t || !fn) return make_status(TSR_INVALID_ARGUMENT, "register_hook: tensor and fn are required");
  if (!requires_grad(t))
    return make_status(TSR_INVALID_ARGUMENT,
                       "register_hook: cannot register a hook on a tensor that doesn't require "
                       "gradient");
  ensure_hooks(t)->hooks.push_back(Hook{fn, user, free_user});
  return nullptr;
}

tsr_status_t tensor_register_post_accumulate_grad_hook(tsr_tensor_t* t, tsr_status_t (*fn)(void*, tsr_tensor_t*),
                                                       void* user, void (*free_user)(void*), uint64_t* handle) {
  if (!t || !fn)
    return make_status(TSR_INVALID_ARGUMENT, "register_post_accumulate_grad_hook: tensor and fn are required");
  if (!requires_grad(t) || t->autograd->grad_fn)
    return make_status(TSR_INVALID_ARGUMENT,
                       "register_post_accumulate_grad_hook: only leaf tensors that require grad accumulate a gradient "
                       "(this one is " +
                           std::string(requires_grad(t) ? "not a leaf" : "a tensor that does not require grad") + ")");
  TensorHooks* h = ensure_hooks(t);
  const uint64_t id = h->next_post_id++;
  h->post_accumulate.push_back(PostAccumulateHook{fn, user, free_user, id});
  if (handle) *handle = id;
  return nullptr;
}

tsr_status_t tensor_remove_post_accumulate_grad_hook(tsr_tensor_t* t, uint64_t handle) {
  if (!t) return make_status(TSR_INVALID_ARGUMENT, "remove_post_accumulate_grad_hook: tensor is NULL");
  TensorHooks* h = t->autograd ? t->autograd->hooks : nullptr;
  if (h)
    for (auto it = h->post_accumulate.begin(); it != h->post_accumulate.end(); ++it)
      if (it->id == handle) {
        PostAccumulateHook gone = *it;
        h->post_accumulate.erase(it);
        if (gone.free_user) gone.free_user(gone.user);
        return nullptr;
      }
  return make_status(TSR_INVALID_ARGUMENT,
                     "remove_post_accumulate_grad_hook: the tensor has no hook with handle " + std::to_string(handle));
}

uint32_t tensor_version(const tsr_tensor_t* t) {
  return t && t->storage ? t->storage->version.load(std::memory_order_relaxed) : 0;
}

tsr_status_t autograd_backward(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads, int32_t retain_graph,
                               int32_t create_graph) {
  return backward(n, tensors, grads, retain_graph != 0, create_graph != 0);
}

tsr_status_t autograd_grad(size_t noutputs, tsr_tensor_t* const* outputs, tsr_tensor_t* const* grad_outputs,
                           size_t ninputs, tsr_tensor_t* const* inputs, int32_t retain_graph, int32_t create_graph,
                           int32_t allow_unused, tsr_tensor_t** grads_out) {
  return grad(noutputs, outputs, grad_outputs, ninputs, inputs, retain_graph != 0, create_graph != 0, allow_unused != 0,
              grads_out);
}

int32_t grad_mode_enabled(void) { return grad_mode() ? 1 : 0; }
void set_grad_mode(int32_t on) { tsr::core::set_grad_mode(on != 0); }
int32_t inference_mode_enabled(void) { return inference_mode() ? 1 : 0; }
void set_inference_mode(int32_t on) { tsr::core::set_inference_mode(on != 0); }

}  // namespace tsr::core::ag_api
