// Indexing kernels: index_select (row copies), gather, scatter with reductions, nonzero.
// Contracts (docs/kernels/index.md): index tensors arrive as int64 (contiguous for
// index_select, any strides for gather/scatter) and may hold any value; every kernel validates all indices before
// writing anything, so a bad index leaves the output untouched. Data moves are done by item size (bit copies);
// reductions dispatch on dtype.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "tessera/kernels/item_size.hpp"
#include "tessera/kernels/scatter_reduce.hpp"

namespace tsr::cpu {
namespace {

// First index outside [-size, size), reported with the op, the dim and its size.
void check_indices(const char* op, const int64_t* idx, int64_t n, int64_t size, int64_t dim) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = idx[i];
    if (v < -size || v >= size)
      fail(TSR_OUT_OF_RANGE, op, ": index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  }
}

inline int64_t wrap(int64_t v, int64_t size) { return v < 0 ? v + size : v; }

// Product of sizes[b, e).
int64_t prod(const int64_t* sizes, int b, int e) {
  int64_t p = 1;
  for (int d = b; d < e; ++d) p *= sizes[d];
  return p;
}

// Element offsets (with `strides`) of every position of the row-major block sizes[b, e).
std::vector<int64_t> block_offsets(const int64_t* sizes, const int64_t* strides, int b, int e) {
  std::vector<int64_t> off(static_cast<size_t>(prod(sizes, b, e)));
  if (off.empty()) return off;
  int64_t coord[TSR_MAX_DIMS] = {};
  int64_t cur = 0;
  for (size_t i = 0; i < off.size(); ++i) {
    off[i] = cur;
    for (int d = e - 1; d >= b; --d) {
      if (++coord[d] < sizes[d]) {
        cur += strides[d];
        break;
      }
      cur -= strides[d] * (coord[d] - 1);
      coord[d] = 0;
    }
  }
  return off;
}

// f(TypeTag<unsigned of `size` bytes>): copies of one element.
template <class F>
void by_itemsize(size_t size, const char* op, F&& f) {
  if (!kernels::with_uint_of_size(size, f)) fail(TSR_UNIMPLEMENTED, op, ": unsupported item size ", size);
}

// index_select: self contiguous viewed as [O, S, I], index [K], out [O, K, I] contiguous.
void index_select_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  const int64_t K = view_numel(index);
  const int64_t S = self.sizes[dim];
  const int64_t O = prod(self.sizes, 0, dim), I = prod(self.sizes, dim + 1, self.ndim);
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  check_indices("index_select", idx, K, S, dim);
  const size_t row = static_cast<size_t>(I) * itemsize(self.dtype);
  const char* src = static_cast<const char*>(self.data);
  char* dst = static_cast<char*>(out.data);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, I));
  if (I == 1) {  // single elements (masked_select, take): typed loads beat memcpy calls
    by_itemsize(itemsize(self.dtype), "index_select", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* s = static_cast<const T*>(self.data);
      T* d = static_cast<T*>(out.data);
      parallel_for(0, O * K, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) d[r] = s[(r / K) * S + wrap(idx[r % K], S)];
      });
    });
    return;
  }
  parallel_for(0, O * K, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / K, k = r % K;
      std::memcpy(dst + r * row, src + (o * S + wrap(idx[k], S)) * row, row);
    }
  });
}

// Offset tables of a tensor viewed as [O, K, I] around `dim` (sizes from `shape`, strides its
// own): element (o, k, i) is at o_off[o] + k * k_stride + i_off[i].
struct Blocks {
  std::vector<int64_t> o_off, i_off;
  int64_t k_stride = 0;
  Blocks(const int64_t* shape, const int64_t* strides, int dim, int nd)
      : o_off(block_offsets(shape, strides, 0, dim)),
        i_off(block_offsets(shape, strides, dim + 1, nd)),
        k_stride(strides[dim]) {}
  int64_t at(int64_t o, int64_t k, int64_t i) const { return o_off[o] + k * k_stride + i_off[i]; }
};

