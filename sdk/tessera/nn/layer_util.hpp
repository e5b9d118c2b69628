// Tessera SDK: small helpers shared by the layer headers (tessera/nn/*.hpp): shape and number
// text for error messages and extra_repr, and argument checks that throw tsr::Error naming the
// layer. Internal to the SDK's nn layers; stateless and thread-safe.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn::detail {

inline std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Shortest round-trippable-enough text as Python prints it: 1e-05, 0.5, 0.1.
inline std::string num_str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

inline const char* bool_str(bool b) { return b ? "true" : "false"; }

inline std::string tuple_str(const std::vector<int64_t>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}

[[noreturn]] inline void fail(const std::string& layer, const std::string& what) {
  throw Error(TSR_INVALID_ARGUMENT, layer + ": " + what);
}

// "Linear(in_features=4, out_features=3, bias=true)": the layer as errors name it. Built only
// when an error is thrown, never on the forward path.
inline std::string layer_name(const Module& m) { return m.type_name() + "(" + m.extra_repr() + ")"; }

inline void require_input(const Module& m, const Tensor& x) {
  if (!x.defined()) fail(layer_name(m), "undefined input tensor");
}

// Expands an int or a list of 1 or n ints into n ints (PyTorch's _pair / _single).
inline std::vector<int64_t> expand_param(const std::string& layer, const char* name, std::vector<int64_t> v, size_t n) {
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n)
    fail(layer, std::string(name) + " must have 1 or " + std::to_string(n) + " values, got " + shape_str(v));
  return v;
}

}  // namespace tsr::nn::detail
