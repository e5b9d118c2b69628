// Tessera SDK, host side: a header-only C++ API over the C ABI (tsr_api_t).
//
//   tsr::Tensor   RAII handle (one reference) with views, conversions and operators.
//   factories     tsr::empty/zeros/ones/full/arange/rand/randn/from_vector (tessera/factories.hpp),
//                 tsr::scalar_tensor.
//   ops           tsr::add, tsr::matmul, ... and tsr::call("name", {args}) for any op.
// Errors from the core become tsr::Error exceptions (code + message) on this side only.
//
// Finding the core: a host that links libtessera (CMake target Tessera::tessera defines
// TESSERA_LINKS_CORE) needs nothing. A host that dlopen()s the core calls
// tsr::set_api(get_api(TSR_ABI_VERSION)) once before anything else.
// Runtime: ops run in the runtime of their tensor arguments; factories use tsr::runtime(),
// the process-wide default runtime unless tsr::set_runtime() chose another.
// Thread-safety: distinct Tensors may be used from any thread; one Tensor object is not
// synchronized (like std::shared_ptr).
#pragma once

#include <atomic>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/api.h"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"

namespace tsr {

// ---- the api table and the runtime -----------------------------------------------------------

namespace detail {
inline std::atomic<const tsr_api_t*>& api_slot() {
  static std::atomic<const tsr_api_t*> slot{nullptr};
  return slot;
}
inline std::atomic<tsr_runtime_t*>& runtime_slot() {
  static std::atomic<tsr_runtime_t*> slot{nullptr};
  return slot;
}
}  // namespace detail

namespace detail {
inline tsr_runtime_t*& thread_runtime() {
  thread_local tsr_runtime_t* rt = nullptr;
  return rt;
}
}  // namespace detail
inline void set_api(const tsr_api_t* api) { detail::api_slot().store(api); }

inline const tsr_api_t* api() {
  const tsr_api_t* a = detail::api_slot().load(std::memory_order_acquire);
  if (a) return a;
#ifdef TESSERA_LINKS_CORE
  a = tsr_get_api(TSR_ABI_VERSION);
  detail::api_slot().store(a);
  return a;
#else
  throw Error(TSR_FAILED_PRECONDITION, "tessera SDK: call tsr::set_api() with the core's table first");
#endif
}

inline void check(tsr_status_t st) { ::tsr::check(api(), st); }

inline tsr_runtime_t* runtime() {
  // A RuntimeScope on this thread (composite ops and backward formulas run in their
  // tensors' runtime) comes before the process-wide choice.
  if (tsr_runtime_t* scoped = detail::thread_runtime()) return scoped;
  tsr_runtime_t* rt = detail::runtime_slot().load(std::memory_order_acquire);
  if (rt) return rt;
  check(api()->runtime_default(&rt));
  detail::runtime_slot().store(rt);
  return rt;
}
// Routes factories to `rt` (nullptr: back to the default runtime).
inline void set_runtime(tsr_runtime_t* rt) { detail::runtime_slot().store(rt); }
// Routes this thread's factories to `rt` for the scope's lifetime (nests).
class RuntimeScope {
 public:
  explicit RuntimeScope(tsr_runtime_t* rt) : prev_(detail::thread_runtime()) { detail::thread_runtime() = rt; }
  ~RuntimeScope() { detail::thread_runtime() = prev_; }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;

