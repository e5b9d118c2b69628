// A plugin whose dependency was refused is still scored (never initialised), so that the record
// says why it could not run here even without the dependency: the sm100 plugin on a machine
// without a GPU gives "no CUDA device", not only "a dependency failed to load (cuda)".
#include <gtest/gtest.h>

#include <string>

#include "tessera/api.h"

namespace {

const tsr_api_t* api() {
  static const tsr_api_t* a = tsr_get_api(TSR_ABI_VERSION);
  return a;
}

std::string record_reason(const std::string& path, const char* name, int32_t* loaded, int32_t* score) {
  tsr_runtime_options_t o{};
  o.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
  o.plugin_path = path.c_str();
  o.no_default_plugins = 1;
  tsr_runtime_t* rt = nullptr;
  if (tsr_status_t st = api()->runtime_create(&o, &rt)) {
    std::string m = api()->status_message(st);
    api()->status_free(st);
    return "runtime_create failed: " + m;
  }
  std::string reason = "no record";
  for (size_t i = 0; i < api()->plugin_count(rt); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof(r);
    if (tsr_status_t st = api()->plugin_record(rt, i, &r)) {
      api()->status_free(st);
      continue;
    }
    if (std::string(r.name) == name) {
      reason = r.reason;
      *loaded = r.loaded;
      *score = r.score;
    }
  }
  api()->runtime_destroy(rt);
  return reason;
}

const std::string kCases = TSR_LOADER_CASES;

TEST(LoaderDependencyRefused, OwnScoreZeroReasonIsRecordedWithTheDependency) {
  int32_t loaded = -1, score = -1;
  const std::string reason =
      record_reason(kCases + "/score_zero:" + kCases + "/dep_refused_score0", "hopeful0", &loaded, &score);
  EXPECT_EQ(loaded, 0);
  EXPECT_EQ(score, 0);
  EXPECT_EQ(reason, "scored 0: no widget here (hopeful0's own reason); and a dependency failed to load (picky)");
}

TEST(LoaderDependencyRefused, ScoringPluginIsRefusedForTheDependencyAndNeverInitialised) {
  int32_t loaded = -1, score = -1;
  // Its init aborts: reaching it would end this test process.
  const std::string reason =
      record_reason(kCases + "/score_zero:" + kCases + "/dep_refused_score1", "hopeful1", &loaded, &score);
  EXPECT_EQ(loaded, 0);
  EXPECT_EQ(score, 1);
  EXPECT_EQ(reason, "a dependency failed to load (picky)");
}

}  // namespace
