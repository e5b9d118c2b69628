// Dtype facts the core needs: element sizes, names, categories and PyTorch's promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/types.h"

namespace tsr::core {

inline bool dtype_valid(int32_t d) { return d >= TSR_BOOL && d <= TSR_F64; }

inline size_t dtype_size(tsr_dtype_t d) {
  switch (d) {
    case TSR_BOOL: case TSR_U8: case TSR_I8: return 1;
    case TSR_I16: case TSR_F16: case TSR_BF16: return 2;
    case TSR_I32: case TSR_F32: return 4;
    case TSR_I64: case TSR_F64: return 8;
    default: return 0;
  }
}

const char* dtype_name(int32_t d);  // "float32", ..., "undefined"
// Parses "float32"/"f32"/"float"/"int64"/"long"/... ; UNDEFINED when unknown.
tsr_dtype_t dtype_from_name(const char* name);

inline bool is_floating(tsr_dtype_t d) {
  return d == TSR_F16 || d == TSR_BF16 || d == TSR_F32 || d == TSR_F64;
}
inline bool is_integral(tsr_dtype_t d) { return d >= TSR_U8 && d <= TSR_I64; }

// 0 bool, 1 integral, 2 floating.
inline int dtype_category(tsr_dtype_t d) { return d == TSR_BOOL ? 0 : is_floating(d) ? 2 : 1; }

// torch.promote_types.
tsr_dtype_t promote_types(tsr_dtype_t a, tsr_dtype_t b);

// torch.result_type over operands grouped as PyTorch does: tensors with dims, zero-dim tensors,
// wrapped numbers (which count as the default dtype of their category).
struct ResultTypeState {
  tsr_dtype_t dim = TSR_DTYPE_UNDEFINED;
  tsr_dtype_t zero = TSR_DTYPE_UNDEFINED;
  tsr_dtype_t wrapped = TSR_DTYPE_UNDEFINED;
  void add(tsr_dtype_t d, int ndim, bool wrapped_number);
  tsr_dtype_t result() const;
};

}  // namespace tsr::core