 private:
  tsr_runtime_t* prev_;
};
inline void manual_seed(uint64_t seed) { api()->manual_seed(runtime(), seed); }

// ---- devices ---------------------------------------------------------------------------------

struct Device {
  tsr_device_t d{TSR_DEVICE_TYPE_CPU, 0};
  Device() = default;
  Device(tsr_device_t dev) : d(dev) {}                                           // NOLINT: implicit on purpose
  Device(const char* text) { check(api()->device_parse(runtime(), text, &d)); }  // NOLINT
  Device(const std::string& text) : Device(text.c_str()) {}                      // NOLINT
  static Device cpu(int index = 0) { return Device(tsr_device_t{TSR_DEVICE_TYPE_CPU, index}); }
  bool operator==(const Device& o) const { return d.type == o.d.type && d.index == o.d.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str(tsr_runtime_t* rt = nullptr) const {
    const char* n = api()->device_type_name(rt ? rt : runtime(), d.type);
    return std::string(n ? n : "?") + ":" + std::to_string(d.index);
  }
};

// ---- tensors ---------------------------------------------------------------------------------

class Tensor {
 public:
  Tensor() = default;
  // Adopts one reference.
  static Tensor adopt(tsr_tensor_t* t) {
    Tensor r;
    r.t_ = t;
    return r;
  }
  // Shares a reference.
  static Tensor borrow(tsr_tensor_t* t) {
    if (t) api()->tensor_retain(t);
    return adopt(t);
  }
  Tensor(const Tensor& o) : t_(o.t_) {
    if (t_) api()->tensor_retain(t_);
  }
  Tensor(Tensor&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  Tensor& operator=(const Tensor& o) {
    if (this != &o) {
      if (o.t_) api()->tensor_retain(o.t_);
      reset();
      t_ = o.t_;
    }
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset();
      t_ = o.t_;
      o.t_ = nullptr;
    }
    return *this;
  }
  ~Tensor() { reset(); }
  void reset() {
    if (t_) api()->tensor_release(t_);
    t_ = nullptr;
  }
  // Gives up the reference to the caller.
  tsr_tensor_t* release() {
    tsr_tensor_t* t = t_;
    t_ = nullptr;
    return t;
  }

  bool defined() const { return t_ != nullptr; }
  tsr_tensor_t* get() const { return t_; }
  tsr_runtime_t* runtime() const { return api()->tensor_runtime(h()); }
  tsr_dtype_t dtype() const { return api()->tensor_dtype(h()); }
  Device device() const { return Device(api()->tensor_device(h())); }
  int64_t dim() const { return api()->tensor_ndim(h()); }
  int64_t numel() const { return api()->tensor_numel(h()); }
  std::vector<int64_t> sizes() const {
    const int64_t* s = api()->tensor_sizes(h());
    return std::vector<int64_t>(s, s + dim());
  }
  std::vector<int64_t> strides() const {
    const int64_t* s = api()->tensor_strides(h());
    return std::vector<int64_t>(s, s + dim());
  }
  int64_t size(int64_t d) const { return sizes().at(static_cast<size_t>(d < 0 ? d + dim() : d)); }
  int64_t storage_offset() const { return api()->tensor_offset(h()); }
  bool is_contiguous() const { return api()->tensor_is_contiguous(h()) != 0; }
  void* data_ptr() const { return api()->tensor_data(h()); }
  template <class T>
  T* data() const {
    if (dtype_of<T> != dtype())
      throw Error(TSR_INVALID_ARGUMENT, std::string("data<T>: tensor is ") + dtype_name(dtype()));
    return static_cast<T*>(data_ptr());
  }
  bool shares_storage(const Tensor& o) const { return api()->tensor_shares_storage(h(), o.h()) != 0; }

