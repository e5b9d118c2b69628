// The conformance suite's op database: one OpInfo per op, each describing how to build sample
// inputs and how to call the op. The runner (runner.cpp) checks every OpInfo on every loaded
// device and listed dtype against the same op computed on the CPU in float64, checks
// non-contiguous inputs and out= variants, and gradchecks differentiable ops in float64.
//
// Op families add their entries from their own file (static registration):
//
//   TSR_OPINFOS(unary) {
//     v.push_back(unary_info("exp", float_dtypes(), Domain::Wide));
//     OpInfo o;
//     o.name = "gather";
//     ...
//     v.push_back(std::move(o));
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::conformance {

using Tensors = std::vector<tsr::Tensor>;
using Shape = std::vector<int64_t>;

struct Sample {
  std::string desc;  // e.g. "[3, 5] x [5]"
  // Inputs on the CPU. Floating inputs are float64: the runner converts them to the device and
  // dtype under test (and to non-contiguous layouts); other inputs (indices, masks) keep their
  // dtype and only move to the device.
  Tensors inputs;
  // Calls the op on (converted) inputs; returns every result to compare.
  std::function<Tensors(const Tensors&)> run;
  // Optional out= form: writes into `outs` (allocated by the runner like run's results).
  std::function<void(const Tensors& inputs, Tensors& outs)> run_out;
  // Inputs to gradcheck (default: every floating input).
  std::vector<int> grad_inputs;
  bool use_default_grad_inputs = true;
};

struct OpInfo {
  std::string name;                 // the op (and --op filter)
  std::vector<tsr_dtype_t> dtypes;  // dtypes checked on every device
  bool differentiable = true;       // gradcheck in float64 (floating inputs)
  bool noncontiguous = true;        // also check with non-contiguous inputs
  bool deterministic = true;        // false: results compared only for shape/dtype (random ops)
  double tol_scale = 1.0;           // multiplies the per-dtype tolerances
  // Samples built on the CPU; `seed` makes them reproducible.
  std::function<std::vector<Sample>(uint64_t seed)> samples;
};

using OpInfoFamilyFn = void (*)(std::vector<OpInfo>& v);
bool register_opinfo_family(const char* name, OpInfoFamilyFn fn);
// Every registered OpInfo, in registration order.
std::vector<OpInfo> all_opinfos();

// ---- sample helpers (header-only, deterministic) ----------------------------------------------

// Uniform float64 values in [lo, hi) on the CPU, from a seed (never all zeros).
tsr::Tensor random_f64(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0);
// Uniform float64 values with |x| in [lo, hi], random sign (keeps away from 0).
tsr::Tensor random_f64_away_from_zero(const Shape& shape, uint64_t seed, double lo = 0.25, double hi = 2.0);
// int64 values in [lo, hi) on the CPU.
tsr::Tensor random_index(const Shape& shape, uint64_t seed, int64_t lo, int64_t hi);
// bool mask, about `p` true, never all false.
tsr::Tensor random_mask(const Shape& shape, uint64_t seed, double p = 0.5);

#define TSR_OPINFOS(family)                                                                     \
  static void tsr_opinfos_##family(std::vector<::tsr::conformance::OpInfo>& v);                \
  [[maybe_unused]] static const bool tsr_opinfos_registered_##family =                         \
      ::tsr::conformance::register_opinfo_family(#family, tsr_opinfos_##family);                \
  static void tsr_opinfos_##family(std::vector<::tsr::conformance::OpInfo>& v)

}  // namespace tsr::conformance