// Every index of a strided index tensor within [-size, size). Broadcast (stride 0) dims are
// visited once: an expanded row index costs K checks, not K * I.
void check_index_view(const char* op, const tsr_tensor_view_t& index, int64_t size, int64_t dim) {
  int64_t sizes[TSR_MAX_DIMS];
  for (int d = 0; d < index.ndim; ++d)
    sizes[d] = index.strides[d] == 0 ? std::min<int64_t>(1, index.sizes[d]) : index.sizes[d];
  const std::vector<int64_t> off = block_offsets(sizes, index.strides, 0, index.ndim);
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  for (int64_t o : off) {
    const int64_t v = idx[o];
    if (v < -size || v >= size)
      fail(TSR_OUT_OF_RANGE, op, ": index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  }
}

// True when dims [b, nd) of t are row-major dense with the given sizes.
bool dense_block(const int64_t* sizes, const int64_t* strides, const int64_t* want, int b, int nd) {
  int64_t expect = 1;
  for (int d = nd - 1; d >= b; --d) {
    if (sizes[d] != want[d]) return false;
    if (sizes[d] != 1 && strides[d] != expect) return false;
    expect *= sizes[d];
  }
  return true;
}

// gather: out[o, k, i] = self[o, index[o, k, i], i]; index and self strided (self's sizes may
// exceed the index's outside `dim`), out contiguous with the index's shape. An index constant
// over the trailing dims (an expanded row index, as embedding lookups make) copies whole rows.
void gather_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  const int nd = index.ndim;
  const int64_t S = self.sizes[dim];
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  const int64_t O = prod(index.sizes, 0, dim), K = index.sizes[dim], I = prod(index.sizes, dim + 1, nd);
  const Blocks ib(index.sizes, index.strides, dim, nd);
  check_index_view("gather", index, S, dim);
  const Blocks sb(index.sizes, self.strides, dim, nd);
  bool rows = I > 1 && dense_block(self.sizes, self.strides, index.sizes, dim + 1, nd);
  for (int d = dim + 1; rows && d < nd; ++d) rows = index.strides[d] == 0 || index.sizes[d] == 1;
  const size_t isz = itemsize(self.dtype);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, I));
  if (rows) {
    const char* src = static_cast<const char*>(self.data);
    char* dst = static_cast<char*>(out.data);
    parallel_for(0, O * K, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / K, k = r % K;
        const int64_t t = wrap(idx[ib.o_off[o] + k * ib.k_stride], S);
        std::memcpy(dst + r * I * isz, src + (sb.o_off[o] + t * sb.k_stride) * isz, I * isz);
      }
    });
    return;
  }
  by_itemsize(isz, "gather", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(self.data);
    T* dst = static_cast<T*>(out.data);
    parallel_for(0, O * K, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / K, k = r % K;
        const int64_t* ir = idx + ib.o_off[o] + k * ib.k_stride;
        T* orow = dst + r * I;
        const T* base = src + sb.o_off[o];
        for (int64_t i = 0; i < I; ++i) orow[i] = base[wrap(ir[ib.i_off[i]], S) * sb.k_stride + sb.i_off[i]];
      }
    });
  });
}

// The reduce argument, identities, combine steps and the mean's division are shared with the CUDA
// backend (tessera/kernels/scatter_reduce.hpp).
using Reduce = kernels::ScatterReduce;

template <class T>
using ScatterMath = kernels::ScatterReduceMath<T>;