  // Views.
  Tensor view(std::vector<int64_t> s) const {
    return make([&](auto** o) { return api()->tensor_view(h(), n(s), s.data(), o); });
  }
  Tensor reshape(std::vector<int64_t> s) const {
    return make([&](auto** o) { return api()->tensor_reshape(h(), n(s), s.data(), o); });
  }
  Tensor transpose(int64_t a, int64_t b) const {
    return make([&](auto** o) { return api()->tensor_transpose(h(), a, b, o); });
  }
  Tensor t() const { return transpose(0, 1); }
  Tensor permute(std::vector<int64_t> d) const {
    return make([&](auto** o) { return api()->tensor_permute(h(), n(d), d.data(), o); });
  }
  Tensor expand(std::vector<int64_t> s) const {
    return make([&](auto** o) { return api()->tensor_expand(h(), n(s), s.data(), o); });
  }
  Tensor slice(int64_t d, int64_t start, int64_t end, int64_t step = 1) const {
    return make([&](auto** o) { return api()->tensor_slice(h(), d, start, end, step, o); });
  }
  Tensor select(int64_t d, int64_t i) const {
    return make([&](auto** o) { return api()->tensor_select(h(), d, i, o); });
  }
  Tensor narrow(int64_t d, int64_t s, int64_t l) const {
    return make([&](auto** o) { return api()->tensor_narrow(h(), d, s, l, o); });
  }
  Tensor squeeze() const {
    return make([&](auto** o) { return api()->tensor_squeeze(h(), TSR_ALL_DIMS, o); });
  }
  Tensor squeeze(int64_t d) const {
    return make([&](auto** o) { return api()->tensor_squeeze(h(), d, o); });
  }
  Tensor unsqueeze(int64_t d) const {
    return make([&](auto** o) { return api()->tensor_unsqueeze(h(), d, o); });
  }
  Tensor as_strided(std::vector<int64_t> s, std::vector<int64_t> st, int64_t off) const {
    if (s.size() != st.size()) throw Error(TSR_INVALID_ARGUMENT, "as_strided: sizes and strides differ in length");
    return make([&](auto** o) { return api()->tensor_as_strided(h(), n(s), s.data(), st.data(), off, o); });
  }
  Tensor contiguous() const {
    return make([&](auto** o) { return api()->tensor_contiguous(h(), o); });
  }
  Tensor operator[](int64_t i) const { return select(0, i); }

  // Conversions (new tensors unless nothing changes).
  Tensor to(tsr_dtype_t dt) const {
    return make([&](auto** o) { return api()->tensor_to(h(), dt, api()->tensor_device(h()), 0, o); });
  }
  Tensor to(Device dev) const {
    return make([&](auto** o) { return api()->tensor_to(h(), TSR_DTYPE_UNDEFINED, dev.d, 0, o); });
  }
  Tensor to(Device dev, tsr_dtype_t dt) const {
    return make([&](auto** o) { return api()->tensor_to(h(), dt, dev.d, 0, o); });
  }
  Tensor clone() const {
    return make([&](auto** o) { return api()->tensor_to(h(), TSR_DTYPE_UNDEFINED, api()->tensor_device(h()), 1, o); });
  }
  Tensor& copy_(const Tensor& src) {
    check(api()->tensor_copy_(h(), src.h()));
    return *this;
  }

  // Elements as host values of type T (converted through the runtime when dtypes differ).
  template <class T>
  std::vector<T> to_vector() const {
    Tensor src = dtype() == dtype_of<T> ? *this : to(dtype_of<T>);
    std::vector<T> out(static_cast<size_t>(src.numel()));
    check(api()->tensor_copy_to_host(src.h(), out.data(), out.size() * sizeof(T)));
    return out;
  }
  template <class T>
  T item() const {
    if (numel() != 1)
      throw Error(TSR_INVALID_ARGUMENT,
                  "item: a tensor with " + std::to_string(numel()) + " elements cannot be converted to a scalar");
    return to_vector<T>()[0];
  }

  // In-place fill.
  Tensor& fill_(double v);

  // Autograd (defined in tessera/autograd.hpp).
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);  // leaves only
  bool is_leaf() const;
  Tensor grad() const;             // undefined when none
  void set_grad(const Tensor& g);  // an undefined g clears it
  Tensor detach() const;
  void retain_grad();
  // grad may be undefined for a one-element tensor (implicit 1).
  void backward() const;
  void backward(const Tensor& grad, bool retain_graph = false, bool create_graph = false) const;
  const char* grad_fn_name() const;  // nullptr for leaves
  uint32_t version() const;
  // fn(const Tensor& grad) -> Tensor: return an undefined Tensor to keep the gradient, or a
  // replacement.
  template <class F>
  void register_hook(F fn);
  // fn(const Tensor& leaf), called once per backward pass after the leaf's .grad has received
  // every gradient of the pass (torch's register_post_accumulate_grad_hook). Leaves that require
  // grad only. Returns a handle for remove_post_accumulate_grad_hook.
  template <class F>
  uint64_t register_post_accumulate_grad_hook(F fn);
  void remove_post_accumulate_grad_hook(uint64_t handle);

