// The tessera.model extension table (ext_model.h): C entries over the graph module (graph/).
// Each entry checks its pointers, catches what C++ may throw, and returns a status.
#include <cstdlib>
#include <cstring>
#include <new>

#include "api/entry_guard.hpp"
#include "graph/model_file.hpp"
#include "graph/passes.hpp"
#include "graph/runner.hpp"
#include "graph/symbolic.hpp"
#include "graph/text.hpp"
#include "graph/trace.hpp"
#include "ops/op_impl.hpp"
#include "tessera/ext_model.h"

namespace tsr::core {

namespace {

using graph::Graph;
using graph::Value;

tsr_status_t new_string(const std::string& s, char** out, const char* entry) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return make_status(TSR_RESOURCE_EXHAUSTED, std::string(entry) + ": out of host memory");
  std::memcpy(p, s.c_str(), s.size() + 1);
  *out = p;
  return nullptr;
}

tsr_status_t m_trace_begin(tsr_runtime_t* rt) {
  TSR_GUARD("trace_begin", return graph::trace_begin(rt);)
}
tsr_status_t m_trace_input(tsr_tensor_t* t, const char* name, const char* const* syms) {
  TSR_GUARD("trace_input", return graph::trace_input(t, name, syms);)
}
tsr_status_t m_trace_param(tsr_tensor_t* t, const char* name) {
  TSR_GUARD("trace_param", return graph::trace_param(t, name);)
}
tsr_status_t m_trace_end(tsr_tensor_t* const* outputs, size_t n, const char* const* names, tsr_model_t** out) {
  TSR_GUARD("trace_end", return graph::trace_end(outputs, n, names, out);)
}
void m_trace_abort() { graph::trace_abort(); }

tsr_status_t m_generalize(tsr_model_t* const* traces, size_t n, tsr_model_t** out) {
  // Owned from here on, whatever happens.
  std::vector<std::unique_ptr<tsr_model_s>> owned;
  for (size_t i = 0; traces && i < n; ++i) owned.emplace_back(traces[i]);
  TSR_CHECK_ARG(traces && n > 0 && out, "model_generalize", "traces, n > 0 and out are required");
  TSR_GUARD("model_generalize", {
    std::unique_ptr<tsr_model_s> g;
    TSR_RETURN_IF_ERROR(graph::generalize(owned, &g));
    *out = g.release();
    return nullptr;
  })
}

tsr_status_t m_print(const tsr_model_t* m, char** text) {
  TSR_CHECK_ARG(m && text, "model_print", "model and text are required");
  TSR_GUARD("model_print", return new_string(graph::print(*m), text, "model_print");)
}

tsr_status_t m_parse(tsr_runtime_t* rt, const char* text, tsr_model_t** out) {
  TSR_CHECK_ARG(rt && text && out, "model_parse", "runtime, text and out are required");
  TSR_GUARD("model_parse", {
    std::unique_ptr<tsr_model_s> g;
    TSR_RETURN_IF_ERROR(prefix_status(graph::parse(rt, text, {}, &g), "model_parse"));
    *out = g.release();
    return nullptr;
  })
}

tsr_status_t m_bind(tsr_model_t* m, const char* name, tsr_tensor_t* w) {
  TSR_CHECK_ARG(m && name, "model_bind", "model and name are required");
  TSR_GUARD("model_bind", return graph::bind(*m, name, w);)
}

tsr_status_t m_optimize(tsr_model_t* m, const char* passes, char** report) {
  TSR_CHECK_ARG(m && passes, "model_optimize", "model and passes are required");
  TSR_GUARD("model_optimize", {
    std::string r;
    TSR_RETURN_IF_ERROR(graph::optimize(*m, passes, &r));
    return report ? new_string(r, report, "model_optimize") : nullptr;
  })
}

tsr_status_t m_save(const tsr_model_t* m, const char* path) {
  TSR_CHECK_ARG(m && path, "model_save", "model and path are required");
  TSR_GUARD("model_save", return graph::save(*m, path);)
}

tsr_status_t m_load(tsr_runtime_t* rt, const char* path, const tsr_device_t* device, tsr_model_t** out) {
  TSR_CHECK_ARG(rt && path && out, "model_load", "runtime, path and out are required");
  TSR_GUARD("model_load", {
    std::unique_ptr<tsr_model_s> g;
    TSR_RETURN_IF_ERROR(graph::load(rt, path, device, &g));
    *out = g.release();
    return nullptr;
  })
}

size_t m_num_inputs(const tsr_model_t* m) { return m ? m->inputs.size() : 0; }
size_t m_num_outputs(const tsr_model_t* m) { return m ? m->outputs.size() : 0; }

tsr_status_t io(const tsr_model_t* m, const std::vector<int>& ids, size_t index, tsr_model_io_t* out,
                const char* entry) {
  TSR_CHECK_ARG(m && out, entry, "model and out are required");
  if (index >= ids.size())
    return make_status(TSR_OUT_OF_RANGE, std::string(entry) + ": index " + std::to_string(index) + " past " +
                                             std::to_string(ids.size()));
  const Value& v = m->values[static_cast<size_t>(ids[index])];
  tsr_model_io_t r{};
  r.struct_size = sizeof r;
  r.name = v.name.c_str();
  r.dtype = v.type.known ? v.type.dtype : TSR_DTYPE_UNDEFINED;
  r.ndim = v.type.known ? static_cast<int32_t>(v.type.dims.size()) : -1;
  for (size_t d = 0; v.type.known && d < v.type.dims.size(); ++d) {
    const graph::Dim& dim = v.type.dims[d];
    r.sizes[d] = dim.sym.empty() ? dim.size : -1;
    r.symbols[d] = dim.sym.empty() ? nullptr : dim.sym.c_str();
  }
  size_t n = out->struct_size ? std::min(out->struct_size, sizeof r) : sizeof r;
  std::memcpy(out, &r, n);
  out->struct_size = n;
  return nullptr;
}
tsr_status_t m_input(const tsr_model_t* m, size_t i, tsr_model_io_t* out) {
  return io(m, m ? m->inputs : std::vector<int>{}, i, out, "model_input");
}
tsr_status_t m_output(const tsr_model_t* m, size_t i, tsr_model_io_t* out) {
  return io(m, m ? m->outputs : std::vector<int>{}, i, out, "model_output");
}

tsr_status_t m_run(const tsr_model_t* m, tsr_tensor_t* const* inputs, size_t n, tsr_tensor_t** outputs, size_t nout,
                   tsr_model_run_stats_t* stats) {
  TSR_CHECK_ARG(m, "model_run", "model is required");
  TSR_GUARD("model_run", {
    graph::RunStats s;
    TSR_RETURN_IF_ERROR(graph::run(*m, inputs, n, outputs, nout, stats ? &s : nullptr));
    if (stats) {
      tsr_model_run_stats_t r{sizeof r, s.nodes, s.peak_bytes, s.total_bytes};
      size_t sz = stats->struct_size ? std::min(stats->struct_size, sizeof r) : sizeof r;
      std::memcpy(stats, &r, sz);
      stats->struct_size = sz;
    }
    return nullptr;
  })
}

tsr_device_t m_device(const tsr_model_t* m) { return m ? m->device : tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}; }
void m_release(tsr_model_t* m) { delete m; }

const tsr_model_ext_t kModel = {
    sizeof(tsr_model_ext_t),
    0,
    m_trace_begin,
    m_trace_input,
    m_trace_param,
    m_trace_end,
    m_trace_abort,
    m_generalize,
    m_print,
    m_parse,
    m_bind,
    m_optimize,
    m_save,
    m_load,
    m_num_inputs,
    m_num_outputs,
    m_input,
    m_output,
    m_run,
    m_device,
    m_release,
};

}  // namespace

const void* model_extension() { return &kModel; }

}  // namespace tsr::core
