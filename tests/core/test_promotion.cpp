// Type promotion follows torch.promote_types / torch.result_type.
#include <gtest/gtest.h>

#include "tensor/dtype.hpp"

using namespace tsr::core;

TEST(Promotion, PromoteTypesTable) {
  EXPECT_EQ(promote_types(TSR_BOOL, TSR_BOOL), TSR_BOOL);
  EXPECT_EQ(promote_types(TSR_BOOL, TSR_U8), TSR_U8);
  EXPECT_EQ(promote_types(TSR_U8, TSR_I8), TSR_I16);
  EXPECT_EQ(promote_types(TSR_I8, TSR_U8), TSR_I16);
  EXPECT_EQ(promote_types(TSR_U8, TSR_I16), TSR_I16);
  EXPECT_EQ(promote_types(TSR_U8, TSR_I64), TSR_I64);
  EXPECT_EQ(promote_types(TSR_I32, TSR_I16), TSR_I32);
  EXPECT_EQ(promote_types(TSR_I64, TSR_F16), TSR_F16);
  EXPECT_EQ(promote_types(TSR_F16, TSR_BF16), TSR_F32);
  EXPECT_EQ(promote_types(TSR_BF16, TSR_F32), TSR_F32);
  EXPECT_EQ(promote_types(TSR_F32, TSR_F64), TSR_F64);
  EXPECT_EQ(promote_types(TSR_I64, TSR_F64), TSR_F64);
  EXPECT_EQ(promote_types(TSR_BOOL, TSR_F16), TSR_F16);
  // symmetric over every pair
  for (int a = TSR_BOOL; a <= TSR_F64; ++a)
    for (int b = TSR_BOOL; b <= TSR_F64; ++b)
      EXPECT_EQ(promote_types(tsr_dtype_t(a), tsr_dtype_t(b)), promote_types(tsr_dtype_t(b), tsr_dtype_t(a)));
}

static tsr_dtype_t rt(std::initializer_list<std::tuple<tsr_dtype_t, int, bool>> ops) {
  ResultTypeState s;
  for (auto& [d, nd, w] : ops) s.add(d, nd, w);
  return s.result();
}

TEST(Promotion, ResultTypeCategories) {
  // int tensor + python float -> default float
  EXPECT_EQ(rt({{TSR_I32, 1, false}, {TSR_F64, 0, true}}), TSR_F32);
  // int tensor + python int -> the tensor's dtype
  EXPECT_EQ(rt({{TSR_I8, 1, false}, {TSR_I64, 0, true}}), TSR_I8);
  // f16 tensor + python float stays f16
  EXPECT_EQ(rt({{TSR_F16, 1, false}, {TSR_F64, 0, true}}), TSR_F16);
  // f32 tensor + 0-dim f64 tensor stays f32 (same category)
  EXPECT_EQ(rt({{TSR_F32, 2, false}, {TSR_F64, 0, false}}), TSR_F32);
  // int tensor + 0-dim float tensor -> that float
  EXPECT_EQ(rt({{TSR_I32, 2, false}, {TSR_F64, 0, false}}), TSR_F64);
  // bool tensor + python int -> int64
  EXPECT_EQ(rt({{TSR_BOOL, 1, false}, {TSR_I64, 0, true}}), TSR_I64);
  // u8 tensor + 0-dim i8 tensor: same category, dims win
  EXPECT_EQ(rt({{TSR_U8, 1, false}, {TSR_I8, 0, false}}), TSR_U8);
  // two 0-dim tensors promote normally
  EXPECT_EQ(rt({{TSR_I32, 0, false}, {TSR_I64, 0, false}}), TSR_I64);
  // two wrapped numbers: float wins
  EXPECT_EQ(rt({{TSR_I64, 0, true}, {TSR_F64, 0, true}}), TSR_F32);
}

TEST(Promotion, Names) {
  for (int d = TSR_BOOL; d <= TSR_F64; ++d) EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  EXPECT_EQ(dtype_from_name("half"), TSR_F16);
  EXPECT_EQ(dtype_from_name("nope"), TSR_DTYPE_UNDEFINED);
  EXPECT_EQ(dtype_size(TSR_BF16), 2u);
}
