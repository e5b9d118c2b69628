// A plugin without the entry symbol: it exports a misspelt one instead.
#include "tessera/plugin.h"

extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_qeury(uint32_t) { return nullptr; }
