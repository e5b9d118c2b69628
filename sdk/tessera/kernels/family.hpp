// Tessera SDK: the backend-neutral layer of elementwise kernels (header-only).
//
// An op's kernel is written once, as `template <class Run> void op(KernelCall& c, const Run& run)`:
// it reads the call's scalar arguments, dispatches on the dtype and calls
//     ew<Out, In...>(run, functor[, kExact | kReduced | kMath])
// with a per-element functor from tessera/kernels/*_ops.hpp. `Run` is the backend's
// elementwise launcher, constructed from the KernelCall (host code), providing:
//     template <class Out, class... Ins, class Op, Path P> void apply(const Op& op, PathTag<P>) const;
//         out = op(in...) over c.iter() (operands: out, in...); Op is trivially copyable and its
//         operator() is TSR_HOST_DEVICE, so a GPU backend can copy it into a kernel.
//     template <class T> bool any_zero(int operand) const;
//         whether operand `operand` of c.iter() holds a zero (integer division checks). An
//         asynchronous backend may instead check on the device, report the error at the next
//         synchronizing call, and return false (the CUDA backend does).
// The CPU backend's Run calls tsr::elementwise / elementwise_mv; the CUDA backend's launches a
// grid over the iteration. Both therefore apply the same per-element code with the same dtype
// rules.
//
// A family lists its ops with their dtype masks (OpEntry); register_family() registers all of
// them for one device type, naming each kernel "<prefix>::<op>".
// Thread-safety: stateless; errors are thrown as tsr::Error by the op functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "tessera/dtype.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

// A hint about what bounds the op, for backends that choose loops by it (the CPU backend runs
// compute-bound ops through multiversioned AVX2 loops). GPU backends ignore it. Passed as a tag
// type so that a backend instantiates only the loop it picks.
enum class Path {
  Exact,    // cheap exact op: plain loops
  Reduced,  // plain loops, but multiversioned when Out is f16/bf16 (conversion-bound)
  Math,     // transcendental math: multiversioned loops for every dtype
};
template <Path P>
struct PathTag {
  static constexpr Path value = P;
};
constexpr PathTag<Path::Exact> kExact{};
constexpr PathTag<Path::Reduced> kReduced{};
constexpr PathTag<Path::Math> kMath{};

template <class Out, class... Ins, class Run, class Op, Path P = Path::Exact>
inline void ew(const Run& run, const Op& op, PathTag<P> path = {}) {
  run.template apply<Out, Ins...>(op, path);
}

template <class Run>
using OpFn = void (*)(KernelCall&, const Run&);

template <class Run>
struct OpEntry {
  const char* op;
  uint32_t mask;
  OpFn<Run> fn;
};

template <class E, size_t N, size_t... I>
constexpr std::array<E, N> entries_array_impl(const E (&a)[N], std::index_sequence<I...>) {
  return {{a[I]...}};
}
// A family's list as a std::array (its size is the number of entries).
template <class E, size_t N>
constexpr std::array<E, N> entries_array(const E (&a)[N]) {
  return entries_array_impl(a, std::make_index_sequence<N>{});
}

namespace detail {
template <class Family, class Run, size_t I>
void call_family_op(KernelCall& c) {
  constexpr OpFn<Run> fn = Family::template ops<Run>()[I].fn;
  const Run run(c);
  fn(c, run);
}
template <class Family, class Run, size_t... I>
void register_family_ops(Registrar& r, int32_t device_type, const char* prefix, std::index_sequence<I...>) {
  constexpr auto ops = Family::template ops<Run>();
  (r.kernel(ops[I].op, (std::string(prefix) + "::" + ops[I].op).c_str(), device_type, ops[I].mask,
            make_kernel<&call_family_op<Family, Run, I>>()),
   ...);
}
}  // namespace detail

// Registers every op of Family (a struct with `template <class Run> static constexpr auto
// ops()` returning entries_array of OpEntry<Run>) for device_type, with kernels calling
// op(c, Run(c)).
template <class Family, class Run>
void register_family(Registrar& r, int32_t device_type, const char* prefix) {
  constexpr size_t n = Family::template ops<Run>().size();
  detail::register_family_ops<Family, Run>(r, device_type, prefix, std::make_index_sequence<n>{});
}

// bool elements are read and written as bytes (0/1).
template <class T>
using Elem = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;

}  // namespace tsr::kernels
