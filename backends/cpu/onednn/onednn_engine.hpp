// What the side library's kernels share about running oneDNN primitives: the process's one CPU
// engine, and the attribute that makes a primitive's scratchpad user-managed. The Debian build's
// library-managed scratchpad is global per thread, and a primitive would then have to stay on the
// thread that created it, which a cache shared by every thread (plan_cache.hpp) cannot promise;
// so each call passes a scratchpad from the core's caching allocator (tsr::Scratch).
#pragma once

#include <dnnl.hpp>

namespace tsr::cpu {

inline const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

}  // namespace tsr::cpu