 private:
  tsr_tensor_t* h() const {
    if (!t_) throw Error(TSR_FAILED_PRECONDITION, "use of an undefined tsr::Tensor");
    return t_;
  }
  static int32_t n(const std::vector<int64_t>& v) { return static_cast<int32_t>(v.size()); }
  template <class F>
  static Tensor make(F&& f) {
    tsr_tensor_t* out = nullptr;
    check(f(&out));
    return adopt(out);
  }
  tsr_tensor_t* t_ = nullptr;
};

// ---- boxed arguments -------------------------------------------------------------------------

struct None {};
constexpr None none{};

// One op argument. Holds what the boxed value borrows (lists, strings, temporary tensors).
// Args are meant to live only for the duration of one call expression; do not store them.
class Arg {
 public:
  Arg(None) { v_.tag = TSR_VALUE_NONE; }            // NOLINT
  Arg(std::nullopt_t) { v_.tag = TSR_VALUE_NONE; }  // NOLINT
  // Lvalue tensors are borrowed (an Arg lives only for the call expression, shorter than the
  // tensor); temporaries are moved in and owned.
  Arg(const Tensor& t) {  // NOLINT
    v_.tag = TSR_VALUE_TENSOR;
    v_.u.tensor = t.get();
  }
  Arg(Tensor&& t) : tensor_(std::move(t)) { set_tensor(); }  // NOLINT
  Arg(bool b) {                                              // NOLINT
    v_.tag = TSR_VALUE_BOOL;
    v_.u.b = b;
  }
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Arg(I i) {  // NOLINT
    v_.tag = TSR_VALUE_INT;
    v_.u.i = static_cast<int64_t>(i);
  }
  Arg(double d) {  // NOLINT
    v_.tag = TSR_VALUE_DOUBLE;
    v_.u.d = d;
  }
  Arg(float d) : Arg(static_cast<double>(d)) {}  // NOLINT
  Arg(tsr_dtype_t dt) {                          // NOLINT
    v_.tag = TSR_VALUE_DTYPE;
    v_.u.dtype = dt;
  }
  Arg(Device d) {  // NOLINT
    v_.tag = TSR_VALUE_DEVICE;
    v_.u.device = d.d;
  }
  Arg(std::vector<int64_t> list) : list_(std::move(list)) {  // NOLINT
    v_.tag = TSR_VALUE_INT_LIST;
    v_.u.ints.data = list_.data();
    v_.u.ints.len = static_cast<int64_t>(list_.size());
  }
  Arg(std::initializer_list<int64_t> list) : Arg(std::vector<int64_t>(list)) {}  // NOLINT
  // Tensor[]: the handles are borrowed from the tensors, which must outlive the call.
  Arg(const std::vector<Tensor>& ts) {  // NOLINT
    for (const Tensor& t : ts) handles_.push_back(t.get());
    v_.tag = TSR_VALUE_TENSOR_LIST;
    v_.u.tensors.data = handles_.data();
    v_.u.tensors.len = static_cast<int64_t>(handles_.size());
  }
  Arg(std::string s) : str_(std::move(s)) {  // NOLINT
    v_.tag = TSR_VALUE_STRING;
    v_.u.str = str_.c_str();
  }
  Arg(const char* s) : Arg(std::string(s)) {}  // NOLINT
  template <class T>
  Arg(const std::optional<T>& o) : Arg(o ? Arg(*o) : Arg(none)) {}  // NOLINT
  Arg(const Arg& o) : tensor_(o.tensor_), list_(o.list_), str_(o.str_), handles_(o.handles_), v_(o.v_) { repoint(); }
  Arg& operator=(const Arg&) = delete;

  const tsr_value_t& value() const { return v_; }

