// JS values -> boxed op arguments (tsr_value_t), driven by the schema as data (op_num_args /
// op_arg, ABI 1.4): the binding never parses schema text.
#pragma once

#include <list>
#include <string>
#include <vector>

#include "common.hpp"

namespace tsrnode {

// One registry op, read once from the default runtime (ops live as long as it, i.e. forever).
struct OpInfo {
  tsr_op_t* op = nullptr;
  std::string name;
  std::string schema;
  size_t num_outputs = 0;
  std::vector<tsr_op_arg_t> args;
};
const std::vector<OpInfo>& op_table();

// "Tensor", "int", "float", "bool", "int[]", "str", "ScalarType", "Device", "Scalar", "Tensor[]".
const char* arg_kind_name(int32_t kind);
// A boxed default (NONE, INT, DOUBLE, BOOL, STRING, INT_LIST) as a JS value.
Napi::Value value_to_js(Napi::Env env, const tsr_value_t& v);

// The boxed arguments of one call, and everything they borrow (lists, strings, wrapped-number
// tensors). `args` holds the JS values in schema order; undefined means "not given": trailing
// ones are left to the core, earlier ones take the schema's default (None when optional).
// retain_inputs: hold a reference to every tensor argument (async calls, whose JS objects may
// be collected while the op runs on a worker thread).
class BoxedArgs {
 public:
  BoxedArgs(Napi::Env env, const OpInfo& op, const Napi::Array& args, bool retain_inputs);
  BoxedArgs(const BoxedArgs&) = delete;
  BoxedArgs& operator=(const BoxedArgs&) = delete;
  const tsr_value_t* data() const { return vals_.data(); }
  size_t size() const { return vals_.size(); }
  const tsr_value_t& at(size_t i) const { return vals_[i]; }

 private:
  tsr_value_t convert(Napi::Env env, const OpInfo& op, size_t i, const Napi::Value& v, bool retain);
  tsr_tensor_t* wrapped_scalar(const Napi::Value& v);
  std::vector<tsr_value_t> vals_;
  std::vector<tsr::Tensor> keep_;
  std::list<std::vector<int64_t>> lists_;  // std::list: elements never move
  std::list<std::string> strings_;
  std::list<std::vector<tsr_tensor_t*>> tensor_lists_;
};

}  // namespace tsrnode
