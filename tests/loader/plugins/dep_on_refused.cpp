// A plugin that depends on "picky" (score_zero.cpp: always refused with score 0). The loader
// cannot initialise it, but still scores it so that its own reason is recorded: built twice,
// scoring 0 with a reason (HOPEFUL_SCORE=0) and scoring 1 (then it is refused for the
// dependency alone). Its init must never run: it aborts.
#include <cstdlib>

#include "tessera/plugin.hpp"

#ifndef HOPEFUL_NAME
#define HOPEFUL_NAME "hopeful"
#endif

namespace {
int32_t score(const tsr_api_t*, std::string& reason) {
  if (HOPEFUL_SCORE == 0) reason = "no widget here (" HOPEFUL_NAME "'s own reason)";
  return HOPEFUL_SCORE;
}
void init(tsr::Registrar&) { std::abort(); }
}  // namespace

TSR_DEFINE_PLUGIN(HOPEFUL_NAME, "1.0", "depends on a refused plugin", score, init, nullptr)
