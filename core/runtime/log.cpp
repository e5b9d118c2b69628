// Logging to stderr, filtered by TESSERA_LOG_LEVEL (error|warn|info|debug; default warn).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/runtime.hpp"

namespace tsr::core {

static int configured_level() {
  static const int level = [] {
    const char* s = std::getenv("TESSERA_LOG_LEVEL");
    if (!s) return static_cast<int>(TSR_LOG_WARN);
    if (!std::strcmp(s, "error")) return static_cast<int>(TSR_LOG_ERROR);
    if (!std::strcmp(s, "info")) return static_cast<int>(TSR_LOG_INFO);
    if (!std::strcmp(s, "debug")) return static_cast<int>(TSR_LOG_DEBUG);
    if (!std::strcmp(s, "off") || !std::strcmp(s, "none")) return -1;
    return static_cast<int>(TSR_LOG_WARN);
  }();
  return level;
}

void log(tsr_log_level_t level, const std::string& message) {
  if (static_cast<int>(level) > configured_level()) return;
  static const char* names[] = {"error", "warn", "info", "debug"};
  std::fprintf(stderr, "[tessera %s] %s\n", names[level & 3], message.c_str());
}

}  // namespace tsr::core
