// The text form: exact round trips, graphs written by hand, and errors with line:column.
#include "graph_test_util.hpp"

using graph_test::expect_error;
using graph_test::max_abs_diff;

TEST(Text, RoundTripIsExact) {
  tsr::Tensor x = tsr::randn({3, 4});
  tsr::Tensor w = tsr::randn({5, 4});
  tsr::jit::TraceOptions opts;
  opts.params = {{"w", w}};
  tsr::jit::Model m = tsr::jit::trace(
      [&](const std::vector<tsr::Tensor>& in) {
        tsr::Tensor h = tsr::linear(in[0], w);
        tsr::Tensor s = tsr::sum(h, {1}, true) * 0.1 - 1e-300;
        return std::vector<tsr::Tensor>{tsr::softmax(h - s, -1).to(TSR_F64), tsr::amax(h, {0}), h.expand({2, 3, 5})};
      },
      {x}, opts);
  std::string text = m.text();
  tsr::jit::Model parsed = tsr::jit::Model::parse(text);
  EXPECT_EQ(parsed.text(), text);
  parsed.bind("w", w);
  std::vector<tsr::Tensor> a = m.run({x}), b = parsed.run({x});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(max_abs_diff(a[i], b[i]), 0.0) << i;
  EXPECT_NE(text.find("1e-300"), std::string::npos) << "floats print exactly:\n" << text;
}

TEST(Text, HandWrittenGraphRuns) {
  const char* text = R"(tessera.graph 1
# a hand-written graph: comments and blank lines are fine
device cpu:0

input %x: float32[N, 3]
param %w: float32[3, 2]
const %two: float32[] = 2.0
const %k: int64[] = 3 wrapped
%h = matmul(%x, %w)
%r: float32[N, 2] = relu(%h)
%y = mul(%r, %two)
%s = sum(%y, dim=[1], keepdim=true)
%t = add(%s, %k, alpha=2)
%v = view(%t, [-1])
output %v, %y
)";
  tsr::jit::Model m = tsr::jit::Model::parse(text);
  expect_error([&] { m.run({tsr::randn({4, 3})}); }, TSR_FAILED_PRECONDITION, {"%w has no tensor"});
  tsr::Tensor w = tsr::randn({3, 2});
  m.bind("w", w);
  tsr::Tensor x = tsr::randn({4, 3});
  std::vector<tsr::Tensor> r = m.run({x});
  tsr::Tensor y = tsr::relu(tsr::matmul(x, w)) * 2.0;
  EXPECT_LT(max_abs_diff(r[1], y), 1e-6);
  EXPECT_LT(max_abs_diff(r[0], tsr::sum(y, {1}, false) + 6.0), 1e-5);
  // Printed back, keyword arguments become positional and types stay as written.
  std::string printed = m.text();
  EXPECT_NE(printed.find("%s = sum(%y, [1], true)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%r: float32[N, 2] = relu(%h)"), std::string::npos) << printed;
  EXPECT_EQ(tsr::jit::Model::parse(printed).text(), printed);
  expect_error([&] { m.bind("w", tsr::randn({2, 3})); }, TSR_INVALID_ARGUMENT, {"%w is float32[3, 2]", "[2, 3]"});
  expect_error([&] { m.bind("nope", w); }, TSR_NOT_FOUND, {"no param or const named 'nope'"});
}

