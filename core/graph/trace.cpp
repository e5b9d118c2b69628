#include "graph/trace.hpp"

#include <cctype>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#include "autograd/engine.hpp"
#include "tessera/dtype.hpp"
#include "graph/builtins.hpp"

namespace tsr::core::graph {

std::atomic<int> g_tracing_threads{0};

struct Tracer {
  Runtime* rt = nullptr;
  std::unique_ptr<tsr_model_s> g;
  std::unordered_map<const Tensor*, int> ids;
  // Every tensor the map names stays alive until the trace ends, so that an address is never
  // reused by another tensor while the map holds it.
  std::vector<Tensor*> pinned;
  int depth = 0;
  int next_node = 0, next_const = 0;
  bool grad_mode = true;  // the thread's mode before the trace
  tsr_status_t error = nullptr;  // the first failure of a recording, reported by trace_end

  ~Tracer() {
    for (Tensor* t : pinned) t->release();
    if (error) free_status(error);
  }
  void fail(tsr_code_t code, const std::string& msg) {
    if (!error) error = make_status(code, "trace: " + msg);
  }
  void pin(Tensor* t) {
    t->retain();
    pinned.push_back(t);
  }
  int add(Value v) {
    int id = -1;
    tsr_status_t st = g->add_value(std::move(v), &id);
    if (st) {
      if (!error) error = st;
      else free_status(st);
    }
    return id;
  }

  // A generated name ("12", "c3") that no declared value has taken.
  std::string fresh(const char* prefix, int& counter) {
    std::string n;
    do n = prefix + std::to_string(counter++);
    while (g->by_name.count(n));
    return n;
  }

  // The value a tensor argument refers to; a tensor the trace has not seen becomes a const.
  int id_of(Tensor* t) {
    auto it = ids.find(t);
    if (it != ids.end()) return it->second;
    Value v;
    v.kind = ValueKind::Const;
    v.type = type_of(t);
    v.name = fresh("c", next_const);
    // A 0-dim cpu tensor (a wrapped C++ scalar, a scalar the code made) is written inline.
    if (t->ndim == 0 && t->device.type == TSR_DEVICE_TYPE_CPU && t->dtype != TSR_F4_E2M1FN_X2) {
      v.inline_scalar = true;
      v.wrapped = t->wrapped_number;
      v.scalar = read_scalar(t);
    }
    t->retain();
    v.weight = t;
    int id = add(std::move(v));
    if (id >= 0) {
      g->weights.push_back(id);
      ids[t] = id;
      pin(t);
    }
    return id;
  }

  static tsr_value_t read_scalar(const Tensor* t) {
    tsr_value_t s{};
    const void* p = t->data();
    switch (t->dtype) {
      case TSR_BOOL:
        s.tag = TSR_VALUE_BOOL;
        s.u.b = *static_cast<const uint8_t*>(p) != 0;
        return s;
      case TSR_U8:
        s.u.i = *static_cast<const uint8_t*>(p);
        break;
      case TSR_I8:
        s.u.i = *static_cast<const int8_t*>(p);
        break;
      case TSR_I16:
        s.u.i = *static_cast<const int16_t*>(p);
        break;
      case TSR_I32:
        s.u.i = *static_cast<const int32_t*>(p);
        break;
      case TSR_I64:
        s.u.i = *static_cast<const int64_t*>(p);
        break;
      case TSR_F32:
        s.tag = TSR_VALUE_DOUBLE;
        s.u.d = *static_cast<const float*>(p);
        return s;
      case TSR_F64:
        s.tag = TSR_VALUE_DOUBLE;
        s.u.d = *static_cast<const double*>(p);
        return s;
      case TSR_F16:
      case TSR_BF16: {
        s.tag = TSR_VALUE_DOUBLE;
        uint16_t h;
        std::memcpy(&h, p, 2);
        s.u.d = t->dtype == TSR_BF16 ? static_cast<double>(::tsr::detail::bf16_bits_to_f32(h))
                                     : static_cast<double>(::tsr::detail::f16_bits_to_f32(h));
        return s;
      }
      case TSR_F8_E4M3FN:
      case TSR_F8_E5M2:
      case TSR_F8_E8M0FNU: {  // exact in a double
        s.tag = TSR_VALUE_DOUBLE;
        const uint8_t b = *static_cast<const uint8_t*>(p);
        s.u.d = t->dtype == TSR_F8_E4M3FN ? static_cast<double>(::tsr::detail::e4m3fn_bits_to_f32(b))
                : t->dtype == TSR_F8_E5M2 ? static_cast<double>(::tsr::detail::e5m2_bits_to_f32(b))
                                          : static_cast<double>(::tsr::detail::e8m0fnu_bits_to_f32(b));
        return s;
      }
      default:
        break;
    }
    s.tag = TSR_VALUE_INT;
    return s;
  }

