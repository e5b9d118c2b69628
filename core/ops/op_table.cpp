// The op table: built-in ops from ops/<family>/*.cpp, and plugin-defined ops.
#include <cstring>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

tsr_status_t add_op(Runtime* rt, const std::string& schema, OpImplFn impl, const OpExtra& extra, tsr_op_s** out) {
  auto op = std::make_unique<tsr_op_s>();
  op->runtime = rt;
  op->schema_text = schema;
  TSR_RETURN_IF_ERROR(parse_schema(schema, &op->schema));
  if (rt->op_by_name.count(op->schema.name))
    return make_status(TSR_ALREADY_EXISTS, "op '" + op->schema.name + "' is already defined");
  if (op->schema.num_outputs > kMaxOutputs)
    return make_status(TSR_INVALID_ARGUMENT,
                       "op '" + op->schema.name + "': at most " + std::to_string(kMaxOutputs) + " outputs");
  if (!impl)
    for (const ArgSpec& a : op->schema.args)
      if (a.kind == ArgKind::TensorList)
        return make_status(TSR_INVALID_ARGUMENT,
                           "op '" + op->schema.name + "': Tensor[] arguments are not supported in plugin-defined ops");
  op->impl = impl ? impl : plugin_op_impl;
  for (const ArgSpec& a : op->schema.args) op->mutates |= a.mutable_;
  std::string bn = op->schema.name;
  while (!bn.empty() && bn[0] == '_') bn.erase(0, 1);
  if (!bn.empty() && bn[0] >= 'a' && bn[0] <= 'z') bn[0] = static_cast<char>(bn[0] - 'a' + 'A');
  op->backward_name = bn + "Backward";
  op->extra = extra;
  if (extra.backward) {  // a plugin's formula, called through the ABI (autograd/plugin_backward.cpp)
    op->backward = plugin_op_backward;
    op->formula_name = "the plugin's backward (tsr_op_def_t.backward)";
  }
  rt->op_by_name[op->schema.name] = op.get();
  if (out) *out = op.get();
  rt->ops.push_back(std::move(op));
  return nullptr;
}

// A record's file as the source root names it. The build maps the source directory away
// (-fmacro-prefix-map); a compiler launcher may still have handed the compiler a path relative to
// the build directory ("../core/..."), whose leading "../" and "./" steps are dropped here.
static const char* source_relative(const char* file) {
  if (!file) return nullptr;
  for (;;) {
    if (std::strncmp(file, "../", 3) == 0)
      file += 3;
    else if (std::strncmp(file, "./", 2) == 0)
      file += 2;
    else
      return file;
  }
}

tsr_status_t register_builtin_ops(Runtime* rt) {
  std::vector<OpSpec> specs;
  for (const auto& f : OpFamilies::all()) f.fn(specs);
  for (const OpSpec& s : specs) {
    tsr_op_s* op = nullptr;
    TSR_RETURN_IF_ERROR(add_op(rt, s.schema, s.impl, OpExtra{}, &op));
    op->backward = s.backward.fn;
    op->formula_name = s.backward.name;
    op->save = s.save;
    op->composite = s.composite;
    op->overlapping_writes_ok = s.overlapping_writes_ok;
    op->source_file = source_relative(s.file);
    op->source_line = s.line;
  }
  return nullptr;
}

}  // namespace tsr::core
