// Test plugins append "init NAME" / "shutdown NAME" lines to the file named by
// $TSR_LOADER_TEST_LOG (read at init), so tests can check the order of lifecycle calls.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace loader_test {

inline std::string log_path() {
  const char* p = std::getenv("TSR_LOADER_TEST_LOG");
  return p ? p : "";
}

inline void append_log(const std::string& path, const std::string& line) {
  if (path.empty()) return;
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

// Plugin state: where to log, and the plugin's name.
struct LogState {
  std::string path, name;
};

inline void* log_init(const char* name) {
  auto* s = new LogState{log_path(), name};
  append_log(s->path, std::string("init ") + name);
  return s;
}

inline void log_shutdown(void* state) {
  auto* s = static_cast<LogState*>(state);
  if (!s) return;
  append_log(s->path, "shutdown " + s->name);
  delete s;
}

}  // namespace loader_test
