// A host built out of tree against the installed Tessera package (Tessera::tessera +
// Tessera::sdk). Run with TESSERA_PLUGIN_PATH pointing at a directory that holds the example_gemm
// plugin built as a separate project; the cpu backend comes from the installed core's own
// plugins/ directory. Calls example::gemm_bias_act and checks the result, then trains a small
// model with the installed C++ frontend (nn, optim, data) and round-trips it through safetensors.
//
//   consumer_host [expected plugin dir]
// Prints "consumer_host: OK" and exits 0 on success.
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/data.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/serialize.hpp"
#include "tessera/tessera.hpp"

// Fits y = x W* with Linear + AdamW over a DataLoader, saves the model, loads it into a fresh one,
// and checks both give the same outputs. Returns an error text, or "" on success.
static std::string check_frontend(const std::string& dir) {
  tsr::manual_seed(7);
  tsr::Tensor x = tsr::randn({64, 4});
  tsr::Tensor y = tsr::matmul(x, tsr::randn({4, 2}));
  tsr::data::DataLoaderOptions o;
  o.batch_size = 16;
  o.shuffle = true;
  o.num_workers = 1;
  tsr::data::DataLoader loader(std::make_shared<tsr::data::TensorDataset>(std::vector<tsr::Tensor>{x, y}), o);
  auto model = std::make_shared<tsr::nn::Linear>(4, 2);
  tsr::optim::AdamWOptions ao;
  ao.lr = 0.05;
  tsr::optim::AdamW opt(model->parameters(), ao);
  double first = -1, last = 0;
  for (int epoch = 0; epoch < 30; ++epoch)
    for (const tsr::data::Example& b : loader) {
      opt.zero_grad();
      tsr::Tensor loss = tsr::nn::mse_loss((*model)(b[0]), b[1]);
      loss.backward();
      opt.step();
      last = loss.item<double>();
      if (first < 0) first = last;
    }
  std::printf("consumer_host: frontend mse %.4f -> %.4f\n", first, last);
  if (!(last < first * 0.1)) return "the frontend's training did not reduce the loss tenfold";
  const std::string path = dir + "/consumer_model.safetensors";
  tsr::save_safetensors(path, model->state_dict());
  auto loaded = std::make_shared<tsr::nn::Linear>(4, 2);
  loaded->load_state_dict(tsr::load_safetensors(path));
  std::remove(path.c_str());
  tsr::NoGradGuard no_grad;
  if ((*loaded)(x).to_vector<float>() != (*model)(x).to_vector<float>())
    return "the model loaded from safetensors gives other outputs";
  return "";
}

int main(int argc, char** argv) {
  const std::string expect_dir = argc > 1 ? argv[1] : "";
  try {
    const tsr_api_t* api = tsr::api();
    tsr_runtime_t* rt = tsr::runtime();
    std::printf("consumer_host: core %s\n", api->version_string());
    bool cpu = false, gemm = false;
    for (size_t i = 0; i < api->plugin_count(rt); ++i) {
      tsr_plugin_record_t r{};
      r.struct_size = sizeof r;
      tsr::check(api->plugin_record(rt, i, &r));
      std::printf("  plugin %-14s %-8s %s %s\n", r.name, r.loaded ? "loaded" : "refused", r.path, r.reason);
      if (!r.loaded) continue;
      if (std::string(r.name) == "cpu") cpu = true;
      if (std::string(r.name) == "example_gemm") {
        gemm = true;
        if (!expect_dir.empty() && std::string(r.path).rfind(expect_dir, 0) != 0) {
          std::fprintf(stderr, "consumer_host: example_gemm came from %s, expected %s\n", r.path, expect_dir.c_str());
          return 1;
        }
      }
    }
    if (!cpu || !gemm) {
      std::fprintf(stderr, "consumer_host: cpu %s, example_gemm %s\n", cpu ? "loaded" : "MISSING",
                   gemm ? "loaded" : "MISSING");
      return 1;
    }

    // relu(a @ b + bias) with a [2,3], b [3,2], bias [2].
    const std::vector<float> av{1, -2, 3, 0.5f, 4, -1}, bv{1, 2, 0, -1, 2, 0.5f}, biasv{0.25f, 3};
    tsr::Tensor a = tsr::from_vector(av, {2, 3}), b = tsr::from_vector(bv, {3, 2});
    tsr::Tensor bias = tsr::from_vector(biasv, {2});
    static const tsr::Op op("example::gemm_bias_act");
    tsr::Tensor out = tsr::call(op, {a, b, bias, "relu"});
    std::vector<float> got = out.to_vector<float>();
    std::printf("consumer_host: %s = [", tsr::describe(out).c_str());
    for (size_t i = 0; i < got.size(); ++i) std::printf("%s%g", i ? ", " : "", got[i]);
    std::printf("]\n");
    if (out.sizes() != std::vector<int64_t>{2, 2} || got.size() != 4) {
      std::fprintf(stderr, "consumer_host: wrong result shape\n");
      return 1;
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        float s = biasv[j];
        for (int p = 0; p < 3; ++p) s += av[i * 3 + p] * bv[p * 2 + j];
        const float want = s < 0 ? 0 : s;
        if (std::fabs(got[i * 2 + j] - want) > 1e-5f) {
          std::fprintf(stderr, "consumer_host: out[%d,%d] = %g, expected %g\n", i, j, got[i * 2 + j], want);
          return 1;
        }
      }
    // The SDK's own ops work against the installed core too.
    float total = tsr::sum(out).item<float>();
    std::printf("consumer_host: sum = %g\n", total);
    const char* tmp = std::getenv("TMPDIR");
    const std::string err = check_frontend(tmp && *tmp ? tmp : "/tmp");
    if (!err.empty()) {
      std::fprintf(stderr, "consumer_host: %s\n", err.c_str());
      return 1;
    }
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "consumer_host: error %d: %s\n", static_cast<int>(e.code()), e.what());
    return 1;
  }
  std::printf("consumer_host: OK\n");
  return 0;
}
