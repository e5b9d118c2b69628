/* Tessera C ABI: autograd (reverse-mode automatic differentiation recorded by the core).
 *
 * An op called while grad mode is on (per thread, default on) with any floating input that
 * requires grad records a graph node; its floating outputs then require grad. Gradients flow
 * to leaves (tensors whose requires_grad was set by the user) and accumulate in their .grad.
 * Backward formulas are written with ops, so they run on the tensors' own device.
 * Thread-safety: a graph may be built from several threads, and backward passes may run on
 * several threads at once, over separate graphs or over one shared graph kept with
 * retain_graph: each pass keeps its own bookkeeping, a shared node runs for one pass at a time,
 * and accumulation into a leaf's .grad is serialized per leaf, so no gradient is lost (the
 * order of the additions, and so the last bits of a float sum, may vary). A pass without
 * retain_graph over a graph another pass is using frees the saved tensors only after the node
 * ran; later passes then fail with FAILED_PRECONDITION. tensor_grad and tensor_set_grad may be
 * called while a backward runs (each sees a whole gradient, before or after an accumulation);
 * updating a tensor in place while a backward on another thread reads it is a data race, as
 * for any op. Hooks run on the thread running backward, possibly several at once. Grad and
 * inference modes are per thread.
 * Errors: INVALID_ARGUMENT for NULL tensors or out pointers; FAILED_PRECONDITION for a
 * backward through a graph already freed (without retain_graph) or over a saved tensor
 * modified in place since; UNIMPLEMENTED for an op without a derivative.
 * Everything here appeared in 1.0.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_AUTOGRAD_H
#define TESSERA_AUTOGRAD_H

#include "tessera/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* tensor_requires_grad: 1 when gradients are computed for the tensor. Since 1.0. */
typedef int32_t (*tsr_tensor_requires_grad_fn_t)(const tsr_tensor_t* tensor);
/* tensor_set_requires_grad: leaves only (a non-leaf's flag follows from its inputs); floating
 * dtypes only (INVALID_ARGUMENT otherwise). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_set_requires_grad_fn_t)(tsr_tensor_t* tensor, int32_t requires_grad);
/* tensor_is_leaf: 1 for a tensor no recorded op produced. Since 1.0. */
typedef int32_t (*tsr_tensor_is_leaf_fn_t)(const tsr_tensor_t* tensor);
/* tensor_grad: the accumulated gradient (a new reference) in *out, or *out = NULL when there
 * is none. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_grad_fn_t)(const tsr_tensor_t* tensor, tsr_tensor_t** out);
/* tensor_set_grad: replaces the gradient (the core retains `grad`); NULL clears it (zero_grad
 * with set_to_none). Since 1.0. */
typedef tsr_status_t (*tsr_tensor_set_grad_fn_t)(tsr_tensor_t* tensor, tsr_tensor_t* grad);
/* tensor_grad_fn_name: name of the node that produced the tensor ("MulBackward"), NULL for
 * leaves and tensors outside any graph. Borrowed, valid while the tensor lives. Since 1.0. */
typedef const char* (*tsr_tensor_grad_fn_name_fn_t)(const tsr_tensor_t* tensor);
/* tensor_detach: a new tensor sharing storage, outside the graph (requires_grad false); one
 * new reference in *out. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_detach_fn_t)(tsr_tensor_t* tensor, tsr_tensor_t** out);
/* tensor_retain_grad: keep .grad for a non-leaf tensor during backward (no-op for leaves).
 * Since 1.0. */
typedef tsr_status_t (*tsr_tensor_retain_grad_fn_t)(tsr_tensor_t* tensor);
/* tensor_register_hook: calls fn on the gradient of `tensor` each time one is computed, before
 * it is accumulated or passed on; fn may set *replacement to a new reference that replaces the
 * gradient (the core takes it), and returns a status (non-NULL aborts the backward pass with
 * it). `grad` is borrowed for the call. free_user (may be NULL) is called with user when the
 * hook is dropped. fn runs on the thread running backward. Since 1.0. */
