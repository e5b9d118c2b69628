// Tessera SDK: tracing code into a graph and running saved models (docs/graphs.md), over the
// core's tessera.model extension (tessera/ext_model.h).
//
//   tsr::jit::TraceOptions opts;
//   opts.dynamic = {{0, 0, "B"}};  // input 0's dim 0 is the batch: any size at run time
//   tsr::jit::Model m = tsr::jit::trace(net, {x}, opts);
//   m.optimize();                  // cse, fold, dce
//   m.save("net.tsm");
//   auto model = tsr::jit::Model::load("net.tsm");     // in another process, no frontend code
//   tsr::Tensor y = model.run({x})[0];
//
// trace() runs the code and records every op and view it calls at the level it calls them, with
// autograd off; control flow is unrolled as traced (a branch on tensor values is frozen). With
// dynamic dims it runs the code at several sizes so that sizes computed from them
// (view(x, {x.size(0) * 4, -1})) follow the inputs at run time. Errors are tsr::Error exceptions
// naming the entry.
// Thread-safety: as ext_model.h: run() may be called from several threads at once.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/ext_model.h"
#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::jit {

namespace detail {
inline const tsr_model_ext_t* model_ext(tsr_runtime_t* rt) {
  auto* m = static_cast<const tsr_model_ext_t*>(api()->get_extension(rt, TSR_MODEL_EXTENSION));
  if (!m) throw Error(TSR_UNIMPLEMENTED, "jit: the core does not publish " TSR_MODEL_EXTENSION " (older than ABI 1.5)");
  return m;
}
inline std::string take_string(char* s) {
  std::string r = s ? s : "";
  api()->string_free(s);
  return r;
}
}  // namespace detail

// An input or output of a model: -1 sizes where the dim is a symbol.
struct IoInfo {
  std::string name;
  tsr_dtype_t dtype = TSR_DTYPE_UNDEFINED;
  std::vector<int64_t> sizes;
  std::vector<std::string> symbols;  // "" for fixed sizes
};

struct RunStats {
  int64_t nodes = 0, peak_bytes = 0, total_bytes = 0;
};

// A graph with its weights. Move-only; releases the model when destroyed.
class Model {
 public:
  Model() = default;
  Model(tsr_model_t* m, tsr_runtime_t* rt) : m_(m), rt_(rt) {}
  Model(Model&& o) noexcept : m_(std::exchange(o.m_, nullptr)), rt_(o.rt_) {}
  Model& operator=(Model&& o) noexcept {
    if (this != &o) {
      reset();
      m_ = std::exchange(o.m_, nullptr);
      rt_ = o.rt_;
    }
    return *this;
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() { reset(); }

  // A model from its text (docs/graphs.md); bind its params before running it.
  static Model parse(const std::string& text, tsr_runtime_t* rt = runtime()) {
    tsr_model_t* m = nullptr;
    check(detail::model_ext(rt)->model_parse(rt, text.c_str(), &m));
    return Model(m, rt);
  }
  // A model file; device: where to load its weights and run (default: where it was traced).
  static Model load(const std::string& path, const std::optional<Device>& device = std::nullopt,
                    tsr_runtime_t* rt = runtime()) {
    tsr_model_t* m = nullptr;
    check(detail::model_ext(rt)->model_load(rt, path.c_str(), device ? &device->d : nullptr, &m));
    return Model(m, rt);
  }

  bool defined() const { return m_ != nullptr; }
  tsr_model_t* get() const { return m_; }

  std::string text() const {
    char* s = nullptr;
    check(ext()->model_print(m_, &s));
    return detail::take_string(s);
  }
  void bind(const std::string& name, const Tensor& weight) { check(ext()->model_bind(m_, name.c_str(), weight.get())); }
  // Runs passes ("dce", "cse", "fold", comma-separated, or "all"); returns what each did.
  std::string optimize(const std::string& passes = "all") {
    char* r = nullptr;
    check(ext()->model_optimize(m_, passes.c_str(), &r));
    return detail::take_string(r);
  }
  void save(const std::string& path) const { check(ext()->model_save(m_, path.c_str())); }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr) const {
    std::vector<tsr_tensor_t*> in;
    for (const Tensor& t : inputs) in.push_back(t.get());
    std::vector<tsr_tensor_t*> out(ext()->model_num_outputs(m_), nullptr);
    tsr_model_run_stats_t s{};
    s.struct_size = sizeof s;
    check(ext()->model_run(m_, in.data(), in.size(), out.data(), out.size(), stats ? &s : nullptr));
    std::vector<Tensor> r;
    for (tsr_tensor_t* t : out) r.push_back(Tensor::adopt(t));
    if (stats) *stats = RunStats{s.nodes, s.peak_bytes, s.total_bytes};
    return r;
  }
  Tensor operator()(const Tensor& x) const { return run({x}).at(0); }

