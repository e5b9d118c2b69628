// Op schemas in PyTorch's notation: "add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor".
#pragma once

#include <string>
#include <vector>

#include "tessera/types.h"

namespace tsr::core {

enum class ArgKind { Tensor, Int, Float, Bool, IntList, Str, Dtype, Device, Scalar, TensorList };

struct ArgSpec {
  std::string name;
  ArgKind kind = ArgKind::Tensor;
  bool optional = false;  // "T?": accepts None
  bool mutable_ = false;  // "Tensor(a!)"
  bool has_default = false;
  tsr_value_t default_value{};        // NONE / INT / DOUBLE / BOOL / STRING / INT_LIST
  std::vector<int64_t> default_ints;  // storage for INT_LIST defaults
  std::string default_str;            // storage for STRING defaults
};

struct Schema {
  std::string name;
  std::vector<ArgSpec> args;
  int num_outputs = 1;
  int num_tensor_args = 0;
};

// The ABI's name for a kind (op_arg, op.h).
tsr_arg_kind_t arg_kind_abi(ArgKind k);

// Parses `text`; on error returns a status naming the schema and the problem.
tsr_status_t parse_schema(const std::string& text, Schema* out);
const char* arg_kind_name(ArgKind k);

}  // namespace tsr::core
