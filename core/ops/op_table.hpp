// The built-in op table: one record per op. A family declares its ops, in its own file under
// ops/<family>/, with
//
//   TSR_CORE_OPS(my_family) {
//     v.push_back({"myop(Tensor self, int dim) -> Tensor", myop_impl, TSR_GRAD(myop_backward), kSaveInputs});
//     v.push_back(composite_op("myop2(Tensor self) -> Tensor", composite<myop2_fn>));
//   }
//
// and the families register themselves into every runtime (tsr::FamilyList: adding a family
// touches no other file). A record holds everything the core knows of an op: its schema, its
// implementation (the shape/dtype rule and the kernel launch, or SDK calls for a composite), its
// backward formula and what the formula keeps, and where the record was written (file and line,
// from the record's own call site; `tessera ops --where NAME` prints it). Ops are primitive (impl
// runs with autograd recording off; the formula gives the gradient) or composite (impl calls other
// ops, whose recording provides the gradient). Thread-safety: records are built once per runtime
// creation, from the thread that creates it.
//
// Op bodies come in two forms, one per kind. A primitive's impl works on the call (CallCtx,
// ops/op_impl.hpp): argument checks, promotion, output allocation (out= checked first), one kernel
// launch. A composite is `composite<fn>` over SDK tensors (RAII, ops/composite.hpp), so it needs
// no reference counting by hand. Five composite records use the call form, each for a reason
// written beside it: sgd_step_ and adam_step_ (one fused kernel over param and state, recorded by
// nothing) and relu6_, selu_, celu_ (forwarded at the C level to hardtanh_/elu_ so that self stays
// the result without an out= copy).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "runtime/runtime.hpp"
#include "tessera/self_register.hpp"

namespace tsr::core {
// What a primitive's backward needs kept from the forward call (bits; kSaveNothing frees every
// tensor at once, the cheapest). Scalar arguments are always kept.
enum : uint32_t {
  kSaveNothing = 0,
  kSaveInputs = 1u,   // tensor arguments (GradCtx::input)
  kSaveOutputs = 2u,  // results (GradCtx::output)
  kSaveAll = 3u,
};

// A backward formula with the name it is written under (TSR_GRAD), so that tools can point at it.
struct Formula {
  BackwardFn fn = nullptr;
  const char* name = nullptr;  // the function as written in the record, e.g. "softmax_backward"
  constexpr Formula() = default;
  constexpr Formula(std::nullptr_t) {}  // explicitly none: an op without a gradient
  constexpr Formula(BackwardFn f, const char* n) : fn(f), name(n) {}
};
// The formula of a record: TSR_GRAD(mul_backward), TSR_GRAD(maxmin_backward<true>).
#define TSR_GRAD(...) ::tsr::core::Formula(__VA_ARGS__, #__VA_ARGS__)

struct OpSpec {
  std::string schema;
  OpImplFn impl = nullptr;
  Formula backward;  // primitive with floating outputs: required to differentiate
  uint32_t save = kSaveAll;
  bool composite = false;      // impl is written with other ops: no node of its own
  // Writes that overlap are harmless (every write stores the same value, as _fill's): the
  // dispatcher skips its overlap check (ops/op_impl.hpp check_overlap) for this op.
  bool overlapping_writes_ok = false;
  const char* file = nullptr;  // where the record was written (relative to the source root)
  int line = 0;

  // `file` and `line` default to the caller's position (GCC/Clang builtins): leave them out.
  OpSpec(std::string schema_, OpImplFn impl_, Formula backward_ = {}, uint32_t save_ = kSaveAll,
         const char* file_ = __builtin_FILE(), int line_ = __builtin_LINE())
      : schema(std::move(schema_)), impl(impl_), backward(backward_), save(save_), file(file_), line(line_) {}
};

// A composite op: impl calls other ops (through the SDK, see ops/composite.hpp).
inline OpSpec composite_op(std::string schema, OpImplFn impl, const char* file = __builtin_FILE(),
                           int line = __builtin_LINE()) {
  OpSpec s(std::move(schema), impl, nullptr, kSaveAll, file, line);
  s.composite = true;
  return s;
}

// The core's op families (TSR_CORE_OPS), one list per runtime library.
struct CoreOpsTag {};
using OpFamilyFn = void (*)(std::vector<OpSpec>& v);
using OpFamilies = ::tsr::FamilyList<OpFamilyFn, CoreOpsTag>;

#define TSR_CORE_OPS(family) TSR_FAMILY(::tsr::core::OpFamilies, family, (std::vector<::tsr::core::OpSpec> & v))

}  // namespace tsr::core
