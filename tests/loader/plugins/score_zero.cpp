// A plugin that cannot run here: score 0 with a reason.
#include "tessera/plugin.hpp"

namespace {
int32_t score(const tsr_api_t*, std::string& reason) {
  reason = "no frobnicator on this machine (need /dev/frob0)";
  return 0;
}
void init(tsr::Registrar&) {}
}  // namespace

TSR_DEFINE_PLUGIN("picky", "0.3", "scores 0", score, init, nullptr)
