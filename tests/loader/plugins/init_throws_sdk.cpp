// A plugin whose init (through the SDK macro) registers an op and then throws: the SDK turns the
// exception into a failed status; the loader refuses the plugin and drops the op.
#include <stdexcept>

#include "tessera/plugin.hpp"

namespace {
void meta(tsr::MetaCall&) {}
void init(tsr::Registrar& r) {
  r.op("thrower::op(Tensor x) -> Tensor", TSR_META(meta));
  throw std::runtime_error("boom from sdk init");
}
}  // namespace

TSR_DEFINE_PLUGIN("thrower_sdk", "0.1", "throws through the SDK", nullptr, init, nullptr)
