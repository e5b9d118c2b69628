// Models the importer must refuse, with errors that name the node (index, name, op type) and
// what is not supported; and input that is not an ONNX model at all.
#include "onnx_test_util.hpp"

namespace {

// The tsr::Error import_file throws for path.
tsr::Error import_error(const std::string& path) {
  try {
    tsr::onnx::import_file(path);
  } catch (const tsr::Error& e) {
    return e;
  }
  ADD_FAILURE() << path << " imported";
  return tsr::Error(TSR_OK, "");
}

TEST(OnnxErrors, UnknownOpNamesTheNode) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::Error e = import_error(dir + "/unknown_op.onnx");
  EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
  EXPECT_NE(std::string(e.what()).find("node 1 \"my_unique\" (Unique): op 'Unique' is not supported"), std::string::npos)
      << e.what();
}

TEST(OnnxErrors, UnsupportedAttributeNamesTheNode) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::Error e = import_error(dir + "/bad_attr.onnx");
  EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
  EXPECT_NE(std::string(e.what()).find("node 0 \"const_str\" (Constant): unsupported attribute 'value_string'"),
            std::string::npos)
      << e.what();
  e = import_error(dir + "/bad_attr_value.onnx");
  EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
  EXPECT_NE(std::string(e.what()).find("node 0 \"resize_x\" (Resize): exclude_outside=1 is not supported"),
            std::string::npos)
      << e.what();
}

TEST(OnnxErrors, ReshapeTargetComputedAtRunTime) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::Error e = import_error(dir + "/runtime_reshape.onnx");
  EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
  const std::string msg = e.what();
  EXPECT_NE(msg.find("node 1 \"reshape_dyn\" (Reshape)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("computed at run time"), std::string::npos) << msg;
}

TEST(OnnxErrors, NotAModel) {
  const std::string path = std::string(TSR_ONNX_MODELS) + ".garbage.onnx";
  std::ofstream(path) << "this is not a protobuf";
  tsr::Error e = import_error(path);
  EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  EXPECT_EQ(import_error(path + ".missing").code(), TSR_INVALID_ARGUMENT);
}

}  // namespace
