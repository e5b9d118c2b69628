// Tracing the frontend's layers and running the graph: results equal eager ones exactly on the
// CPU (the same kernels run), through save and load too.
#include <cstdio>
#include <memory>
#include <thread>

#include "graph_test_util.hpp"
#include "tessera/nn.hpp"
#ifdef TESSERA_HAVE_TRAIN
#include "gpt.hpp"
#endif

using graph_test::expect_error;
using graph_test::max_abs_diff;

namespace {

std::string temp_path(const std::string& name) {
  return (::testing::TempDir() + "/tessera_graph_" + name + "_" + std::to_string(::getpid()) + ".tsm");
}

// The traced model, its text round trip and its saved-and-loaded copy give the eager result.
void expect_like_eager(tsr::jit::Model& m, const std::vector<tsr::Tensor>& in, const tsr::Tensor& eager,
                       const std::string& name) {
  EXPECT_EQ(max_abs_diff(m.run(in).at(0), eager), 0.0) << name << ": traced";
  std::string path = temp_path(name);
  m.save(path);
  tsr::jit::Model loaded = tsr::jit::Model::load(path);
  std::remove(path.c_str());
  EXPECT_EQ(loaded.text(), m.text()) << name;
  EXPECT_EQ(max_abs_diff(loaded.run(in).at(0), eager), 0.0) << name << ": loaded";
}

std::shared_ptr<tsr::nn::Sequential> mlp() {
  return std::make_shared<tsr::nn::Sequential>(std::make_shared<tsr::nn::Linear>(7, 16), std::make_shared<tsr::nn::ReLU>(),
                                               std::make_shared<tsr::nn::Linear>(16, 16), std::make_shared<tsr::nn::GELU>(),
                                               std::make_shared<tsr::nn::Linear>(16, 3));
}

}  // namespace

TEST(Trace, MlpEqualsEagerAndFollowsADynamicBatch) {
  tsr::manual_seed(1);
  auto net = mlp();
  tsr::Tensor x = tsr::randn({5, 7});
  tsr::jit::TraceOptions opts;
  opts.input_names = {"x"};
  opts.output_names = {"logits"};
  opts.dynamic = {{0, 0, "B"}};
  tsr::jit::Model m = tsr::jit::trace(*net, {x}, opts);
  std::string text = m.text();
  EXPECT_NE(text.find("input %x: float32[B, 7]"), std::string::npos) << text;
  EXPECT_NE(text.find("param %0.weight: float32[16, 7]"), std::string::npos) << text;
  EXPECT_NE(text.find("output %logits"), std::string::npos) << text;
  expect_like_eager(m, {x}, net->forward(x), "mlp");
  // Another batch size, an odd one and an empty one.
  for (int64_t b : {1, 9, 0}) {
    tsr::Tensor y = tsr::randn({b, 7});
    EXPECT_EQ(max_abs_diff(m(y), net->forward(y)), 0.0) << "batch " << b;
  }
  auto ins = m.inputs();
  ASSERT_EQ(ins.size(), 1u);
  EXPECT_EQ(ins[0].name, "x");
  EXPECT_EQ(ins[0].sizes, (std::vector<int64_t>{-1, 7}));
  EXPECT_EQ(ins[0].symbols, (std::vector<std::string>{"B", ""}));
  EXPECT_EQ(m.outputs().at(0).name, "logits");
}

TEST(Trace, CnnInEvalModeEqualsEager) {
  tsr::manual_seed(2);
  auto net = std::make_shared<tsr::nn::Sequential>(
      std::make_shared<tsr::nn::Conv2d>(3, 8, std::vector<int64_t>{3}, std::vector<int64_t>{1}, std::vector<int64_t>{1}),
      std::make_shared<tsr::nn::BatchNorm2d>(8), std::make_shared<tsr::nn::ReLU>(),
      std::make_shared<tsr::nn::MaxPool2d>(std::vector<int64_t>{2}), std::make_shared<tsr::nn::Flatten>(),
      std::make_shared<tsr::nn::Linear>(8 * 5 * 4, 10));
  // Running statistics that are not the initial ones, then inference.
  net->train();
  for (int i = 0; i < 3; ++i) net->forward(tsr::randn({4, 3, 11, 9}));
  net->eval();
  tsr::Tensor x = tsr::randn({2, 3, 11, 9});
  tsr::jit::Model m = tsr::jit::trace(*net, {x});
  std::string text = m.text();
  EXPECT_NE(text.find("running_mean"), std::string::npos) << "buffers are weights:\n" << text;
  expect_like_eager(m, {x}, net->forward(x), "cnn");
}

