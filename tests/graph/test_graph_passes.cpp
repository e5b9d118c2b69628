// Passes change the graph, never the results; the runner's release plan bounds live memory.
#include "graph_test_util.hpp"

using graph_test::max_abs_diff;

namespace {
size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t p = text.find(piece); p != std::string::npos; p = text.find(piece, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(Passes, CseFoldDceKeepResults) {
  tsr::Tensor table = tsr::randn({4});
  tsr::Tensor x = tsr::randn({3, 4});
  auto fn = [&](const std::vector<tsr::Tensor>& in) {
    tsr::Tensor scale = tsr::exp(table) * 2.0;          // consts only: folded
    tsr::Tensor a = tsr::sigmoid(in[0]), b = tsr::sigmoid(in[0]);  // the same call twice: merged
    tsr::Tensor unused = tsr::cos(in[0]);                // nothing reads it: removed
    (void)unused;
    return (a + b) * scale;
  };
  tsr::jit::Model m = tsr::jit::trace(fn, {x});
  std::string before = m.text();
  EXPECT_EQ(count(before, "= sigmoid("), 2u);
  EXPECT_EQ(count(before, "= cos("), 1u);
  std::string report = m.optimize("all");
  std::string after = m.text();
  EXPECT_NE(report.find("cse: merged 1 node(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("fold: folded 2 node(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("dce: removed 1 node(s)"), std::string::npos) << report;
  EXPECT_EQ(count(after, "= sigmoid("), 1u) << after;
  EXPECT_EQ(count(after, "= cos("), 0u) << after;
  EXPECT_EQ(count(after, "= exp("), 0u) << after;
  for (int i = 0; i < 2; ++i) {
    tsr::Tensor y = tsr::randn({3, 4});
    EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
  }
  EXPECT_EQ(tsr::jit::Model::parse(after).text(), after);
  EXPECT_THROW(m.optimize("inline"), tsr::Error);
}

TEST(Passes, FoldingDoesNotGrowTheModel) {
  tsr::Tensor one = tsr::full({1}, 3.0);
  tsr::jit::Model m = tsr::jit::trace(
      [&](const std::vector<tsr::Tensor>& in) { return in[0] + one.expand({512, 512}).contiguous(); },
      {tsr::randn({512, 512})});
  m.optimize("fold");
  EXPECT_NE(m.text().find("contiguous("), std::string::npos) << "a 1-element const is not folded into 256k";
}

TEST(Passes, ReleasePlanBoundsLiveMemory) {
  // A chain of 20 elementwise ops on 64k floats: at most a few intermediates alive at once.
  tsr::Tensor x = tsr::randn({256, 256});
  tsr::jit::Model m = tsr::jit::trace(
      [](const std::vector<tsr::Tensor>& in) {
        tsr::Tensor t = in[0];
        for (int i = 0; i < 20; ++i) t = tsr::tanh(t) * 1.5;
        return t;
      },
      {x});
  tsr::jit::RunStats s;
  m.run({x}, &s);
  EXPECT_EQ(s.nodes, 40);
  const int64_t one = 256 * 256 * 4;
  EXPECT_EQ(s.total_bytes, 40 * one);
  EXPECT_LE(s.peak_bytes, 2 * one) << "each value dies after its last use";
  EXPECT_GE(s.peak_bytes, one);
}
