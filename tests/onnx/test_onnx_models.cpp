// PyTorch models exported to ONNX (export_models.py), imported, parsed, run by the graph
// runner and compared with PyTorch's outputs for the same random inputs.
#include "onnx_test_util.hpp"

namespace {

using onnx_test::close;

// Imports NAME.onnx, runs it on NAME.in*.npy and compares with NAME.out*.npy.
void run_and_compare(const std::string& dir, const std::string& name, int n_in, int n_out, double rtol = 1e-4) {
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/" + name + ".onnx");
  tsr::jit::Model model = onnx_test::load(m);
  std::vector<tsr::Tensor> in;
  for (int k = 0; k < n_in; ++k) in.push_back(npy::load(dir + "/" + name + ".in" + std::to_string(k) + ".npy"));
  std::vector<tsr::Tensor> out = model.run(in);
  ASSERT_EQ(static_cast<int>(out.size()), n_out);
  for (int k = 0; k < n_out; ++k)
    EXPECT_TRUE(close(out[static_cast<size_t>(k)], npy::load(dir + "/" + name + ".out" + std::to_string(k) + ".npy"), rtol))
        << name << " output " << k << "\n" << m.text;
}

TEST(OnnxModels, MlpWithDynamicBatchMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/mlp.onnx");
  // The dim_param becomes a symbol; Gemm(transB=1) with a 1-D bias is linear.
  EXPECT_NE(m.text.find("input %in0: float32[batch, 13]\n"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("= linear(%in0, %fc1.weight, %fc1.bias)"), std::string::npos) << m.text;
  ASSERT_EQ(m.weights.size(), 6u);
  EXPECT_EQ(m.weights[0].first, "fc1.weight");
  EXPECT_EQ(m.weights[0].second.sizes(), (std::vector<int64_t>{32, 13}));
  // Exported with batch 4, run with 3.
  run_and_compare(dir, "mlp", 1, 1);
}

TEST(OnnxModels, ExternalDataWeightsAreRead) {
  ONNX_MODELS_OR_SKIP(dir);
  ASSERT_TRUE(onnx_test::exists(dir + "/mlp_external.weights"));
  tsr::onnx::Imported a = tsr::onnx::import_file(dir + "/mlp.onnx");
  tsr::onnx::Imported b = tsr::onnx::import_file(dir + "/mlp_external.onnx");
  EXPECT_EQ(a.text, b.text);
  std::vector<tsr::Tensor> out = onnx_test::load(b).run({npy::load(dir + "/mlp.in0.npy")});
  EXPECT_TRUE(close(out.at(0), npy::load(dir + "/mlp.out0.npy")));
}

TEST(OnnxModels, CnnMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/cnn.onnx");
  for (const char* op : {"conv2d(", "batch_norm(", "max_pool2d(", "avg_pool2d(", "mean(", "linear("})
    EXPECT_NE(m.text.find(op), std::string::npos) << op << "\n" << m.text;
  run_and_compare(dir, "cnn", 1, 1);
}

TEST(OnnxModels, TransformerBlockWithDynamicBatchMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/transformer.onnx");
  for (const char* op : {"layer_norm(", "softmax(", "erf(", "index(", "permute(", "where(", "matmul("})
    EXPECT_NE(m.text.find(op), std::string::npos) << op << "\n" << m.text;
  // The head reshapes follow the dynamic batch: the Shape chain folded to one -1.
  EXPECT_NE(m.text.find("reshape("), std::string::npos);
  EXPECT_EQ(m.text.find("Shape"), std::string::npos) << m.text;
  run_and_compare(dir, "transformer", 1, 1);
}

// Batch and sequence length dynamic: the head reshapes and the position/mask slices follow two
// symbols (written as such: reshape(x, [batch, seq, 2, 8]), slice(%pos, 0, 0, seq)).
TEST(OnnxModels, TransformerBlockWithDynamicSequenceMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/transformer_seq.onnx");
  EXPECT_NE(m.text.find("input %in0: int64[batch, seq]"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("[batch, seq, 2, 8])"), std::string::npos) << m.text;
  run_and_compare(dir, "transformer_seq", 1, 1);  // exported with 7 tokens, run with 5
}

TEST(OnnxModels, TorchTransformerEncoderLayerMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  run_and_compare(dir, "encoder", 1, 1);  // exported with 2x5, run with 3x7
}

TEST(OnnxModels, MobileNetLikeBlockMatchesTorch) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/mobile.onnx");
  for (const char* op : {"upsample_nearest2d(", "upsample_bilinear2d(", "clamp(", "cat(", "leaky_relu("})
    EXPECT_NE(m.text.find(op), std::string::npos) << op << "\n" << m.text;
  run_and_compare(dir, "mobile", 1, 2);
}

TEST(OnnxModels, NamesAreSanitizedUniquelyAndRun) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/names.onnx");
  // "w:0" and "w/0" both sanitize to w_0; the input "n" meets the symbol n first.
  ASSERT_EQ(m.weights.size(), 2u);
  EXPECT_EQ(m.weights[0].first, "w_0");
  EXPECT_EQ(m.weights[1].first, "w_0_1");
  EXPECT_NE(m.text.find("input %n_1: float32[n, 5]"), std::string::npos) << m.text;
  run_and_compare(dir, "names", 1, 1);
}

// Run-time sizes the importer picks for a dynamic batch: Softmax (opset 11) over flattened
// dims, Flatten, Slice with a negative step, Gather along axis 1, Expand, Reshape [0, -1],
// Unsqueeze, and Gemm with transA/alpha/beta, against NumPy.
TEST(OnnxModels, DynamicOpsMatchNumpy) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/dynamic_ops.onnx");
  EXPECT_NE(m.text.find("reshape(%x, [b, -1])"), std::string::npos) << m.text;  // [0, -1]: 0 copies the symbol
  run_and_compare(dir, "dynamic_ops", 1, 8);
}