TEST(Trace, LstmEqualsEager) {
  tsr::manual_seed(3);
  tsr::nn::LSTM lstm(5, 6, 2, true, true);
  tsr::Tensor x = tsr::randn({3, 4, 5});
  tsr::jit::TraceOptions opts;
  for (auto& p : lstm.named_parameters()) opts.params.push_back(p);
  tsr::jit::Model m = tsr::jit::trace(
      [&](const std::vector<tsr::Tensor>& in) {
        auto [out, state] = lstm.forward(in[0], std::nullopt);
        return std::vector<tsr::Tensor>{out, state.first, state.second};
      },
      {x}, opts);
  auto [out, state] = lstm.forward(x, std::nullopt);
  std::vector<tsr::Tensor> r = m.run({x});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(max_abs_diff(r[0], out), 0.0);
  EXPECT_EQ(max_abs_diff(r[1], state.first), 0.0);
  EXPECT_EQ(max_abs_diff(r[2], state.second), 0.0);
  expect_like_eager(m, {x}, out, "lstm");
}

#ifdef TESSERA_HAVE_TRAIN
TEST(Trace, GptEqualsEager) {
  tsr::manual_seed(4);
  tessera_train::GPTConfig cfg;
  cfg.n_layer = 2;
  cfg.n_embd = 32;
  tessera_train::GPT gpt(cfg);
  gpt.eval();
  tsr::Tensor idx = tsr::randint(0, cfg.vocab_size, {3, 11});
  tsr::jit::Model m = tsr::jit::trace(gpt, {idx});
  expect_like_eager(m, {idx}, gpt.forward(idx), "gpt");
}

TEST(Trace, GptWithDynamicBatchAndLength) {
  tsr::manual_seed(6);
  tessera_train::GPTConfig cfg;
  cfg.n_layer = 1;
  cfg.n_embd = 32;
  tessera_train::GPT gpt(cfg);
  gpt.eval();
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}, {0, 1, "T"}};
  tsr::jit::Model m = tsr::jit::trace(gpt, {tsr::randint(0, cfg.vocab_size, {3, 9})}, opts);
  std::string text = m.text();
  // GPT's reshape(B, T, H, C/H) and arange(T) follow the inputs.
  EXPECT_NE(text.find("input %x0: int64[B, T]"), std::string::npos) << text;
  EXPECT_NE(text.find("[B, T, 4, 8])"), std::string::npos) << text;
  EXPECT_NE(text.find("arange(0, T, 1, int64"), std::string::npos) << text;
  EXPECT_EQ(tsr::jit::Model::parse(text).text(), text);
  for (auto [b, t] : {std::pair<int64_t, int64_t>{1, 1}, {2, 16}, {5, 4}, {3, 9}}) {
    tsr::Tensor idx = tsr::randint(0, cfg.vocab_size, {b, t});
    EXPECT_EQ(max_abs_diff(m(idx), gpt.forward(idx)), 0.0) << b << "x" << t;
  }
  tsr::Tensor idx = tsr::randint(0, cfg.vocab_size, {2, 7});
  expect_like_eager(m, {idx}, gpt.forward(idx), "gpt-dynamic");
}
#endif