TEST(Text, SymbolicSizesInHandWrittenGraphs) {
  tsr::jit::Model m = tsr::jit::Model::parse(R"(tessera.graph 1
input %x: float32[B, T]
%flat: float32[B*T] = reshape(%x, [B*T])
%idx = arange(0, 2*T - 1 + B*T - B*T + 1, dtype=int64)
%out: float32[2*T] = cat([%flat, %flat], 0)
%s = slice(%out, 0, 0, -9223372036854775808 + 9223372036854775807 + 2*T + 1, 1)
output %s, %idx
)");
  std::string text = m.text();
  EXPECT_NE(text.find("arange(0, 2*T, 1, int64)"), std::string::npos) << "expressions are canonical:\n" << text;
  EXPECT_NE(text.find("slice(%out, 0, 0, 2*T)"), std::string::npos) << text;
  tsr::Tensor x = tsr::randn({1, 3});
  std::vector<tsr::Tensor> r = m.run({x});
  EXPECT_EQ(r[0].sizes(), (std::vector<int64_t>{6}));
  EXPECT_EQ(r[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // A size that overflows int64 at run time is an error, not a wrapped value.
  tsr::jit::Model big = tsr::jit::Model::parse(
      "tessera.graph 1\ninput %x: float32[B]\n%y = view(%x, [4611686018427387904*B])\noutput %y\n");
  expect_error([&] { big.run({tsr::randn({4})}); }, TSR_INVALID_ARGUMENT,
               {"node 0 (%y = view)", "4611686018427387904*B names a symbol no input binds, or overflows int64"});
}

TEST(Text, ErrorsPointAtLineAndColumn) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"", "empty graph text"},
      {"tessera.graph 2\n", "line 1:15: format version 2 is not supported"},
      {"graph 1\n", "expected 'tessera.graph 1' first"},
      {"tessera.graph 1\ninput %x: float32[2]\noutput %y\n", "line 3:8: %y is not defined before this use"},
      {"tessera.graph 1\ninput %x: float33[2]\noutput %x\n", "line 2:11: unknown dtype 'float33'"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = frobnicate(%x)\noutput %y\n", "line 3:6: unknown op 'frobnicate'"},
      {"tessera.graph 1\nplugin vendor_x: vendor::op\ninput %x: float32[2]\n%y = vendor::op(%x)\noutput %y\n",
       "the graph says the plugin 'vendor_x' defines it"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = relu(%x, 3)\noutput %y\n", "relu takes 1 argument(s)"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = add(%x, alpha=2, %x)\noutput %y\n",
       "a positional argument follows a keyword argument"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = add(%x)\noutput %y\n", "add: missing argument 'other'"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = sum(%x, dim=\"a\")\noutput %y\n", "argument 'dim' (int[]) expects a list [..] or an int, found '\"a\")'"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y, %z = relu(%x)\noutput %y\n", "relu returns 1 result(s), but 2"},
      {"tessera.graph 1\ninput %x: float32[2]\n%x = relu(%x)\noutput %x\n", "line 3:1: the value %x is defined twice"},
      {"tessera.graph 1\ninput %x: float32[2]\noutput %x\n%y = relu(%x)\n", "nothing may follow the output statement"},
      {"tessera.graph 1\ninput %x: float32[2]\n", "no output statement"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = to(%x, device=gpu:0)\noutput %y\n", "line 3:20: device 'gpu:0'"},
      {"tessera.graph 1\ninput %x: float32[2]\n%y = gelu(%x, \"tanh)\noutput %y\n", "unterminated string"},
      {"tessera.graph 1\nparam %w: float32[2] = 1.0\noutput %w\n", "only 0-dim consts are written inline"},
      {"tessera.graph 1\ninput %x: float32[B]\n%y = view(%x, [2*C])\noutput %y\n",
       "line 3:16: unknown symbol 'C' (not a dim of any input)"},
      {"tessera.graph 1\ninput %x: float32[2*B]\noutput %x\n", "an input's dims are sizes or single symbols"},
      {"tessera.graph 1\ninput %x: float32[B]\n%y = view(%x, [B*B])\noutput %y\n", "a symbol appears twice"},
      {"tessera.graph 1\ninput %x: float32[B]\n%y = view(%x, [99999999999999999999])\noutput %y\n",
       "integer out of range"},
      // Found by tessera_fuzz_graph: a sum of constants beyond int64 (undefined behaviour before).
      {"tessera.graph 1\ninput %x: float32[B]\n%y = slice(%x, 0, 1, 9223372036854775807+ 2)\noutput %y\n",
       "integer out of range"},
      {"tessera.graph 1\ninput %x: float32[B]\n%y = slice(%x, 0, 1, -9223372036854775807 - 2)\noutput %y\n",
       "integer out of range"},
  };
  for (const Case& c : cases)
    expect_error([&] { tsr::jit::Model::parse(c.text); }, TSR_INVALID_ARGUMENT, {c.expected});
}
