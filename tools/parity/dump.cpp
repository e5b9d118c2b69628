// tessera-parity-dump OUT_PREFIX [--seed N] [--op NAME]...
//
// The Tessera half of the PyTorch parity suite (docs/parity.md). Walks the conformance OpInfo
// registry (tools/conformance: the op list and the sample inputs are written once, there), plus
// the parity-only OpInfos of extras.cpp, and runs every sample on cpu:0:
//   forward     in float64, float32 and each integer/bool dtype the OpInfo lists (float16 and
//               bfloat16 are left to the conformance suite: PyTorch 1.13's CPU kernels for them
//               are incomplete, so a comparison would mostly measure PyTorch);
//   noncontig   float64 with transposed / strided copies of the inputs (where the OpInfo allows
//               them): PyTorch sees the same values contiguous, so both layouts must agree;
//   specials    float64 and float32, samples of one floating 1-D input (replaced by 37 values
//               mixing -0, +0, NaN, +-inf with the sample's own) or of two of one length (53
//               pairs: every special against every other): the corners (signed zeros, NaN
//               positions, inf - inf) random inputs never reach;
//   gradients   float64 and float32 of every differentiable OpInfo: torch.autograd.grad of the
//               sum of (output * seeded random cotangent), the cotangents are dumped with them;
//   kinks       float64 gradients of samples of one or two 1-D inputs, the inputs replaced by the
//               points where piecewise functions switch formula (0, -0, +-1, clamp bounds, ...)
//               or by ties and zeros (a == b, 0 against x).
// Writes OUT_PREFIX.safetensors (every tensor, as Tessera saw or produced it) and
// OUT_PREFIX.json (one record per case naming its tensors); tools/parity/compare.py replays the
// cases in PyTorch. A case Tessera throws on is recorded with the message (PyTorch must then
// throw too). Exit status 0 unless the files cannot be written.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "extras.hpp"
#include "opinfo.hpp"
#include "tessera/serialize.hpp"
#include "tessera/tessera.hpp"

using json = nlohmann::json;
using tsr::Tensor;
using Tensors = std::vector<Tensor>;
namespace conf = tsr::conformance;

