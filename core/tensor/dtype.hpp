// Dtype facts the core needs: element sizes, names, categories and PyTorch's promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/dtype.hpp"
#include "tessera/types.h"

namespace tsr::core {

// Sizes, names and categories are the SDK's (one definition for the core and every backend).
inline bool dtype_valid(int32_t d) { return tsr::is_valid_dtype(d); }
inline size_t dtype_size(tsr_dtype_t d) { return tsr::itemsize(d); }
inline const char* dtype_name(int32_t d) { return tsr::dtype_name(d); }
// Parses "float32"/"f32"/"float"/"int64"/"long"/... ; UNDEFINED when unknown.
tsr_dtype_t dtype_from_name(const char* name);

inline bool is_floating(tsr_dtype_t d) { return tsr::is_floating(d); }
inline bool is_integral(tsr_dtype_t d) { return tsr::is_integral(d, false); }

// 0 bool, 1 integral, 2 floating.
inline int dtype_category(tsr_dtype_t d) { return d == TSR_BOOL ? 0 : is_floating(d) ? 2 : 1; }

// torch.can_cast: no floating -> integral/bool, no non-bool -> bool.
inline bool can_cast(tsr_dtype_t from, tsr_dtype_t to) { return dtype_category(from) <= dtype_category(to); }

// torch.promote_types. UNDEFINED when no rule applies (a low-precision float with another dtype).
tsr_dtype_t promote_types(tsr_dtype_t a, tsr_dtype_t b);

// torch.result_type over operands grouped as PyTorch does: tensors with dims, zero-dim tensors,
// wrapped numbers (which count as the default dtype of their category). result() is UNDEFINED
// when the operands have no result type (a low-precision float mixed with another dtype).
struct ResultTypeState {
  tsr_dtype_t dim = TSR_DTYPE_UNDEFINED;
  tsr_dtype_t zero = TSR_DTYPE_UNDEFINED;
  tsr_dtype_t wrapped = TSR_DTYPE_UNDEFINED;
  bool invalid = false;
  void add(tsr_dtype_t d, int ndim, bool wrapped_number);
  tsr_dtype_t result() const;
};

}  // namespace tsr::core