typedef tsr_status_t (*tsr_tensor_register_hook_fn_t)(tsr_tensor_t* tensor,
                                                      tsr_status_t (*fn)(void* user, tsr_tensor_t* grad,
                                                                         tsr_tensor_t** replacement),
                                                      void* user, void (*free_user)(void* user));
/* tensor_register_post_accumulate_grad_hook: calls fn(user, tensor) once per backward pass,
 * after every gradient that pass sends to the leaf `tensor` has been accumulated into its .grad
 * (PyTorch's register_post_accumulate_grad_hook). It is how a consumer learns that a parameter's
 * gradient is complete while backward goes on, e.g. to all-reduce it (data-parallel training).
 * fn may read and update .grad in place (tensor_grad); it returns a status (non-NULL aborts the
 * backward pass with it). Not called in a pass that sends the leaf no gradient, nor by
 * autograd_grad (which accumulates nothing). `tensor` is borrowed for the call; fn runs on the
 * thread running backward. free_user (may be NULL) is called with user when the hook is
 * removed or the tensor is freed. *handle (may be NULL) receives an id for
 * tensor_remove_post_accumulate_grad_hook, unique per tensor. Hooks are not registered or
 * removed while a backward pass reaching the tensor runs. Errors: INVALID_ARGUMENT when tensor
 * or fn is NULL or the tensor is not a leaf that requires grad. Since 1.5. */
typedef tsr_status_t (*tsr_tensor_register_post_accumulate_grad_hook_fn_t)(
    tsr_tensor_t* tensor, tsr_status_t (*fn)(void* user, tsr_tensor_t* tensor), void* user,
    void (*free_user)(void* user), uint64_t* handle);
/* tensor_remove_post_accumulate_grad_hook: removes the hook `handle` returned by
 * tensor_register_post_accumulate_grad_hook on this tensor (its free_user runs now).
 * Errors: INVALID_ARGUMENT when the tensor has no hook with that handle. Since 1.5. */
typedef tsr_status_t (*tsr_tensor_remove_post_accumulate_grad_hook_fn_t)(tsr_tensor_t* tensor, uint64_t handle);
/* tensor_version: counter bumped by every in-place write to the tensor's storage (shared by
 * its views). Since 1.0. */
typedef uint32_t (*tsr_tensor_version_fn_t)(const tsr_tensor_t* tensor);
/* autograd_backward: backpropagates from n tensors; grads[i] may be NULL for a one-element
 * tensor (implicit ones) or grads itself NULL. retain_graph keeps saved tensors for another
 * pass; create_graph records the backward itself (higher-order gradients). Since 1.0. */
typedef tsr_status_t (*tsr_autograd_backward_fn_t)(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads,
                                                   int32_t retain_graph, int32_t create_graph);
/* autograd_grad: gradients of outputs with respect to inputs, returned in grads_out[ninputs]
 * (new references) instead of accumulated in .grad. An input the outputs do not depend on is
 * an error unless allow_unused (then its slot is NULL). Since 1.0. */
typedef tsr_status_t (*tsr_autograd_grad_fn_t)(size_t noutputs, tsr_tensor_t* const* outputs,
                                               tsr_tensor_t* const* grad_outputs, size_t ninputs,
                                               tsr_tensor_t* const* inputs, int32_t retain_graph, int32_t create_graph,
                                               int32_t allow_unused, tsr_tensor_t** grads_out);
/* grad_mode_enabled: 1 when this thread records ops (default). Since 1.0. */
typedef int32_t (*tsr_grad_mode_enabled_fn_t)(void);
/* set_grad_mode: turns recording on or off for this thread (no_grad). Since 1.0. */
typedef void (*tsr_set_grad_mode_fn_t)(int32_t enabled);
/* inference_mode_enabled: 1 when this thread is in inference mode. Since 1.0. */
typedef int32_t (*tsr_inference_mode_enabled_fn_t)(void);
/* set_inference_mode: inference mode: no recording whatever grad mode says (lower per-op
 * overhead). This thread. Since 1.0. */
typedef void (*tsr_set_inference_mode_fn_t)(int32_t enabled);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_AUTOGRAD_H */
