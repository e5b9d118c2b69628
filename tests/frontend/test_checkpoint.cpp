// RNG state and training checkpoints: rand() repeats after set_rng_state, checkpoints round trip
// every part bit for bit, a resumed toy training run reproduces its losses exactly, and files
// that are not (current) Tessera checkpoints are refused with clear errors.
#include <gtest/gtest.h>

#include <cstdio>

#include "op_test.hpp"
#include "safetensors_test_util.hpp"
#include "tessera/autograd.hpp"
#include "tessera/checkpoint.hpp"

namespace {

using tsr::optest::throws_with;

TEST(RngState, RestoringTheStateRepeatsRandomDraws) {
  tsr::manual_seed(1234);
  EXPECT_EQ(tsr::get_rng_state(), (tsr::RngState{1234, 0}));
  (void)tsr::rand({7});
  tsr::RngState s = tsr::get_rng_state();
  EXPECT_EQ(s.seed, 1234u);
  EXPECT_GT(s.offset, 0u);  // the draw advanced the stream
  std::vector<float> a = tsr::rand({100}).to_vector<float>();
  std::vector<float> a2 = tsr::randn({3, 5}).to_vector<float>();
  EXPECT_NE(tsr::get_rng_state(), s);
  tsr::set_rng_state(s);
  EXPECT_EQ(tsr::get_rng_state(), s);
  EXPECT_EQ(tsr::rand({100}).to_vector<float>(), a);
  EXPECT_EQ(tsr::randn({3, 5}).to_vector<float>(), a2);
  // Another offset or seed gives other numbers (the state is what decides).
  tsr::set_rng_state({s.seed, s.offset + 1000});
  EXPECT_NE(tsr::rand({100}).to_vector<float>(), a);
  tsr::set_rng_state({s.seed + 1, s.offset});
  EXPECT_NE(tsr::rand({100}).to_vector<float>(), a);
}

TEST(RngState, NullArgumentsAreErrorsNotCrashes) {
  uint64_t x = 0;
  EXPECT_TRUE(
      throws_with([&] { tsr::check(tsr::api()->rng_get_state(tsr::runtime(), nullptr, &x)); }, {"rng_get_state"}));
  EXPECT_TRUE(throws_with([&] { tsr::check(tsr::api()->rng_set_state(nullptr, 1, 2)); }, {"rng_set_state"}));
}

void expect_same(const tsr::StateDict& a, const tsr::StateDict& b) {
  ASSERT_EQ(a.keys(), b.keys());
  for (const auto& kv : a) {
    const tsr::Tensor& t = b.at(kv.first);
    EXPECT_EQ(t.dtype(), kv.second.dtype()) << kv.first;
    EXPECT_EQ(t.sizes(), kv.second.sizes()) << kv.first;
    EXPECT_EQ(sttest::raw(t), sttest::raw(kv.second)) << kv.first;
  }
}

TEST(Checkpoint, RoundTripsEveryPart) {
  tsr::TrainingCheckpoint ck;
  ck.model.insert("fc.weight", tsr::optest::randu({4, 3}, 1, -1, 1, TSR_F32));
  ck.model.insert("fc.bias", tsr::optest::randu({4}, 2, -1, 1, TSR_F32));
  ck.model.insert("bn.num_batches_tracked", tsr::full({}, 12, TSR_I64));
  ck.optimizer.insert("state.0.exp_avg", tsr::optest::randu({4, 3}, 3));
  ck.optimizer.insert("state.0.step", tsr::full({}, 41, TSR_F64));
  ck.optimizer.insert("param_groups.0.lr", tsr::full({}, 3e-4, TSR_F64));
  ck.scheduler.insert("last_epoch", tsr::full({}, 40, TSR_I64));
  ck.step = 123456789012345;
  ck.rng = {0xFEDCBA9876543210ull, 987654321ull};
  ck.extra = {{"epoch", "3"}, {"note", "caf\xc3\xa9 = 1"}, {"empty", ""}};
  std::string path = sttest::scratch("ckpt");
  tsr::save_checkpoint(path, ck);

  tsr::TrainingCheckpoint back = tsr::load_checkpoint(path);
  expect_same(ck.model, back.model);
  expect_same(ck.optimizer, back.optimizer);
  expect_same(ck.scheduler, back.scheduler);
  EXPECT_EQ(back.step, ck.step);
  EXPECT_EQ(back.rng, ck.rng);
  EXPECT_EQ(back.extra, ck.extra);

  // Any safetensors reader sees the prefixed entries and the metadata.
  tsr::SafetensorsFile f(path);
  EXPECT_EQ(f.names().front(), "model.fc.weight");
  EXPECT_TRUE(f.contains("optimizer.state.0.step"));
  EXPECT_TRUE(f.contains("scheduler.last_epoch"));
  EXPECT_EQ(f.metadata("format"), std::optional<std::string>("tessera.training_checkpoint"));
  EXPECT_EQ(f.metadata("step"), std::optional<std::string>("123456789012345"));
  EXPECT_EQ(f.metadata("rng_seed"), std::optional<std::string>("18364758544493064720"));
  EXPECT_EQ(f.metadata("extra.epoch"), std::optional<std::string>("3"));
  std::remove(path.c_str());
}

// A toy run whose steps draw random inputs: stopping at a checkpoint and resuming (after the
// parameters and the RNG were disturbed) gives bit-identical next-step losses.
TEST(Checkpoint, ResumedRunReproducesTheNextLossesBitForBit) {
  auto step = [](tsr::Tensor& w) {
    tsr::Tensor x = tsr::randn({8, 3});
    tsr::Tensor y = tsr::rand({8, 2});
    tsr::Tensor d = tsr::matmul(x, w) - y;
    tsr::Tensor loss = tsr::mean(d * d);
    loss.backward();
    {
      tsr::NoGradGuard ng;
      w.copy_(w - w.grad() * 0.1);
    }
    w.set_grad(tsr::Tensor());
    return loss.item<float>();
  };
  tsr::manual_seed(77);
  tsr::Tensor w = tsr::randn({3, 2}).requires_grad_();
  for (int i = 0; i < 3; ++i) step(w);
  tsr::TrainingCheckpoint ck;
  ck.model.insert("w", w.detach());
  ck.step = 3;
  ck.rng = tsr::get_rng_state();
  std::string path = sttest::scratch("resume");
  tsr::save_checkpoint(path, ck);
  std::vector<float> expected;
  for (int i = 0; i < 3; ++i) expected.push_back(step(w));

  {
    tsr::NoGradGuard ng;
    w.fill_(0.5);
  }
  tsr::manual_seed(5);
  tsr::TrainingCheckpoint back = tsr::load_checkpoint(path);
  {
    tsr::NoGradGuard ng;
    w.copy_(back.model.at("w"));
  }
  tsr::set_rng_state(back.rng);
  EXPECT_EQ(back.step, 3);
  std::vector<float> resumed;
  for (int i = 0; i < 3; ++i) resumed.push_back(step(w));
  EXPECT_EQ(resumed, expected);
  std::remove(path.c_str());
}

TEST(Checkpoint, RefusesFilesThatAreNotCurrentTesseraCheckpoints) {
  std::string path = sttest::scratch("notckpt");
  tsr::StateDict sd;
  sd.insert("model.w", tsr::ones({2}));
  tsr::save_safetensors(path, sd);
  try {
    tsr::load_checkpoint(path);
    ADD_FAILURE() << "loaded a plain safetensors file as a checkpoint";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("not a Tessera training checkpoint"), std::string::npos) << e.what();
  }
  std::map<std::string, std::string> meta{{"format", "tessera.training_checkpoint"},
                                          {"format_version", "2"},
                                          {"step", "1"},
                                          {"rng_seed", "1"},
                                          {"rng_offset", "0"}};
  tsr::save_safetensors(path, sd, meta);
  try {
    tsr::load_checkpoint(path);
    ADD_FAILURE() << "loaded a newer format version";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("format version 2"), std::string::npos) << e.what();
  }
  meta["format_version"] = "1";
  meta["step"] = "12x";
  tsr::save_safetensors(path, sd, meta);
  EXPECT_TRUE(throws_with([&] { tsr::load_checkpoint(path); }, {"'step' is '12x'", "decimal integer"}));
  meta["step"] = "12";
  meta.erase("rng_offset");
  tsr::save_safetensors(path, sd, meta);
  EXPECT_TRUE(throws_with([&] { tsr::load_checkpoint(path); }, {"'rng_offset' is missing"}));
  meta["rng_offset"] = "9";
  sd.insert("stray", tsr::ones({1}));
  tsr::save_safetensors(path, sd, meta);
  EXPECT_TRUE(throws_with([&] { tsr::load_checkpoint(path); }, {"entry 'stray'", "none of model."}));
  sd.erase("stray");
  tsr::save_safetensors(path, sd, meta);
  tsr::TrainingCheckpoint ok = tsr::load_checkpoint(path);
  EXPECT_EQ(ok.step, 12);
  EXPECT_EQ(ok.rng, (tsr::RngState{1, 9}));
  EXPECT_EQ(ok.model.keys(), std::vector<std::string>{"w"});
  std::remove(path.c_str());
}

}  // namespace
