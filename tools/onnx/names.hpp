// Value names and dim symbols of the graph text (docs/graphs.md): ONNX names are free text, a
// Tessera value name is '%' then [A-Za-z0-9_.]. Names are sanitized (every other character
// becomes '_') and made unique by a numeric suffix, in the order they are asked for, so the
// same model always gives the same text.
#pragma once

#include <set>
#include <string>

namespace tsr::onnx::detail {

class Names {
 public:
  // A new name for `wanted`, never given before ("v" for an empty one).
  std::string fresh(const std::string& wanted);

 private:
  std::set<std::string> used_;
};

// A dim symbol for an ONNX dim_param: [A-Za-z_][A-Za-z0-9_]*.
std::string symbol_name(const std::string& dim_param);

}  // namespace tsr::onnx::detail