  std::vector<IoInfo> inputs() const { return io(false); }
  std::vector<IoInfo> outputs() const { return io(true); }
  Device device() const { return Device(ext()->model_device(m_)); }

 private:
  const tsr_model_ext_t* ext() const {
    if (!m_) throw Error(TSR_FAILED_PRECONDITION, "jit::Model: no model (default-constructed or moved from)");
    return detail::model_ext(rt_);
  }
  std::vector<IoInfo> io(bool outputs) const {
    const tsr_model_ext_t* e = ext();
    size_t n = outputs ? e->model_num_outputs(m_) : e->model_num_inputs(m_);
    std::vector<IoInfo> r;
    for (size_t i = 0; i < n; ++i) {
      tsr_model_io_t x{};
      x.struct_size = sizeof x;
      check(outputs ? e->model_output(m_, i, &x) : e->model_input(m_, i, &x));
      IoInfo info;
      info.name = x.name;
      info.dtype = static_cast<tsr_dtype_t>(x.dtype);
      for (int32_t d = 0; d < x.ndim; ++d) {
        info.sizes.push_back(x.sizes[d]);
        info.symbols.push_back(x.symbols[d] ? x.symbols[d] : "");
      }
      r.push_back(std::move(info));
    }
    return r;
  }
  void reset() {
    if (m_) detail::model_ext(rt_)->model_release(m_);
    m_ = nullptr;
  }

  tsr_model_t* m_ = nullptr;
  tsr_runtime_t* rt_ = nullptr;
};

struct DynamicDim {
  size_t input = 0;  // which input
  int dim = 0;       // which of its dims
  std::string symbol;
};

struct TraceOptions {
  std::vector<std::string> input_names;   // default x0, x1, ...
  std::vector<std::string> output_names;  // default: generated
  std::vector<DynamicDim> dynamic;        // dims the inputs may vary at run time
  std::vector<std::pair<std::string, Tensor>> params;  // named weights (a module's state)
};

namespace detail {

// One trace of fn(inputs) (ext_model.h trace_begin .. trace_end); the caller owns the result.
template <class F>
tsr_model_t* trace_once(F& fn, const std::vector<Tensor>& inputs, const TraceOptions& opts, tsr_runtime_t* rt) {
  const tsr_model_ext_t* e = model_ext(rt);
  check(e->trace_begin(rt));
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string name = i < opts.input_names.size() ? opts.input_names[i] : "x" + std::to_string(i);
      std::vector<std::string> syms(static_cast<size_t>(inputs[i].dim()));
      for (const DynamicDim& d : opts.dynamic)
        if (d.input == i) syms[static_cast<size_t>(d.dim)] = d.symbol;
      std::vector<const char*> sp;
      for (const std::string& s : syms) sp.push_back(s.empty() ? nullptr : s.c_str());
      check(e->trace_input(inputs[i].get(), name.c_str(), sp.data()));
    }
    for (const auto& [name, t] : opts.params) check(e->trace_param(t.get(), name.c_str()));
    std::vector<Tensor> outs;
    if constexpr (std::is_convertible_v<decltype(fn(inputs)), Tensor>)
      outs.push_back(fn(inputs));
    else
      outs = fn(inputs);
    std::vector<tsr_tensor_t*> o;
    for (const Tensor& t : outs) o.push_back(t.get());
    std::vector<const char*> names;
    for (size_t i = 0; i < outs.size(); ++i)
      names.push_back(i < opts.output_names.size() ? opts.output_names[i].c_str() : nullptr);
    tsr_model_t* m = nullptr;
    check(e->trace_end(o.data(), o.size(), names.data(), &m));  // ends the trace even on error
    return m;
  } catch (...) {
    e->trace_abort();
    throw;
  }
}

}  // namespace detail

