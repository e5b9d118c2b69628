// `tessera train` as a subprocess: a short run writes its files, --resume continues with
// bit-identical losses, --text trains and samples, bad flags are usage errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using tsr_test::run_cli;
using tsr_test::shell_quote;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A fresh directory per test, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("tessera_train_cli_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// log.csv rows (without the header), each "step,loss,lr,tokens_per_s".
std::vector<std::vector<std::string>> csv_rows(const std::string& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

// A tiny model: seconds, not minutes. Two threads fixed so reruns reduce identically.
const std::string kTiny = "--digits 2 --n-layer 1 --n-head 2 --n-embd 16 --batch-size 8 --threads 2 --warmup 2 ";

TEST(TrainCli, ShortRunWritesCheckpointLogAndPlot) {
  TempDir d("short");
  tsr_test::CliResult r = run_cli(TSR_CLI, "train " + kTiny + "--steps 6 --out " + shell_quote(d.path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "accuracy")) << r.output;
  EXPECT_TRUE(contains(r.output, "held-out exact match")) << r.output;
  EXPECT_TRUE(contains(r.output, "parameters")) << r.output;
  EXPECT_TRUE(contains(r.output, "step 6/6")) << "plain progress lines when stderr is not a TTY\n" << r.output;
  EXPECT_TRUE(fs::file_size(d / "checkpoint.safetensors") > 1000);
  std::string svg = slurp(d / "loss.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(svg, "<polyline"));
  auto rows = csv_rows(d / "log.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0][0], "1");
  EXPECT_EQ(rows[5][0], "6");
  EXPECT_TRUE(contains(slurp(d / "log.json"), "\"final_train_loss\""));
}

// 8 steps straight == 4 steps, interrupted, then --resume for 4 more: the same losses to the
// last bit (dropout on, so the restored RNG state matters too).
TEST(TrainCli, ResumeContinuesWithBitIdenticalLosses) {
  TempDir a("straight"), b("first"), c("resumed");
  const std::string common = kTiny + "--dropout 0.1 --steps 8 --quiet ";
  tsr_test::CliResult ra = run_cli(TSR_CLI, "train " + common + "--out " + shell_quote(a.path.string()));
  ASSERT_EQ(ra.exit_code, 0) << ra.output;
  tsr_test::CliResult rb = run_cli(TSR_CLI, "train " + common + "--stop-at 4 --out " + shell_quote(b.path.string()));
  ASSERT_EQ(rb.exit_code, 0) << rb.output;
  ASSERT_EQ(csv_rows(b / "log.csv").size(), 4u);
  tsr_test::CliResult rc =
      run_cli(TSR_CLI, "train --threads 2 --quiet --resume " + shell_quote(b / "checkpoint.safetensors") + " --out " +
                           shell_quote(c.path.string()));
  ASSERT_EQ(rc.exit_code, 0) << rc.output;
  EXPECT_TRUE(contains(rc.output, "4..8 of 8")) << rc.output;
  auto straight = csv_rows(a / "log.csv"), resumed = csv_rows(c / "log.csv");
  ASSERT_EQ(straight.size(), 8u);
  ASSERT_EQ(resumed.size(), 8u) << "the resumed log carries the earlier steps";
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(resumed[i][0], straight[i][0]);
    EXPECT_EQ(resumed[i][1], straight[i][1]) << "loss of step " << i + 1;
    EXPECT_EQ(resumed[i][2], straight[i][2]) << "lr of step " << i + 1;
  }
  // A finished run cannot resume without more steps; a changed setting is refused.
  tsr_test::CliResult done = run_cli(TSR_CLI, "train --quiet --resume " + shell_quote(c / "checkpoint.safetensors") +
                                                  " --out " + shell_quote(c.path.string()));
  EXPECT_EQ(done.exit_code, 2) << done.output;
  EXPECT_TRUE(contains(done.output, "already at --steps 8")) << done.output;
  tsr_test::CliResult changed =
      run_cli(TSR_CLI, "train --quiet --n-embd 32 --resume " + shell_quote(b / "checkpoint.safetensors") + " --out " +
                           shell_quote(c.path.string()));
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_TRUE(contains(changed.output, "--n-embd 32 differs from the checkpoint's 16")) << changed.output;
}

TEST(TrainCli, TextModelTrainsAndSamples) {
  TempDir d("text");
  std::string text;
  for (int i = 0; i < 60; ++i) text += "to be or not to be, that is the question. ";
  std::ofstream(d / "in.txt") << text;
  tsr_test::CliResult r = run_cli(
      TSR_CLI, "train --text " + shell_quote(d / "in.txt") + " --steps 4 --block-size 16 --n-layer 1 --n-embd 16 " +
                   "--batch-size 4 --warmup 1 --sample-len 30 --quiet --out " + shell_quote(d / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "val loss")) << r.output;
  EXPECT_TRUE(contains(r.output, "sample (temperature 0.8, top-k 10):")) << r.output;
  EXPECT_TRUE(fs::exists(d / "out/checkpoint.safetensors"));
}

TEST(TrainCli, BadFlagsAndFilesAreUsageErrors) {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"--steps abc", "--steps expects an integer, got 'abc'"},
      {"--steps 0", "--steps must be >= 1, got 0"},
      {"--lr -1", "--lr must be > 0"},
      {"--bogus", "unknown option '--bogus'"},
      {"--steps", "option --steps needs a value"},
      {"--digits 12", "--digits must be in 1..9, got 12"},
      {"--n-embd 10 --n-head 4", "n_embd (10) must be a positive multiple of n_head (4)"},
      {"--text /nonexistent/input.txt", "cannot open /nonexistent/input.txt"},
      {"--resume /nonexistent/ckpt.safetensors", "/nonexistent/ckpt.safetensors"},
      {"--device nosuchdevice:0", "--device nosuchdevice:0"},
      {"extra", "unexpected argument 'extra'"},
  };
  for (const Case& c : cases) {
    tsr_test::CliResult r = run_cli(TSR_CLI, "train --quiet --out '' " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << c.args << "\n" << r.output;
  }
  tsr_test::CliResult help = run_cli(TSR_CLI, "train --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.output, "--resume")) << help.output;
}

}  // namespace
