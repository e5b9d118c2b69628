// Graph text and model file mutation fuzzer (docs/fuzzing.md): valid graphs (traced, and written by
// hand) are mutated line by line and token by token, then parsed, printed, parsed again and run;
// saved model files are mutated byte by byte and loaded. Every step returns OK or a status, never
// crashes; an accepted text round-trips exactly; a run of an accepted graph with inputs of its
// declared types returns OK or a status and leaves no output behind on error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/jit.hpp"
#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

namespace {

const char* const kHandWritten[] = {
    R"(tessera.graph 1
device cpu:0
input %x: float32[B, 3]
param %w: float32[4, 3]
param %b: float32[4]
const %s: float64[] = 0.5 wrapped
%0: float32[B, 4] = linear(%x, %w, %b)
%1: float32[B, 4] = relu(%0)
%2: float32[B, 4] = mul(%1, %s)
%3: float32[B*4] = reshape(%2, [B*4])
output %3
)",
    R"(tessera.graph 1
device cpu:0
input %x: float32[B, T]
%a = transpose(%x, 0, 1)
%b = contiguous(%a)
%c = slice(%b, 0, 1, 9223372036854775807, 2)
%d = to(%c, float64, cpu:0, false)
%e = sum(%d, dim=[1], keepdim=true)
%f = arange(0, 2*T+1, 1, int64)
%i = cat([%x, %x], 0)
%j = squeeze(%e)
output %e, %f, %i, %j
)",
};

const char* const kTokens[] = {"%x", "%0", "%w", "B", "T", "B*T", "-1", "0", "3", "9223372036854775807",
                               "-9223372036854775808", "1e308", "nan", "inf", "None", "true", "\"s\"", "[",
                               "]", "(", ")", ",", "=", ":", "float32", "int64", "bool", "cpu:0", "cuda:7",
                               "relu", "view", "copy_", "add", "output", "input", "param", "const", "#",
                               "tessera.graph 2", "[B, B]", "[%x, %x]", "2*B-1", "wrapped", "\n", ""};

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::string mutate(const std::string& text, std::mt19937_64& rng) {
  std::vector<std::string> lines = split_lines(text);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % std::max<size_t>(n, 1)); };
  int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !lines.empty(); ++e) {
    size_t l = pick(lines.size());
    std::string& line = lines[l];
    // Half the edits keep the syntax (another number, another value), so that many mutants parse
    // and the runner sees odd but well-formed graphs.
    if (rng() % 2 == 0) {
      std::vector<size_t> numbers, refs;
      for (size_t k = 0; k < line.size(); ++k) {
        bool start = k == 0 || !(std::isalnum(static_cast<unsigned char>(line[k - 1])) || line[k - 1] == '%');
        if (start && std::isdigit(static_cast<unsigned char>(line[k]))) numbers.push_back(k);
        if (line[k] == '%') refs.push_back(k);
      }
      static const char* const kNumbers[] = {"0", "1", "2", "3", "-1", "-2", "7", "100", "4096"};
      static const char* const kRefs[] = {"%x", "%0", "%1", "%2", "%w", "%b", "%a", "%e", "%s"};
      bool num = !numbers.empty() && (refs.empty() || rng() % 2);
      const std::vector<size_t>& at = num ? numbers : refs;
      if (!at.empty()) {
        size_t a = at[pick(at.size())], b = a + 1;
        while (b < line.size() && (std::isalnum(static_cast<unsigned char>(line[b])) || line[b] == '.' || line[b] == '_')) ++b;
        line.replace(a, b - a, num ? kNumbers[pick(9)] : kRefs[pick(9)]);
        continue;
      }
    }
    switch (rng() % 8) {
      case 0:  // drop a line
        lines.erase(lines.begin() + static_cast<long>(l));
        break;
      case 1:  // duplicate a line
        lines.insert(lines.begin() + static_cast<long>(l), line);
        break;
      case 2:  // swap two lines
        std::swap(line, lines[pick(lines.size())]);
        break;
      case 3:  // replace a span by a token
        if (!line.empty()) {
          size_t a = pick(line.size()), n = 1 + pick(std::min<size_t>(8, line.size() - a));
          line.replace(a, n, kTokens[pick(sizeof kTokens / sizeof *kTokens)]);
        }
        break;
      case 4:  // insert a token
        line.insert(pick(line.size() + 1), kTokens[pick(sizeof kTokens / sizeof *kTokens)]);
        break;
      case 5:  // delete a span
        if (!line.empty()) {
          size_t a = pick(line.size());
          line.erase(a, 1 + pick(line.size() - a));
        }
        break;
      case 6:  // a random byte
        if (!line.empty()) line[pick(line.size())] = static_cast<char>(1 + rng() % 255);
        break;
      default:  // truncate the text here
        lines.resize(l);
        break;
    }
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Inputs of the declared types (symbols 2), weights of the declared types: the run may fail, but
// only with a status.
void run_checked(tsr::jit::Model& m, const std::string& text) {
  const tsr_model_ext_t* e = tsr::jit::detail::model_ext(tsr::runtime());
  std::vector<tsr::Tensor> in;
  for (const tsr::jit::IoInfo& io : m.inputs()) {
    std::vector<int64_t> sizes;
    int64_t numel = 1;
    for (int64_t s : io.sizes) {
      sizes.push_back(s < 0 ? 2 : s);
      if (sizes.back() > (1 << 16) || (numel *= sizes.back()) > (1 << 16)) return;  // too big to bother
    }
    in.push_back(io.dtype == TSR_F32 || io.dtype == TSR_F64 ? tsr::randn(sizes, io.dtype) : tsr::zeros(sizes, io.dtype));
  }
  std::vector<tsr_tensor_t*> raw;
  for (auto& t : in) raw.push_back(t.get());
  std::vector<tsr_tensor_t*> outs(e->model_num_outputs(m.get()), nullptr);
  tsr_status_t st = e->model_run(m.get(), raw.data(), raw.size(), outs.data(), outs.size(), nullptr);
  if (st) {
    EXPECT_NE(tsr::api()->status_code(st), TSR_INTERNAL) << tsr::api()->status_message(st) << "\n" << text;
    tsr::api()->status_free(st);
    for (tsr_tensor_t* o : outs) EXPECT_EQ(o, nullptr) << "an output left behind on error";
    return;
  }
  for (tsr_tensor_t* o : outs) tsr::api()->tensor_release(o);
}

std::vector<std::string> base_texts() {
  std::vector<std::string> texts(std::begin(kHandWritten), std::end(kHandWritten));
  tsr::manual_seed(3);
  tsr::nn::Sequential net(std::make_shared<tsr::nn::Linear>(3, 5), std::make_shared<tsr::nn::Tanh>(),
                          std::make_shared<tsr::nn::Linear>(5, 2));
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}};
  texts.push_back(tsr::jit::trace(net, {tsr::randn({3, 3})}, opts).text());
  return texts;
}

}  // namespace

