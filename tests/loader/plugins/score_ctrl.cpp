// A plugin that scores 0 with a reason full of control characters (a newline that would forge
// a log line, a terminal escape sequence, a bell) and bytes that are not UTF-8: the record and
// the log must escape them (and keep the UTF-8 that is well formed).
#include "tessera/plugin.hpp"

namespace {
int32_t score(const tsr_api_t*, std::string& reason) {
  reason = "no device\n[tessera info] loaded plugin 'root'\x1b[2J\x07 caf\xc3\xa9 \xff\xc3(";
  return 0;
}
void init(tsr::Registrar&) {}
}  // namespace

TSR_DEFINE_PLUGIN("ctrl", "0.1", "scores 0 with control characters", score, init, nullptr)
