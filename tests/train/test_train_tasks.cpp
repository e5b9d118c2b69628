// The tasks of `tessera train` (addition, text), the SVG plot and the progress display.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "op_test.hpp"
#include "progress.hpp"
#include "svg_plot.hpp"
#include "text_task.hpp"

namespace {

using namespace tessera_train;
using tsr::optest::throws_with;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tessera_train_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

TEST(TrainAddition, EncodesTheAnswerReversed) {
  AdditionOptions o;
  AdditionTask t(o);
  EXPECT_EQ(AdditionTask::render(t.encode(123, 45)), "123+045=8610");   // 168 -> 8,6,1,0
  EXPECT_EQ(AdditionTask::render(t.encode(999, 999)), "999+999=8991");  // 1998
  EXPECT_EQ(AdditionTask::render(t.encode(0, 0)), "000+000=0000");
  EXPECT_EQ(t.block_size(), 11);
  EXPECT_EQ(t.vocab_size(), 12);
  o.digits = 1;
  EXPECT_EQ(AdditionTask::render(AdditionTask(o).encode(7, 5)), "7+5=21");
}

TEST(TrainAddition, HeldOutNeverAppearsInTraining) {
  for (int digits : {1, 2, 3}) {
    AdditionOptions o;
    o.digits = digits;
    o.seed = 99;
    AdditionTask t(o);
    std::set<std::pair<uint64_t, uint64_t>> train(t.train_set().begin(), t.train_set().end());
    std::set<std::pair<uint64_t, uint64_t>> held(t.heldout_set().begin(), t.heldout_set().end());
    EXPECT_EQ(train.size(), t.train_set().size()) << "train problems are distinct";
    EXPECT_EQ(held.size(), t.heldout_set().size());
    for (const auto& p : held) EXPECT_FALSE(train.count(p)) << p.first << "+" << p.second;
    EXPECT_GT(held.size(), 0u);
  }
  AdditionOptions o;
  o.digits = 1;  // 100 problems: a fifth held out, the rest trains
  AdditionTask t(o);
  EXPECT_EQ(t.heldout_set().size(), 20u);
  EXPECT_EQ(t.train_set().size(), 80u);
}

TEST(TrainAddition, BatchesTakeLossOnlyOnTheAnswerAndAreAFunctionOfTheStep) {
  AdditionOptions o;
  o.digits = 2;
  AdditionTask t(o);
  Batch b = t.batch(3, 5, tsr::Device::cpu());
  ASSERT_EQ(b.x.sizes(), (std::vector<int64_t>{5, 8}));
  std::vector<int64_t> x = b.x.to_vector<int64_t>(), y = b.y.to_vector<int64_t>();
  for (int64_t r = 0; r < 5; ++r) {
    // x = "ab+cd=s0s1" (8 of 9 tokens), y = next tokens, -100 before the answer.
    const int64_t* xr = &x[static_cast<size_t>(r * 8)];
    const int64_t* yr = &y[static_cast<size_t>(r * 8)];
    EXPECT_EQ(xr[2], AdditionTask::kPlus);
    EXPECT_EQ(xr[5], AdditionTask::kEquals);
    for (int j = 0; j < 5; ++j) EXPECT_EQ(yr[j], -100) << "row " << r << " position " << j;
    int64_t a = xr[0] * 10 + xr[1], c = xr[3] * 10 + xr[4], s = a + c;
    EXPECT_EQ(yr[5], s % 10);
    EXPECT_EQ(yr[6], s / 10 % 10);
    EXPECT_EQ(yr[7], s / 100);
    EXPECT_EQ(xr[6], yr[5]);  // teacher forcing: x is y shifted
    EXPECT_EQ(xr[7], yr[6]);
  }
  EXPECT_EQ(t.batch(3, 5, tsr::Device::cpu()).x.to_vector<int64_t>(), x);
  EXPECT_NE(t.batch(4, 5, tsr::Device::cpu()).x.to_vector<int64_t>(), x);
  // A data-parallel rank's rows are the same rows of the whole batch.
  Batch part = t.batch(3, 5, tsr::Device::cpu(), 2, 2);
  ASSERT_EQ(part.x.sizes(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(part.x.to_vector<int64_t>(), std::vector<int64_t>(x.begin() + 16, x.begin() + 32));
  EXPECT_EQ(part.y.to_vector<int64_t>(), std::vector<int64_t>(y.begin() + 16, y.begin() + 32));
  EXPECT_TRUE(throws_with([&] { t.batch(3, 5, tsr::Device::cpu(), 4, 2); }, {"rows 4..5", "batch of 5"}));
  // One epoch visits every train problem once.
  AdditionOptions one;
  one.digits = 1;
  AdditionTask small(one);
  std::multiset<std::vector<int64_t>> seen;
  for (int64_t step = 0; step < 10; ++step) {
    std::vector<int64_t> v = small.batch(step, 8, tsr::Device::cpu()).x.to_vector<int64_t>();
    for (size_t r = 0; r < 8; ++r)
      seen.insert(std::vector<int64_t>(v.begin() + static_cast<long>(r * 5), v.begin() + static_cast<long>(r * 5 + 3)));
  }
  EXPECT_EQ(seen.size(), 80u);
  EXPECT_EQ(std::set<std::vector<int64_t>>(seen.begin(), seen.end()).size(), 80u);
}

TEST(TrainAddition, BadSettingsAreErrors) {
  AdditionOptions o;
  o.digits = 0;
  EXPECT_TRUE(throws_with([&] { AdditionTask t(o); }, {"addition", "--digits", "1..9", "got 0"}));
  o.digits = 10;
  EXPECT_TRUE(throws_with([&] { AdditionTask t(o); }, {"got 10"}));
  o.digits = 2;
  AdditionTask t(o);
  EXPECT_TRUE(throws_with([&] { t.batch(0, 0, tsr::Device::cpu()); }, {"batch size", "got 0"}));
}

TEST(TrainAddition, UntrainedModelScoresNearZero) {
  tsr::manual_seed(1);
  AdditionOptions o;
  o.digits = 2;
  AdditionTask t(o);
  GPTConfig c;
  c.vocab_size = t.vocab_size(), c.block_size = t.block_size(), c.n_layer = 1, c.n_head = 2, c.n_embd = 16;
  GPT m(c);
  EvalResult r = t.evaluate(m, tsr::Device::cpu());
  EXPECT_EQ(r.metric_name, "held-out exact match");
  EXPECT_LT(r.metric, 0.05);
  EXPECT_NE(r.detail.find('+'), std::string::npos);
  EXPECT_TRUE(m.is_training()) << "evaluate restores the mode";
}

TEST(TrainText, VocabularyBatchesAndErrors) {
  std::string path = temp_path("text.txt");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n";
  std::ofstream(path) << text;
  TextTask t(path, 16, 5);
  std::set<char> distinct(text.begin(), text.end());
  EXPECT_EQ(t.vocab_size(), static_cast<int64_t>(distinct.size()));
  Batch b = t.batch(2, 3, tsr::Device::cpu());
  ASSERT_EQ(b.x.sizes(), (std::vector<int64_t>{3, 16}));
  std::vector<int64_t> x = b.x.to_vector<int64_t>(), y = b.y.to_vector<int64_t>();
  for (size_t r = 0; r < 3; ++r) {
    for (size_t j = 0; j + 1 < 16; ++j) EXPECT_EQ(y[r * 16 + j], x[r * 16 + j + 1]);
    std::string window;
    for (size_t j = 0; j < 16; ++j) window += t.vocab()[static_cast<size_t>(x[r * 16 + j])];
    EXPECT_NE(text.find(window), std::string::npos) << window;
  }
  EXPECT_EQ(t.batch(2, 3, tsr::Device::cpu()).x.to_vector<int64_t>(), x);
  Batch tail = t.batch(2, 3, tsr::Device::cpu(), 1);  // rows 1..2 of the same batch
  EXPECT_EQ(tail.x.to_vector<int64_t>(), std::vector<int64_t>(x.begin() + 16, x.end()));
  EXPECT_EQ(tail.y.to_vector<int64_t>(), std::vector<int64_t>(y.begin() + 16, y.end()));

  tsr::manual_seed(3);
  GPTConfig c;
  c.vocab_size = t.vocab_size(), c.block_size = 16, c.n_layer = 1, c.n_head = 2, c.n_embd = 16;
  GPT m(c);
  std::string s = t.sample(m, tsr::Device::cpu(), "the ", 20, 1.0, 5, 1);
  EXPECT_EQ(s.size(), 20u);
  for (char ch : s) EXPECT_TRUE(distinct.count(ch));
  EXPECT_EQ(s, t.sample(m, tsr::Device::cpu(), "the ", 20, 1.0, 5, 1)) << "seeded sampling";
  EvalResult r = t.evaluate(m, tsr::Device::cpu());
  EXPECT_NEAR(r.metric, std::log(static_cast<double>(t.vocab_size())), 0.5) << "untrained: about log(V)";

  EXPECT_TRUE(throws_with([&] { TextTask bad(path + ".missing", 16, 1); }, {"--text", "cannot open", ".missing"}));
  std::string tiny = temp_path("tiny.txt");
  std::ofstream(tiny) << "abc";
  EXPECT_TRUE(throws_with([&] { TextTask bad(tiny, 16, 1); }, {"--text", "has 3 bytes", "block size of 16"}));
  std::remove(path.c_str());
  std::remove(tiny.c_str());
}

TEST(TrainPlot, SvgHasAxesCurvesAndEscapedText) {
  PlotSpec spec;
  spec.title = "loss <a & b>";
  spec.log_y = true;
  Series s{"train", "#123456", {1, 2, 3, 4}, {2.5, 1.0, 0.3, NAN}};
  std::string svg = render_svg(spec, {s});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("loss &lt;a &amp; b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("#123456"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos) << "non-finite points are skipped";
  EXPECT_NE(render_svg(spec, {}).find("</svg>"), std::string::npos) << "an empty plot still renders";
  EXPECT_TRUE(
      throws_with([&] { write_svg("/nonexistent-dir/x.svg", spec, {s}); }, {"cannot write", "/nonexistent-dir/x.svg"}));
}

TEST(TrainProgress, PlainLinesWhenNotATerminal) {
  EXPECT_EQ(format_duration(5.25), "5.2s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(7300), "2h01m");
  EXPECT_EQ(format_duration(NAN), "?");
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(f, 0, 10, false);
  p.set_tty(false);
  p.set_plain_every(5);
  for (int s = 1; s <= 10; ++s) p.update(s, 1.0 / s, 1e-3, 1000);
  p.message("eval line");
  p.finish();
  std::rewind(f);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
  std::fclose(f);
  EXPECT_NE(out.find("step 5/10"), std::string::npos) << out;
  EXPECT_NE(out.find("step 10/10"), std::string::npos) << out;
  EXPECT_EQ(out.find("step 3/10"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << "no carriage returns in a log";
  EXPECT_NE(out.find("eval line\n"), std::string::npos);
}

}  // namespace
