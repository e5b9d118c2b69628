// bf16 mm, bmm and _nn_linear, and f32 _nn_linear, through oneDNN's matmul primitive, in the side
// library tessera_cpu_onednn.so: the bodies of the plugin's overrides of those ops
// (../matmul_onednn.cpp registers them above the generic kernels of ../matmul.cpp).
//
// f32 _nn_linear: the primitive adds the bias in its epilogue, where the generic kernel writes
// the bias into every output row first and lets the GEMM accumulate onto them (a pass over the
// output before the GEMM: [2816, 256] = 64 x [64, 256] took 655 us that way against 519 here,
// the same as the GEMM alone, at 1 thread on an AVX-512 Xeon). f32 mm and bmm stay on sgemm.
//
// The primitive reads the bf16 operands where they are, with their own strides (transposed,
// sliced, a batch stride, a batch shared by every product), multiplies them exactly, accumulates
// in f32 and rounds once to the bf16 output, adding _nn_linear's bias to the f32 sums before that
// rounding: the contract of the generic kernels, which widen both operands to f32 buffers and
// run an f32 GEMM, but without the widening passes and at the bf16 dot-product rate
// (avx512_bf16's vdpbf16ps: 2 bf16 products per f32 lane per instruction).
//
// Declines (UNIMPLEMENTED, nothing written; the dispatcher then runs the generic kernel):
//   - when oneDNN may not use avx512_bf16 here (its effective ISA, which ONEDNN_MAX_CPU_ISA can
//     lower): its bf16 matmul then emulates the bf16 dot products. Measured at 2048^3, 2 threads,
//     on a Zen 4 limited to avx512_core that way: about 50 GFLOP/s, against 55 for the generic
//     f32-buffer kernel and 260-290 natively;
//   - layouts oneDNN implements only with its reference kernel (an operand with no unit stride,
//     though the core's mm and bmm copy those dense before any kernel runs) or not at all
//     (overlapping batches; both operands shared by every product of a batch).
// Plans (the primitive and its scratchpad size) are cached per problem: shapes, strides, bias or
// not, and the OpenMP thread count, which oneDNN's kernels partition their work by
// (plan_cache.hpp); declines are cached too. The scratchpad comes from the core's allocator
// (onednn_engine.hpp).
#include <dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "cpu_common.hpp"
#include "onednn_engine.hpp"
#include "onednn_entry.h"
#include "plan_cache.hpp"
#include "tessera/kernels/matmul_views.hpp"
#include "tessera/scratch.hpp"

