// Tessera SDK: host wrappers of the shape op family (included by tessera/tessera.hpp).
// split/chunk/unbind/tensor_split return lists of views (narrow/select), so they are SDK
// functions rather than ops: their gradients come from the core's view nodes.
#pragma once

#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

inline Tensor cat(const std::vector<Tensor>& ts, int64_t dim = 0) {
  static const Op op("cat");
  return call(op, {ts, dim});
}
inline Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0) {
  static const Op op("stack");
  return call(op, {ts, dim});
}
inline Tensor hstack(const std::vector<Tensor>& ts) {
  static const Op op("hstack");
  return call(op, {ts});
}
inline Tensor vstack(const std::vector<Tensor>& ts) {
  static const Op op("vstack");
  return call(op, {ts});
}
inline Tensor dstack(const std::vector<Tensor>& ts) {
  static const Op op("dstack");
  return call(op, {ts});
}
inline Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1) {
  static const Op op("flatten");
  return call(op, {t, start_dim, end_dim});
}
inline Tensor unflatten(const Tensor& t, int64_t dim, std::vector<int64_t> sizes) {
  static const Op op("unflatten");
  return call(op, {t, dim, std::move(sizes)});
}
inline Tensor movedim(const Tensor& t, std::vector<int64_t> source, std::vector<int64_t> destination) {
  static const Op op("movedim");
  return call(op, {t, std::move(source), std::move(destination)});
}
inline Tensor movedim(const Tensor& t, int64_t source, int64_t destination) {
  return movedim(t, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}
inline Tensor swapaxes(const Tensor& t, int64_t axis0, int64_t axis1) {
  static const Op op("swapaxes");
  return call(op, {t, axis0, axis1});
}
inline Tensor moveaxis(const Tensor& t, std::vector<int64_t> source, std::vector<int64_t> destination) {
  static const Op op("moveaxis");
  return call(op, {t, std::move(source), std::move(destination)});
}
inline Tensor swapdims(const Tensor& t, int64_t dim0, int64_t dim1) {
  static const Op op("swapdims");
  return call(op, {t, dim0, dim1});
}
inline Tensor flip(const Tensor& t, std::vector<int64_t> dims) {
  static const Op op("flip");
  return call(op, {t, std::move(dims)});
}
inline Tensor fliplr(const Tensor& t) {
  static const Op op("fliplr");
  return call(op, {t});
}
inline Tensor flipud(const Tensor& t) {
  static const Op op("flipud");
  return call(op, {t});
}
// dims empty: roll the flattened tensor (shifts must then hold one value).
inline Tensor roll(const Tensor& t, std::vector<int64_t> shifts, std::vector<int64_t> dims = {}) {
  static const Op op("roll");
  return call(op, {t, std::move(shifts), std::move(dims)});
}
inline Tensor repeat(const Tensor& t, std::vector<int64_t> repeats) {
  static const Op op("repeat");
  return call(op, {t, std::move(repeats)});
}
inline Tensor tile(const Tensor& t, std::vector<int64_t> dims) {
  static const Op op("tile");
  return call(op, {t, std::move(dims)});
}
inline Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                                std::optional<int64_t> output_size = std::nullopt) {
  static const Op op("repeat_interleave_int");
  return call(op, {t, repeats, dim, output_size});
}
inline Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                                std::optional<int64_t> output_size = std::nullopt) {
  static const Op op("repeat_interleave");
  return call(op, {t, repeats, dim, output_size});
}
// torch.repeat_interleave(repeats): index i repeated repeats[i] times.
inline Tensor repeat_interleave(const Tensor& repeats) {
  static const Op op("repeat_interleave_index");
  return call(op, {repeats, none});
}
inline Tensor tril(const Tensor& t, int64_t diagonal = 0) {
  static const Op op("tril");
  return call(op, {t, diagonal});
}
inline Tensor triu(const Tensor& t, int64_t diagonal = 0) {
  static const Op op("triu");
  return call(op, {t, diagonal});
}
inline Tensor& tril_(Tensor& t, int64_t diagonal = 0) {
  static const Op op("tril_");
  call(op, {t, diagonal});
  return t;
}
inline Tensor& triu_(Tensor& t, int64_t diagonal = 0) {
  static const Op op("triu_");
  call(op, {t, diagonal});
  return t;
}
inline Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) {
  static const Op op("diagonal");
  return call(op, {t, offset, dim1, dim2});
}
inline Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) {
  static const Op op("diag_embed");
  return call(op, {t, offset, dim1, dim2});
}
inline Tensor diag(const Tensor& t, int64_t diagonal = 0) {
  static const Op op("diag");
  return call(op, {t, diagonal});
}
inline Tensor constant_pad_nd(const Tensor& t, std::vector<int64_t> pad, double value = 0) {
  static const Op op("constant_pad_nd");
  return call(op, {t, std::move(pad), detail::scalar_arg(value)});
}
// F.pad: pad lists (left, right) pairs starting from the LAST dim; negative pads crop.
inline Tensor pad(const Tensor& t, std::vector<int64_t> pad, const std::string& mode = "constant",
                  std::optional<double> value = std::nullopt) {
  static const Op op("pad");
  return call(op, {t, std::move(pad), mode, value});
}
inline Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  static const Op op("narrow_copy");
  return call(op, {t, dim, start, length});
}

