// Internal kernel ops (_nn_*, _sdpa_math) are reachable through op_find with arguments no public
// op validated: each refuses what its kernel cannot take (issue 18, item 5). The op fuzzer
// (tests/fuzz) covers them with generated arguments; these are the cases found first.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

void expect_refused(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::vector<int64_t> v(std::initializer_list<int64_t> l) { return l; }

}  // namespace

TEST(InternalOps, Im2colAndCol2imCheckRanksListsAndGeometry) {
  Tensor x = tsr::randn({1, 2, 5, 5});
  expect_refused([&] { tsr::call("_nn_im2col", {x, v({3}), v({1, 1}), v({0, 0}), v({1, 1}), v({3, 3})}); },
                 "'kernel_size' must hold 2 values");
  expect_refused([&] { tsr::call("_nn_im2col", {tsr::randn({5, 5}), v({3, 3}), v({1, 1}), v({0, 0}), v({1, 1}), v({3, 3})}); },
                 "must be 4-D");
  expect_refused(
      [&] { tsr::call("_nn_im2col", {x, v({3, 3}), v({1, 1}), v({0, 0}), v({0, 1}), v({3, 3})}); }, "'stride'");
  expect_refused([&] {
    tsr::call("_nn_im2col", {x, v({int64_t{1} << 40, 3}), v({1, 1}), v({0, 0}), v({1, 1}), v({3, 3})});
  }, "outside");
  Tensor cols = tsr::call("_nn_im2col", {x, v({3, 3}), v({1, 1}), v({0, 0}), v({1, 1}), v({3, 3})});
  EXPECT_EQ(cols.sizes(), v({1, 18, 9}));
  expect_refused([&] { tsr::call("_nn_col2im", {cols, v({5, 5}), v({3, 3}), v({1, 1}), v({0, 0}), v({1, 1}), v({4, 4})}); },
                 "do not match");
  EXPECT_EQ(tsr::call("_nn_col2im", {cols, v({5, 5}), v({3, 3}), v({1, 1}), v({0, 0}), v({1, 1}), v({3, 3})}).sizes(),
            v({1, 2, 5, 5}));
}

TEST(InternalOps, ConvolutionKernelsCheckChannelsGroupsAndDtypes) {
  Tensor x = tsr::randn({1, 4, 6, 6}), w = tsr::randn({6, 2, 3, 3});
  auto conv = [&](const Tensor& xx, const Tensor& ww, int64_t groups) {
    tsr::call("_nn_conv2d", {xx, ww, v({1, 1}), v({0, 0}), v({1, 1}), groups});
  };
  expect_refused([&] { conv(x, w, 3); }, "does not fit 4 input channels in 3 groups");
  expect_refused([&] { conv(x, w, 0); }, "groups must be positive");
  expect_refused([&] { conv(x, w.to(TSR_F64), 2); }, "must be float32 like the input");
  expect_refused([&] { conv(tsr::randn({1, 4, 2, 2}), w, 2); }, "smaller than the kernel");
  expect_refused([&] {
    tsr::call("_nn_conv2d_backward_input", {tsr::randn({1, 5, 4, 4}), w, v({6, 6}), v({1, 1}), v({0, 0}), v({1, 1}),
                                            int64_t{2}});
  }, "does not match weight");
}

TEST(InternalOps, PoolingEmbeddingAndLinearKernelsCheckTheirOperands) {
  Tensor g = tsr::randn({1, 1, 2, 2});
  expect_refused([&] { tsr::call("_nn_max_pool2d_backward", {g, tsr::zeros({1, 1, 2, 2}), v({4, 4})}); },
                 "int64 index tensor");
  expect_refused([&] { tsr::call("_nn_max_pool2d_backward", {g, tsr::zeros({1, 1, 3, 2}, TSR_I64), v({4, 4})}); },
                 "do not match grad");
  expect_refused([&] { tsr::call("_nn_embedding", {tsr::randn({4, 3}), tsr::zeros({2}, TSR_I32)}); },
                 "int64 index tensor");
  expect_refused([&] { tsr::call("_nn_embedding", {tsr::randn({4}), tsr::zeros({2}, TSR_I64)}); }, "must be 2-D");
  expect_refused([&] {
    tsr::call("_nn_embedding_backward", {tsr::randn({3, 2}), tsr::zeros({2}, TSR_I64), int64_t{4}, int64_t{-1}});
  }, "do not match grad");
  expect_refused([&] { tsr::call("_nn_linear", {tsr::randn({2, 3}), tsr::randn({4, 5}), tsr::randn({4})}); },
                 "are not [M, K], [N, K] and [N]");
}

TEST(InternalOps, FusedNormAndCrossEntropyKernelsCheckShapesAndTargets) {
  Tensor x = tsr::randn({4, 3});
  expect_refused([&] { tsr::call("_nn_layer_norm", {x, tsr::none, tsr::none, int64_t{5}, 1e-5, false}); },
                 "does not divide");
  expect_refused([&] { tsr::call("_nn_layer_norm", {x, tsr::randn({2}), tsr::none, int64_t{3}, 1e-5, false}); },
                 "must have 3 elements");
  expect_refused([&] {
    tsr::call_multi(tsr::Op("_nn_layer_norm_backward"), {x, tsr::none, tsr::randn({4, 2}), int64_t{3}, 1e-5, false});
  }, "does not match input");
  Tensor far = tsr::from_vector(std::vector<int64_t>{0, 1000000, 2, 1}, {4});
  expect_refused([&] { tsr::call_multi(tsr::Op("_nn_cross_entropy_rows"), {x, far, tsr::none, int64_t{-100}, 0.0}); },
                 "out of bounds");
  expect_refused([&] {
    tsr::call("_nn_cross_entropy_rows_backward", {x, far, tsr::none, tsr::ones({4}), int64_t{-100}, 0.0});
  }, "out of bounds");
  expect_refused([&] {
    tsr::call("_nn_cross_entropy_rows_backward",
              {x, tsr::zeros({4}, TSR_I32), tsr::none, tsr::ones({4}), int64_t{-100}, 0.0});
  }, "int64 index tensor");
  // In range, ignore_index included, it runs.
  Tensor ok = tsr::from_vector(std::vector<int64_t>{0, -100, 2, 1}, {4});
  EXPECT_EQ(tsr::call("_nn_cross_entropy_rows_backward", {x, ok, tsr::none, tsr::ones({4}), int64_t{-100}, 0.0}).sizes(),
            v({4, 3}));
}

TEST(InternalOps, SdpaMathChecksItsOperands) {
  Tensor q = tsr::randn({2, 3, 4});
  expect_refused([&] { tsr::call_multi(tsr::Op("_sdpa_math"), {q, tsr::randn({5}), q, tsr::none, tsr::none, 1.0}); },
                 "expected query");
  expect_refused([&] {
    tsr::call_multi(tsr::Op("_sdpa_math"), {q, q.to(TSR_F64), q, tsr::none, tsr::none, 1.0});
  }, "expected query");
  EXPECT_EQ(tsr::call_multi(tsr::Op("_sdpa_math"), {q, q, q, tsr::none, tsr::none, 0.5})[0].sizes(), v({2, 3, 4}));
}