 private:
  void set_tensor() {
    v_.tag = TSR_VALUE_TENSOR;
    v_.u.tensor = tensor_.get();
  }
  void repoint() {
    if (v_.tag == TSR_VALUE_INT_LIST) v_.u.ints.data = list_.data();
    if (v_.tag == TSR_VALUE_STRING) v_.u.str = str_.c_str();
    if (v_.tag == TSR_VALUE_TENSOR_LIST) v_.u.tensors.data = handles_.data();
    if (v_.tag == TSR_VALUE_TENSOR && tensor_.defined()) v_.u.tensor = tensor_.get();
  }
  Tensor tensor_;
  std::vector<int64_t> list_;
  std::string str_;
  std::vector<tsr_tensor_t*> handles_;
  tsr_value_t v_{};
};

// A scalar as a wrapped-number 0-dim tensor (participates in promotion like a Python scalar).
// `rt`: the runtime to create it in (the other operand's: tensors of one call must share a
// runtime); nullptr means tsr::runtime().
inline Tensor scalar_tensor(double v, tsr_dtype_t dt = TSR_DTYPE_UNDEFINED, bool wrapped = true,
                            tsr_runtime_t* rt = nullptr) {
  tsr_value_t val;
  val.tag = TSR_VALUE_DOUBLE;
  val.u.d = v;
  tsr_tensor_t* out = nullptr;
  check(api()->tensor_scalar(rt ? rt : runtime(), &val, dt == TSR_DTYPE_UNDEFINED ? TSR_F64 : dt,
                             tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, wrapped ? 1 : 0, &out));
  return Tensor::adopt(out);
}
inline Tensor scalar_tensor_int(int64_t v, tsr_dtype_t dt = TSR_I64, bool wrapped = true, tsr_runtime_t* rt = nullptr) {
  tsr_value_t val;
  val.tag = TSR_VALUE_INT;
  val.u.i = v;
  tsr_tensor_t* out = nullptr;
  check(
      api()->tensor_scalar(rt ? rt : runtime(), &val, dt, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, wrapped ? 1 : 0, &out));
  return Tensor::adopt(out);
}

// Any C++ arithmetic scalar as a wrapped number: integers stay integers (int * Tensor<int>
// stays int), floating point values promote integer tensors to the default float dtype.
// `rt` as for scalar_tensor: pass the other operand's runtime (`t.runtime()`).
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor wrap_scalar(S s, tsr_runtime_t* rt = nullptr) {
  if constexpr (std::is_same_v<S, bool>) {
    tsr_value_t val;
    val.tag = TSR_VALUE_BOOL;
    val.u.b = s;
    tsr_tensor_t* out = nullptr;
    check(api()->tensor_scalar(rt ? rt : runtime(), &val, TSR_BOOL, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, 1, &out));
    return Tensor::adopt(out);
  } else if constexpr (std::is_integral_v<S>) {
    return scalar_tensor_int(static_cast<int64_t>(s), TSR_I64, true, rt);
  } else {
    return scalar_tensor(static_cast<double>(s), TSR_DTYPE_UNDEFINED, true, rt);
  }
}

// ---- calling ops -----------------------------------------------------------------------------

// An op looked up once per runtime and thread; calls skip the string lookup afterwards.
class Op {
 public:
  explicit Op(const char* name) : name_(name) {}
  tsr_op_t* get(tsr_runtime_t* rt) const {
    // Per-thread cache keyed by (op, runtime serial): a runtime destroyed and re-created at the
    // same address gets a new serial, so a stale handle is never used.
    // The name pointer is part of the key: a temporary Op may reuse the address of an earlier
    // one (same stack slot) for another op.
    thread_local struct {
      const Op* owner = nullptr;
      const char* name = nullptr;
      uint64_t serial = 0;
      tsr_op_t* op = nullptr;
    } cache[64];
    const tsr_api_t* a = api();
    uint64_t serial = a->runtime_serial(rt);
    size_t slot = (reinterpret_cast<uintptr_t>(this) >> 3) & 63;
    auto& c = cache[slot];
    if (c.owner != this || c.name != name_ || c.serial != serial) {
      tsr_op_t* op = nullptr;
      check(a->op_find(rt, name_, &op));
      c.owner = this;
      c.name = name_;
      c.serial = serial;
      c.op = op;
    }
    return c.op;
  }
  const char* name() const { return name_; }

