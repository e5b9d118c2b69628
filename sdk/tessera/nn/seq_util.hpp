// Tessera SDK: small helpers shared by the sequence layers (nn/rnn.hpp, nn/attention.hpp,
// nn/transformer.hpp): shape text for error messages and argument checks. Internal: the names
// live in tsr::nn::seq_detail and may change.
//
// Errors: tsr::Error(TSR_INVALID_ARGUMENT) whose message starts with the module's name.
// Thread-safety: stateless.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::nn::seq_detail {

inline std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
inline std::string shape_text(const Tensor& t) { return t.defined() ? shape_text(t.sizes()) : "undefined"; }

[[noreturn]] inline void fail(const std::string& module, const std::string& what) {
  throw Error(TSR_INVALID_ARGUMENT, module + ": " + what);
}

// A constructor argument that must be positive (sizes, head counts).
inline void require_positive(const std::string& module, const char* name, int64_t v) {
  if (v <= 0) fail(module, std::string(name) + " must be positive, got " + std::to_string(v));
}
inline void require_probability(const std::string& module, const char* name, double p) {
  if (!(p >= 0 && p <= 1)) fail(module, std::string(name) + " must be in [0, 1], got " + std::to_string(p));
}

// The input must be floating point and of the parameters' dtype: mixing float32 data with
// float64 weights (or the reverse) is almost always a forgotten module.to(dtype).
inline void require_dtype(const std::string& module, const char* what, const Tensor& t, tsr_dtype_t want) {
  if (!is_floating(t.dtype()))
    fail(module, std::string(what) + " must be floating point, got " + dtype_name(t.dtype()));
  if (t.dtype() != want)
    fail(module, std::string(what) + " is " + dtype_name(t.dtype()) + " but the parameters are " + dtype_name(want) +
                     " (convert the input or call module.to(dtype))");
}

}  // namespace tsr::nn::seq_detail