namespace {

bool is_integer(tsr_dtype_t dt) { return !tsr::is_floating(dt) && dt != TSR_BOOL; }

// As the conformance runner converts a float64 sample input to dtype dt (runner.cpp): integer
// dtypes through int64 (truncation, then two's-complement wrap), so negative values into
// unsigned types are defined.
Tensor as_dtype(const Tensor& t, tsr_dtype_t dt) {
  if (is_integer(dt) && dt != TSR_I64) return t.to(TSR_I64).to(dt);
  return t.to(dt);
}

Tensors convert_inputs(const Tensors& in, tsr_dtype_t dt) {
  Tensors out;
  for (const Tensor& t : in) out.push_back(t.defined() && t.dtype() == TSR_F64 ? as_dtype(t, dt) : t);
  return out;
}

// A non-contiguous tensor with t's values (the runner's recipe): a transposed copy transposed
// back, else every other element of a doubled buffer; tensors under 2 elements stay as they are.
Tensor noncontig(const Tensor& t) {
  if (!t.defined() || t.numel() < 2) return t;
  if (t.dim() >= 2) {
    Tensor v = t.transpose(0, t.dim() - 1).contiguous().transpose(0, t.dim() - 1);
    if (!v.is_contiguous()) return v;
  }
  std::vector<int64_t> sizes = t.sizes(), strides(sizes.size(), 2);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * sizes[d + 1];
  Tensor big = tsr::empty({t.numel() * 2}, t.dtype(), t.device());
  Tensor v = big.as_strided(sizes, strides, 0);
  v.copy_(t);
  return v;
}

// A 1-D input of 37 elements (past any vector width, with a tail) holding -0, NaN, +inf, +0 and
// -inf at two of every three positions and the sample's own values at the others (so that ops
// needing a spread, such as sort, still see one).
Tensor with_specials(const Tensor& t) {
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {-0.0, std::nan(""), inf, 0.0, -inf};
  std::vector<double> own = t.contiguous().to_vector<double>(), v(37);
  for (size_t i = 0, k = 0; i < v.size(); ++i) v[i] = i % 3 != 2 ? specials[k++ % 5] : own[i % own.size()];
  return tsr::from_vector(v, {static_cast<int64_t>(v.size())}, tsr::Device::cpu());
}

// Two 1-D inputs of 53 elements whose first 49 positions pair every value of {-0, +0, NaN, +inf,
// -inf, 1.5, -2.5} with every other (signed zeros against each other, infinities against
// infinities: 0/0, inf-inf, atan2(-0, -0), ...), the rest the samples' own values.
Tensors with_special_pairs(const Tensor& a, const Tensor& b) {
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {-0.0, 0.0, std::nan(""), inf, -inf, 1.5, -2.5};
  std::vector<double> oa = a.contiguous().to_vector<double>(), ob = b.contiguous().to_vector<double>();
  std::vector<double> va(53), vb(53);
  for (size_t i = 0; i < va.size(); ++i) {
    va[i] = i < 49 ? specials[i % 7] : oa[i % oa.size()];
    vb[i] = i < 49 ? specials[i / 7] : ob[i % ob.size()];
  }
  return {tsr::from_vector(va, {53}, tsr::Device::cpu()), tsr::from_vector(vb, {53}, tsr::Device::cpu())};
}

// Where piecewise functions change formula (0 and -0, +-1, the bounds the OpInfos pass to clamp,
// hardtanh, relu6, hardswish, softplus's threshold, ...): the gradient there is a convention
// (relu'(0) = 0, clamp's bound belongs to the clamped side, ...) that PyTorch fixes.
Tensor kink_values() {
  const std::vector<double> v = {0.0, -0.0, 1.0,  -1.0, 0.5, -0.5, 0.25, 0.75, 2.0,  -2.0,
                                 2.5, 3.0,  -3.0, 6.0,  1.5, 0.2,  -0.2, 4.0,  -4.0, 0.1};
  return tsr::from_vector(v, {static_cast<int64_t>(v.size())}, tsr::Device::cpu());
}

// For two-input samples: ties (a == b, at zero and away from it), zeros against values, and
// opposite signs, where maximum/minimum split, atan2/hypot/pow/xlogy have their corner cases.
Tensors kink_pairs() {
  const std::vector<double> a = {0.0, 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 0.0, 1.0, -2.0, 0.0, 3.0, 0.5, -0.5},
                            b = {0.0, -0.0, 0.0, 1.0, -1.0, 2.0, 0.0, 0.5, 0.0, 2.0, -1.5, -3.0, 2.0, 0.5};
  const std::vector<int64_t> n = {static_cast<int64_t>(a.size())};
  return {tsr::from_vector(a, n, tsr::Device::cpu()), tsr::from_vector(b, n, tsr::Device::cpu())};
}

Tensors run(const conf::Sample& s, const Tensors& in, tsr_dtype_t dt) {
  if (s.run_at) return s.run_at(in, conf::Where{tsr::Device::cpu(), dt});
  return s.run(in);
}

class Dump {
 public:
  explicit Dump(uint64_t seed) : seed_(seed) {}

  // A tensor's entry name ("" for an undefined tensor, null in the index).
  json put(const Tensor& t) {
    if (!t.defined()) return nullptr;
    std::string name = "t" + std::to_string(sd_.size());
    // Contiguous copies detached from any graph: the file holds values only.
    sd_.insert(name, t.detach().contiguous());
    return name;
  }
  json put_all(const Tensors& ts) {
    json a = json::array();
    for (const Tensor& t : ts) a.push_back(put(t));
    return a;
  }

