// ONNX tensors as the importer needs them: dtype names, the bytes of an initializer or Constant
// (raw_data, the typed fields, or external data), small tensors as elements for constant
// folding, and weights as Tessera tensors.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
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

// A size that follows the graph inputs' symbols: a multilinear polynomial with integer
// coefficients (docs/graphs.md "Dynamic dims"), monomial (sorted symbols) -> coefficient; the
// empty monomial is the constant.
using Poly = std::map<std::vector<std::string>, int64_t>;

// One element known at import time: a number, a size that follows the inputs' symbols (shape
// computations carry these: Shape of a [batch, 7] input is [batch, 7]), or unknown.
struct Elem {
  enum Kind { Int, Float, Sym, Unknown } kind = Int;
  int64_t i = 0;  // Int (and BOOL: 0/1)
  double f = 0;   // Float
  Poly poly;      // Sym: never a constant (that is an Int)
  static Elem of_int(int64_t v) { Elem e; e.kind = Int; e.i = v; return e; }
  static Elem of_float(double v) { Elem e; e.kind = Float; e.f = v; return e; }
  static Elem of_sym(const std::string& s) { Elem e; e.kind = Sym; e.poly[{s}] = 1; return e; }
  // Int when p is a constant; unknown when a symbol would repeat in a product (not multilinear).
  static Elem of_poly(const Poly& p);
  static Elem unknown() { Elem e; e.kind = Unknown; return e; }
  bool known() const { return kind == Int || kind == Float; }
  bool integral() const { return kind == Int || kind == Sym; }  // an int or a symbolic size
  double as_double() const { return kind == Float ? f : static_cast<double>(i); }
  Poly as_poly() const;  // Int or Sym
  // The graph text's literal: "7", "batch", "2*seq+1" (Int or Sym).
  std::string text() const;
};
Elem poly_add(const Elem& a, const Elem& b, int64_t sign = 1);  // Int/Sym operands
Elem poly_mul(const Elem& a, const Elem& b);                     // unknown if not multilinear
Elem poly_div(const Elem& a, int64_t d);                         // exact division only, else unknown

// A small tensor whose elements the importer knows (constants, folded shape computations).
struct Folded {
  int32_t dtype = 0;  // ONNX
  std::vector<int64_t> dims;
  std::vector<Elem> elems;  // row-major
  int64_t numel() const;
  bool all_known() const;
  // The elements as integers (UNIMPLEMENTED naming `what` if one is known only at run time,
  // INVALID_ARGUMENT if one is a float).
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