 private:
  const char* name_;
};

namespace detail {
// The runtime of the first tensor argument (inside Tensor[] too), else tsr::runtime().
inline tsr_runtime_t* runtime_of(const tsr_value_t* vals, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const tsr_value_t& v = vals[i];
    if (v.tag == TSR_VALUE_TENSOR && v.u.tensor) return api()->tensor_runtime(v.u.tensor);
    if (v.tag == TSR_VALUE_TENSOR_LIST && v.u.tensors.len > 0) return api()->tensor_runtime(v.u.tensors.data[0]);
  }
  return runtime();
}
// Calls a one-output op on values that borrow everything they point to: what call() does once
// its Args are boxed. The elementwise wrappers below (add, mul, relu, ...) build their few
// values directly: boxing a tensor or a number as an Arg was about 20 ns of a 190 ns recorded
// 1-element add.
inline Tensor call_values(const Op& op, const tsr_value_t* vals, size_t n) {
  tsr_op_t* h = op.get(runtime_of(vals, n));
  tsr_tensor_t* out = nullptr;
  check(api()->op_call(h, vals, n, &out, 1));
  return Tensor::adopt(out);
}
inline tsr_value_t tensor_value(const Tensor& t) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = t.get();
  return v;
}
// A Scalar from a double: integral values pass as int so that integer tensors keep their
// dtype (alpha=2 on an int tensor), others as float (NaN, infinities and values outside int64
// too: their conversion to int64 would be undefined).
inline tsr_value_t scalar_value(double d) {
  tsr_value_t v{};
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == static_cast<double>(static_cast<int64_t>(d))) {
    v.tag = TSR_VALUE_INT;
    v.u.i = static_cast<int64_t>(d);
  } else {
    v.tag = TSR_VALUE_DOUBLE;
    v.u.d = d;
  }
  return v;
}

// A Scalar argument from a double (scalar_value's rule).
inline Arg scalar_arg(double v) {
  const tsr_value_t s = scalar_value(v);
  return s.tag == TSR_VALUE_INT ? Arg(s.u.i) : Arg(s.u.d);
}
// The values of `args` into vals (kMaxArgs of them at most); returns how many.
constexpr size_t kMaxArgs = 16;
inline size_t unbox(std::initializer_list<Arg> args, tsr_value_t* vals, const char* op) {
  if (args.size() > kMaxArgs) throw Error(TSR_INVALID_ARGUMENT, std::string(op) + ": too many arguments");
  size_t n = 0;
  for (const Arg& a : args) vals[n++] = a.value();
  return n;
}
// An optional tensor argument (Tensor?): None when absent or undefined.
inline Arg opt_tensor_arg(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return Arg(none);
  return Arg(*t);
}
}  // namespace detail

// Calls an op with `args` in schema order; returns its outputs. `outs` may pass out= tensors.
inline std::vector<Tensor> call_multi(const Op& op, std::initializer_list<Arg> args, std::vector<Tensor> outs = {}) {
  tsr_value_t vals[detail::kMaxArgs];
  const size_t n = detail::unbox(args, vals, op.name());
  tsr_op_t* h = op.get(detail::runtime_of(vals, n));
  size_t nout = api()->op_num_outputs(h);
  tsr_tensor_t* raw[8] = {};
  if (nout > 8) throw Error(TSR_INVALID_ARGUMENT, std::string(op.name()) + ": too many outputs");
  for (size_t i = 0; i < outs.size() && i < nout; ++i) raw[i] = outs[i].get();
  check(api()->op_call(h, vals, n, raw, nout));
  std::vector<Tensor> result;
  for (size_t i = 0; i < nout; ++i)
    result.push_back(i < outs.size() && outs[i].defined() ? outs[i] : Tensor::adopt(raw[i]));
  return result;
}

