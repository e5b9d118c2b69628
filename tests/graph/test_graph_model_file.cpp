// Model files: validated before use (a bad file is a status, never a crash), loadable onto
// another device.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "graph_test_util.hpp"
#include "tessera/serialize.hpp"

using graph_test::expect_error;
using graph_test::max_abs_diff;

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/tessera_model_" + name + "_" + std::to_string(::getpid()) + ".tsm";
}

struct Saved {
  std::string path;
  tsr::Tensor w, b;
  std::string text;
  explicit Saved(const std::string& name) : path(temp_path(name)) {
    w = tsr::randn({4, 3});
    b = tsr::randn({4});
    tsr::jit::TraceOptions opts;
    opts.params = {{"fc.weight", w}, {"fc.bias", b}};
    tsr::jit::Model m = tsr::jit::trace(
        [&](const std::vector<tsr::Tensor>& in) { return tsr::relu(tsr::linear(in[0], w, b)) + 0.25; },
        {tsr::randn({2, 3})}, opts);
    m.save(path);
    text = m.text();
  }
  ~Saved() { std::remove(path.c_str()); }
};

tsr::StateDict dict(std::initializer_list<std::pair<const char*, tsr::Tensor>> entries) {
  tsr::StateDict sd;
  for (const auto& [name, t] : entries) sd.insert(name, t);
  return sd;
}

}  // namespace

TEST(ModelFile, SavesWeightsAndGraphInOneSafetensorsFile) {
  Saved s("plain");
  auto meta = tsr::load_safetensors_metadata(s.path);
  EXPECT_EQ(meta["format"], "tessera.model");
  EXPECT_EQ(meta["tessera.model.version"], "1");
  EXPECT_EQ(meta["tessera.graph"], s.text);
  auto sd = tsr::load_safetensors(s.path);
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(max_abs_diff(sd.at("fc.weight"), s.w), 0.0);
  tsr::jit::Model m = tsr::jit::Model::load(s.path);
  tsr::Tensor x = tsr::randn({2, 3});
  EXPECT_EQ(max_abs_diff(m(x), tsr::relu(tsr::linear(x, s.w, s.b)) + 0.25), 0.0);
}

TEST(ModelFile, LoadsOntoAnotherDevice) {
  if (tsr::api()->device_count(tsr::runtime(), TSR_DEVICE_TYPE_CPU) < 2)
    GTEST_SKIP() << "needs TESSERA_CPU_DEVICES=2 (a second virtual cpu device)";
  Saved s("device");
  tsr::jit::Model m = tsr::jit::Model::load(s.path, tsr::Device("cpu:1"));
  EXPECT_EQ(m.device(), tsr::Device("cpu:1"));
  tsr::Tensor x = tsr::randn({2, 3});
  tsr::Tensor y = m(x.to(tsr::Device("cpu:1")));
  EXPECT_EQ(y.device(), tsr::Device("cpu:1"));
  EXPECT_EQ(max_abs_diff(y.to(tsr::Device::cpu()), tsr::relu(tsr::linear(x, s.w, s.b)) + 0.25), 0.0);
  expect_error([&] { m(x); }, TSR_INVALID_ARGUMENT, {"on cpu:1", "cpu:0"});
  EXPECT_NE(m.text().find("device cpu:1"), std::string::npos);
}

TEST(ModelFile, BadFilesAreErrors) {
  Saved s("bad");
  std::string p = temp_path("bad2");
  auto graph_meta = [&](const std::string& text) {
    return std::map<std::string, std::string>{
        {"format", "tessera.model"}, {"tessera.model.version", "1"}, {"tessera.graph", text}};
  };
  // Not a model: plain safetensors.
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}}));
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"not a Tessera model"});
  // A later format.
  auto meta = graph_meta(s.text);
  meta["tessera.model.version"] = "2";
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}, {"fc.bias", s.b}}), meta);
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"model format version 2 is not supported"});
  // A weight missing, of the wrong shape, or one too many.
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}}), graph_meta(s.text));
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"%fc.bias has no tensor in the file"});
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}, {"fc.bias", tsr::randn({5})}}), graph_meta(s.text));
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"'fc.bias' is [5] float32", "float32[4]"});
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}, {"fc.bias", s.b}, {"extra", s.b}}), graph_meta(s.text));
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"holds 3 tensors but the graph uses 2"});
  // A graph that does not parse names the file and the line.
  tsr::save_safetensors(p, dict({{"fc.weight", s.w}, {"fc.bias", s.b}}), graph_meta("tessera.graph 1\nbogus\n"));
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {p, "line 2:1: unknown statement 'bogus'"});
  // Every truncation of a valid file is a status.
  std::ifstream in(s.path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t cut : {size_t(0), size_t(7), size_t(8), size_t(40), bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    EXPECT_THROW(tsr::jit::Model::load(p), tsr::Error) << "cut at " << cut;
  }
  std::remove(p.c_str());
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_NOT_FOUND, {});
}

TEST(ModelFile, AModelTracedOnAnotherDeviceLoadsWhereAsked) {
  // As a model traced on cuda:0 reads on a machine without it: its device and the device
  // arguments naming it move to the device model_load is given.
  std::string p = temp_path("moved");
  tsr::Tensor w = tsr::randn({3});
  tsr::StateDict sd;
  sd.insert("w", w);
  tsr::save_safetensors(p, sd,
                        {{"format", "tessera.model"},
                         {"tessera.model.version", "1"},
                         {"tessera.graph", "tessera.graph 1\ndevice cuda:0\ninput %x: float32[3]\nparam %w: float32[3]\n"
                                           "%y = to(%x, None, cuda:0)\n%z = mul(%y, %w)\noutput %z\n"}});
  expect_error([&] { tsr::jit::Model::load(p); }, TSR_INVALID_ARGUMENT, {"device 'cuda:0'"});
  tsr::jit::Model m = tsr::jit::Model::load(p, tsr::Device::cpu());
  EXPECT_NE(m.text().find("to(%x, None, cpu:0)"), std::string::npos) << m.text();
  tsr::Tensor x = tsr::randn({3});
  EXPECT_EQ(max_abs_diff(m(x), x * w), 0.0);
  std::remove(p.c_str());
}
