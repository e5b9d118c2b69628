// Two builds of a plugin named "dup" (DUP_WHICH = "first" / "second"), in two directories.
// Each publishes the extension "dup.which" pointing at its own label.
#include "tessera/plugin.hpp"

namespace {
const char kWhich[] = DUP_WHICH;
void init(tsr::Registrar& r) { r.extension("dup.which", kWhich); }
}  // namespace

TSR_DEFINE_PLUGIN("dup", "1.0." DUP_WHICH, "duplicate name", nullptr, init, nullptr)
