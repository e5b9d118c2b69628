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
#include <map>
#include <string>
#include <vector>

#include "tessera/self_register.hpp"
#include "tessera/tessera.hpp"

namespace tsr::conformance {

using Tensors = std::vector<tsr::Tensor>;
using Shape = std::vector<int64_t>;

// Where a sample runs: factories (no tensor inputs) need to be told the device and dtype.
struct Where {
  tsr::Device device;
  tsr_dtype_t dtype = TSR_F64;
};

// (rtol, atol): |actual - expected| <= atol + rtol * |expected|.
struct Tol {
  double rtol = 0, atol = 0;
};

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

  // ---- optional, all default to "not used" ----
  // Instead of `run`, for ops whose results depend on the device and dtype rather than on
  // inputs (factories). The reference calls it with {cpu:0, float64}.
  std::function<Tensors(const Tensors& inputs, const Where& where)> run_at;
  // In-place form: modifies inputs[0]; checked against run's first result (skipped when that
  // result's dtype differs from self's).
  std::function<void(Tensors& inputs)> run_inplace;
  // Reference in float64 on the CPU when "the same op on float64 inputs" is not one (e.g. an
  // op without float64 support). Gets the inputs as the reference would (floating ones as
  // float64, rounded through the dtype under test).
  std::function<Tensors(const Tensors& inputs)> reference;
  // Property check of the results on every device and dtype ("" = fine, else what is wrong);
  // the only value check of non-deterministic ops (e.g. rand: every value in [0, 1)).
  std::function<std::string(const Tensors& results)> validate;
};

struct OpInfo {
  std::string name;                 // the op (and --op filter)
  std::vector<tsr_dtype_t> dtypes;  // dtypes checked on every device
  bool differentiable = true;       // gradcheck in float64 (floating inputs)
  bool noncontiguous = true;        // also check with non-contiguous inputs
  bool deterministic = true;        // false: results compared only for shape/dtype (random ops)
  double tol_scale = 1.0;           // multiplies the per-dtype tolerances
  // Per-dtype tolerances replacing the defaults (tol_scale still applies).
  std::map<tsr_dtype_t, Tol> tol;
  // Integer and bool dtypes: the reference runs the op on the CPU in the dtype under test
  // instead of float64 (integer semantics: wraparound, bitwise ops, integer division).
  bool integer_reference_in_dtype = false;
  // out= accepts shapes the result broadcasts to (like copy_): the wrong-shape out= check then
  // only uses shapes the result cannot broadcast to.
  bool out_broadcasts = false;
  // Samples built on the CPU; `seed` makes them reproducible.
  std::function<std::vector<Sample>(uint64_t seed)> samples;
};

// OpInfo families register themselves (TSR_OPINFOS) into one list (tsr::FamilyList).
struct OpInfoFamiliesTag {};
using OpInfoFamilyFn = void (*)(std::vector<OpInfo>& v);
using OpInfoFamilies = ::tsr::FamilyList<OpInfoFamilyFn, OpInfoFamiliesTag>;
// Every registered OpInfo, family by family (sorted by family name).
std::vector<OpInfo> all_opinfos();
// The OpInfos a plugin ships in its tests file (NAME.tests.json beside NAME.so; format in
// opinfo_plugin.cpp and docs/conformance.md). No file: empty. A malformed one: empty, with
// *error naming the file and the entry.
std::vector<OpInfo> opinfos_from_tests_file(const std::string& path, std::string* error);

// ---- sample helpers (header-only, deterministic) ----------------------------------------------

// Uniform float64 values in [lo, hi) on the CPU, from a seed (never all zeros).
tsr::Tensor random_f64(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0);
// Uniform float64 values with |x| in [lo, hi], random sign (keeps away from 0).
tsr::Tensor random_f64_away_from_zero(const Shape& shape, uint64_t seed, double lo = 0.25, double hi = 2.0);
// int64 values in [lo, hi) on the CPU.
tsr::Tensor random_index(const Shape& shape, uint64_t seed, int64_t lo, int64_t hi);
// bool mask, about `p` true, never all false.
tsr::Tensor random_mask(const Shape& shape, uint64_t seed, double p = 0.5);

#define TSR_OPINFOS(family) \
  TSR_FAMILY(::tsr::conformance::OpInfoFamilies, family, (std::vector<::tsr::conformance::OpInfo> & v))

}  // namespace tsr::conformance