TEST(Trace, SizesBecomeExpressionsOfTheSymbols) {
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}, {0, 1, "T"}};
  auto fn = [](const std::vector<tsr::Tensor>& in) {
    const int64_t B = in[0].size(0), T = in[0].size(1);
    tsr::Tensor flat = in[0].reshape({B * T, in[0].size(2)});           // B*T
    tsr::Tensor pos = tsr::arange(2 * T + 1, TSR_F32).narrow(0, 0, T);  // 2*T+1, then T
    return tsr::sum(flat, {1}).reshape({B, T}) + pos;
  };
  tsr::Tensor x = tsr::randn({4, 5, 3});
  tsr::jit::Model m = tsr::jit::trace(fn, {x}, opts);
  std::string text = m.text();
  EXPECT_NE(text.find("[B*T, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("arange(0, 2*T+1, 1, float32"), std::string::npos) << text;
  EXPECT_NE(text.find("float32[B*T, 3]"), std::string::npos) << "result types too:\n" << text;
  m.optimize();  // arange(2*T+1) is not folded: it follows the inputs
  for (auto s : {std::vector<int64_t>{1, 1, 3}, {7, 2, 3}, {0, 4, 3}, {4, 5, 3}}) {
    tsr::Tensor y = tsr::randn(s);
    EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
  }
  EXPECT_EQ(tsr::jit::Model::parse(m.text()).text(), m.text());
  auto outs = m.outputs();
  EXPECT_EQ(outs[0].symbols, (std::vector<std::string>{"B", "T"}));
}

TEST(Trace, SizesThatCannotFollowTheInputsAreErrors) {
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "N"}};
  tsr::Tensor x = tsr::randn({6, 2});
  // A branch on a size: other ops at other sizes.
  expect_error([&] {
    tsr::jit::trace([](const std::vector<tsr::Tensor>& in) { return in[0].size(0) > 5 ? tsr::exp(in[0]) : tsr::cos(in[0]); },
                    {x}, opts);
  }, TSR_INVALID_ARGUMENT, {"node 0 (%0 = exp) calls cos in trace 1", "other ops at other sizes"});
  // A size that is not multilinear in the symbols.
  expect_error([&] {
    tsr::jit::trace([](const std::vector<tsr::Tensor>& in) {
      return tsr::arange(in[0].size(0) * in[0].size(0), TSR_F32);
    }, {x}, opts);
  }, TSR_INVALID_ARGUMENT, {"argument 'end' is not a multilinear function of the symbols", "36 at N=6"});
  // A tensor made outside ops whose shape follows a size.
  expect_error([&] {
    tsr::jit::trace([](const std::vector<tsr::Tensor>& in) {
      return in[0] + tsr::from_vector<float>(std::vector<float>(static_cast<size_t>(in[0].size(0)), 1.f), {in[0].size(0), 1});
    }, {x}, opts);
  }, TSR_INVALID_ARGUMENT, {"const %c0 is float32[6, 1] in trace 0 but float32[5, 1]"});
  // Example sizes too small to trace smaller.
  expect_error([&] { tsr::jit::trace([](const std::vector<tsr::Tensor>& in) { return in[0] * 2; }, {tsr::randn({2, 2})}, opts); },
               TSR_INVALID_ARGUMENT, {"needs an example size of at least 3"});
}

TEST(Trace, PluginOpInsideAGraph) {
  tsr_op_t* op = nullptr;
  tsr_status_t st = tsr::api()->op_find(tsr::runtime(), "example::gemm_bias_act", &op);
  if (st) {
    tsr::api()->status_free(st);
    GTEST_SKIP() << "the example_gemm plugin is not loaded (build tessera_example_gemm)";
  }
  tsr::manual_seed(5);
  tsr::Tensor w = tsr::randn({6, 4}), b = tsr::randn({4});
  tsr::jit::TraceOptions opts;
  opts.params = {{"w", w}, {"b", b}};
  auto fn = [&](const std::vector<tsr::Tensor>& in) {
    return tsr::call("example::gemm_bias_act", {tsr::relu(in[0]), w, b, "gelu"}) * 2.0;
  };
  tsr::Tensor x = tsr::randn({5, 6});
  tsr::jit::Model m = tsr::jit::trace(fn, {x}, opts);
  std::string text = m.text();
  EXPECT_NE(text.find("plugin example_gemm: example::gemm_bias_act"), std::string::npos) << text;
  EXPECT_NE(text.find("example::gemm_bias_act(%"), std::string::npos) << text;
  expect_like_eager(m, {x}, fn({x}), "plugin");
}