TEST(OnnxModels, TextRoundTripsExactly) {
  ONNX_MODELS_OR_SKIP(dir);
  for (const char* name : {"mlp", "cnn", "transformer", "transformer_seq", "encoder", "mobile", "names", "dynamic_ops"}) {
    tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/" + name + ".onnx");
    EXPECT_EQ(tsr::jit::Model::parse(m.text).text(), m.text) << name;
  }
}

TEST(OnnxModels, ImportIsDeterministic) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported a = tsr::onnx::import_file(dir + "/transformer.onnx");
  tsr::onnx::Imported b = tsr::onnx::import_file(dir + "/transformer.onnx");
  EXPECT_EQ(a.text, b.text);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (size_t k = 0; k < a.weights.size(); ++k) EXPECT_EQ(a.weights[k].first, b.weights[k].first);
}

TEST(OnnxModels, SavedModelLoadsAndRuns) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/cnn.onnx");
  const std::string path = dir + "/cnn.tsm";
  onnx_test::load(m).save(path);
  tsr::jit::Model loaded = tsr::jit::Model::load(path);
  std::vector<tsr::Tensor> out = loaded.run({npy::load(dir + "/cnn.in0.npy")});
  EXPECT_TRUE(close(out.at(0), npy::load(dir + "/cnn.out0.npy")));
}

// The comparison itself must be able to fail: a perturbed weight changes the output.
TEST(OnnxModels, ComparisonCatchesAWrongWeight) {
  ONNX_MODELS_OR_SKIP(dir);
  tsr::onnx::Imported m = tsr::onnx::import_file(dir + "/mlp.onnx");
  m.weights[1].second = tsr::add(m.weights[1].second, 1e-2);  // fc1.bias
  std::vector<tsr::Tensor> out = onnx_test::load(m).run({npy::load(dir + "/mlp.in0.npy")});
  EXPECT_FALSE(close(out.at(0), npy::load(dir + "/mlp.out0.npy")));
}

}  // namespace
