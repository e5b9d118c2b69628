// OpInfos of the index family: odd, empty and broadcast shapes, duplicate and negative indices
// (unique indices where a duplicate would make the op non-differentiable: scatter, index_copy).
// Fill values are integral: integer dtypes compare exactly against the float64 reference.
#include <functional>
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using Run = std::function<Tensors(const Tensors&)>;

const std::vector<tsr_dtype_t>& floats() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  return d;
}
// Data movement ops also run on integers.
const std::vector<tsr_dtype_t>& moves() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I32, TSR_I64};
  return d;
}

tsr::Tensor idx(std::vector<int64_t> v, Shape s) { return tsr::from_vector(v, s, tsr::Device::cpu()); }

Sample sample(std::string desc, Tensors inputs, Run run) {
  Sample s;
  s.desc = std::move(desc);
  s.inputs = std::move(inputs);
  s.run = std::move(run);
  return s;
}

OpInfo info(const char* name, std::vector<tsr_dtype_t> dtypes, bool differentiable,
            std::function<std::vector<Sample>(uint64_t)> samples, double tol_scale = 1) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol_scale;
  o.samples = std::move(samples);
  return o;
}

// Per row r of a [rows, 3] index: columns r, r+2, r+4 (mod 5): unique within the row.
tsr::Tensor unique_rows(int64_t rows) {
  std::vector<int64_t> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < 3; ++k) v.push_back((r + 2 * k) % 5);
  return idx(v, {rows, 3});
}

}  // namespace

