// A plugin that dereferences a null pointer in init (SIGSEGV). Only ever loaded through
// `tessera check-plugin`, in its child process.
#include "tessera/plugin.hpp"

namespace {
void init(tsr::Registrar&) {
  // Both volatile: the compiler may neither assume the pointer's value nor drop the store.
  volatile int* volatile p = nullptr;
  *p = 42;
}
}  // namespace

TSR_DEFINE_PLUGIN("crasher", "0.1", "segfaults in init", nullptr, init, nullptr)
