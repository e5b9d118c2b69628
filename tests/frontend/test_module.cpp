// nn::Module: registration, listings, state_dict round trip and its errors, to(), zero_grad.
#include <gtest/gtest.h>

#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace {

struct Affine : tsr::nn::Module {
  tsr::Tensor weight, bias, count;
  explicit Affine(int64_t n, bool with_bias = true) : Module("Affine") {
    weight = tsr::randn({n});
    register_parameter("weight", weight);
    if (with_bias) bias = tsr::randn({n});
    register_parameter("bias", bias);
    count = tsr::full({}, 3, TSR_I64);
    register_buffer("count", count);
  }
  tsr::Tensor forward(const tsr::Tensor& x) override { return bias.defined() ? x * weight + bias : x * weight; }
};

struct Net : tsr::nn::Module {
  std::shared_ptr<Affine> a, b;
  Net() : Module("Net") {
    a = register_module("a", std::make_shared<Affine>(3));
    b = register_module("b", std::make_shared<Affine>(3, false));
  }
  tsr::Tensor forward(const tsr::Tensor& x) override { return (*b)((*a)(x)); }
};

std::vector<std::string> names(const std::vector<std::pair<std::string, tsr::Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& kv : v) out.push_back(kv.first);
  return out;
}

TEST(Module, ListsParametersBuffersAndModulesInDeclarationOrder) {
  Net net;
  EXPECT_EQ(names(net.named_parameters()), (std::vector<std::string>{"a.weight", "a.bias", "b.weight"}));
  EXPECT_EQ(names(net.named_buffers()), (std::vector<std::string>{"a.count", "b.count"}));
  auto mods = net.named_modules();
  ASSERT_EQ(mods.size(), 3u);
  EXPECT_EQ(mods[0].first, "");
  EXPECT_EQ(mods[1].first, "a");
  EXPECT_EQ(net.num_parameters(), 9);
  for (auto& p : net.parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(net.state_dict().keys(),
            (std::vector<std::string>{"a.weight", "a.bias", "a.count", "b.weight", "b.count"}));
}

TEST(Module, TrainEvalRecurses) {
  Net net;
  net.eval();
  EXPECT_FALSE(net.a->is_training());
  net.train();
  EXPECT_TRUE(net.b->is_training());
}

TEST(Module, StateDictRoundTripCopiesIntoTheSameTensors) {
  tsr::manual_seed(1);
  Net src, dst;
  tsr::Tensor before = dst.a->weight;  // the handle an optimizer would hold
  dst.load_state_dict(src.state_dict());
  EXPECT_EQ(before.get(), dst.a->weight.get());
  EXPECT_EQ(dst.a->weight.to_vector<float>(), src.a->weight.to_vector<float>());
  EXPECT_EQ(dst.b->weight.to_vector<float>(), src.b->weight.to_vector<float>());
}

TEST(Module, LoadStateDictErrorsNameKeysAndShapesAndChangeNothing) {
  Net net;
  auto w0 = net.a->weight.to_vector<float>();
  tsr::StateDict sd = net.state_dict();
  tsr::StateDict bad;
  for (auto& kv : sd) bad.insert(kv.first, kv.first == "b.weight" ? tsr::randn({4}) : tsr::randn(kv.second.sizes()));
  try {
    net.load_state_dict(bad);
    FAIL() << "expected an error";
  } catch (const tsr::Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.weight: checkpoint [4], module [3]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(net.a->weight.to_vector<float>(), w0);  // nothing was copied
  tsr::StateDict missing = sd;
  missing.erase("a.bias");
  missing.insert("c.weight", tsr::randn({3}));
  try {
    net.load_state_dict(missing);
    FAIL() << "expected an error";
  } catch (const tsr::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("missing keys: a.bias"), std::string::npos) << m;
    EXPECT_NE(m.find("unexpected keys: c.weight"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(net.load_state_dict(missing, /*strict=*/false));
}

TEST(Module, ToConvertsFloatingTensorsOnlyAndKeepsLeaves) {
  Net net;
  net.to(TSR_F64);
  EXPECT_EQ(net.a->weight.dtype(), TSR_F64);
  EXPECT_TRUE(net.a->weight.requires_grad());
  EXPECT_TRUE(net.a->weight.is_leaf());
  EXPECT_EQ(net.a->count.dtype(), TSR_I64);
  auto y = net(tsr::randn({3}, TSR_F64));
  EXPECT_EQ(y.dtype(), TSR_F64);
}

TEST(Module, ZeroGradDropsOrZeroes) {
  Net net;
  tsr::sum(net(tsr::randn({3}))).backward();
  ASSERT_TRUE(net.a->weight.grad().defined());
  net.zero_grad(false);
  for (float g : net.a->weight.grad().to_vector<float>()) EXPECT_EQ(g, 0.0f);
  net.zero_grad();
  EXPECT_FALSE(net.a->weight.grad().defined());
}

TEST(Module, RejectsDuplicateAndDottedNames) {
  struct Bad : tsr::nn::Module {
    tsr::Tensor w;
    explicit Bad(const char* second) : Module("Bad") {
      w = tsr::randn({2});
      register_parameter("w", w);
      register_buffer(second, w);
    }
  };
  EXPECT_THROW(Bad("w"), tsr::Error);
  EXPECT_THROW(Bad("x.y"), tsr::Error);
}

TEST(Module, ReprShowsTheTree) {
  Net net;
  EXPECT_EQ(net.repr(), "Net(\n  (a): Affine()\n  (b): Affine()\n)");
}

}  // namespace