TSR_OPINFOS(index) {
  v.push_back(info("index_select", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[5, 7] dim 1, duplicates and negatives", {random_f64({5, 7}, seed), idx({6, 0, -1, 6}, {4})},
               [](const Tensors& in) { return Tensors{tsr::index_select(in[0], 1, in[1])}; }),
        sample("[3, 2, 4] dim 0", {random_f64({3, 2, 4}, seed + 1), idx({2, 2, 0}, {3})},
               [](const Tensors& in) { return Tensors{tsr::index_select(in[0], 0, in[1])}; }),
        sample("[0, 3] dim 1", {random_f64({0, 3}, seed + 2), idx({2, 0}, {2})},
               [](const Tensors& in) { return Tensors{tsr::index_select(in[0], 1, in[1])}; }),
        sample("[4] empty index", {random_f64({4}, seed + 3), idx({}, {0})},
               [](const Tensors& in) { return Tensors{tsr::index_select(in[0], 0, in[1])}; }),
    };
  }));
  v.push_back(info("gather", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[4, 5] dim 1, index [3, 7]", {random_f64({4, 5}, seed), random_index({3, 7}, seed + 1, -5, 5)},
               [](const Tensors& in) { return Tensors{tsr::gather(in[0], 1, in[1])}; }),
        sample("[2, 3, 5] dim 0", {random_f64({2, 3, 5}, seed + 2), random_index({4, 3, 2}, seed + 3, 0, 2)},
               [](const Tensors& in) { return Tensors{tsr::gather(in[0], 0, in[1])}; }),
        sample("[3, 4] empty index", {random_f64({3, 4}, seed + 4), idx({}, {3, 0})},
               [](const Tensors& in) { return Tensors{tsr::gather(in[0], 1, in[1])}; }),
    };
  }));
  v.push_back(info("scatter", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[4, 5] dim 1, src [4, 4]", {random_f64({4, 5}, seed), unique_rows(3), random_f64({4, 4}, seed + 1)},
               [](const Tensors& in) { return Tensors{tsr::scatter(in[0], 1, in[1], in[2])}; }),
        sample("[5] empty index", {random_f64({5}, seed + 2), idx({}, {0}), random_f64({0}, seed + 3)},
               [](const Tensors& in) { return Tensors{tsr::scatter(in[0], 0, in[1], in[2])}; }),
    };
  }));
  v.push_back(info("scatter_value", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{sample("[4, 5] dim 1", {random_f64({4, 5}, seed), unique_rows(4)},
                                      [](const Tensors& in) { return Tensors{tsr::scatter(in[0], 1, in[1], 2.0)}; })};
  }));
  v.push_back(info(
      "scatter_add", moves(), true,
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[4, 5] dim 1, duplicates",
                   {random_f64({4, 5}, seed), random_index({3, 6}, seed + 1, 0, 5), random_f64({3, 7}, seed + 2)},
                   [](const Tensors& in) { return Tensors{tsr::scatter_add(in[0], 1, in[1], in[2])}; }),
            sample("[3, 2] dim 0, duplicates",
                   {random_f64({3, 2}, seed + 3), random_index({7, 2}, seed + 4, -3, 3), random_f64({7, 2}, seed + 5)},
                   [](const Tensors& in) { return Tensors{tsr::scatter_add(in[0], 0, in[1], in[2])}; }),
        };
      },
      4));
  // prod has no derivative here (see docs/kernels/index.md): covered by the op tests only.
  v.push_back(info(
      "scatter_reduce", floats(), true,
      [](uint64_t seed) {
        std::vector<Sample> out;
        for (const char* red : {"sum", "mean", "amax", "amin"})
          for (bool inc : {true, false})
            out.push_back(
                sample(std::string("[4, 5] dim 1 ") + red + (inc ? "" : " exclude self"),
                       {random_f64({4, 5}, seed), random_index({3, 6}, seed + 1, 0, 5), random_f64({3, 6}, seed + 2)},
                       [red, inc](const Tensors& in) {
                         return Tensors{tsr::scatter_reduce(in[0], 1, in[1], in[2], red, inc)};
                       }));
        return out;
      },
      4));
  v.push_back(info(
      "index_add", floats(), true,
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[5, 3] dim 0, duplicates, alpha 2",
                   {random_f64({5, 3}, seed), idx({4, 0, 4, -1}, {4}), random_f64({4, 3}, seed + 1)},
                   [](const Tensors& in) { return Tensors{tsr::index_add(in[0], 0, in[1], in[2], 2.0)}; }),
            sample("[2, 0] dim 0", {random_f64({2, 0}, seed + 2), idx({1}, {1}), random_f64({1, 0}, seed + 3)},
                   [](const Tensors& in) { return Tensors{tsr::index_add(in[0], 0, in[1], in[2])}; }),
        };
      },
      4));
  v.push_back(info("index_copy", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] dim 1", {random_f64({3, 5}, seed), idx({4, 1, 0}, {3}), random_f64({3, 3}, seed + 1)},
               [](const Tensors& in) { return Tensors{tsr::index_copy(in[0], 1, in[1], in[2])}; })};
  }));
  v.push_back(info("index_fill", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] dim 1", {random_f64({3, 5}, seed), idx({4, 1, 4}, {3})},
               [](const Tensors& in) { return Tensors{tsr::index_fill(in[0], 1, in[1], -2.0)}; })};
  }));
  v.push_back(info("masked_fill", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] mask [5]", {random_f64({3, 5}, seed), random_mask({5}, seed + 1)},
               [](const Tensors& in) { return Tensors{tsr::masked_fill(in[0], in[1], -3.0)}; }),
        sample("[0, 2] mask [2]", {random_f64({0, 2}, seed + 2), random_mask({2}, seed + 3)},
               [](const Tensors& in) { return Tensors{tsr::masked_fill(in[0], in[1], -3.0)}; }),
    };
  }));
  v.push_back(info("masked_fill_tensor", floats(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] mask [3, 1], 0-dim value",
               {random_f64({3, 5}, seed), random_mask({3, 1}, seed + 1), random_f64({}, seed + 2)},
               [](const Tensors& in) { return Tensors{tsr::masked_fill(in[0], in[1], in[2])}; })};
  }));
  v.push_back(info("masked_select", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] mask [5]", {random_f64({3, 5}, seed), random_mask({5}, seed + 1)},
               [](const Tensors& in) { return Tensors{tsr::masked_select(in[0], in[1])}; }),
        sample("[7] mask [7]", {random_f64({7}, seed + 2), random_mask({7}, seed + 3)},
               [](const Tensors& in) { return Tensors{tsr::masked_select(in[0], in[1])}; }),
    };
  }));
  v.push_back(info("masked_scatter", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 5] mask [3, 5], source [16]",
               {random_f64({3, 5}, seed), random_mask({3, 5}, seed + 1), random_f64({16}, seed + 2)},
               [](const Tensors& in) { return Tensors{tsr::masked_scatter(in[0], in[1], in[2])}; })};
  }));
  for (const char* name : {"nonzero", "argwhere"}) {
    v.push_back(info(name, moves(), false, [name](uint64_t seed) {
      auto run = [name](const Tensors& in) {
        return Tensors{std::string(name) == "nonzero" ? tsr::nonzero(in[0]) : tsr::argwhere(in[0])};
      };
      return std::vector<Sample>{
          sample("[3, 1, 5] with zeros", {random_index({3, 1, 5}, seed, -1, 2).to(TSR_F64)}, run),
          sample("[0, 4]", {random_f64({0, 4}, seed + 1)}, run),
          sample("[]", {random_f64({}, seed + 2)}, run),
      };
    }));
  }
  v.push_back(info("take", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{sample("[3, 4] index [2, 3]",
                                      {random_f64({3, 4}, seed), idx({0, 11, -1, 5, 5, -12}, {2, 3})},
                                      [](const Tensors& in) { return Tensors{tsr::take(in[0], in[1])}; })};
  }));
  v.push_back(info(
      "put", floats(), true,
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[3, 4] accumulate, duplicates",
                   {random_f64({3, 4}, seed), idx({0, 11, -1, 5, 5}, {5}), random_f64({5}, seed + 1)},
                   [](const Tensors& in) { return Tensors{tsr::put(in[0], in[1], in[2], true)}; })};
      },
      4));
  v.push_back(info("index", moves(), true, [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[4, 5, 3][i [2, 1], j [3]]", {random_f64({4, 5, 3}, seed), idx({1, -1}, {2, 1}), idx({0, 4, 4}, {3})},
               [](const Tensors& in) {
                 return Tensors{tsr::index(in[0], {in[1], in[2]})};
               }),
        sample("[4, 5, 3][:, j]", {random_f64({4, 5, 3}, seed + 1), idx({3, -5}, {2})},
               [](const Tensors& in) { return Tensors{tsr::index(in[0], {in[1]}, 1)}; }),
        sample("[3, 4][mask [3, 4]]", {random_f64({3, 4}, seed + 2), random_mask({3, 4}, seed + 3)},
               [](const Tensors& in) { return Tensors{tsr::index(in[0], {in[1]})}; }),
    };
  }));
  v.push_back(info(
      "index_put", floats(), true,
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[4, 3][i] += v, duplicates",
                   {random_f64({4, 3}, seed), idx({1, 1, -1, 1}, {4}), random_f64({4, 3}, seed + 1)},
                   [](const Tensors& in) { return Tensors{tsr::index_put(in[0], {in[1]}, in[2], true)}; }),
            sample("[4, 3][i, j] = v broadcast",
                   {random_f64({4, 3}, seed + 2), idx({0, 3}, {2}), idx({2, 0}, {2}), random_f64({1}, seed + 3)},
                   [](const Tensors& in) {
                     return Tensors{tsr::index_put(in[0], {in[1], in[2]}, in[3], false)};
                   }),
        };
      },
      4));
}

}  // namespace tsr::conformance