TEST(GraphFuzz, MutatedTextsParseOrFailWithAPosition) {
  const char* seed_env = std::getenv("TESSERA_FUZZ_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 1;
  const int iters = std::getenv("TESSERA_FUZZ_ITERS") ? std::atoi(std::getenv("TESSERA_FUZZ_ITERS")) : 3000;
  std::mt19937_64 rng(seed);
  std::vector<std::string> bases = base_texts();
  for (const std::string& b : bases) ASSERT_NO_THROW(tsr::jit::Model::parse(b)) << b;
  int accepted = 0;
  for (int i = 0; i < iters; ++i) {
    std::string text = mutate(bases[static_cast<size_t>(i) % bases.size()], rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", iteration " + std::to_string(i) + ":\n" + text);
    tsr::jit::Model m;
    try {
      m = tsr::jit::Model::parse(text);
    } catch (const tsr::Error& e) {
      ASSERT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
      ASSERT_NE(std::string(e.what()).find("graph text line "), std::string::npos) << e.what();
      continue;
    }
    ++accepted;
    std::string printed = m.text();
    try {
      ASSERT_EQ(tsr::jit::Model::parse(printed).text(), printed);
    } catch (const tsr::Error& e) {
      FAIL() << "the printed form does not parse back: " << e.what() << "\nprinted:\n" << printed;
    }
    // Bind every weight with a tensor of its type, then run.
    bool bound = true;
    for (const std::string& line : split_lines(printed)) {
      if (line.rfind("param %", 0) != 0 && (line.rfind("const %", 0) != 0 || line.find(" = ") != std::string::npos))
        continue;
      size_t colon = line.find(':'), open = line.find('[');
      std::string name = line.substr(7, colon - 7), dtype = line.substr(colon + 2, open - colon - 2);
      std::vector<int64_t> sizes;
      std::stringstream dims(line.substr(open + 1, line.size() - open - 2));
      for (std::string d; std::getline(dims, d, ',');) sizes.push_back(std::stoll(d));
      try {
        m.bind(name, dtype == "float32" ? tsr::randn(sizes) : tsr::zeros(sizes, dtype == "int64" ? TSR_I64 : TSR_F64));
      } catch (const tsr::Error&) {
        bound = false;
      }
    }
    if (bound) run_checked(m, printed);
  }
  EXPECT_GT(accepted, iters / 20) << "the mutations should leave some graphs valid";
}

TEST(GraphFuzz, MutatedModelFilesLoadOrFail) {
  const char* seed_env = std::getenv("TESSERA_FUZZ_SEED");
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 2);
  const std::string path = ::testing::TempDir() + "/tessera_graph_fuzz_" + std::to_string(::getpid()) + ".tsm";
  tsr::nn::Sequential net(std::make_shared<tsr::nn::Linear>(3, 4), std::make_shared<tsr::nn::ReLU>());
  tsr::jit::trace(net, {tsr::randn({2, 3})}).save(path);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int i = 0; i < 1500; ++i) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t at = static_cast<size_t>(rng() % b.size());
      if (rng() % 4 == 0)
        b.erase(at, static_cast<size_t>(rng() % 16));
      else
        b[at] = static_cast<char>(rng() % 256);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
    try {
      tsr::jit::Model m = tsr::jit::Model::load(path);
      run_checked(m, m.text());
    } catch (const tsr::Error& e) {
      EXPECT_NE(e.code(), TSR_INTERNAL) << "iteration " << i << ": " << e.what();
    }
  }
  std::remove(path.c_str());
}
