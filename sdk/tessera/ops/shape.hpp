// Tessera SDK: host wrappers of the shape op family (included by tessera/tessera.hpp).
#pragma once

#include "tessera/tessera.hpp"

namespace tsr {}  // namespace tsr
