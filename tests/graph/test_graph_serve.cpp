// The deployment path end to end: `tessera train`'s served model (write_served_model), run by
// the C host examples/serve_gpt, decodes exactly as the eager GPT does.
#ifdef TESSERA_HAVE_TRAIN
#include <unistd.h>

#include <cstdio>
#include <string>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "graph_test_util.hpp"
#include "trainer.hpp"

namespace {

// Greedy decoding with the eager model, as the addition task evaluates it.
std::string eager_answer(tessera_train::GPT& gpt, const std::vector<int64_t>& prompt, int64_t answer_len) {
  tsr::Tensor x = tsr::from_vector<int64_t>(prompt, {1, static_cast<int64_t>(prompt.size())});
  for (int64_t k = 0; k < answer_len; ++k) {
    tsr::Tensor logits = gpt.forward(x);
    x = tsr::cat({x, tsr::argmax(logits.select(1, logits.size(1) - 1), 1, true)}, 1);
  }
  std::string text = tessera_train::AdditionTask::render(x.to_vector<int64_t>());
  std::string ans = text.substr(prompt.size());
  return text.substr(0, prompt.size()) + std::string(ans.rbegin(), ans.rend());
}

std::string run_host(const std::string& model, const std::vector<std::string>& problems) {
  std::string cmd = "TESSERA_CORE='" TSR_CORE_LIB "' '" TSR_SERVE_GPT "' '" + model + "'";
  for (const std::string& p : problems) cmd += " " + p;
  FILE* f = popen(cmd.c_str(), "r");  // stdout only: the core may warn on stderr
  std::string out;
  char buf[256];
  while (f && std::fgets(buf, sizeof buf, f)) out += buf;
  int rc = f ? pclose(f) : -1;
  EXPECT_EQ(rc, 0) << cmd << "\n" << out;
  return out;
}

}  // namespace

TEST(Serve, CHostDecodesLikeTheEagerModel) {
  for (uint64_t seed : {11u, 12u}) {
    tsr::manual_seed(seed);
    tessera_train::AdditionTask task({3, seed, 100, 10});
    tessera_train::GPTConfig cfg;
    cfg.vocab_size = task.vocab_size();
    cfg.block_size = task.block_size();
    cfg.n_layer = 1;
    cfg.n_embd = 32;
    tessera_train::GPT gpt(cfg);
    // Large random weights: answers of arbitrary tokens that differ per problem, which makes
    // the comparison strict (GPT-2's small initial weights answer '=' everywhere).
    {
      tsr::NoGradGuard no_grad;
      for (auto& [name, p] : gpt.named_parameters()) {
        tsr::Tensor r = tsr::randn(p.sizes()) * 0.8;
        p.copy_(r);
      }
    }
    std::string path = ::testing::TempDir() + "/tessera_served_" + std::to_string(::getpid()) + ".tsm";
    std::string fixed = ::testing::TempDir() + "/tessera_served_fixed_" + std::to_string(::getpid()) + ".tsm";
    tessera_train::write_served_model(gpt, cfg.block_size, tsr::Device::cpu(), path);
    EXPECT_TRUE(gpt.is_training()) << "the trainer's mode is restored";
    gpt.eval();
    // The same GPT at a fixed length: the host pads the prompt (the model is causal).
    tsr::jit::trace(gpt, {tsr::zeros({1, cfg.block_size}, TSR_I64)}).save(fixed);
    std::vector<std::string> problems = {"123+456=", "999+001=", "000+000="};
    std::string want;
    for (const std::string& p : problems) {
      std::vector<int64_t> prompt = task.encode(std::stoull(p.substr(0, 3)), std::stoull(p.substr(4, 3)));
      prompt.resize(task.prompt_len());
      want += eager_answer(gpt, prompt, task.digits() + 1) + "\n";
    }
    EXPECT_EQ(run_host(path, problems), want) << "seed " << seed;
    EXPECT_EQ(run_host(fixed, problems), want) << "seed " << seed << ", fixed length";
    std::remove(fixed.c_str());
    EXPECT_NE(want.substr(8, 4), want.substr(21 + 8, 4)) << "answers that differ: " << want;
    // A problem the model cannot take is an error, not a crash.
    std::string bad = "TESSERA_CORE='" TSR_CORE_LIB "' '" TSR_SERVE_GPT "' '" + path + "' 12+345= 2>&1";
    FILE* f = popen(bad.c_str(), "r");
    std::string said;  // all of it: the core's plugin warnings on stderr come first
    char buf[512];
    for (size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) said.append(buf, n);
    EXPECT_NE(f ? pclose(f) : 0, 0);
    EXPECT_NE(said.find("is not a problem of this model"), std::string::npos) << said;
    std::remove(path.c_str());
  }
}
#endif
