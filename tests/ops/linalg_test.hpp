// Helpers shared by the linalg family's tests (test_linalg*.cpp, test_random.cpp, test_optim.cpp).
#pragma once

#include <string>

#include "op_test.hpp"

namespace tsr::optest {

// Row-major reference product of [m, k] x [k, n].
inline std::vector<double> ref_mm(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k,
                                  int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += a[i * k + l] * b[l * n + j];
      c[i * n + j] = s;
    }
  return c;
}

// Formulas of ops other families own (add, mul, sum, ...) may not be merged yet: a gradcheck
// that reaches one of them is skipped (with the reason), never passed. Our own ops must have one.
inline bool foreign_formula_missing(const Error& e) {
  std::string m = e.what();
  size_t p = m.find("the derivative for '");
  if (p == std::string::npos) return false;
  std::string op = m.substr(p + 20, m.find('\'', p + 20) - (p + 20));
  for (const char* mine : {"mm", "bmm", "matmul", "inverse", "_linalg_solve", "cholesky", "det", "slogdet"})
    if (op == mine) return false;
  return true;
}
#define GRADCHECK(...)                                                     \
  do {                                                                     \
    try {                                                                  \
      EXPECT_TRUE(gradcheck(__VA_ARGS__));                                 \
    } catch (const Error& e) {                                             \
      if (!foreign_formula_missing(e)) throw;                              \
      GTEST_SKIP() << "needs a formula from another family: " << e.what(); \
    }                                                                      \
  } while (0)

}  // namespace tsr::optest
