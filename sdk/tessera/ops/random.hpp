// Tessera SDK: host wrappers of the random op family (included through tessera/ops/linalg.hpp).
#pragma once

#include "tessera/tessera.hpp"

namespace tsr {}  // namespace tsr