inline Tensor call(const Op& op, std::initializer_list<Arg> args) {
  tsr_value_t vals[detail::kMaxArgs];
  const size_t n = detail::unbox(args, vals, op.name());
  return detail::call_values(op, vals, n);
}
// By name (looked up on every call; prefer a static tsr::Op on hot paths).
inline Tensor call(const char* name, std::initializer_list<Arg> args) {
  tsr_value_t vals[detail::kMaxArgs];
  const size_t n = detail::unbox(args, vals, name);
  tsr_op_t* h = nullptr;
  check(api()->op_find(detail::runtime_of(vals, n), name, &h));
  tsr_tensor_t* out = nullptr;
  check(api()->op_call(h, vals, n, &out, 1));
  return Tensor::adopt(out);
}
// out= form: writes into `out` (which must have the result's shape, dtype and device).
inline Tensor& call_out(const Op& op, Tensor& out, std::initializer_list<Arg> args) {
  call_multi(op, args, {out});
  return out;
}

#define TSR_SDK_OP(name) static const ::tsr::Op op_##name(#name)

inline Tensor& Tensor::fill_(double v) {
  static const Op op("_fill");
  std::vector<Tensor> outs{*this};
  call_multi(op, {*this, v}, outs);
  return *this;
}

// ---- ops -------------------------------------------------------------------------------------

