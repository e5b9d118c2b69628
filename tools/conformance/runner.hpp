// The conformance runner: checks OpInfos (opinfo.hpp) on every loaded device and dtype.
//
// For each OpInfo x device x dtype x sample:
//   forward        results vs the op on cpu:0 in float64 (inputs rounded through the dtype
//                  under test first, so both sides see the same values), per-dtype tolerance,
//                  NaN positions equal, integer/bool results exact; shapes always equal, and
//                  on non-CPU devices result dtypes equal the CPU's for the same dtype
//   noncontiguous  transposed / strided copies of the inputs give the same results
//   out            run_out into runner-allocated outs matches; an out= of the wrong shape
//                  raises tsr::Error and leaves the tensor untouched
//   inplace        run_inplace leaves self equal to run's first result
//   validate       the sample's property check (the only value check of random ops)
//   gradcheck      (cpu:0, float64, differentiable ops) autograd vs central finite differences
//   grad           (non-CPU devices, float32/float64) device gradients vs cpu:0 float64 ones
// A dtype the device has no kernel for (TSR_UNIMPLEMENTED) is skipped on non-CPU devices; the
// CPU backend must support every dtype an OpInfo lists.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "opinfo.hpp"

namespace tsr::conformance {

enum class Outcome { Pass, Fail, Skip };
const char* outcome_name(Outcome o);  // "pass" / "fail" / "skip"

struct CheckResult {
  std::string op, device, dtype, check, sample;
  Outcome outcome = Outcome::Pass;
  std::string message;  // why it failed or was skipped
  // A skip because the device has no kernel for something the check needs (TSR_UNIMPLEMENTED):
  // the op is not (fully) implemented there. Other skips do not apply (e.g. no floating input
  // to differentiate) and say nothing about the device.
  bool missing_kernel = false;
};

struct RunOptions {
  uint64_t seed = 20240601;
  bool gradcheck = true;
  // false: a CPU device without a kernel for a listed dtype is a skip, not a failure (for the
  // runner's own tests).
  bool cpu_must_support_all_dtypes = true;
  std::vector<tsr_dtype_t> dtypes;  // restrict to these (empty: every dtype the OpInfo lists)
  // Smoke test (check-plugin --smoke): the first sample's forward check only, per dtype; no
  // other check and no gradcheck. Says whether each kernel runs at all, not whether it is right
  // beyond one sample.
  bool smoke = false;
};

// Every device of every registered device type of rt, cpu:0 first.
std::vector<tsr::Device> loaded_devices(tsr_runtime_t* rt);
// "cpu:0".
std::string device_name(tsr_runtime_t* rt, const tsr::Device& d);

// Default (rtol, atol) of a dtype before tol_scale: f64 1e-10, f32 1e-5, f16 2e-3, bf16 1.6e-2;
// exact for integers and bool.
Tol default_tolerance(tsr_dtype_t dt);
// The tolerance the runner uses for `info` at dtype dt (overrides and tol_scale applied).
Tol tolerance(const OpInfo& info, tsr_dtype_t dt);

// Runs every check of one OpInfo on one device of rt (tsr::set_runtime(rt) is called).
// Never throws: anything unexpected is a failed check naming what happened.
std::vector<CheckResult> run_opinfo(tsr_runtime_t* rt, const OpInfo& info, const tsr::Device& device,
                                    const RunOptions& opts = {});

// ---- reach (reach.cpp) ----------------------------------------------------------------------

// One kernel lookup: the op the dispatcher launched (a primitive, "_copy", "_fill") and its dtype.
struct KernelUse {
  std::string op;
  tsr_dtype_t dtype = TSR_F32;
  bool operator<(const KernelUse& o) const { return op != o.op ? op < o.op : dtype < o.dtype; }
};
struct ReachTrace {
  std::set<KernelUse> forward;   // the kernels the samples' forward calls looked up
  std::set<KernelUse> backward;  // the further kernels their gradients looked up
  std::string error;             // a sample that could not run on cpu:0 (the sets may be partial)
};
// Runs `info`'s samples at dtype dt on cpu:0 of rt (forward, and for differentiable floating
// dtypes the gradients) and records every kernel the dispatcher looked up.
ReachTrace trace_reach(tsr_runtime_t* rt, const OpInfo& info, tsr_dtype_t dt, uint64_t seed);

}  // namespace tsr::conformance
