#include "ops/schema.hpp"

#include <cctype>
#include <cstdlib>

#include "runtime/status.hpp"

namespace tsr::core {

tsr_arg_kind_t arg_kind_abi(ArgKind k) {
  switch (k) {
    case ArgKind::Tensor:
      return TSR_ARG_TENSOR;
    case ArgKind::Int:
      return TSR_ARG_INT;
    case ArgKind::Float:
      return TSR_ARG_FLOAT;
    case ArgKind::Bool:
      return TSR_ARG_BOOL;
    case ArgKind::IntList:
      return TSR_ARG_INT_LIST;
    case ArgKind::TensorList:
      return TSR_ARG_TENSOR_LIST;
    case ArgKind::Str:
      return TSR_ARG_STRING;
    case ArgKind::Dtype:
      return TSR_ARG_DTYPE;
    case ArgKind::Device:
      return TSR_ARG_DEVICE;
    case ArgKind::Scalar:
      return TSR_ARG_SCALAR;
  }
  return TSR_ARG_TENSOR;
}

const char* arg_kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::Tensor:
      return "Tensor";
    case ArgKind::Int:
      return "int";
    case ArgKind::Float:
      return "float";
    case ArgKind::Bool:
      return "bool";
    case ArgKind::IntList:
      return "int[]";
    case ArgKind::TensorList:
      return "Tensor[]";
    case ArgKind::Str:
      return "str";
    case ArgKind::Dtype:
      return "ScalarType";
    case ArgKind::Device:
      return "Device";
    case ArgKind::Scalar:
      return "Scalar";
  }
  return "?";
}

static std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