// The SDK's wrapper macros for ops of one or two tensors, the one set of them: tessera/ops/binary.hpp
// uses them too and #undefs them (it is included at the end of this header, or includes it first).
//   TSR_SDK_UNARY(name):               name(Tensor)
//   TSR_SDK_BINARY(name):              name(Tensor, Tensor) and name(Tensor, scalar)
//   TSR_SDK_BINARY_SCALAR_FIRST(name): those and name(scalar, Tensor)
// Scalar operands travel as wrapped numbers (Python scalar promotion).
#define TSR_SDK_UNARY(name)                               \
  inline Tensor name(const Tensor& a) {                   \
    static const Op op(#name);                            \
    const tsr_value_t v[1] = {detail::tensor_value(a)};   \
    return detail::call_values(op, v, 1);                 \
  }
#define TSR_SDK_BINARY(name)                                                   \
  inline Tensor name(const Tensor& a, const Tensor& b) {                       \
    static const Op op(#name);                                                 \
    const tsr_value_t v[2] = {detail::tensor_value(a), detail::tensor_value(b)}; \
    return detail::call_values(op, v, 2);                                      \
  }                                                                            \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  inline Tensor name(const Tensor& a, S b) {                             \
    return name(a, wrap_scalar(b, a.runtime()));                         \
  }
#define TSR_SDK_BINARY_SCALAR_FIRST(name)                                \
  TSR_SDK_BINARY(name)                                                   \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  inline Tensor name(S a, const Tensor& b) {                             \
    return name(wrap_scalar(a, b.runtime()), b);                         \
  }

TSR_SDK_UNARY(neg)
TSR_SDK_UNARY(abs)
TSR_SDK_UNARY(exp)
TSR_SDK_UNARY(log)
TSR_SDK_UNARY(sqrt)
TSR_SDK_UNARY(rsqrt)
TSR_SDK_UNARY(tanh)
TSR_SDK_UNARY(sigmoid)
TSR_SDK_UNARY(relu)
TSR_SDK_UNARY(silu)
TSR_SDK_BINARY(mul)
TSR_SDK_BINARY(div)
TSR_SDK_BINARY(pow)
TSR_SDK_BINARY(maximum)
TSR_SDK_BINARY(minimum)
TSR_SDK_BINARY(eq)
TSR_SDK_BINARY(ne)
TSR_SDK_BINARY(lt)
TSR_SDK_BINARY(le)
TSR_SDK_BINARY(gt)
TSR_SDK_BINARY(ge)

inline Tensor add(const Tensor& a, const Tensor& b, double alpha = 1) {
  static const Op op("add");
  const tsr_value_t v[3] = {detail::tensor_value(a), detail::tensor_value(b), detail::scalar_value(alpha)};
  return detail::call_values(op, v, 3);
}
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor add(const Tensor& a, S b) {
  return add(a, wrap_scalar(b, a.runtime()));
}
inline Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1) {
  static const Op op("sub");
  const tsr_value_t v[3] = {detail::tensor_value(a), detail::tensor_value(b), detail::scalar_value(alpha)};
  return detail::call_values(op, v, 3);
}
template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
inline Tensor sub(const Tensor& a, S b) {
  return sub(a, wrap_scalar(b, a.runtime()));
}
inline Tensor gelu(const Tensor& a, const char* approximate = "none") {
  static const Op op("gelu");
  return call(op, {a, approximate});
}
inline Tensor clamp(const Tensor& a, std::optional<double> lo, std::optional<double> hi = std::nullopt) {
  static const Op op("clamp");
  return call(op, {a, lo, hi});
}
inline Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  static const Op op("where");
  return call(op, {c, a, b});
}
inline Tensor sum(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false,
                  std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("sum");
  return call(op, {a, std::move(dims), keepdim, dtype ? Arg(*dtype) : Arg(none)});
}
inline Tensor mean(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false,
                   std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("mean");
  return call(op, {a, std::move(dims), keepdim, dtype ? Arg(*dtype) : Arg(none)});
}
inline Tensor amax(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("amax");
  return call(op, {a, std::move(dims), keepdim});
}
inline Tensor amin(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false) {
  static const Op op("amin");
  return call(op, {a, std::move(dims), keepdim});
}
inline Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false) {
  static const Op op("argmax");
  return call(op, {a, dim, keepdim});
}
inline Tensor mm(const Tensor& a, const Tensor& b) {
  static const Op op("mm");
  return call(op, {a, b});
}
inline Tensor bmm(const Tensor& a, const Tensor& b) {
  static const Op op("bmm");
  return call(op, {a, b});
}
inline Tensor matmul(const Tensor& a, const Tensor& b) {
  static const Op op("matmul");
  return call(op, {a, b});
}
inline Tensor softmax(const Tensor& a, int64_t dim, std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("softmax");
  return call(op, {a, dim, dtype ? Arg(*dtype) : Arg(none)});
}
inline Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("log_softmax");
  return call(op, {a, dim, dtype ? Arg(*dtype) : Arg(none)});
}

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
#define TSR_SDK_SCALAR_OPERATOR(sym, fn)                                 \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  inline Tensor operator sym(const Tensor& a, S b) {                     \
    return fn(a, wrap_scalar(b, a.runtime()));                           \
  }                                                                      \
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  inline Tensor operator sym(S a, const Tensor& b) {                     \
    return fn(wrap_scalar(a, b.runtime()), b);                           \
  }
TSR_SDK_SCALAR_OPERATOR(+, add)
TSR_SDK_SCALAR_OPERATOR(-, sub)
TSR_SDK_SCALAR_OPERATOR(*, mul)
TSR_SDK_SCALAR_OPERATOR(/, div)
#undef TSR_SDK_SCALAR_OPERATOR
inline Tensor operator-(const Tensor& a) { return neg(a); }

// "Tensor([2, 3], float32, cpu:0)".
inline std::string describe(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
  std::string s = "Tensor([";
  auto sz = t.sizes();
  for (size_t i = 0; i < sz.size(); ++i) s += (i ? ", " : "") + std::to_string(sz[i]);
  return s + "], " + dtype_name(t.dtype()) + ", " + t.device().str(t.runtime()) + ")";
}

}  // namespace tsr

// Factories, autograd (requires_grad, backward, guards) and the op families' wrappers.
#include "tessera/factories.hpp"
#include "tessera/autograd.hpp"
#include "tessera/ops/unary.hpp"
#include "tessera/ops/binary.hpp"
#include "tessera/ops/reduce.hpp"
#include "tessera/ops/shape.hpp"
#include "tessera/ops/index.hpp"
#include "tessera/ops/linalg.hpp"
#include "tessera/ops/nn.hpp"
