// Helpers of the graph tests: exact comparison with eager results and error checks.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/jit.hpp"
#include "tessera/tessera.hpp"

namespace graph_test {

// max |a - b| in float64 (0 means identical values); shapes and dtypes must match.
inline double max_abs_diff(const tsr::Tensor& a, const tsr::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.dtype(), b.dtype());
  if (a.numel() == 0) return 0;
  return tsr::amax(tsr::abs(a.to(TSR_F64) - b.to(TSR_F64))).item<double>();
}

// Runs f, expecting a tsr::Error with `code` whose message contains every piece.
template <class F>
void expect_error(F&& f, tsr_code_t code, const std::vector<std::string>& pieces) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << (pieces.empty() ? "" : pieces[0]) << "'";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& p : pieces) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace graph_test
