// The built-in op table. Any core file declares ops with
//
//   TSR_CORE_OPS(my_family) {
//     v.push_back({"myop(Tensor self, int dim) -> Tensor", myop_impl, myop_backward, kSaveInputs});
//   }
//
// and they are registered into every runtime (static registration: adding a family touches no
// other file). Ops are primitive (impl runs with autograd recording off; `backward` gives the
// gradient) or composite (impl calls other ops, whose recording provides the gradient).
#pragma once

#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "runtime/runtime.hpp"

namespace tsr::core {

// What a primitive's backward needs kept from the forward call (bits; kSaveNothing frees every
// tensor at once, the cheapest). Scalar arguments are always kept.
enum : uint32_t {
  kSaveNothing = 0,
  kSaveInputs = 1u,   // tensor arguments (GradCtx::input)
  kSaveOutputs = 2u,  // results (GradCtx::output)
  kSaveAll = 3u,
};

struct OpSpec {
  std::string schema;
  OpImplFn impl = nullptr;
  BackwardFn backward = nullptr;  // primitive with floating outputs: required to differentiate
  uint32_t save = kSaveAll;
  bool composite = false;  // impl is written with other ops: no node of its own
};

// A composite op: impl calls other ops (through the SDK, see ops/composite.hpp).
inline OpSpec composite_op(std::string schema, OpImplFn impl) {
  OpSpec s;
  s.schema = std::move(schema);
  s.impl = impl;
  s.composite = true;
  return s;
}

using OpFamilyFn = void (*)(std::vector<OpSpec>& v);
// Adds a family to the static list; returns true (for a static initializer).
bool register_op_family(const char* name, OpFamilyFn fn);
const std::vector<std::pair<const char*, OpFamilyFn>>& op_families();

#define TSR_CORE_OPS(family)                                              \
  static void tsr_core_ops_##family(std::vector<::tsr::core::OpSpec>& v); \
  [[maybe_unused]] static const bool tsr_core_ops_registered_##family =   \
      ::tsr::core::register_op_family(#family, tsr_core_ops_##family);    \
  static void tsr_core_ops_##family(std::vector<::tsr::core::OpSpec>& v)

// Backward formulas attached to ops declared elsewhere (e.g. the first op set), by name:
//   TSR_CORE_BACKWARDS(binary) { b.push_back({"add", add_backward, kSaveNothing}); }
struct BackwardSpec {
  std::string op;
  BackwardFn backward;
  uint32_t save;
};
using BackwardFamilyFn = void (*)(std::vector<BackwardSpec>& b);
bool register_backward_family(const char* name, BackwardFamilyFn fn);

#define TSR_CORE_BACKWARDS(family)                                                    \
  static void tsr_core_backwards_##family(std::vector<::tsr::core::BackwardSpec>& b); \
  [[maybe_unused]] static const bool tsr_core_backwards_registered_##family =         \
      ::tsr::core::register_backward_family(#family, tsr_core_backwards_##family);    \
  static void tsr_core_backwards_##family(std::vector<::tsr::core::BackwardSpec>& b)

}  // namespace tsr::core
