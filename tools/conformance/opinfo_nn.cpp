// OpInfos of the nn family (softmax/log_softmax backward owner, losses, norms, conv, pooling,
// resampling, embedding, attention). Sample shapes are small and include odd and empty cases.
#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using V = std::vector<int64_t>;

std::vector<tsr_dtype_t> floats() { return {TSR_F32, TSR_F64, TSR_F16, TSR_BF16}; }
std::vector<tsr_dtype_t> f32_f64() { return {TSR_F32, TSR_F64}; }

Sample sample(std::string desc, Tensors in, std::function<Tensors(const Tensors&)> run) {
  Sample s;
  s.desc = std::move(desc);
  s.inputs = std::move(in);
  s.run = std::move(run);
  return s;
}

OpInfo info(std::string name, std::vector<tsr_dtype_t> dts, std::function<std::vector<Sample>(uint64_t)> f,
            double tol = 1.0) {
  OpInfo o;
  o.name = std::move(name);
  o.dtypes = std::move(dts);
  o.samples = std::move(f);
  o.tol_scale = tol;
  return o;
}

OpInfo softmax_info(const char* name) {
  return info(name, floats(), [name](uint64_t seed) {
    std::vector<Sample> v;
    for (auto [shape, dim] :
         std::vector<std::pair<Shape, int64_t>>{{{3, 5}, 1}, {{2, 7, 3}, 1}, {{4}, 0}, {{0, 3}, 1}, {{1, 1}, -1}}) {
      v.push_back(
          sample("softmax " + std::to_string(dim), {random_f64(shape, seed)}, [name, dim = dim](const Tensors& t) {
            return Tensors{tsr::call(name, {t[0], dim, tsr::none})};
          }));
    }
    return v;
  });
}

OpInfo pair_loss(const char* name, bool has_param, double lo = -2, double hi = 2) {
  return info(
      name, floats(),
      [=](uint64_t seed) {
        std::vector<Sample> v;
        for (const char* red : {"none", "mean", "sum"}) {
          v.push_back(sample(std::string("[3, 5] ") + red,
                             {random_f64({3, 5}, seed, lo, hi), random_f64({3, 5}, seed + 1, 0.05, 0.95)},
                             [=](const Tensors& t) {
                               return Tensors{has_param ? tsr::call(name, {t[0], t[1], red, 0.5})
                                                        : tsr::call(name, {t[0], t[1], red})};
                             }));
        }
        return v;
      },
      4.0);
}

}  // namespace

