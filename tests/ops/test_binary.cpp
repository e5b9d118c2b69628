// Binary family: foundation ops' formulas, then each op against float64 references.
#include "op_test.hpp"

using namespace tsr;
using namespace tsr::optest;

TEST(BinaryOps, Smoke) {
  Tensor a = randu({3, 4}, 1), b = rand_away({4}, 2);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return add(x[0], x[1], 2.5); }, {a, b}));
}
