#include "graph/builtins.hpp"

#include <memory>

namespace tsr::core::graph {

namespace {

const tsr_api_t& api() { return *api_table(); }

// An int[] argument; a single int counts as a list of one (as op schemas accept it).
struct Ints {
  const int64_t* data;
  int32_t n;
};
Ints ints(const tsr_value_t& v) {
  if (v.tag == TSR_VALUE_INT) return {&v.u.i, 1};
  return {v.u.ints.data, static_cast<int32_t>(v.u.ints.len)};
}

tsr_status_t run_view(const tsr_value_t* a, Tensor** out) {
  Ints s = ints(a[1]);
  return api().tensor_view(a[0].u.tensor, s.n, s.data, out);
}
tsr_status_t run_reshape(const tsr_value_t* a, Tensor** out) {
  Ints s = ints(a[1]);
  return api().tensor_reshape(a[0].u.tensor, s.n, s.data, out);
}
tsr_status_t run_transpose(const tsr_value_t* a, Tensor** out) {
  return api().tensor_transpose(a[0].u.tensor, a[1].u.i, a[2].u.i, out);
}
tsr_status_t run_permute(const tsr_value_t* a, Tensor** out) {
  Ints d = ints(a[1]);
  return api().tensor_permute(a[0].u.tensor, d.n, d.data, out);
}
tsr_status_t run_expand(const tsr_value_t* a, Tensor** out) {
  Ints s = ints(a[1]);
  return api().tensor_expand(a[0].u.tensor, s.n, s.data, out);
}
tsr_status_t run_slice(const tsr_value_t* a, Tensor** out) {
  return api().tensor_slice(a[0].u.tensor, a[1].u.i, a[2].u.i, a[3].u.i, a[4].u.i, out);
}
tsr_status_t run_select(const tsr_value_t* a, Tensor** out) {
  return api().tensor_select(a[0].u.tensor, a[1].u.i, a[2].u.i, out);
}
tsr_status_t run_narrow(const tsr_value_t* a, Tensor** out) {
  return api().tensor_narrow(a[0].u.tensor, a[1].u.i, a[2].u.i, a[3].u.i, out);
}
tsr_status_t run_squeeze(const tsr_value_t* a, Tensor** out) {
  return api().tensor_squeeze(a[0].u.tensor, a[1].tag == TSR_VALUE_NONE ? TSR_ALL_DIMS : a[1].u.i, out);
}
tsr_status_t run_unsqueeze(const tsr_value_t* a, Tensor** out) {
  return api().tensor_unsqueeze(a[0].u.tensor, a[1].u.i, out);
}
tsr_status_t run_contiguous(const tsr_value_t* a, Tensor** out) { return api().tensor_contiguous(a[0].u.tensor, out); }
tsr_status_t run_as_strided(const tsr_value_t* a, Tensor** out) {
  Ints s = ints(a[1]), st = ints(a[2]);
  if (s.n != st.n)
    return make_status(TSR_INVALID_ARGUMENT, "as_strided: " + std::to_string(s.n) + " sizes but " +
                                                 std::to_string(st.n) + " strides");
  return api().tensor_as_strided(a[0].u.tensor, s.n, s.data, st.data, a[3].u.i, out);
}
tsr_status_t run_to(const tsr_value_t* a, Tensor** out) {
  Tensor* t = a[0].u.tensor;
  tsr_dtype_t dtype = a[1].tag == TSR_VALUE_NONE ? TSR_DTYPE_UNDEFINED : static_cast<tsr_dtype_t>(a[1].u.dtype);
  tsr_device_t device = a[2].tag == TSR_VALUE_NONE ? t->device : a[2].u.device;
  return api().tensor_to(t, dtype, device, a[3].u.b, out);
}
tsr_status_t run_copy_(const tsr_value_t* a, Tensor** /*out*/) { return api().tensor_copy_(a[0].u.tensor, a[1].u.tensor); }

struct Table {
  std::vector<std::unique_ptr<Builtin>> all;
  Table() {
    add("view(Tensor self, int[] size) -> Tensor", run_view);
    add("reshape(Tensor self, int[] shape) -> Tensor", run_reshape);
    add("transpose(Tensor self, int dim0, int dim1) -> Tensor", run_transpose);
    add("permute(Tensor self, int[] dims) -> Tensor", run_permute);
    add("expand(Tensor self, int[] size) -> Tensor", run_expand);
    add("slice(Tensor self, int dim, int start, int end, int step=1) -> Tensor", run_slice);
    add("select(Tensor self, int dim, int index) -> Tensor", run_select);
    add("narrow(Tensor self, int dim, int start, int length) -> Tensor", run_narrow);
    add("squeeze(Tensor self, int? dim=None) -> Tensor", run_squeeze);
    add("unsqueeze(Tensor self, int dim) -> Tensor", run_unsqueeze);
    add("contiguous(Tensor self) -> Tensor", run_contiguous);
    add("as_strided(Tensor self, int[] size, int[] stride, int offset=0) -> Tensor", run_as_strided);
    add("to(Tensor self, ScalarType? dtype=None, Device? device=None, bool copy=False) -> Tensor", run_to);
    add("copy_(Tensor(a!) self, Tensor src) -> ()", run_copy_);
  }
  void add(const char* schema, BuiltinFn fn) {
    auto b = std::make_unique<Builtin>();
    tsr_status_t st = parse_schema(schema, &b->schema);
    if (st) {  // a typo in the table above: fail loudly in every test
      free_status(st);
      return;
    }
    b->name = b->schema.name;
    b->fn = fn;
    for (const ArgSpec& a : b->schema.args) b->mutates |= a.mutable_;
    all.push_back(std::move(b));
  }
};

}  // namespace

const Builtin* find_builtin(const std::string& name) {
  static const Table table;
  for (const auto& b : table.all)
    if (b->name == name) return b.get();
  return nullptr;
}

}  // namespace tsr::core::graph