TSR_OPINFOS(nn) {
  v.push_back(softmax_info("softmax"));
  v.push_back(softmax_info("log_softmax"));
  v.push_back(pair_loss("mse_loss", false));
  v.push_back(pair_loss("l1_loss", false));
  v.push_back(pair_loss("smooth_l1_loss", true));
  v.push_back(pair_loss("huber_loss", true));
  v.push_back(pair_loss("kl_div", false, -3, 0));
  v.push_back(info(
      "binary_cross_entropy", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{sample("[4, 3] weighted",
                                          {random_f64({4, 3}, seed, 0.05, 0.95), random_f64({4, 3}, seed + 1, 0, 1),
                                           random_f64({3}, seed + 2, 0.5, 1.5)},
                                          [](const Tensors& t) {
                                            return Tensors{tsr::call("binary_cross_entropy", {t[0], t[1], t[2]})};
                                          })};
      },
      4.0));
  v.push_back(info(
      "binary_cross_entropy_with_logits", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[4, 3] pos_weight",
                   {random_f64({4, 3}, seed), random_f64({4, 3}, seed + 1, 0, 1), random_f64({3}, seed + 2, 0.5, 1.5),
                    random_f64({3}, seed + 3, 0.5, 2)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("binary_cross_entropy_with_logits", {t[0], t[1], t[2], t[3], "sum"})};
                   })};
      },
      4.0));
  for (const char* name : {"nll_loss", "cross_entropy"}) {
    v.push_back(info(name, f32_f64(), [name](uint64_t seed) {
      std::vector<Sample> s;
      s.push_back(
          sample("[5, 4] weighted ignore",
                 {random_f64({5, 4}, seed), random_index({5}, seed + 1, 0, 4), random_f64({4}, seed + 2, 0.5, 2)},
                 [name](const Tensors& t) {
                   return Tensors{tsr::call(name, {t[0], t[1], t[2], "mean", 2})};
                 }));
      // Class weights get no gradient (as in PyTorch): only the input is gradchecked.
      s.back().grad_inputs = {0};
      s.back().use_default_grad_inputs = false;
      s.push_back(sample("[2, 3, 5] none", {random_f64({2, 3, 5}, seed), random_index({2, 5}, seed + 1, 0, 3)},
                         [name](const Tensors& t) {
                           return Tensors{tsr::call(name, {t[0], t[1], tsr::none, "none"})};
                         }));
      return s;
    }));
  }
  v.push_back(info(
      "layer_norm", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[3, 7] affine", {random_f64({3, 7}, seed), random_f64({7}, seed + 1), random_f64({7}, seed + 2)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("layer_norm", {t[0], V{7}, t[1], t[2]})};
                   }),
            sample("[2, 3, 4] last two", {random_f64({2, 3, 4}, seed)}, [](const Tensors& t) {
              return Tensors{tsr::call("layer_norm", {t[0], V{3, 4}})};
            })};
      },
      4.0));
  v.push_back(info(
      "rms_norm", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[3, 5]", {random_f64({3, 5}, seed), random_f64({5}, seed + 1)}, [](const Tensors& t) {
              return Tensors{tsr::call("rms_norm", {t[0], V{5}, t[1], 1e-6})};
            })};
      },
      4.0));
  v.push_back(info(
      "group_norm", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[2, 6, 5] G=3", {random_f64({2, 6, 5}, seed), random_f64({6}, seed + 1), random_f64({6}, seed + 2)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("group_norm", {t[0], 3, t[1], t[2]})};
                   })};
      },
      4.0));
  v.push_back(info(
      "batch_norm", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{sample(
            "[4, 3, 5] training", {random_f64({4, 3, 5}, seed), random_f64({3}, seed + 1), random_f64({3}, seed + 2)},
            [](const Tensors& t) {
              return Tensors{tsr::call("batch_norm", {t[0], t[1], t[2], tsr::none, tsr::none, true})};
            })};
      },
      4.0));
  v.push_back(info(
      "conv2d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[2, 3, 7, 6] * [4, 3, 3, 3] pad 1",
                   {random_f64({2, 3, 7, 6}, seed), random_f64({4, 3, 3, 3}, seed + 1), random_f64({4}, seed + 2)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("conv2d", {t[0], t[1], t[2], 1, 1})};
                   }),
            sample("groups 2 stride 2 dilation 2", {random_f64({1, 4, 9, 8}, seed), random_f64({6, 2, 3, 2}, seed + 1)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("conv2d", {t[0], t[1], tsr::none, V{2, 1}, V{0, 1}, V{1, 2}, 2})};
                   })};
      },
      8.0));
  v.push_back(info(
      "conv1d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{sample("[2, 4, 9] * [6, 2, 3] groups 2",
                                          {random_f64({2, 4, 9}, seed), random_f64({6, 2, 3}, seed + 1)},
                                          [](const Tensors& t) {
                                            return Tensors{tsr::call("conv1d", {t[0], t[1], tsr::none, 2, 1, 1, 2})};
                                          })};
      },
      8.0));
  v.push_back(info(
      "conv_transpose2d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[1, 4, 3, 4] * [4, 3, 2, 3]",
                   {random_f64({1, 4, 3, 4}, seed), random_f64({4, 3, 2, 3}, seed + 1), random_f64({6}, seed + 2)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("conv_transpose2d", {t[0], t[1], t[2], V{2, 1}, V{1, 0}, V{1, 0}, 2})};
                   })};
      },
      8.0));
  v.push_back(info("max_pool2d", floats(), [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[2, 3, 7, 6] k3 s2 p1 ceil", {random_f64({2, 3, 7, 6}, seed)}, [](const Tensors& t) {
          return Tensors{tsr::call("max_pool2d", {t[0], 3, 2, 1, 1, true})};
        })};
  }));
  v.push_back(info(
      "avg_pool2d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[1, 2, 5, 6] k3 s2 p1 exclude pad", {random_f64({1, 2, 5, 6}, seed)}, [](const Tensors& t) {
              return Tensors{tsr::call("avg_pool2d", {t[0], 3, 2, 1, true, false})};
            })};
      },
      2.0));
  v.push_back(info(
      "adaptive_avg_pool2d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[1, 2, 5, 7] -> [3, 2]", {random_f64({1, 2, 5, 7}, seed)}, [](const Tensors& t) {
              return Tensors{tsr::call("adaptive_avg_pool2d", {t[0], V{3, 2}})};
            })};
      },
      2.0));
  v.push_back(info(
      "upsample_bilinear2d", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample("[1, 2, 3, 4] -> [5, 7]", {random_f64({1, 2, 3, 4}, seed)}, [](const Tensors& t) {
              return Tensors{tsr::call("upsample_bilinear2d", {t[0], V{5, 7}, false})};
            })};
      },
      2.0));
  v.push_back(info("upsample_nearest2d", floats(), [](uint64_t seed) {
    return std::vector<Sample>{sample("[1, 2, 3, 4] -> [6, 3]", {random_f64({1, 2, 3, 4}, seed)}, [](const Tensors& t) {
      return Tensors{tsr::call("upsample_nearest2d", {t[0], V{6, 3}})};
    })};
  }));
  v.push_back(info("lstm_cell_gates", floats(), [](uint64_t seed) {
    return std::vector<Sample>{
        sample("[3, 4*5] gates, [3, 5] cell", {random_f64({3, 20}, seed, -3, 3), random_f64({3, 5}, seed + 1)},
               [](const Tensors& t) { return tsr::call_multi(tsr::Op("lstm_cell_gates"), {t[0], t[1]}); }),
        sample("[1, 4*1]", {random_f64({1, 4}, seed), random_f64({1, 1}, seed + 1)},
               [](const Tensors& t) { return tsr::call_multi(tsr::Op("lstm_cell_gates"), {t[0], t[1]}); })};
  }));
  v.push_back(info("gru_cell_gates", floats(), [](uint64_t seed) {
    return std::vector<Sample>{sample("[3, 3*4] gates, [3, 4] state",
                                      {random_f64({3, 12}, seed, -3, 3), random_f64({3, 12}, seed + 1, -3, 3),
                                       random_f64({3, 4}, seed + 2)},
                                      [](const Tensors& t) {
                                        return Tensors{tsr::call("gru_cell_gates", {t[0], t[1], t[2]})};
                                      })};
  }));
  v.push_back(info("embedding", floats(), [](uint64_t seed) {
    return std::vector<Sample>{sample("[6, 4] rows by [2, 3]",
                                      {random_f64({6, 4}, seed), random_index({2, 3}, seed + 1, 0, 6)},
                                      [](const Tensors& t) {
                                        return Tensors{tsr::call("embedding", {t[0], t[1], int64_t{1}})};
                                      })};
  }));
  v.push_back(info(
      "scaled_dot_product_attention", floats(),
      [](uint64_t seed) {
        return std::vector<Sample>{
            sample(
                "[2, 3, 5] causal",
                {random_f64({2, 3, 5}, seed), random_f64({2, 4, 5}, seed + 1), random_f64({2, 4, 2}, seed + 2)},
                [](const Tensors& t) {
                  return Tensors{tsr::call("scaled_dot_product_attention", {t[0], t[1], t[2], tsr::none, 0.0, true})};
                }),
            sample("float mask",
                   {random_f64({2, 3, 5}, seed), random_f64({2, 4, 5}, seed + 1), random_f64({2, 4, 2}, seed + 2),
                    random_f64({3, 4}, seed + 3)},
                   [](const Tensors& t) {
                     return Tensors{tsr::call("scaled_dot_product_attention", {t[0], t[1], t[2], t[3]})};
                   })};
      },
      4.0));
  OpInfo oh = info("one_hot", {TSR_I64}, [](uint64_t seed) {
    return std::vector<Sample>{sample("[5] classes 4", {random_index({5}, seed, 0, 4)}, [](const Tensors& t) {
      return Tensors{tsr::call("one_hot", {t[0], 4})};
    })};
  });
  oh.differentiable = false;
  v.push_back(std::move(oh));
  OpInfo dr = info("dropout", floats(), [](uint64_t seed) {
    return std::vector<Sample>{sample("[8, 9] p 0.3", {random_f64({8, 9}, seed)}, [](const Tensors& t) {
      return Tensors{tsr::call("dropout", {t[0], 0.3, true})};
    })};
  });
  dr.deterministic = false;
  dr.differentiable = false;
  v.push_back(std::move(dr));
}

}  // namespace tsr::conformance