namespace tsr::cpu {
namespace {

using dnnl::memory;

std::atomic<int64_t> g_runs{0};  // products computed here (tsr_cpu_onednn_matmul_runs, for tests)

// One problem: out[i] (dense [m, n], c_bs elements apart) = a[i] [m, k] @ b[i] [k, n] (+ bias
// [n]) for i < batch, strides in elements. An operand's batch is 1 when one matrix serves every
// product (its batch stride was 0), which oneDNN broadcasts.
struct Problem {
  int64_t dtype;  // memory::data_type: bf16 or f32, every operand
  int64_t threads, bias;
  int64_t batch, m, n, k;
  int64_t a_batch, a_bs, a_rs, a_cs;
  int64_t b_batch, b_bs, b_rs, b_cs;
  int64_t c_bs;
};

struct Plan {
  dnnl::matmul prim;  // empty when oneDNN has no fast kernel for the problem
  memory::desc a, b, bias, c, scratch;
  std::string declined;  // why, when prim is empty
};

std::shared_ptr<const Plan> build_plan(const Problem& p) {
  auto plan = std::make_shared<Plan>();
  const auto dt = static_cast<memory::data_type>(p.dtype);
  try {
    plan->a = memory::desc({p.a_batch, p.m, p.k}, dt, {p.a_bs, p.a_rs, p.a_cs});
    plan->b = memory::desc({p.b_batch, p.k, p.n}, dt, {p.b_bs, p.b_rs, p.b_cs});
    plan->c = memory::desc({p.batch, p.m, p.n}, dt, {p.c_bs, p.n, 1});
    if (p.bias) plan->bias = memory::desc({1, 1, p.n}, dt, {p.n, p.n, 1});
    const auto d = p.bias ? dnnl::matmul::desc(plan->a, plan->b, plan->bias, plan->c)
                          : dnnl::matmul::desc(plan->a, plan->b, plan->c);
    const dnnl::matmul::primitive_desc pd(d, user_scratchpad(), engine());
    const std::string impl = pd.impl_info_str();
    if (impl.rfind("ref", 0) == 0) {  // scalar loops, far slower than packing to f32
      plan->declined = "only its reference kernel (" + impl + ") takes these strides";
      return plan;
    }
    plan->scratch = pd.scratchpad_desc();
    plan->prim = dnnl::matmul(pd);
  } catch (const dnnl::error& e) {
    plan->declined = e.what();
  }
  return plan;
}

PlanCache<Problem, Plan>& cache() {
  static auto* c = new PlanCache<Problem, Plan>;  // never destroyed: kernels may run during exit
  return *c;
}

// Whether oneDNN runs bf16 natively here (avx512_core_bf16 or above); see the file comment.
bool native_bf16() {
  static const bool yes = [] {
    const unsigned isa = unsigned(dnnl_get_effective_cpu_isa()), need = unsigned(dnnl_cpu_isa_avx512_core_bf16);
    return (isa & need) == need;  // the ISA values are cumulative bit sets
  }();
  return yes;
}

// The strides of a [rows, cols] operand as oneDNN should see them. A dim of size 1 is never
// stepped along, so its stride is free: it gets the one a dense layout would have, for oneDNN to
// recognize the plain layouts it has fast kernels for (a single row whose row stride is
// whatever its tensor had is still row-major).
void plain_strides(int64_t rows, int64_t cols, int64_t& rs, int64_t& cs) {
  if (rows == 1 && cols == 1) {
    rs = cs = 1;
  } else if (rows == 1) {
    rs = cols * cs;
  } else if (cols == 1) {
    cs = rs == 1 ? rows : 1;
  }
}

// An operand's (batch, batch stride) in the problem: one matrix for all when its batch stride is
// 0 or there is one product; the batch stride of a single matrix is its extent.
void batch_of(const kernels::MatView& v, int64_t batch, int64_t& nb, int64_t& bs) {
  if (batch > 1 && v.bs != 0) {
    nb = batch, bs = v.bs;
  } else {
    nb = 1, bs = std::max<int64_t>({1, v.rows * v.rs, v.cols * v.cs});
  }
}

Problem make_problem(const kernels::MatmulViews& v, bool bias, tsr_dtype_t dtype) {
  Problem p{};
  p.dtype = int64_t(dtype == TSR_BF16 ? memory::data_type::bf16 : memory::data_type::f32);
  p.threads = max_threads();
  p.bias = bias;
  p.batch = v.batch, p.m = v.m, p.n = v.n, p.k = v.k;
  p.a_rs = v.a.rs, p.a_cs = v.a.cs, p.b_rs = v.b.rs, p.b_cs = v.b.cs;
  plain_strides(v.m, v.k, p.a_rs, p.a_cs);
  plain_strides(v.k, v.n, p.b_rs, p.b_cs);
  kernels::MatView a = v.a, b = v.b;
  a.rs = p.a_rs, a.cs = p.a_cs, b.rs = p.b_rs, b.cs = p.b_cs;
  batch_of(a, v.batch, p.a_batch, p.a_bs);
  batch_of(b, v.batch, p.b_batch, p.b_bs);
  p.c_bs = v.batch > 1 ? v.out_bs : v.m * v.n;
  return p;
}

// out = a @ b (+ bias) for the views of a call; the caller has handled empty problems and k = 0.
void run(const KernelCall& c, const kernels::MatmulViews& v, const void* bias) {
  if (c.dtype() == TSR_BF16 && !native_bf16())
    fail(TSR_UNIMPLEMENTED, c.op_name(), ": oneDNN would emulate bf16 on this CPU (no avx512_bf16 in its ISA)");
  const Problem p = make_problem(v, bias != nullptr, c.dtype());
  const std::shared_ptr<const Plan> plan = cache().get(p, build_plan);
  if (!plan->prim)
    fail(TSR_UNIMPLEMENTED, c.op_name(), ": oneDNN has no fast ", dtype_name(c.dtype()), " matmul for [", v.batch, ", ", v.m, ", ", v.k,
         "] @ [", v.k, ", ", v.n, "] with strides (", v.a.bs, ", ", v.a.rs, ", ", v.a.cs, ") and (", v.b.bs, ", ",
         v.b.rs, ", ", v.b.cs, "): ", plan->declined);
  Scratch scratch(c, plan->scratch.get_size());
  try {
    const auto& eng = engine();
    dnnl::stream s(eng);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(plan->a, eng, const_cast<void*>(v.a.data))},
                                         {DNNL_ARG_WEIGHTS, memory(plan->b, eng, const_cast<void*>(v.b.data))},
                                         {DNNL_ARG_DST, memory(plan->c, eng, v.out)},
                                         {DNNL_ARG_SCRATCHPAD, memory(plan->scratch, eng, scratch.data())}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(plan->bias, eng, const_cast<void*>(bias)));
    plan->prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error& e) {
    fail(TSR_INTERNAL, c.op_name(), ": oneDNN matmul failed: ", e.what());
  }
  g_runs.fetch_add(1, std::memory_order_relaxed);
}