// scatter_reduce (also runs scatter with reduce "assign" and scatter_add with "sum"):
// index and src strided [O, K, I] (src has the index's shape; stride 0 for expanded operands);
// out already holds self. Work is split over (o, i) so no two threads touch one output
// element, and each element sees its updates in index order: results (float sums included)
// are deterministic.
void scatter_reduce_kernel(KernelCall& c) {
  const tsr_tensor_view_t& index = c.input(0);
  const tsr_tensor_view_t& srcv = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  const Reduce red = kernels::parse_scatter_reduce(c.arg_str(4));
  const bool include_self = c.arg_bool(5);
  const int nd = index.ndim;
  const int64_t S = out.sizes[dim];
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  const int64_t O = prod(index.sizes, 0, dim), K = index.sizes[dim], I = prod(index.sizes, dim + 1, nd);
  const Blocks ib(index.sizes, index.strides, dim, nd);
  check_index_view(c.op_name(), index, S, dim);
  if (O * K * I == 0) return;
  const Blocks ob(index.sizes, out.strides, dim, nd);
  const Blocks sb(index.sizes, srcv.strides, dim, nd);
  const int64_t sd = ob.k_stride;
  dispatch_all(out.dtype, c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = ScatterMath<T>;
    using C = typename M::C;
    const T* src = static_cast<const T*>(srcv.data);
    T* dst = static_cast<T*>(out.data);
    const bool reset = !include_self && red != Reduce::Assign;
    const C ident = M::identity(red);
    if (red != Reduce::Mean) {
      // Items are (o, block of up to W trailing positions); inside one, k runs outermost so
      // rows of out and src are walked contiguously. An index constant over the trailing dims
      // (an expanded row index: index_add, index_copy, index_put) with dense rows takes a
      // vectorizable row loop.
      const int64_t W = std::min<int64_t>(I, std::max<int64_t>(64, I / 16));
      const int64_t nblk = (I + W - 1) / W;
      bool rows = true;
      for (int64_t i = 0; rows && i < I; ++i) rows = ib.i_off[i] == 0 && ob.i_off[i] == i && sb.i_off[i] == i;
      auto run = [&](auto rtag) {
        constexpr Reduce R = decltype(rtag)::value;
        parallel_for(
            0, O * nblk, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, K * W)), [&](int64_t b, int64_t e) {
              for (int64_t item = b; item < e; ++item) {
                const int64_t o = item / nblk, i0 = (item % nblk) * W, i1 = std::min(I, i0 + W);
                T* base = dst + ob.o_off[o];
                const int64_t* ibase = idx + ib.o_off[o];
                const T* sbase = src + sb.o_off[o];
                if (reset)
                  for (int64_t k = 0; k < K; ++k)
                    for (int64_t i = i0; i < i1; ++i)
                      base[wrap(ibase[k * ib.k_stride + ib.i_off[i]], S) * sd + ob.i_off[i]] = static_cast<T>(ident);
                for (int64_t k = 0; k < K; ++k) {
                  const int64_t* ik = ibase + k * ib.k_stride;
                  const T* sk = sbase + k * sb.k_stride;
                  if (rows) {
                    T* drow = base + wrap(ik[0], S) * sd;
                    for (int64_t i = i0; i < i1; ++i) drow[i] = static_cast<T>(M::combine(R, C(drow[i]), C(sk[i])));
                  } else {
                    for (int64_t i = i0; i < i1; ++i) {
                      T& d = base[wrap(ik[ib.i_off[i]], S) * sd + ob.i_off[i]];
                      d = static_cast<T>(M::combine(R, C(d), C(sk[sb.i_off[i]])));
                    }
                  }
                }
              }
            });
      };
      switch (red) {
        case Reduce::Assign:
          run(std::integral_constant<Reduce, Reduce::Assign>{});
          break;
        case Reduce::Sum:
          run(std::integral_constant<Reduce, Reduce::Sum>{});
          break;
        case Reduce::Prod:
          run(std::integral_constant<Reduce, Reduce::Prod>{});
          break;
        case Reduce::Amax:
          run(std::integral_constant<Reduce, Reduce::Amax>{});
          break;
        default:
          run(std::integral_constant<Reduce, Reduce::Amin>{});
          break;
      }
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, K));
    parallel_for(0, O * I, grain, [&](int64_t b, int64_t e) {
      // Mean keeps per-element counts for the touched elements of the current (o, i) column.
      std::vector<int64_t> count;
      if (red == Reduce::Mean) count.assign(static_cast<size_t>(S), 0);
      for (int64_t col = b; col < e; ++col) {
        const int64_t o = col / I, i = col % I;
        T* base = dst + ob.o_off[o] + ob.i_off[i];
        const int64_t* ic = idx + ib.o_off[o] + ib.i_off[i];
        const T* sc = src + sb.o_off[o] + sb.i_off[i];
        const int64_t ik = ib.k_stride, sk = sb.k_stride;
        if (reset)
          for (int64_t k = 0; k < K; ++k) base[wrap(ic[k * ik], S) * sd] = static_cast<T>(ident);
        if (red == Reduce::Mean)
          for (int64_t k = 0; k < K; ++k) count[static_cast<size_t>(wrap(ic[k * ik], S))] = include_self ? 1 : 0;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t t = wrap(ic[k * ik], S);
          T& d = base[t * sd];
          d = static_cast<T>(M::combine(red, C(d), C(sc[k * sk])));
          if (red == Reduce::Mean) ++count[static_cast<size_t>(t)];
        }
        if (red == Reduce::Mean) {
          for (int64_t k = 0; k < K; ++k) {
            const int64_t t = wrap(ic[k * ik], S);
            int64_t& cnt = count[static_cast<size_t>(t)];
            if (cnt > 0) base[t * sd] = static_cast<T>(M::divide(C(base[t * sd]), cnt));
            cnt = 0;  // divided once
          }
        }
      }
    });
  });
}

