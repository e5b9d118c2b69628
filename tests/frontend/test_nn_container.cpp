// Sequential, ModuleList, ModuleDict: chaining, PyTorch child names, indexing and typed access,
// errors, repr, and a state_dict round trip through a Sequential of mixed layers.
#include <gtest/gtest.h>

#include "op_test.hpp"
#include "tessera/nn.hpp"

namespace {

using tsr::optest::close;
using tsr::optest::randu;
using tsr::optest::throws_with;
using tsr::optest::values;
using ModPtr = std::shared_ptr<tsr::nn::Module>;

std::shared_ptr<tsr::nn::Sequential> mixed() {
  return std::make_shared<tsr::nn::Sequential>(
      std::vector<ModPtr>{std::make_shared<tsr::nn::Linear>(4, 6), std::make_shared<tsr::nn::LayerNorm>(6),
                          std::make_shared<tsr::nn::GELU>(), std::make_shared<tsr::nn::Dropout>(0.1),
                          std::make_shared<tsr::nn::Linear>(6, 2, false)});
}

TEST(NnSequential, ChainsForwardAndNamesChildrenByIndex) {
  tsr::manual_seed(1);
  auto seq = mixed();
  seq->eval();
  EXPECT_EQ(seq->size(), 5u);
  EXPECT_EQ(seq->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "4.weight"}));
  tsr::Tensor x = randu({3, 4}, 2, -1, 1, TSR_F32);
  tsr::Tensor manual = x;
  for (const auto& m : *seq) manual = m->forward(manual);
  tsr::Tensor h = (*seq->at<tsr::nn::Linear>(0))(x);
  h = (*seq->at<tsr::nn::LayerNorm>(1))(h);
  h = tsr::gelu(h);
  h = (*seq->at<tsr::nn::Linear>(-1))(h);
  EXPECT_TRUE(close((*seq)(x), h, 1e-6, 1e-6));
  EXPECT_EQ((*seq)[-1].get(), (*seq)[4].get());
  EXPECT_TRUE(throws_with([&] { (*seq)[5]; }, {"Sequential", "index 5", "5 modules"}));
  EXPECT_TRUE(throws_with([&] { seq->at<tsr::nn::Linear>(2); }, {"Sequential", "GELU"}));
  EXPECT_TRUE(throws_with([&] { seq->push_back(nullptr); }, {"Sequential", "null"}));
  EXPECT_NE(seq->repr().find("(0): Linear(in_features=4, out_features=6, bias=true)"), std::string::npos)
      << seq->repr();
  EXPECT_NE(seq->repr().find("(3): Dropout(p=0.1)"), std::string::npos);

  // Gradients reach every parameter through the chain.
  seq->train();
  tsr::sum((*seq)(x)).backward();
  for (auto& kv : seq->named_parameters()) {
    ASSERT_TRUE(kv.second.grad().defined()) << kv.first;
    double s = 0;
    for (double v : values(kv.second.grad())) s += std::fabs(v);
    EXPECT_GT(s, 0.0) << kv.first;
  }
}

TEST(NnSequential, NamedChildrenAndEmptySequential) {
  tsr::nn::Sequential seq;
  tsr::Tensor x = randu({2}, 3, -1, 1, TSR_F32);
  EXPECT_EQ(values(seq(x)), values(x));  // empty: identity
  seq.push_back("fc", std::make_shared<tsr::nn::Linear>(2, 2));
  seq.push_back(std::make_shared<tsr::nn::ReLU>());
  EXPECT_EQ(seq.state_dict().keys(), (std::vector<std::string>{"fc.weight", "fc.bias"}));
  EXPECT_EQ(seq.named_children()[1].first, "1");
  EXPECT_TRUE(
      throws_with([&] { seq.push_back("fc", std::make_shared<tsr::nn::ReLU>()); }, {"fc", "already registered"}));
}

TEST(NnSequential, StateDictRoundTripOfMixedLayers) {
  tsr::manual_seed(10);
  auto a = mixed();
  tsr::manual_seed(20);
  auto b = mixed();
  a->eval();
  b->eval();
  tsr::Tensor x = randu({5, 4}, 4, -1, 1, TSR_F32);
  EXPECT_NE(values((*a)(x)), values((*b)(x)));
  b->load_state_dict(a->state_dict());
  EXPECT_EQ(values((*a)(x)), values((*b)(x)));
  tsr::StateDict sd = a->state_dict();
  sd.erase("1.bias");
  EXPECT_TRUE(throws_with([&] { b->load_state_dict(sd); }, {"missing keys", "1.bias"}));
}

TEST(NnSequential, VariadicConstructor) {
  tsr::manual_seed(3);
  auto seq =
      std::make_shared<tsr::nn::Sequential>(std::make_shared<tsr::nn::Linear>(3, 4), std::make_shared<tsr::nn::Tanh>(),
                                            std::make_shared<tsr::nn::Linear>(4, 1));
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_EQ(seq->state_dict().keys(), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  tsr::Tensor x = randu({2, 3}, 5, -1, 1, TSR_F32);
  EXPECT_TRUE(close((*seq)(x), (*seq->at<tsr::nn::Linear>(2))(tsr::tanh((*seq->at<tsr::nn::Linear>(0))(x))), 0, 0));
  tsr::nn::ModuleList list(std::make_shared<tsr::nn::ReLU>(), std::make_shared<tsr::nn::GELU>());
  EXPECT_EQ(list[1]->type_name(), "GELU");
}

TEST(NnModuleList, HoldsModulesWithoutForward) {
  tsr::nn::ModuleList list(std::vector<ModPtr>{std::make_shared<tsr::nn::Linear>(3, 3)});
  list.push_back(std::make_shared<tsr::nn::Linear>(3, 1));
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.state_dict().keys(), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  EXPECT_EQ(list.at<tsr::nn::Linear>(1)->out_features, 1);
  EXPECT_TRUE(throws_with([&] { list(tsr::zeros({3})); }, {"ModuleList", "no forward"}));
  list.eval();
  EXPECT_FALSE(list[0]->is_training());
}

TEST(NnModuleDict, KeepsInsertionOrderAndNamesUnknownKeys) {
  tsr::nn::ModuleDict d;
  d.insert("proj", std::make_shared<tsr::nn::Linear>(2, 3));
  d.insert("act", std::make_shared<tsr::nn::ReLU>());
  d.insert("norm", std::make_shared<tsr::nn::LayerNorm>(3));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"proj", "act", "norm"}));
  EXPECT_TRUE(d.contains("act"));
  EXPECT_FALSE(d.contains("fc"));
  EXPECT_EQ(d.at<tsr::nn::Linear>("proj")->in_features, 2);
  EXPECT_EQ(d.state_dict().keys(), (std::vector<std::string>{"proj.weight", "proj.bias", "norm.weight", "norm.bias"}));
  EXPECT_TRUE(throws_with([&] { d["fc"]; }, {"ModuleDict", "'fc'", "proj, act, norm"}));
  EXPECT_TRUE(throws_with([&] { d.insert("a.b", std::make_shared<tsr::nn::ReLU>()); }, {"a.b", "not a valid"}));
  EXPECT_TRUE(throws_with([&] { d.at<tsr::nn::Linear>("act"); }, {"ModuleDict", "act"}));
}

}  // namespace