static bool parse_default(const std::string& text, ArgSpec* a) {
  tsr_value_t& v = a->default_value;
  if (text == "None") {
    v.tag = TSR_VALUE_NONE;
  } else if (text == "True" || text == "False") {
    v.tag = TSR_VALUE_BOOL;
    v.u.b = text == "True";
  } else if (text.size() >= 2 && (text[0] == '\'' || text[0] == '"')) {
    a->default_str = text.substr(1, text.size() - 2);
    v.tag = TSR_VALUE_STRING;
  } else if (!text.empty() && text[0] == '[') {
    std::string body = text.substr(1, text.size() - 2);
    size_t pos = 0;
    while (pos < body.size()) {
      size_t comma = body.find(',', pos);
      std::string item = trim(body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (!item.empty()) a->default_ints.push_back(std::strtoll(item.c_str(), nullptr, 10));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    v.tag = TSR_VALUE_INT_LIST;
  } else {
    char* end = nullptr;
    long long i = std::strtoll(text.c_str(), &end, 10);
    if (end && *end == '\0' && !text.empty()) {
      v.tag = TSR_VALUE_INT;
      v.u.i = i;
    } else {
      double d = std::strtod(text.c_str(), &end);
      if (!end || *end != '\0' || text.empty()) return false;
      v.tag = TSR_VALUE_DOUBLE;
      v.u.d = d;
    }
  }
  return true;
}

tsr_status_t parse_schema(const std::string& text, Schema* out) {
  auto fail = [&](const std::string& why) {
    return make_status(TSR_INVALID_ARGUMENT, "schema '" + text + "': " + why);
  };
  size_t open = text.find('('), arrow = text.rfind("->");
  size_t close = arrow == std::string::npos ? text.rfind(')') : text.rfind(')', arrow);
  if (open == std::string::npos || close == std::string::npos || close < open)
    return fail("expected name(args) -> returns");
  Schema s;
  s.name = trim(text.substr(0, open));
  if (s.name.empty()) return fail("empty op name");
  for (char c : s.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.'))
      return fail("bad character in op name");
  std::string args = text.substr(open + 1, close - open - 1);
  // split on commas that are not inside brackets or quotes
  std::vector<std::string> parts;
  int depth = 0;
  bool quote = false;
  std::string cur;
  for (char c : args) {
    if (c == '\'' || c == '"') quote = !quote;
    if (!quote && c == '[') ++depth;
    if (!quote && c == ']') --depth;
    if (!quote && depth == 0 && c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) parts.push_back(cur);
  bool seen_default = false;
  for (const std::string& raw : parts) {
    std::string p = trim(raw);
    if (p == "*") continue;  // keyword-only marker: positional here anyway
    ArgSpec a;
    size_t eq = p.find('=');
    std::string decl = trim(p.substr(0, eq));
    size_t sp = decl.find_last_of(" \t");
    if (sp == std::string::npos) return fail("argument '" + p + "' needs a type and a name");
    std::string type = trim(decl.substr(0, sp));
    a.name = trim(decl.substr(sp + 1));
    // "Tensor(a!)", "Tensor(a!)?" and "Tensor?(a!)" all parse (PyTorch writes the first two).
    if (!type.empty() && type.back() == '?') {
      a.optional = true;
      type.pop_back();
    }
    if (type.size() > 4 && type.compare(type.size() - 4, 4, "(a!)") == 0) {
      a.mutable_ = true;
      type = type.substr(0, type.size() - 4);
    }
    if (!type.empty() && type.back() == '?') {
      a.optional = true;
      type.pop_back();
    }
    if (type == "Tensor")
      a.kind = ArgKind::Tensor;
    else if (type == "Tensor[]")
      a.kind = ArgKind::TensorList;
    else if (type == "int" || type == "SymInt")
      a.kind = ArgKind::Int;
    else if (type == "float")
      a.kind = ArgKind::Float;
    else if (type == "bool")
      a.kind = ArgKind::Bool;
    else if (type == "int[]" || type == "SymInt[]" || type.rfind("int[", 0) == 0)
      a.kind = ArgKind::IntList;
    else if (type == "str")
      a.kind = ArgKind::Str;
    else if (type == "ScalarType")
      a.kind = ArgKind::Dtype;
    else if (type == "Device")
      a.kind = ArgKind::Device;
    else if (type == "Scalar")
      a.kind = ArgKind::Scalar;
    else
      return fail("unknown argument type '" + type + "'");
    if (eq != std::string::npos) {
      if (!parse_default(trim(p.substr(eq + 1)), &a)) return fail("bad default in '" + p + "'");
      a.has_default = true;
      seen_default = true;
      if (a.default_value.tag == TSR_VALUE_NONE && !a.optional)
        return fail("None default for non-optional '" + a.name + "'");
    } else if (seen_default) {
      return fail("argument '" + a.name + "' without default follows one with a default");
    }
    if (a.kind == ArgKind::Tensor) ++s.num_tensor_args;
    s.args.push_back(std::move(a));
  }
  // Point defaults at their owned storage now that the vector no longer moves.
  for (ArgSpec& a : s.args) {
    if (a.default_value.tag == TSR_VALUE_INT_LIST) {
      a.default_value.u.ints.data = a.default_ints.data();
      a.default_value.u.ints.len = static_cast<int64_t>(a.default_ints.size());
    } else if (a.default_value.tag == TSR_VALUE_STRING) {
      a.default_value.u.str = a.default_str.c_str();
    }
  }
  std::string rets = arrow == std::string::npos ? "Tensor" : trim(text.substr(arrow + 2));
  if (rets == "()") {
    s.num_outputs = 0;
  } else if (!rets.empty() && rets[0] == '(') {
    int n = 1;
    for (char c : rets)
      if (c == ',') ++n;
    s.num_outputs = n;
  } else {
    s.num_outputs = 1;
  }
  if (s.args.size() > 16) return fail("more than 16 arguments");
  *out = std::move(s);
  // vector move keeps element addresses? No: re-point defaults after the move as well.
  for (ArgSpec& a : out->args) {
    if (a.default_value.tag == TSR_VALUE_INT_LIST)
      a.default_value.u.ints.data = a.default_ints.data();
    else if (a.default_value.tag == TSR_VALUE_STRING)
      a.default_value.u.str = a.default_str.c_str();
  }
  return nullptr;
}

}  // namespace tsr::core
