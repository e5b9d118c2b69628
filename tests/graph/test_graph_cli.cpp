// `tessera run`: a saved model run from the command line; outputs written equal eager ones.
#ifdef TSR_CLI
#include <unistd.h>

#include <cstdio>

#include "graph_test_util.hpp"
#include "tessera/serialize.hpp"

namespace {
std::string sh(const std::string& cmd, int* rc) {
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (f && std::fgets(buf, sizeof buf, f)) out += buf;
  int st = f ? pclose(f) : -1;
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}
}  // namespace

TEST(RunCli, RunsAModelOnGivenInputsAndBenchmarks) {
  const std::string dir = ::testing::TempDir() + "/tessera_run_cli_" + std::to_string(::getpid());
  const std::string model = dir + ".tsm", in = dir + "_in.safetensors", out = dir + "_out.safetensors";
  tsr::Tensor w = tsr::randn({6, 5});
  tsr::jit::TraceOptions opts;
  opts.input_names = {"x", "y"};
  opts.output_names = {"z"};
  opts.dynamic = {{0, 0, "B"}, {1, 0, "B"}};
  opts.params = {{"w", w}};
  auto fn = [&](const std::vector<tsr::Tensor>& v) { return tsr::linear(v[0], w) * tsr::sigmoid(v[1]); };
  tsr::jit::trace(fn, {tsr::randn({3, 5}), tsr::randn({3, 6})}, opts).save(model);

  tsr::Tensor x = tsr::randn({3, 5}), y = tsr::randn({3, 6});
  tsr::StateDict sd;
  sd.insert("x", x);
  sd.insert("y", y);
  tsr::save_safetensors(in, sd);
  int rc = 0;
  std::string log = sh(std::string(TSR_CLI) + " run " + model + " --input x=" + in + " --input y=" + in +
                           " --output " + out + " --bench 5",
                       &rc);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("z: [3, 6] float32 ="), std::string::npos) << log;
  EXPECT_NE(log.find("5 runs on cpu:0: p50"), std::string::npos) << log;
  EXPECT_EQ(graph_test::max_abs_diff(tsr::load_safetensors(out).at("z"), fn({x, y})), 0.0);

  // Generated inputs follow --dim; the graph prints.
  log = sh(std::string(TSR_CLI) + " run " + model + " --dim B=7 --print-graph --optimize all", &rc);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("input %x: float32[B, 5]"), std::string::npos) << log;
  EXPECT_NE(log.find("z: [7, 6] float32"), std::string::npos) << log;

  // Errors: an unknown input name, a file that is not a model.
  log = sh(std::string(TSR_CLI) + " run " + model + " --input q=" + in, &rc);
  EXPECT_EQ(rc, 1) << log;
  EXPECT_NE(log.find("the model has no input of that name"), std::string::npos) << log;
  log = sh(std::string(TSR_CLI) + " run " + in, &rc);
  EXPECT_EQ(rc, 1) << log;
  EXPECT_NE(log.find("not a Tessera model"), std::string::npos) << log;
  for (const std::string& p : {model, in, out}) std::remove(p.c_str());
}
#endif
