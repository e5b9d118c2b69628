/* Tessera C ABI: kept so that existing `#include "tessera/types.h"` keeps working. What it used
 * to declare now lives with its concept: dtypes and tensors in tensor.h, devices, streams and
 * events handles and device properties in device.h, event flags in stream.h, the runtime and
 * registrar handles in runtime.h, ops and boxed values in op.h, kernel-side tensor views and
 * the iteration in kernel.h. New code includes those (or tessera/tessera.h).
 */
#ifndef TESSERA_TYPES_H
#define TESSERA_TYPES_H

#include "tessera/runtime.h"
#include "tessera/device.h"
#include "tessera/tensor.h"
#include "tessera/stream.h"
#include "tessera/op.h"
#include "tessera/kernel.h"

#endif /* TESSERA_TYPES_H */