TEST(Trace, CompositeOpsAreCapturedOnceAtTheCallersLevel) {
  tsr::Tensor x = tsr::randn({2, 3, 4});
  tsr::jit::Model m = tsr::jit::trace(
      [](const std::vector<tsr::Tensor>& in) { return tsr::softmax(tsr::flatten(in[0], 1), 1).transpose(0, 1); }, {x});
  std::string text = m.text();
  // flatten is a composite (a reshape inside): one node, no reshape of its own.
  EXPECT_NE(text.find("= flatten(%x0, 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("reshape("), std::string::npos) << text;
  EXPECT_NE(text.find("= transpose(%"), std::string::npos) << text;
}

// cat runs one kernel over all its inputs: the trace still holds one cat node (the kernel and
// any promotion copies inside it are not recorded), and the graph replays it exactly, with more
// inputs than other kernels take, strided ones and a promoted one among them.
TEST(Trace, CatOfManyInputsIsOneNodeAndReplays) {
  tsr::Tensor x = tsr::randn({4, 4});
  auto fn = [](const std::vector<tsr::Tensor>& in) {
    std::vector<tsr::Tensor> parts;
    for (int k = 0; k < 20; ++k) parts.push_back(k % 3 == 1 ? (in[0] * double(k)).t() : in[0] + double(k));
    parts.push_back(tsr::ones({4, 2}, TSR_F64));
    return tsr::cat(parts, 1);
  };
  tsr::jit::Model m = tsr::jit::trace(fn, {x});
  std::string text = m.text();
  const size_t at = text.find(" = cat([");
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find(" = cat([", at + 1), std::string::npos) << text;
  EXPECT_EQ(text.find("copy_("), std::string::npos) << text;
  tsr::Tensor y = tsr::randn({4, 4});
  EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
  expect_like_eager(m, {y}, fn({y}), "cat");
}

TEST(Trace, CapturedTensorsBecomeConsts) {
  tsr::Tensor table = tsr::randn({4, 3});
  tsr::Tensor x = tsr::randn({4, 3});
  auto fn = [&](const std::vector<tsr::Tensor>& in) { return (in[0] + table) * 0.5 + 1; };
  tsr::jit::Model m = tsr::jit::trace(fn, {x});
  std::string text = m.text();
  EXPECT_NE(text.find("const %c0: float32[4, 3]"), std::string::npos) << text;
  tsr::Tensor y = tsr::randn({4, 3});
  EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
  expect_like_eager(m, {y}, fn({y}), "consts");
}

TEST(Trace, InPlaceOpsAndCopiesReplay) {
  tsr::Tensor x = tsr::randn({3, 5});
  auto fn = [](const std::vector<tsr::Tensor>& in) {
    tsr::Tensor t = in[0] * 3.0;
    tsr::add_(t, in[0]);
    tsr::Tensor part = t.narrow(1, 1, 2);
    part.copy_(tsr::tanh(part));
    return t;
  };
  tsr::jit::Model m = tsr::jit::trace(fn, {x});
  std::string text = m.text();
  EXPECT_NE(text.find("add_("), std::string::npos) << text;
  EXPECT_NE(text.find("\ncopy_(%"), std::string::npos) << text;
  tsr::Tensor y = tsr::randn({3, 5});
  tsr::Tensor before = y.clone();
  EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
  EXPECT_EQ(max_abs_diff(y, before), 0.0) << "the input is not written";
  m.optimize();  // passes leave graphs that write alone
  EXPECT_EQ(max_abs_diff(m(y), fn({y})), 0.0);
}

TEST(Trace, RunChecksItsInputs) {
  tsr::jit::TraceOptions opts;
  opts.input_names = {"a", "b"};
  opts.dynamic = {{0, 0, "N"}, {1, 0, "N"}};
  tsr::jit::Model m = tsr::jit::trace([](const std::vector<tsr::Tensor>& in) { return in[0] * in[1]; },
                                      {tsr::randn({4, 2}), tsr::randn({4, 2})}, opts);
  expect_error([&] { m.run({tsr::randn({4, 2})}); }, TSR_INVALID_ARGUMENT, {"takes 2 input(s) (a, b), got 1"});
  expect_error([&] { m.run({tsr::randn({4, 2}), tsr::randn({4, 3})}); }, TSR_INVALID_ARGUMENT,
               {"input 1 'b' expects float32[N, 2]", "[4, 3]"});
  expect_error([&] { m.run({tsr::randn({4, 2}), tsr::randn({5, 2})}); }, TSR_INVALID_ARGUMENT,
               {"N is 4 in an earlier input"});
  expect_error([&] { m.run({tsr::randn({4, 2}), tsr::randn({4, 2}, TSR_F64)}); }, TSR_INVALID_ARGUMENT,
               {"'b' expects float32[N, 2]", "float64"});
  // A non-contiguous input is fine.
  tsr::Tensor a = tsr::randn({2, 3}).transpose(0, 1), b = tsr::randn({3, 2});
  EXPECT_EQ(max_abs_diff(m.run({a, b})[0], a * b), 0.0);
}

TEST(Trace, MisuseIsAnError) {
  const tsr_model_ext_t* e = tsr::jit::detail::model_ext(tsr::runtime());
  tsr::Tensor x = tsr::randn({2});
  expect_error([&] { tsr::check(e->trace_input(x.get(), "x", nullptr)); }, TSR_FAILED_PRECONDITION, {"not tracing"});
  tsr::check(e->trace_begin(tsr::runtime()));
  expect_error([&] { tsr::check(e->trace_begin(tsr::runtime())); }, TSR_FAILED_PRECONDITION, {"already tracing"});
  tsr::check(e->trace_input(x.get(), "x", nullptr));
  expect_error([&] { tsr::check(e->trace_param(x.get(), "w")); }, TSR_INVALID_ARGUMENT, {"already in the trace (as %x)"});
  expect_error([&] { tsr::check(e->trace_param(tsr::randn({1}).get(), "w-1")); }, TSR_INVALID_ARGUMENT,
               {"not a value name"});
  tsr::Tensor y = x + 1;
  tsr::Tensor y2 = x * 2;
  const char* bad[] = {"renamed"};
  tsr_model_t* out = nullptr;
  tsr_tensor_t* outs[] = {x.get()};
  expect_error([&] { tsr::check(e->trace_end(outs, 1, bad, &out)); }, TSR_INVALID_ARGUMENT,
               {"output 0 is the input, param or const %x"});
  EXPECT_EQ(out, nullptr);
  // trace_end ended the trace even though it failed.
  expect_error([&] { tsr::check(e->trace_input(x.get(), "x", nullptr)); }, TSR_FAILED_PRECONDITION, {"not tracing"});
  // A throwing traced function aborts the trace.
  EXPECT_THROW(tsr::jit::trace([](const std::vector<tsr::Tensor>& in) { return in[0].view({7}); }, {x}), tsr::Error);
  tsr::check(e->trace_begin(tsr::runtime()));
  e->trace_abort();
  EXPECT_TRUE(tsr::is_grad_enabled()) << "grad mode is restored after a trace";
}

TEST(Trace, OneModelRunsFromManyThreadsAtOnce) {
  tsr::manual_seed(8);
  auto net = mlp();
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}};
  tsr::jit::Model m = tsr::jit::trace(*net, {tsr::randn({4, 7})}, opts);
  std::vector<tsr::Tensor> xs, want;
  for (int t = 0; t < 4; ++t) {
    xs.push_back(tsr::randn({3 + t, 7}));
    want.push_back(net->forward(xs.back()));
  }
  std::vector<double> diffs(4, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      double worst = 0;
      for (int i = 0; i < 50; ++i) {
        tsr::Tensor y = m(xs[static_cast<size_t>(t)]);
        worst = std::max(worst, tsr::amax(tsr::abs(y - want[static_cast<size_t>(t)])).item<double>());
      }
      diffs[static_cast<size_t>(t)] = worst;
    });
  for (auto& th : threads) th.join();
  for (double d : diffs) EXPECT_EQ(d, 0.0);
}
