// Loads the @NAME@ plugin (TESSERA_PLUGIN_PATH points at the build tree) and checks
// @NAME@::scale_add: values on a strided input, the meta function's error, and the gradient.
// Prints "@NAME@_test: OK" and exits 0 on success.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

int g_failures = 0;

void expect_near(const char* what, const std::vector<double>& got, const std::vector<double>& want) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) ok = std::fabs(got[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i]));
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "@NAME@_test: %s: got", what);
  for (double v : got) std::fprintf(stderr, " %g", v);
  std::fprintf(stderr, ", expected");
  for (double v : want) std::fprintf(stderr, " %g", v);
  std::fprintf(stderr, "\n");
}

}  // namespace

int main() {
  try {
    static const tsr::Op scale_add("@NAME@::scale_add");  // throws NOT_FOUND if the plugin did not load
    const tsr::Tensor x = tsr::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
    const tsr::Tensor y = tsr::from_vector(std::vector<double>{10, 20, 30, 40, 50, 60}, {3, 2});

    // y.t() is a strided view: the kernel reads through its strides.
    expect_near("3 * x + y^T", tsr::call(scale_add, {x, y.t(), 3.0}).to_vector<double>(), {13, 36, 59, 32, 55, 78});
    expect_near("default alpha", tsr::call(scale_add, {x, x}).to_vector<double>(), {2, 4, 6, 8, 10, 12});

    bool refused = false;  // mismatched shapes: the meta function's error, before any kernel runs
    try {
      tsr::call(scale_add, {x, y});
    } catch (const tsr::Error& e) {
      refused = std::string(e.what()).find("same shape") != std::string::npos;
    }
    if (!refused) {
      ++g_failures;
      std::fprintf(stderr, "@NAME@_test: shapes [2, 3] and [3, 2] were not refused by the meta function\n");
    }

    // The backward formula: d sum(alpha*x + y) / dx = alpha, / dy = 1.
    tsr::Tensor xl = x.detach().requires_grad_(), yl = x.detach().requires_grad_();
    tsr::sum(tsr::call(scale_add, {xl, yl, 0.5})).backward();
    expect_near("grad x", xl.grad().to_vector<double>(), std::vector<double>(6, 0.5));
    expect_near("grad y", yl.grad().to_vector<double>(), std::vector<double>(6, 1.0));
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "@NAME@_test: %s\n", e.what());
    return 1;
  }
  if (g_failures) return 1;
  std::printf("@NAME@_test: OK\n");
  return 0;
}
