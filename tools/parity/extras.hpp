// Parity-only OpInfos (extras.cpp), appended by tessera-parity-dump after the registry's.
#pragma once

#include <vector>

#include "opinfo.hpp"

namespace tsr::parity {

namespace conf = ::tsr::conformance;
using ::tsr::Tensor;

std::vector<conf::OpInfo> extra_opinfos();

}  // namespace tsr::parity
