// Memory overlap between tensors, after PyTorch's ATen/MemoryOverlap: what the dispatcher
// (ops/arg_check.cpp, check_overlap) and copy_ check before anything is written.
//
// A tensor an op writes must not have internal overlap (several elements at one memory
// location: the result would depend on which write lands last), and must not partially overlap
// a tensor the op reads (the kernel would read elements it has already overwritten). Full
// overlap, the identical view on both sides (add_(x, x), add(x, x, out=x)), is the ordinary
// in-place case and is allowed. Answers are conservative: TooHard is not refused.
#pragma once

#include "tensor/tensor.hpp"

namespace tsr::core {

enum class MemOverlap { No, Yes, TooHard };
enum class MemOverlapStatus { Full, Partial, No, TooHard };

// Yes when two elements of t provably share memory: a dim of size > 1 with stride 0, or two
// dims where one's stride is a multiple of the other's and reached within its size
// (overlapping windows). No when t is dense or its strides nest without gaps being refilled.
MemOverlap has_internal_overlap(const Tensor* t);

// How a and b overlap: Full when they are the same view (same first byte, element size, and
// sizes and strides, right-aligned, size-1 dims aside); No when they are in different storages
// or their byte ranges are disjoint; Partial when they provably share memory otherwise (both
// dense, or one dense and an end element of the other inside it); TooHard when their byte
// ranges intersect but neither rule decides (interleaved strided views such as x[0::2] and x[1::2]).
// Cheap when the storages differ: one comparison.
MemOverlapStatus get_overlap_status(const Tensor* a, const Tensor* b);

// The refusals, as PyTorch words them, prefixed with `op` and followed by what names the
// tensors (`written`, `input`: "argument 'self'", "out= tensor 0", "dst", ...). nullptr when allowed.
tsr_status_t assert_no_internal_overlap(const Tensor* t, const char* op, const char* written);
tsr_status_t assert_no_partial_overlap(const Tensor* written_t, const Tensor* input_t, const char* op,
                                       const char* written, const char* input);

}  // namespace tsr::core