  Arg box(const tsr_value_t& v) {
    if (v.tag != TSR_VALUE_TENSOR && v.tag != TSR_VALUE_TENSOR_LIST) return constant_arg(v);
    Arg a;
    a.tag = v.tag;
    if (v.tag == TSR_VALUE_TENSOR)
      a.values.push_back(id_of(v.u.tensor));
    else
      for (int64_t k = 0; k < v.u.tensors.len; ++k) a.values.push_back(id_of(v.u.tensors.data[k]));
    return a;
  }

  void record(Callee callee, const tsr_value_t* args, size_t nargs, Tensor* const* outs, size_t nouts) {
    try {
      Node n;
      n.callee = callee;
      for (size_t i = 0; i < nargs; ++i) n.args.push_back(box(args[i]));
      for (size_t k = 0; k < nouts; ++k) {
        Value v;
        v.kind = ValueKind::Node;
        v.type = type_of(outs[k]);
        v.name = fresh("", next_node);
        v.producer = static_cast<int>(g->nodes.size());
        int id = add(std::move(v));
        if (id < 0) return;
        n.outputs.push_back(id);
        // An in-place op returns its argument: later uses read the new value.
        auto it = ids.find(outs[k]);
        if (it == ids.end()) pin(outs[k]);
        ids[outs[k]] = id;
      }
      g->nodes.push_back(std::move(n));
    } catch (const std::bad_alloc&) {
      fail(TSR_RESOURCE_EXHAUSTED, "out of host memory while recording " + callee.name());
    }
  }
};

namespace {
thread_local Tracer* t_tracer = nullptr;

// A value name: letters, digits, '_' and '.' ("fc1.weight", "0.bias"); symbols and inputs
// also start with a letter or '_' (symbol_like).
bool valid_name(const char* name, bool symbol_like = false) {
  if (!name || !*name) return false;
  if (symbol_like && !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (const char* p = name; *p; ++p)
    if (!(std::isalnum(static_cast<unsigned char>(*p)) || *p == '_' || *p == '.')) return false;
  return true;
}
// A symbol of a dim ("B", "seq_len"): a letter or '_', then letters, digits, '_'.
bool valid_symbol(const char* s) {
  if (!valid_name(s, true)) return false;
  return std::strchr(s, '.') == nullptr;
}
}  // namespace

Tracer* thread_tracer() { return t_tracer; }

tsr_status_t traced_call(Tracer* tr, CallBody body, tsr_op_s* op, const tsr_value_t* args, size_t nargs,
                         tsr_tensor_t** outs, size_t nouts) {
  if (tr->depth > 0) return body(op, args, nargs, outs, nouts);
  ++tr->depth;
  tsr_status_t st = body(op, args, nargs, outs, nouts);
  --tr->depth;
  if (!st) {
    Callee c;
    c.op = op;
    tr->record(c, args, nargs, outs, nouts);
  }
  return st;
}

BuiltinScope::BuiltinScope() {
  if (g_tracing_threads.load(std::memory_order_relaxed) == 0) return;
  tr_ = t_tracer;
  if (!tr_) return;
  top_ = tr_->depth == 0;
  ++tr_->depth;
}

BuiltinScope::~BuiltinScope() {
  if (tr_) --tr_->depth;
}

void BuiltinScope::record(const char* builtin, Tensor* self, Tensor* out, std::initializer_list<tsr_value_t> args) {
  if (!top_) return;
  Callee c;
  c.builtin = find_builtin(builtin);
  if (!c.builtin) return tr_->fail(TSR_INTERNAL, std::string("no builtin named ") + builtin);
  std::vector<tsr_value_t> all;
  tsr_value_t s{};
  s.tag = TSR_VALUE_TENSOR;
  s.u.tensor = self;
  all.push_back(s);
  all.insert(all.end(), args.begin(), args.end());
  tr_->record(c, all.data(), all.size(), &out, out ? 1 : 0);
}

tsr_status_t trace_begin(Runtime* rt) {
  if (!rt) return make_status(TSR_INVALID_ARGUMENT, "trace_begin: runtime is NULL");
  if (t_tracer) return make_status(TSR_FAILED_PRECONDITION, "trace_begin: this thread is already tracing (end it first)");
  auto tr = std::make_unique<Tracer>();
  tr->rt = rt;
  tr->g = std::make_unique<tsr_model_s>();
  tr->g->rt = rt;
  // Inference graphs: nothing the traced code runs records autograd history.
  tr->grad_mode = grad_mode();
  set_grad_mode(false);
  t_tracer = tr.release();
  g_tracing_threads.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void trace_abort() {
  Tracer* tr = t_tracer;
  if (!tr) return;
  t_tracer = nullptr;
  g_tracing_threads.fetch_sub(1, std::memory_order_relaxed);
  set_grad_mode(tr->grad_mode);
  delete tr;
}

static tsr_status_t declare(Tensor* t, const char* name, const char* entry, bool symbol_like, Tracer** out) {
  Tracer* tr = t_tracer;
  if (!tr) return make_status(TSR_FAILED_PRECONDITION, std::string(entry) + ": this thread is not tracing");
  if (!t) return make_status(TSR_INVALID_ARGUMENT, std::string(entry) + ": tensor is NULL");
  if (!valid_name(name, symbol_like))
    return make_status(TSR_INVALID_ARGUMENT,
                       std::string(entry) + ": '" + (name ? name : "(null)") + "' is not " +
                           (symbol_like ? "an input name (a letter or '_', then letters, digits, '_', '.')"
                                        : "a value name (letters, digits, '_', '.')"));
  if (tr->ids.count(t))
    return make_status(TSR_INVALID_ARGUMENT, std::string(entry) + ": the tensor for '" + name +
                                                 "' is already in the trace (as %" +
                                                 tr->g->values[static_cast<size_t>(tr->ids[t])].name + ")");
  if (tr->rt != t->runtime)
    return make_status(TSR_INVALID_ARGUMENT, std::string(entry) + ": the tensor belongs to another runtime");
  *out = tr;
  return nullptr;
}

tsr_status_t trace_input(Tensor* t, const char* name, const char* const* dim_symbols) {
  Tracer* tr = nullptr;
  TSR_RETURN_IF_ERROR(declare(t, name, "trace_input", true, &tr));
  if (!tr->g->nodes.empty())
    return make_status(TSR_FAILED_PRECONDITION, std::string("trace_input: '") + name +
                                                    "' is declared after ops were recorded (declare every input first)");
  Value v;
  v.kind = ValueKind::Input;
  v.name = name;
  v.type = type_of(t);
  for (int d = 0; dim_symbols && d < t->ndim; ++d) {
    const char* s = dim_symbols[d];
    if (!s) continue;
    if (!valid_symbol(s))
      return make_status(TSR_INVALID_ARGUMENT, std::string("trace_input: '") + s + "' (dim " + std::to_string(d) +
                                                   " of '" + name + "') is not a symbol name");
    v.type.dims[static_cast<size_t>(d)].sym = s;
  }
  int id = -1;
  TSR_RETURN_IF_ERROR(tr->g->add_value(std::move(v), &id));
  tr->g->inputs.push_back(id);
  tr->ids[t] = id;
  tr->pin(t);
  if (tr->g->inputs.size() == 1) tr->g->device = t->device;
  return nullptr;
}

tsr_status_t trace_param(Tensor* t, const char* name) {
  Tracer* tr = nullptr;
  TSR_RETURN_IF_ERROR(declare(t, name, "trace_param", false, &tr));
  Value v;
  v.kind = ValueKind::Param;
  v.name = name;
  v.type = type_of(t);
  int id = -1;
  TSR_RETURN_IF_ERROR(tr->g->add_value(std::move(v), &id));
  t->retain();
  tr->g->values[static_cast<size_t>(id)].weight = t;
  tr->g->weights.push_back(id);
  tr->ids[t] = id;
  tr->pin(t);
  return nullptr;
}

tsr_status_t trace_end(Tensor* const* outputs, size_t n, const char* const* names, tsr_model_s** out) {
  Tracer* tr = t_tracer;
  if (!tr) return make_status(TSR_FAILED_PRECONDITION, "trace_end: this thread is not tracing");
  std::unique_ptr<Tracer> owner(tr);
  t_tracer = nullptr;
  g_tracing_threads.fetch_sub(1, std::memory_order_relaxed);
  set_grad_mode(tr->grad_mode);
  if (tr->error) {
    tsr_status_t st = tr->error;
    tr->error = nullptr;
    return st;
  }
  if (!out || (n > 0 && !outputs)) return make_status(TSR_INVALID_ARGUMENT, "trace_end: outputs and out are required");
  if (n == 0) return make_status(TSR_INVALID_ARGUMENT, "trace_end: a graph needs at least one output");
  Graph& g = *tr->g;
  for (size_t k = 0; k < n; ++k) {
    if (!outputs[k]) return make_status(TSR_INVALID_ARGUMENT, "trace_end: output " + std::to_string(k) + " is NULL");
    int id = tr->id_of(outputs[k]);
    if (tr->error) return prefix_status(std::exchange(tr->error, nullptr), "trace_end");
    g.outputs.push_back(id);
    const char* name = names ? names[k] : nullptr;
    if (!name) continue;
    Value& v = g.values[static_cast<size_t>(id)];
    if (v.name == name) continue;
    if (!valid_name(name)) return make_status(TSR_INVALID_ARGUMENT, std::string("trace_end: '") + name + "' is not a value name");
    if (v.kind != ValueKind::Node)
      return make_status(TSR_INVALID_ARGUMENT, std::string("trace_end: output ") + std::to_string(k) +
                                                   " is the input, param or const %" + v.name + " (cannot rename it '" +
                                                   name + "')");
    if (g.by_name.count(name))
      return make_status(TSR_INVALID_ARGUMENT, std::string("trace_end: the output name '") + name + "' is taken");
    g.by_name.erase(v.name);
    v.name = name;
    g.by_name.emplace(v.name, id);
  }
  g.compact();  // params the traced code never used are dropped
  *out = tr->g.release();
  return nullptr;
}

}  // namespace tsr::core::graph
