// A plugin that needs a symbol nothing defines: dlopen (RTLD_NOW) fails, and the refusal must
// carry dlopen's own message (not a stray errno text after it).
#include "tessera/plugin.h"

extern "C" void tsr_loader_test_no_such_symbol(void);

extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t) {
  tsr_loader_test_no_such_symbol();
  return nullptr;
}
