// Tracing: while a thread traces (trace_begin .. trace_end), every op call and view entry it
// makes at the top level is recorded into a graph; calls made inside them (a composite's ops,
// the copy inside `to`) are not, so each op is captured once, at the level the caller used.
// Tensors the traced code uses that are neither inputs, params nor results of recorded calls
// become consts of the graph. Control flow runs once and is unrolled, as in torch.jit.trace.
// Thread-safety: a tracer belongs to the thread that began it; other threads are not traced.
#pragma once

#include <atomic>
#include <initializer_list>

#include "graph/graph.hpp"

namespace tsr::core::graph {

struct Tracer;

// How many threads trace now: the dispatcher's fast path reads only this.
extern std::atomic<int> g_tracing_threads;
Tracer* thread_tracer();

// call_op's body, run by traced_call.
using CallBody = tsr_status_t (*)(tsr_op_s* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs,
                                  size_t nouts);
// Runs body and records the call when it is a top-level one.
tsr_status_t traced_call(Tracer* tr, CallBody body, tsr_op_s* op, const tsr_value_t* args, size_t nargs,
                         tsr_tensor_t** outs, size_t nouts);

// Put at the start of a view entry (api.cpp): marks the entry as one call, so that what it calls
// inside is not recorded; record() after success records it when it was a top-level call.
class BuiltinScope {
 public:
  BuiltinScope();
  ~BuiltinScope();
  BuiltinScope(const BuiltinScope&) = delete;
  BuiltinScope& operator=(const BuiltinScope&) = delete;
  // args: the builtin's arguments after `self`, in its schema's order (graph/builtins.cpp).
  void record(const char* builtin, Tensor* self, Tensor* out, std::initializer_list<tsr_value_t> args);

 private:
  Tracer* tr_ = nullptr;
  bool top_ = false;
};

// The tessera.model extension's trace entries (ext_model.h).
tsr_status_t trace_begin(Runtime* rt);
tsr_status_t trace_input(Tensor* t, const char* name, const char* const* dim_symbols);
tsr_status_t trace_param(Tensor* t, const char* name);
tsr_status_t trace_end(Tensor* const* outputs, size_t n, const char* const* names, tsr_model_s** out);
void trace_abort();

// tsr_value_t makers for BuiltinScope::record.
inline tsr_value_t v_int(int64_t i) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
inline tsr_value_t v_ints(const int64_t* data, int64_t n) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_INT_LIST;
  v.u.ints.data = data;
  v.u.ints.len = n;
  return v;
}

}  // namespace tsr::core::graph
