// Tessera SDK: search-path lists such as TESSERA_PLUGIN_PATH (header-only).
//
// A list is directories separated by ':' (as PATH); empty entries are skipped. The core's plugin
// loader and the `tessera` command both read TESSERA_PLUGIN_PATH with this one function.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

namespace tsr {

inline std::vector<std::string> split_search_path(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(':', pos);
    std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!item.empty()) out.push_back(item);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

}  // namespace tsr
