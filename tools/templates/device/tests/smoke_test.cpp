// Loads the @NAME@ plugin (TESSERA_PLUGIN_PATH points at the build tree) and checks a few ops on
// @NAME@:0 against values computed here: a copy round trip, fills, elementwise arithmetic, a
// reduction, a matmul, and relu's gradient (which reaches the gt and where kernels).
// Prints "@NAME@_smoke: OK" and exits 0 on success.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

int g_failures = 0;

void expect_near(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) ok = std::fabs(got[i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i]));
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "@NAME@_smoke: %s: got", what);
  for (float v : got) std::fprintf(stderr, " %g", v);
  std::fprintf(stderr, ", expected");
  for (float v : want) std::fprintf(stderr, " %g", v);
  std::fprintf(stderr, "\n");
}

// The device's plugin must be loaded; if not, say why (the loader records every refusal).
bool plugin_loaded() {
  const tsr_api_t* api = tsr::api();
  tsr_runtime_t* rt = tsr::runtime();
  for (size_t i = 0; i < api->plugin_count(rt); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof r;
    tsr::check(api->plugin_record(rt, i, &r));
    if (std::string(r.name) != "@NAME@") continue;
    if (r.loaded) return true;
    std::fprintf(stderr, "@NAME@_smoke: plugin refused: %s\n", r.reason);
    return false;
  }
  std::fprintf(stderr, "@NAME@_smoke: no plugin named @NAME@ found (is TESSERA_PLUGIN_PATH set?)\n");
  return false;
}

}  // namespace

int main() {
  try {
    if (!plugin_loaded()) return 1;
    const tsr::Device dev("@NAME@:0");
    const std::vector<float> xs = {-1.5f, 0.5f, 2.0f, -3.0f, 4.0f, 0.25f};
    const tsr::Tensor x = tsr::from_vector(xs, {2, 3}).to(dev);  // host -> device (the copy callback)
    const tsr::Tensor y = tsr::full({2, 3}, 2.0, TSR_F32, dev);  // _fill

    expect_near("copy round trip", x.to(tsr::Device::cpu()).to_vector<float>(), xs);
    expect_near("x * y + 1", (x * y + 1.0).to(tsr::Device::cpu()).to_vector<float>(),
                {-2.0f, 2.0f, 5.0f, -5.0f, 9.0f, 1.5f});
    expect_near("sum over dim 1", tsr::sum(x, {1}).to(tsr::Device::cpu()).to_vector<float>(), {1.0f, 1.25f});
    // [2,3] @ [3,2] with a transposed (column-major) right-hand side.
    expect_near("x @ x^T", tsr::matmul(x, x.t()).to(tsr::Device::cpu()).to_vector<float>(),
                {6.5f, 7.0f, 7.0f, 25.0625f});

    // d/dx sum(relu(x)) = 1 where x > 0, else 0: relu's backward runs gt and where on the device.
    tsr::Tensor leaf = x.detach().requires_grad_();
    tsr::sum(tsr::relu(leaf)).backward();
    expect_near("grad of sum(relu(x))", leaf.grad().to(tsr::Device::cpu()).to_vector<float>(),
                {0.0f, 1.0f, 1.0f, 0.0f, 1.0f, 1.0f});
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "@NAME@_smoke: %s\n", e.what());
    return 1;
  }
  if (g_failures) return 1;
  std::printf("@NAME@_smoke: OK\n");
  return 0;
}