// Traces fn(inputs) -> std::vector<Tensor> (or one Tensor) into a model.
//
// With opts.dynamic, the model accepts other sizes of those dims: fn runs 2^k + 1 times for k
// symbols (at the example sizes, with each symbol one smaller, and with all two smaller; inputs
// are cut to those sizes), and the ints that follow the sizes become expressions of the symbols
// (ext_model.h model_generalize). Each symbolic dim needs an example size of at least 3; code
// whose ops change with the sizes (a branch on a size) is an error naming where.
template <class F, std::enable_if_t<std::is_invocable_v<F&, const std::vector<Tensor>&>, int> = 0>
Model trace(F&& fn, const std::vector<Tensor>& inputs, const TraceOptions& opts = {}) {
  tsr_runtime_t* rt = inputs.empty() ? runtime() : inputs[0].runtime();
  const tsr_model_ext_t* e = detail::model_ext(rt);
  // The symbols and their example sizes.
  std::vector<std::string> syms;
  std::vector<int64_t> base;
  for (const DynamicDim& d : opts.dynamic) {
    if (d.input >= inputs.size() || d.dim < 0 || d.dim >= inputs[d.input].dim())
      throw Error(TSR_INVALID_ARGUMENT, "jit::trace: dynamic dim " + std::to_string(d.dim) + " of input " +
                                            std::to_string(d.input) + " does not exist");
    int64_t size = inputs[d.input].size(d.dim);
    auto it = std::find(syms.begin(), syms.end(), d.symbol);
    if (it == syms.end()) {
      syms.push_back(d.symbol);
      base.push_back(size);
    } else if (base[static_cast<size_t>(it - syms.begin())] != size) {
      throw Error(TSR_INVALID_ARGUMENT, "jit::trace: the symbol " + d.symbol + " is " +
                                            std::to_string(base[static_cast<size_t>(it - syms.begin())]) +
                                            " in one input and " + std::to_string(size) + " in input " +
                                            std::to_string(d.input));
    }
  }
  if (syms.empty()) return Model(detail::trace_once(fn, inputs, opts, rt), rt);
  for (size_t s = 0; s < syms.size(); ++s)
    if (base[s] < 3)
      throw Error(TSR_INVALID_ARGUMENT, "jit::trace: the dynamic dim " + syms[s] + " needs an example size of at least 3 (got " +
                                            std::to_string(base[s]) + "): it is also traced two smaller");
  // Sizes to trace at: the example's, every subset of the symbols one smaller, all two smaller.
  std::vector<std::vector<int64_t>> points;
  for (size_t mask = 0; mask < (size_t(1) << syms.size()); ++mask) {
    std::vector<int64_t> p = base;
    for (size_t s = 0; s < syms.size(); ++s)
      if (mask >> s & 1) --p[s];
    points.push_back(p);
  }
  points.push_back(base);
  for (int64_t& v : points.back()) v -= 2;
  std::vector<tsr_model_t*> traces;
  try {
    for (const std::vector<int64_t>& p : points) {
      std::vector<Tensor> cut = inputs;
      for (const DynamicDim& d : opts.dynamic) {
        size_t s = static_cast<size_t>(std::find(syms.begin(), syms.end(), d.symbol) - syms.begin());
        cut[d.input] = cut[d.input].narrow(d.dim, 0, p[s]);
      }
      traces.push_back(detail::trace_once(fn, cut, opts, rt));
    }
  } catch (...) {
    for (tsr_model_t* t : traces) e->model_release(t);
    throw;
  }
  tsr_model_t* m = nullptr;
  check(e->model_generalize(traces.data(), traces.size(), &m));  // owns the traces
  return Model(m, rt);
}

// Traces module.forward(inputs[0]) with the module's parameters and buffers as named weights.
inline Model trace(nn::Module& module, const std::vector<Tensor>& inputs, TraceOptions opts = {}) {
  for (auto& p : module.named_parameters()) opts.params.push_back(p);
  for (auto& b : module.named_buffers()) opts.params.push_back(b);
  return trace([&](const std::vector<Tensor>& in) { return module.forward(in.at(0)); }, inputs, opts);
}

}  // namespace tsr::jit
