#include "names.hpp"

#include <cctype>

namespace tsr::onnx::detail {

namespace {
bool value_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
}  // namespace

std::string Names::fresh(const std::string& wanted) {
  std::string base;
  for (char c : wanted) base += value_char(c) ? c : '_';
  if (base.empty()) base = "v";
  std::string name = base;
  for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
  used_.insert(name);
  return name;
}

std::string symbol_name(const std::string& dim_param) {
  std::string s;
  for (char c : dim_param) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "s" + s;
  return s;
}

}  // namespace tsr::onnx::detail
