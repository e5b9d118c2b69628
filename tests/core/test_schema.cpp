// Schema parsing in PyTorch notation.
#include <gtest/gtest.h>

#include "ops/schema.hpp"
#include "runtime/status.hpp"

using namespace tsr::core;

TEST(Schema, ParsesArgumentsDefaultsAndOutputs) {
  Schema s;
  ASSERT_EQ(parse_schema("sum(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor", &s),
            nullptr);
  EXPECT_EQ(s.name, "sum");
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_EQ(s.args[1].kind, ArgKind::IntList);
  EXPECT_TRUE(s.args[1].optional);
  EXPECT_EQ(s.args[2].default_value.tag, TSR_VALUE_BOOL);
  EXPECT_EQ(s.args[2].default_value.u.b, 0);
  EXPECT_EQ(s.num_outputs, 1);
  EXPECT_EQ(s.num_tensor_args, 1);

  ASSERT_EQ(
      parse_schema("example::f(Tensor a, str act='relu', int[] d=[1, -2], float eps=1e-5) -> (Tensor, Tensor)", &s),
      nullptr);
  EXPECT_EQ(s.name, "example::f");
  EXPECT_STREQ(s.args[1].default_value.u.str, "relu");
  ASSERT_EQ(s.args[2].default_value.u.ints.len, 2);
  EXPECT_EQ(s.args[2].default_value.u.ints.data[1], -2);
  EXPECT_DOUBLE_EQ(s.args[3].default_value.u.d, 1e-5);
  EXPECT_EQ(s.num_outputs, 2);

  ASSERT_EQ(parse_schema("_fill(Tensor(a!) self, Scalar value) -> Tensor", &s), nullptr);
  EXPECT_TRUE(s.args[0].mutable_);
}

TEST(Schema, RejectsMalformed) {
  Schema s;
  const char* bad[] = {"nope",
                       "f(Tensor) -> Tensor",
                       "f(Widget w) -> Tensor",
                       "f(Tensor a=None) -> Tensor",
                       "f(int a=1, int b) -> Tensor",
                       "(Tensor a) -> Tensor"};
  for (const char* text : bad) {
    tsr_status_t st = parse_schema(text, &s);
    ASSERT_NE(st, nullptr) << text;
    EXPECT_EQ(st->code, TSR_INVALID_ARGUMENT);
    EXPECT_NE(st->message.find("schema"), std::string::npos) << st->message;
    delete st;
  }
}
