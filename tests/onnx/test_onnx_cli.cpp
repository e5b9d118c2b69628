// The command line: `tessera import-onnx` (--print, -o, errors) and `tessera run` of an .onnx file.
#include <unistd.h>

#include <cstdio>

#include "onnx_test_util.hpp"

namespace {

// Runs the tessera command with `args`; returns its exit code, with stdout (and stderr, unless
// stdout_only: the core may warn there, e.g. about a CUDA plugin without a GPU) in *out.
int tessera(const std::string& args, std::string* out, bool stdout_only = false) {
  // One file per process: ctest runs these tests in parallel.
  const std::string file = std::string(TSR_ONNX_MODELS) + ".cli." + std::to_string(::getpid()) + ".txt";
  const int rc = std::system(
      (std::string(TSR_CLI) + " " + args + " > " + file + (stdout_only ? " 2>/dev/null" : " 2>&1")).c_str());
  *out = onnx_test::read_text(file);
  std::remove(file.c_str());
  return WEXITSTATUS(rc);
}

TEST(OnnxCli, ImportReportsTheErrorWithTheNode) {
  ONNX_MODELS_OR_SKIP(dir);
  std::string out;
  EXPECT_EQ(tessera("import-onnx " + dir + "/unknown_op.onnx", &out), 1);
  EXPECT_NE(out.find("node 1 \"my_unique\" (Unique): op 'Unique' is not supported"), std::string::npos) << out;
}

TEST(OnnxCli, PrintWritesTheGraphText) {
  ONNX_MODELS_OR_SKIP(dir);
  std::string out;
  EXPECT_EQ(tessera("import-onnx --print " + dir + "/mlp.onnx", &out, true), 0);
  EXPECT_EQ(out, tsr::onnx::import_file(dir + "/mlp.onnx").text);
}

TEST(OnnxCli, SavedModelAndOnnxFileRunAlike) {
  ONNX_MODELS_OR_SKIP(dir);
  std::string out, saved, direct;
  const std::string tsm = dir + "/mlp.cli.tsm";
  ASSERT_EQ(tessera("import-onnx " + dir + "/mlp.onnx -o " + tsm, &out), 0) << out;
  ASSERT_EQ(tessera("run " + tsm + " --dim batch=2", &saved, true), 0) << saved;
  ASSERT_EQ(tessera("run " + dir + "/mlp.onnx --dim batch=2", &direct, true), 0) << direct;
  EXPECT_NE(saved.find("out0: [2, 7] float32"), std::string::npos) << saved;
  EXPECT_EQ(saved, direct);
}

}  // namespace
