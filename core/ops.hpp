// The built-in op table: each ops_*.cpp contributes its ops' schemas and implementations.
#pragma once

#include <string>
#include <vector>

#include "runtime.hpp"

namespace tsr::core {

struct OpSpec {
  std::string schema;
  OpImplFn impl;
};

void elementwise_ops(std::vector<OpSpec>& v);
void reduction_ops(std::vector<OpSpec>& v);
void linalg_ops(std::vector<OpSpec>& v);
void factory_ops(std::vector<OpSpec>& v);

}  // namespace tsr::core
