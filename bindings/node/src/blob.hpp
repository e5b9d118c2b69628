// Zero-copy exchange between TypedArrays and tensors.
//
// A tensor viewing a TypedArray's memory (tensor_from_blob) must keep the ArrayBuffer alive,
// and the core calls the blob's deleter on whatever thread drops the last reference (a worker
// running an async op, the autograd engine, a finalizer). N-API may only be used on the JS
// thread, so the deleter never touches N-API: it queues the buffer's reference in a
// ReleaseQueue, and a thread-safe function (unref'd: it never keeps the process alive) drains
// the queue on the JS thread.
#pragma once

#include <mutex>
#include <vector>

#include "common.hpp"

namespace tsrnode {

class ReleaseQueue {
 public:
  // Creates the queue of one environment, with its thread-safe function and a cleanup hook.
  static std::shared_ptr<ReleaseQueue> create(Napi::Env env);
  // Any thread: the reference is deleted later on the JS thread (or dropped when the
  // environment is gone, which frees every reference itself).
  void push(napi_ref ref);
  // JS thread: deletes the queued references.
  void drain();

 private:
  static void call_js(napi_env env, napi_value, void* context, void*);
  static void on_cleanup(void* arg);
  std::mutex mu_;
  std::vector<napi_ref> pending_;
  bool scheduled_ = false;
  bool closed_ = false;
  napi_env env_ = nullptr;
  napi_threadsafe_function tsfn_ = nullptr;
  std::shared_ptr<ReleaseQueue> self_;  // keeps the queue alive until the cleanup hook
};

// fromTypedArray(typedArray, shape?, dtype?, device?, copy?) -> Tensor.
Napi::Value from_typed_array(const Napi::CallbackInfo& info);
// The elements of `t` as a TypedArray: zero-copy over a contiguous CPU tensor of a dtype
// TypedArrays have (the ArrayBuffer holds a tensor reference, dropped by its finalizer), else a
// converted copy (float16 and bfloat16 become a Float32Array). force_copy snapshots the data.
Napi::Value to_typed_array(Napi::Env env, const tsr::Tensor& t, bool force_copy);

}  // namespace tsrnode