namespace detail {
inline int64_t shape_wrap_dim(const Tensor& t, int64_t dim, const char* op) {
  int64_t n = t.dim();
  if (n == 0)
    throw Error(TSR_INVALID_ARGUMENT, std::string(op) + ": expected a tensor with at least 1 dim, got a 0-dim tensor");
  if (dim < -n || dim >= n)
    throw Error(TSR_INVALID_ARGUMENT, std::string(op) + ": dimension out of range (expected to be in range of [" +
                                          std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " +
                                          std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}
}  // namespace detail

// Views of consecutive pieces of `split_size` along dim (the last may be smaller).
inline std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0) {
  int64_t d = detail::shape_wrap_dim(t, dim, "split");
  int64_t n = t.size(d);
  if (split_size < 0 || (split_size == 0 && n != 0))
    throw Error(TSR_INVALID_ARGUMENT, "split: split_size can only be 0 if dimension size is 0, got split_size " +
                                          std::to_string(split_size) + " for dimension " + std::to_string(d) +
                                          " of size " + std::to_string(n));
  std::vector<Tensor> out;
  if (n == 0) {
    out.push_back(t.narrow(d, 0, 0));
    return out;
  }
  for (int64_t s = 0; s < n; s += split_size) out.push_back(t.narrow(d, s, std::min(split_size, n - s)));
  return out;
}
// Views with the given sizes along dim (they must sum to the dim's size). PyTorch's
// split_with_sizes; note that split(t, {3}) picks the int overload, use split_with_sizes then.
inline std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim = 0) {
  int64_t d = detail::shape_wrap_dim(t, dim, "split_with_sizes");
  int64_t n = t.size(d), total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw Error(TSR_INVALID_ARGUMENT, "split_with_sizes: split sizes must be non-negative, got " + std::to_string(s));
    total += s;
  }
  if (total != n)
    throw Error(TSR_INVALID_ARGUMENT, "split_with_sizes: expects split_sizes to sum exactly to " + std::to_string(n) +
                                          " (input tensor's size at dimension " + std::to_string(d) +
                                          "), but got sum " + std::to_string(total));
  std::vector<Tensor> out;
  int64_t s0 = 0;
  for (int64_t s : sizes) {
    out.push_back(t.narrow(d, s0, s));
    s0 += s;
  }
  return out;
}
inline std::vector<Tensor> split(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim = 0) {
  return split_with_sizes(t, sizes, dim);
}
// `chunks` pieces of ceil(n / chunks) (fewer when that covers the dim), as torch.chunk.
inline std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0) {
  if (chunks <= 0)
    throw Error(TSR_INVALID_ARGUMENT, "chunk: number of chunks must be greater than 0, got " + std::to_string(chunks));
  int64_t d = detail::shape_wrap_dim(t, dim, "chunk");
  int64_t n = t.size(d);
  int64_t size = (n + chunks - 1) / chunks;
  if (size == 0 && n == 0) {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(t.narrow(d, 0, 0));
    return out;
  }
  return split(t, size, d);
}
inline std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0) {
  int64_t d = detail::shape_wrap_dim(t, dim, "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(t.select(d, i));
  return out;
}
// torch.tensor_split with a number of sections: the first n % sections pieces get one more.
inline std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0) {
  if (sections <= 0)
    throw Error(TSR_INVALID_ARGUMENT,
                "tensor_split: number of sections must be larger than 0, got " + std::to_string(sections));
  int64_t d = detail::shape_wrap_dim(t, dim, "tensor_split");
  int64_t n = t.size(d), base = n / sections, extra = n % sections, s0 = 0;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(t.narrow(d, s0, len));
    s0 += len;
  }
  return out;
}
// torch.tensor_split with split indices (clamped to the dim like Python slicing).
inline std::vector<Tensor> tensor_split_indices(const Tensor& t, const std::vector<int64_t>& indices, int64_t dim = 0) {
  int64_t d = detail::shape_wrap_dim(t, dim, "tensor_split");
  int64_t n = t.size(d);
  auto clampi = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t(0)), n); };
  std::vector<Tensor> out;
  int64_t s0 = 0;
  for (int64_t idx : indices) {
    int64_t e = clampi(idx);
    out.push_back(t.narrow(d, std::min(s0, n), std::max<int64_t>(e - s0, 0)));
    s0 = e;
  }
  out.push_back(t.narrow(d, std::min(s0, n), n - std::min(s0, n)));
  return out;
}

}  // namespace tsr