  void forward_case(const conf::OpInfo& info, int variant, size_t idx, const conf::Sample& s, tsr_dtype_t dt,
                    const std::string& layout) {
    json c = header(info, variant, idx, s, dt, layout);
    try {
      tsr::NoGradGuard ng;
      Tensors in = convert_inputs(s.inputs, dt);
      if (layout == "specials") {
        // Built in float64 from the float64 sample, then converted like any input.
        if (in.size() == 1) {
          in[0] = as_dtype(with_specials(s.inputs[0]), dt);
        } else {
          Tensors pair = with_special_pairs(s.inputs[0], s.inputs[1]);
          in[0] = as_dtype(pair[0], dt);
          in[1] = as_dtype(pair[1], dt);
        }
      }
      c["inputs"] = put_all(in);
      if (layout == "noncontiguous")
        for (Tensor& t : in) t = noncontig(t);
      c["outputs"] = put_all(run(s, in, dt));
    } catch (const std::exception& e) {
      c["error"] = e.what();
    }
    cases_.push_back(std::move(c));
  }

  // layout "grad", or "kinks": the one 1-D input replaced by kink_values().
  void grad_case(const conf::OpInfo& info, int variant, size_t idx, const conf::Sample& s, tsr_dtype_t dt,
                 const std::string& layout = "grad") {
    json c = header(info, variant, idx, s, dt, layout);
    try {
      Tensors leaves;
      Tensors in = s.inputs;
      if (layout == "kinks" && in.size() == 1) in[0] = kink_values();
      if (layout == "kinks" && in.size() == 2) in = kink_pairs();
      for (const Tensor& t : convert_inputs(in, dt)) leaves.push_back(t.defined() ? t.detach().clone() : t);
      std::vector<int> wrt;
      if (s.use_default_grad_inputs) {
        for (size_t i = 0; i < leaves.size(); ++i)
          if (leaves[i].defined() && tsr::is_floating(leaves[i].dtype())) wrt.push_back(static_cast<int>(i));
      } else {
        wrt = s.grad_inputs;
      }
      if (wrt.empty()) return;  // nothing to differentiate (e.g. a float64-only cast sample)
      c["inputs"] = put_all(leaves);
      Tensors wrt_leaves;
      for (int i : wrt) {
        leaves[i].requires_grad_(true);
        wrt_leaves.push_back(leaves[i]);
      }
      Tensors outs = run(s, leaves, dt);
      c["outputs"] = put_all(outs);
      // Seeded cotangents for every floating result that carries a gradient.
      json cot = json::array();
      Tensors diff_outs, cots;
      for (size_t k = 0; k < outs.size(); ++k) {
        const Tensor& r = outs[k];
        if (!r.defined() || !tsr::is_floating(r.dtype()) || !r.requires_grad()) {
          cot.push_back(nullptr);
          continue;
        }
        Tensor g = conf::random_f64(r.sizes(), seed_ + 7919 * cases_.size() + k, -1.0, 1.0).to(r.dtype());
        cot.push_back(put(g));
        diff_outs.push_back(r);
        cots.push_back(g);
      }
      c["wrt"] = wrt;
      c["cotangents"] = cot;
      if (diff_outs.empty()) {
        c["grad_error"] = "no result requires grad";
      } else {
        c["grads"] = put_all(tsr::autograd::grad(diff_outs, wrt_leaves, cots, false, false, true));
      }
    } catch (const std::exception& e) {
      c["error"] = e.what();
    }
    cases_.push_back(std::move(c));
  }

  void write(const std::string& prefix) {
    json index = {{"seed", seed_}, {"cases", cases_}};
    tsr::save_safetensors(prefix + ".safetensors", sd_);
    std::ofstream f(prefix + ".json");
    f << index.dump(1) << "\n";
    if (!f) throw std::runtime_error("cannot write " + prefix + ".json");
  }

  size_t count() const { return cases_.size(); }

 private:
  json header(const conf::OpInfo& info, int variant, size_t idx, const conf::Sample& s, tsr_dtype_t dt,
              const std::string& layout) {
    return {{"op", info.name},
            {"variant", variant},
            {"sample", idx},
            {"desc", s.desc},
            {"dtype", tsr::dtype_name(dt)},
            {"layout", layout},
            {"deterministic", info.deterministic},
            {"tol_scale", info.tol_scale}};
  }

