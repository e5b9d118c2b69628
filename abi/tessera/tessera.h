/* Tessera C ABI: umbrella header. */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H
#include "tessera/version.h"
#include "tessera/status.h"
#include "tessera/types.h"
#include "tessera/kernel.h"
#include "tessera/plugin.h"
#include "tessera/api.h"
#endif
