// Tessera SDK: host wrappers of the fused optimizer steps (included through tessera/ops/linalg.hpp).
#pragma once

#include "tessera/tessera.hpp"

namespace tsr {}  // namespace tsr
