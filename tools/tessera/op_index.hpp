// Where each op is written outside the core, read from the source tree at build time by
// gen_op_index.py: its SDK wrapper, its OpInfo, its doc row, and the definitions of backward
// formulas by name. The core's own records (schema, formula name) come from the registry
// (op_source); this index completes them for `tessera ops --where` and the coverage check.
#pragma once

#include <cstddef>
#include <string>

namespace tessera_cli {

struct SourceRef {
  const char* kind;  // "sdk", "opinfo", "doc", "formula" or "exempt"
  const char* name;  // op name (formula name for "formula")
  const char* file;  // relative to the source root ("exempt": what the op lacks, e.g. "sdk,doc")
  int line;          // ("exempt": the line of the exemption list)
  const char* note;  // "exempt": the reason; "" otherwise
};

extern const SourceRef kOpIndex[];
extern const size_t kOpIndexSize;

// The first entry of `kind` for `name`, or nullptr.
inline const SourceRef* find_source(const char* kind, const std::string& name) {
  for (size_t i = 0; i < kOpIndexSize; ++i)
    if (name == kOpIndex[i].name && std::string(kind) == kOpIndex[i].kind) return &kOpIndex[i];
  return nullptr;
}

}  // namespace tessera_cli
