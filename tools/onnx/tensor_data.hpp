// ONNX tensors as the importer needs them: dtype names, the bytes of an initializer or Constant
// (raw_data, the typed fields, or external data), small tensors as elements for constant
// folding, and weights as Tessera tensors.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::onnx::detail {

// The Tessera dtype of an ONNX TensorProto::DataType, TSR_DTYPE_UNDEFINED when Tessera has none
// (uint16/32/64, string, complex).
tsr_dtype_t to_tsr_dtype(int32_t onnx_dtype);
// "FLOAT", "INT64", ... (ONNX's names, for messages).
std::string onnx_dtype_name(int32_t onnx_dtype);
bool is_float_dtype(int32_t onnx_dtype);  // FLOAT, DOUBLE, FLOAT16, BFLOAT16

// One element known at import time: a number, a symbol (a dim of a graph input, known only at
// run time; shape computations carry these), or unknown (derived from a symbol).
struct Elem {
  enum Kind { Int, Float, Sym, Unknown } kind = Int;
  int64_t i = 0;     // Int (and BOOL: 0/1)
  double f = 0;      // Float
  std::string sym;   // Sym
  static Elem of_int(int64_t v) { Elem e; e.kind = Int; e.i = v; return e; }
  static Elem of_float(double v) { Elem e; e.kind = Float; e.f = v; return e; }
  static Elem of_sym(std::string s) { Elem e; e.kind = Sym; e.sym = std::move(s); return e; }
  static Elem unknown() { Elem e; e.kind = Unknown; return e; }
  bool known() const { return kind == Int || kind == Float; }
  double as_double() const { return kind == Float ? f : static_cast<double>(i); }
};

// A small tensor whose elements the importer knows (constants, folded shape computations).
struct Folded {
  int32_t dtype = 0;  // ONNX
  std::vector<int64_t> dims;
  std::vector<Elem> elems;  // row-major
  int64_t numel() const;
  bool all_known() const;
  // The elements as integers (INVALID_ARGUMENT naming `what` if one is unknown or a float).
  std::vector<int64_t> ints(const std::string& what) const;
};

// Largest tensor decoded into elements for folding.
constexpr int64_t kFoldLimit = 1 << 16;

int64_t numel_of(const ::onnx::TensorProto& t);
// The little-endian row-major bytes of t (raw_data, typed fields, or external data under dir).
std::string tensor_bytes(const ::onnx::TensorProto& t, const std::string& dir);
// t decoded as elements (t must have at most kFoldLimit elements).
Folded fold_tensor(const ::onnx::TensorProto& t, const std::string& dir);
// A CPU Tessera tensor of t's dtype and dims.
Tensor make_weight(const ::onnx::TensorProto& t, const std::string& dir);
// A CPU Tessera tensor from known elements (every element known).
Tensor make_weight(const Folded& f);

}  // namespace tsr::onnx::detail