  uint64_t seed_;
  tsr::StateDict sd_;
  json cases_ = json::array();
};

// The dtypes compared for an OpInfo: every listed one except the half-precision types.
std::vector<tsr_dtype_t> compared_dtypes(const conf::OpInfo& info) {
  std::vector<tsr_dtype_t> out;
  for (tsr_dtype_t dt : info.dtypes)
    if (dt != TSR_F16 && dt != TSR_BF16) out.push_back(dt);
  return out;
}

bool listed(const conf::OpInfo& info, tsr_dtype_t dt) {
  for (tsr_dtype_t d : info.dtypes)
    if (d == dt) return true;
  return false;
}

// Samples the specials layout applies to: one or two floating 1-D inputs (two of one length:
// elementwise pairs), nothing else.
bool specials_fit(const conf::Sample& s) {
  if (s.inputs.empty() || s.inputs.size() > 2) return false;
  for (const Tensor& t : s.inputs)
    if (!t.defined() || t.dtype() != TSR_F64 || t.dim() != 1 || t.numel() < 2) return false;
  return s.inputs.size() == 1 || s.inputs[0].numel() == s.inputs[1].numel();
}

}  // namespace

int main(int argc, char** argv) {
  std::string prefix;
  uint64_t seed = 20240601;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--op" && i + 1 < argc)
      only.push_back(argv[++i]);
    else if (prefix.empty() && a[0] != '-')
      prefix = a;
    else {
      std::fprintf(stderr, "usage: tessera-parity-dump OUT_PREFIX [--seed N] [--op NAME]...\n");
      return 2;
    }
  }
  if (prefix.empty()) {
    std::fprintf(stderr, "usage: tessera-parity-dump OUT_PREFIX [--seed N] [--op NAME]...\n");
    return 2;
  }
  try {
    Dump dump(seed);
    std::map<std::string, int> variants;  // several OpInfos may share a name (sort, norm)
    std::vector<conf::OpInfo> infos = conf::all_opinfos();
    for (conf::OpInfo& o : tsr::parity::extra_opinfos()) infos.push_back(std::move(o));
    for (const conf::OpInfo& info : infos) {
      const int variant = variants[info.name]++;
      if (!only.empty() && std::find(only.begin(), only.end(), info.name) == only.end()) continue;
      std::vector<conf::Sample> samples = info.samples(seed);
      for (size_t k = 0; k < samples.size(); ++k) {
        const conf::Sample& s = samples[k];
        // Samples holding float8/float4 codes (the quant family): the PyTorch this suite runs
        // against (Debian's 1.13) has none of those dtypes, and safetensors cannot name
        // float4_e2m1fn_x2; the conformance suite checks those ops against float64 references.
        bool low_precision = false;
        for (const Tensor& t : s.inputs) low_precision = low_precision || (t.defined() && tsr::is_low_precision_float(t.dtype()));
        if (low_precision) continue;
        for (tsr_dtype_t dt : compared_dtypes(info)) dump.forward_case(info, variant, k, s, dt, "contiguous");
        bool big_input = false;
        for (const Tensor& t : s.inputs) big_input = big_input || (t.defined() && t.numel() >= 2);
        if (info.noncontiguous && big_input && listed(info, TSR_F64))
          dump.forward_case(info, variant, k, s, TSR_F64, "noncontiguous");
        if (info.deterministic && specials_fit(s))
          for (tsr_dtype_t dt : {TSR_F64, TSR_F32})
            if (listed(info, dt)) dump.forward_case(info, variant, k, s, dt, "specials");
        if (info.differentiable) {
          for (tsr_dtype_t dt : {TSR_F64, TSR_F32})
            if (listed(info, dt)) dump.grad_case(info, variant, k, s, dt);
          if (listed(info, TSR_F64) && specials_fit(s)) dump.grad_case(info, variant, k, s, TSR_F64, "kinks");
        }
      }
    }
    dump.write(prefix);
    std::printf("tessera-parity-dump: %zu cases written to %s.{json,safetensors}\n", dump.count(), prefix.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-parity-dump: %s\n", e.what());
    return 1;
  }
  return 0;
}
