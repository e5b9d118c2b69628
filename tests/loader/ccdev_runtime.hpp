// What the tests over the ccdev fake-device backend (plugins/ccdev.cpp) share: the core's API
// table, a status turned into its message, and a runtime with only the ccdev plugin loaded.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tessera/api.h"

namespace ccdev_test {

inline const tsr_api_t* api() {
  static const tsr_api_t* a = tsr_get_api(TSR_ABI_VERSION);
  return a;
}

// "" for OK; else the message (the status is freed).
inline std::string take_message(tsr_status_t st) {
  if (!st) return "";
  std::string m = api()->status_message(st);
  api()->status_free(st);
  return m;
}

inline const std::string kDir = std::string(TSR_LOADER_CASES) + "/ccdev";

// A runtime with only the ccdev plugin; `caps` gives its devices' capabilities
// (TSR_TEST_CCDEV_CAPS, read by the plugin's init during runtime_create; nullptr: the default,
// 2 devices).
struct CcdevRuntime {
  tsr_runtime_t* rt = nullptr;
  explicit CcdevRuntime(const char* caps) {
    if (caps)
      setenv("TSR_TEST_CCDEV_CAPS", caps, 1);
    else
      unsetenv("TSR_TEST_CCDEV_CAPS");
    tsr_runtime_options_t o{};
    o.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
    o.plugin_path = kDir.c_str();
    o.no_default_plugins = 1;
    EXPECT_EQ(take_message(api()->runtime_create(&o, &rt)), "");
    unsetenv("TSR_TEST_CCDEV_CAPS");
  }
  ~CcdevRuntime() {
    if (rt) api()->runtime_destroy(rt);
  }
  CcdevRuntime(const CcdevRuntime&) = delete;
  CcdevRuntime& operator=(const CcdevRuntime&) = delete;
};

}  // namespace ccdev_test