constexpr size_t kItem = 2;  // bytes of a bf16

void zero(const kernels::MatmulViews& v) {  // bf16 +0 is all zero bits
  for (int64_t i = 0; i < v.batch; ++i)
    std::memset(static_cast<char*>(v.out) + i * v.out_bs * int64_t(kItem), 0, size_t(v.m * v.n) * kItem);
}

void check_bf16(const KernelCall& c) {
  TSR_CHECK(c.dtype() == TSR_BF16, TSR_INTERNAL, c.op_name(), ": the oneDNN matmul kernel is bf16 only, called for ",
            dtype_name(c.dtype()));
}

void mm_kernel(KernelCall& c) {
  check_bf16(c);
  const kernels::MatmulViews v = kernels::mm_views(c);
  if (v.m == 0 || v.n == 0) return;
  if (v.k == 0) return zero(v);  // a sum over nothing
  run(c, v, nullptr);
}

void bmm_kernel(KernelCall& c) {
  check_bf16(c);
  const kernels::MatmulViews v = kernels::bmm_views(c);
  if (v.batch == 0 || v.m == 0 || v.n == 0) return;
  if (v.k == 0) return zero(v);
  run(c, v, nullptr);
}

// _nn_linear(x [M, K], w [N, K], bias [N]) -> x @ w^T + bias (bf16 or f32): w is read
// transposed in place (linear_views), the bias added by the primitive.
void linear_kernel(KernelCall& c) {
  TSR_CHECK(c.dtype() == TSR_BF16 || c.dtype() == TSR_F32, TSR_INTERNAL, c.op_name(),
            ": the oneDNN linear kernel is bf16 and f32 only, called for ", dtype_name(c.dtype()));
  const kernels::MatmulViews v = kernels::linear_views(c);
  const tsr_tensor_view_t& B = c.input(2);
  TSR_CHECK(B.sizes[0] == v.n && (v.n <= 1 || B.strides[0] == 1), TSR_INTERNAL, c.op_name(),
            ": expected a dense bias of one element per output feature");
  if (v.m == 0 || v.n == 0) return;
  if (v.k == 0) {  // each output row is the bias
    const size_t item = c.dtype() == TSR_BF16 ? 2 : 4;
    for (int64_t i = 0; i < v.m; ++i)
      std::memcpy(static_cast<char*>(v.out) + i * v.n * int64_t(item), B.data, size_t(v.n) * item);
    return;
  }
  run(c, v, B.data);
}

}  // namespace
}  // namespace tsr::cpu

extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_bf16_mm(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::mm_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_bf16_bmm(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::bmm_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_bf16_linear(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::linear_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_f32_linear(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::linear_kernel)(c);
}
extern "C" TSR_EXPORT int64_t tsr_cpu_onednn_matmul_runs(void) {
  return tsr::cpu::g_runs.load(std::memory_order_relaxed);
}
