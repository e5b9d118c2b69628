// The dispatcher's boundary check: every boxed argument of op_call is checked against its schema
// kind before any op body runs, so op code may load a dtype, a device, a list or a string
// without re-checking it. Values that are representable but wrong for one op (a dim out of
// range, a negative size) are still the op's to check; what is checked here is what no op
// could use: a tag of the wrong kind, a NULL or foreign tensor, a negative list length, a
// NULL list or string, a dtype outside the enum, a device type that is not loaded.
#include <string>

#include "ops/op_impl.hpp"
#include "tensor/overlap.hpp"
#include "tessera/plugin.hpp"

namespace tsr::core {

using ::tsr::detail::value_tag_name;  // the SDK's (tessera/plugin.hpp): one list of tag names

static bool kind_accepts(ArgKind k, int32_t tag) {
  switch (k) {
    case ArgKind::Tensor:
      return tag == TSR_VALUE_TENSOR;
    case ArgKind::Int:
      return tag == TSR_VALUE_INT;
    case ArgKind::Float:
      return tag == TSR_VALUE_DOUBLE || tag == TSR_VALUE_INT;
    case ArgKind::Bool:
      return tag == TSR_VALUE_BOOL;
    case ArgKind::IntList:
      return tag == TSR_VALUE_INT_LIST || tag == TSR_VALUE_INT;
    case ArgKind::Str:
      return tag == TSR_VALUE_STRING;
    case ArgKind::Dtype:
      return tag == TSR_VALUE_DTYPE;
    case ArgKind::Device:
      return tag == TSR_VALUE_DEVICE;
    case ArgKind::Scalar:
      return tag == TSR_VALUE_INT || tag == TSR_VALUE_DOUBLE || tag == TSR_VALUE_BOOL;
    case ArgKind::TensorList:
      return tag == TSR_VALUE_TENSOR_LIST;
  }
  return false;
}

// The longest string argument an op may receive (reduction modes, einsum equations, padding
// modes): a bound, so that a missing terminator is not read through the address space.
constexpr size_t kMaxStringArg = 4096;

tsr_status_t check_arg(CallCtx& ctx, size_t i) {
  const Schema& s = ctx.op->schema;
  const ArgSpec& a = s.args[i];
  tsr_value_t& v = ctx.args[i];
  auto refuse = [&](const std::string& why) {
    return make_status(TSR_INVALID_ARGUMENT, s.name + ": argument '" + a.name + "' " + why);
  };
  if (v.tag == TSR_VALUE_NONE && a.optional) return nullptr;
  if (!kind_accepts(a.kind, v.tag) || (v.tag == TSR_VALUE_TENSOR && !v.u.tensor))
    return refuse("must be " + std::string(arg_kind_name(a.kind)) + (a.optional ? "?" : "") + ", got " +
                  (v.tag == TSR_VALUE_TENSOR && !v.u.tensor ? "a NULL tensor" : value_tag_name(v.tag)));
  switch (v.tag) {
    case TSR_VALUE_TENSOR:
      if (v.u.tensor->runtime != ctx.rt) return refuse("belongs to another runtime");
      break;
    case TSR_VALUE_INT:
      if (a.kind == ArgKind::IntList) {  // an int where int[] is expected: a list of one
        ctx.single_int[i] = v.u.i;
        v.tag = TSR_VALUE_INT_LIST;
        v.u.ints.data = &ctx.single_int[i];
        v.u.ints.len = 1;
      }
      break;
    case TSR_VALUE_INT_LIST:
      if (v.u.ints.len < 0) return refuse("has a negative list length " + std::to_string(v.u.ints.len));
      if (v.u.ints.len > 0 && !v.u.ints.data) return refuse("has a NULL list");
      break;
    case TSR_VALUE_TENSOR_LIST:
      if (v.u.tensors.len < 0) return refuse("has a negative list length " + std::to_string(v.u.tensors.len));
      if (v.u.tensors.len > 0 && !v.u.tensors.data) return refuse("has a NULL list");
      for (int64_t k = 0; k < v.u.tensors.len; ++k) {
        if (!v.u.tensors.data[k]) return refuse("has a NULL tensor at " + std::to_string(k));
        if (v.u.tensors.data[k]->runtime != ctx.rt) return refuse("belongs to another runtime");
      }
      break;
    case TSR_VALUE_DTYPE:
      if (!dtype_valid(static_cast<tsr_dtype_t>(v.u.dtype)))
        return refuse("is not a dtype: " + std::to_string(v.u.dtype));
      break;
    case TSR_VALUE_DEVICE:
      return check_device(ctx.rt, v.u.device, (s.name + ": argument '" + a.name + "'").c_str());
    case TSR_VALUE_STRING: {
      if (!v.u.str) return refuse("is a NULL string");
      size_t n = 0;
      while (n <= kMaxStringArg && v.u.str[n]) ++n;
      if (n > kMaxStringArg) return refuse("is longer than " + std::to_string(kMaxStringArg) + " characters");
      break;
    }
    default:
      break;
  }
  return nullptr;
}

namespace {

std::string arg_ref(const CallCtx& ctx, size_t i) { return "argument '" + ctx.op->schema.args[i].name + "'"; }
std::string elem_ref(const CallCtx& ctx, size_t i, int64_t k) {
  return "argument '" + ctx.op->schema.args[i].name + "' element " + std::to_string(k);
}
std::string out_ref(size_t k) { return "out= tensor " + std::to_string(k); }

// w (named by written()) against every other tensor of the call: its own internal overlap,
// then partial overlap with each tensor argument, list element and other out= tensor. Tensors
// of other storages cost one comparison each.
template <class Name>
tsr_status_t check_written(const CallCtx& ctx, const Tensor* w, Name&& written) {
  if (has_internal_overlap(w) == MemOverlap::Yes) return assert_no_internal_overlap(w, ctx.name(), written().c_str());
  auto partial = [&](const Tensor* t) {
    return t != w && t->storage == w->storage && get_overlap_status(w, t) == MemOverlapStatus::Partial;
  };
  for (size_t i = 0; i < ctx.nargs; ++i) {
    const tsr_value_t& v = ctx.args[i];
    if (v.tag == TSR_VALUE_TENSOR) {
      if (partial(v.u.tensor))
        return assert_no_partial_overlap(w, v.u.tensor, ctx.name(), written().c_str(), arg_ref(ctx, i).c_str());
    } else if (v.tag == TSR_VALUE_TENSOR_LIST) {
      for (int64_t k = 0; k < v.u.tensors.len; ++k)
        if (partial(v.u.tensors.data[k]))
          return assert_no_partial_overlap(w, v.u.tensors.data[k], ctx.name(), written().c_str(),
                                           elem_ref(ctx, i, k).c_str());
    }
  }
  for (size_t k = 0; k < ctx.nouts; ++k)
    if (ctx.outs[k] && partial(ctx.outs[k]))
      return assert_no_partial_overlap(w, ctx.outs[k], ctx.name(), written().c_str(), out_ref(k).c_str());
  return nullptr;
}

}  // namespace

tsr_status_t check_overlap(const CallCtx& ctx) {
  const Schema& s = ctx.op->schema;
  if (ctx.op->mutates)
    for (size_t i = 0; i < ctx.nargs; ++i)
      if (s.args[i].mutable_ && ctx.args[i].tag == TSR_VALUE_TENSOR)
        TSR_RETURN_IF_ERROR(check_written(ctx, ctx.args[i].u.tensor, [&] { return arg_ref(ctx, i); }));
  for (size_t k = 0; k < ctx.nouts; ++k)
    if (ctx.outs[k]) TSR_RETURN_IF_ERROR(check_written(ctx, ctx.outs[k], [&] { return out_ref(k); }));
  return nullptr;
}

}  // namespace tsr::core
