// Tessera SDK: host wrappers of the reduce op family (included by tessera/tessera.hpp).
#pragma once

#include "tessera/tessera.hpp"

namespace tsr {}  // namespace tsr
