// Tessera quickstart: tensors, broadcasting, views, reductions, matmul and softmax on the
// default device, ending with a linear regression fitted by gradient descent written with ops.
//
//   tessera_quickstart [--device cpu:0] [--steps N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "tessera/tessera.hpp"

static void show(const char* label, const tsr::Tensor& t) {
  std::printf("%-28s %s = [", label, tsr::describe(t).c_str());
  bool integral = tsr::is_integral(t.dtype(), true);
  std::vector<double> v = t.to_vector<double>();
  for (size_t i = 0; i < v.size() && i < 8; ++i) std::printf(integral ? "%s%.0f" : "%s%.4f", i ? ", " : "", v[i]);
  std::printf("%s]\n", v.size() > 8 ? ", ..." : "");
}

int main(int argc, char** argv) {
  std::string device = "cpu:0";
  int steps = 200;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      device = argv[++i];
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--device cpu:0] [--steps N]\n", argv[0]);
      return 2;
    }
  }
  try {
    tsr::Device dev(device);
    tsr::manual_seed(2026);
    std::printf("Tessera quickstart on %s\n\n", dev.str().c_str());

    // Broadcasting, promotion and views.
    tsr::Tensor a = tsr::arange(0, 6, 1, TSR_F32, dev).view({2, 3});
    tsr::Tensor col = tsr::from_vector(std::vector<float>{10, 20}, {2, 1}, dev);
    show("a = arange(6).view(2,3)", a);
    show("a + [[10],[20]]", a + col);
    show("a.t() (a view)", a.t());
    show("sum(a, dim=1)", tsr::sum(a, {1}));
    show("mean(a, dim=0)", tsr::mean(a, {0}));
    show("softmax(a, dim=1)", tsr::softmax(a, 1));
    show("argmax(a, dim=1)", tsr::argmax(a, 1));
    show("gelu(a - 2.5)", tsr::gelu(a - 2.5));

    // Linear regression y = X w* + noise, fitted with gradient descent on the MSE.
    const int64_t n = 512, d = 8;
    tsr::Tensor X = tsr::randn({n, d}, TSR_F32, dev);
    tsr::Tensor w_true = tsr::randn({d, 1}, TSR_F32, dev);
    tsr::Tensor y = tsr::matmul(X, w_true) + 0.01 * tsr::randn({n, 1}, TSR_F32, dev);
    tsr::Tensor w = tsr::zeros({d, 1}, TSR_F32, dev);
    const double lr = 0.1;
    auto t0 = std::chrono::steady_clock::now();
    double loss = 0;
    for (int step = 0; step <= steps; ++step) {
      tsr::Tensor err = tsr::matmul(X, w) - y;  // [n,1]
      loss = tsr::mean(err * err).item<float>();
      tsr::Tensor grad = tsr::matmul(X.t(), err) * (2.0 / n);  // [d,1]
      w = w - lr * grad;
      if (step % 50 == 0) std::printf("  step %4d  mse %.6f\n", step, loss);
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double werr = tsr::amax(tsr::abs(w - w_true)).item<float>();
    std::printf("\nfitted %lld weights in %d steps (%.1f ms): final mse %.6f, max |w - w*| = %.4f\n",
                static_cast<long long>(d), steps, ms, loss, werr);
    return werr < 0.05 ? 0 : 1;
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