// nonzero: self contiguous; out [n, ndim] int64 with n = the number of nonzero elements (the
// core counted them). Coordinates in row-major order: chunks count their nonzeros in parallel,
// then write from their prefix offsets.
void nonzero_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const int nd = self.ndim;
  const int64_t total = view_numel(self);
  const int64_t rows = out.sizes[0];
  int64_t* dst = static_cast<int64_t*>(out.data);
  dispatch_all(self.dtype, "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* x = static_cast<const T*>(self.data);
    constexpr int64_t kChunk = 1 << 16;
    const int64_t nchunks = (total + kChunk - 1) / kChunk;
    std::vector<int64_t> start(static_cast<size_t>(nchunks) + 1, 0);
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        int64_t n = 0;
        for (int64_t i = ch * kChunk, end = std::min(total, i + kChunk); i < end; ++i) n += C(x[i]) != C(0);
        start[static_cast<size_t>(ch) + 1] = n;
      }
    });
    for (int64_t ch = 0; ch < nchunks; ++ch) start[ch + 1] += start[ch];
    if (start[nchunks] != rows)
      fail(TSR_INTERNAL, "nonzero: found ", start[nchunks], " nonzero elements, counted ", rows);
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        int64_t coord[TSR_MAX_DIMS] = {};
        for (int64_t rem = ch * kChunk, d = nd - 1; d >= 0; --d) {
          coord[d] = rem % self.sizes[d];
          rem /= self.sizes[d];
        }
        int64_t w = start[ch];
        for (int64_t i = ch * kChunk, end = std::min(total, i + kChunk); i < end; ++i) {
          if (C(x[i]) != C(0)) {
            for (int d = 0; d < nd; ++d) dst[w * nd + d] = coord[d];
            ++w;
          }
          for (int d = nd - 1; d >= 0; --d) {
            if (++coord[d] < self.sizes[d]) break;
            coord[d] = 0;
          }
        }
      }
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(index) {
  r.kernel("index_select", "cpu::index_select", device_type, kMovableMask, TSR_KERNEL(index_select_kernel));
  r.kernel("gather", "cpu::gather", device_type, kMovableMask, TSR_KERNEL(gather_kernel));
  r.kernel("scatter_reduce", "cpu::scatter_reduce", device_type, kAllMask, TSR_KERNEL(scatter_reduce_kernel));
  r.kernel("nonzero", "cpu::nonzero", device_type, kAllMask, TSR_KERNEL(nonzero_kernel));
}

}  // namespace tsr::cpu
