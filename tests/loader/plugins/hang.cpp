// A plugin whose init never returns. Only ever loaded through `tessera check-plugin`.
#include <unistd.h>

#include "tessera/plugin.hpp"

namespace {
void init(tsr::Registrar&) {
  for (;;) sleep(1);
}
}  // namespace

TSR_DEFINE_PLUGIN("sleeper", "0.1", "hangs in init", nullptr, init, nullptr)
