// Shared by the tests/onnx files: the models export_models.py writes (exported once per build
// folder, by the ctest fixture or by the first test that needs them), and comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>

#include "npy.hpp"
#include "onnx_import.hpp"
#include "tessera/jit.hpp"

namespace onnx_test {

inline bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

inline std::string read_text(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The folder of exported models, or "" with *skip set to why they cannot be had (no torch or
// onnx for the interpreter).
inline std::string models_dir(std::string* skip) {
  const std::string dir = TSR_ONNX_MODELS;
  if (!exists(dir + "/stamp") && !exists(dir + "/unavailable.txt")) {
    const char* py = std::getenv("TESSERA_ONNX_PYTHON");
    const std::string cmd = std::string(py ? py : TSR_ONNX_PYTHON) + " " + TSR_ONNX_EXPORT + " " + dir +
                            " > " + dir + ".log 2>&1";
    std::system(("mkdir -p " + dir).c_str());
    std::system(cmd.c_str());
  }
  if (exists(dir + "/unavailable.txt")) {
    *skip = read_text(dir + "/unavailable.txt");
    return "";
  }
  if (!exists(dir + "/stamp")) {
    *skip = "export_models.py failed: see " + dir + ".log";
    ADD_FAILURE() << *skip << "\n" << read_text(dir + ".log");
    return "";
  }
  return dir;
}

#define ONNX_MODELS_OR_SKIP(dir)                 \
  std::string dir;                               \
  {                                              \
    std::string why_;                            \
    dir = onnx_test::models_dir(&why_);          \
    if (dir.empty()) GTEST_SKIP() << why_;       \
  }

// A parsed model with the importer's weights bound.
inline tsr::jit::Model load(const tsr::onnx::Imported& m) {
  tsr::jit::Model model = tsr::jit::Model::parse(m.text);
  for (const auto& [name, w] : m.weights) model.bind(name, w);
  return model;
}

// |got - want| <= atol + rtol * |want| elementwise, same shape; reports the worst element.
inline ::testing::AssertionResult close(const tsr::Tensor& got, const tsr::Tensor& want, double rtol = 1e-4,
                                        double atol = 1e-5) {
  if (got.sizes() != want.sizes()) {
    std::string g, w;
    for (int64_t d : got.sizes()) g += std::to_string(d) + " ";
    for (int64_t d : want.sizes()) w += std::to_string(d) + " ";
    return ::testing::AssertionFailure() << "shape [" << g << "] vs [" << w << "]";
  }
  const std::vector<double> a = got.to_vector<double>(), b = want.to_vector<double>();
  size_t worst = 0;
  double excess = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double e = std::fabs(a[k] - b[k]) - (atol + rtol * std::fabs(b[k]));
    if (std::isnan(a[k]) != std::isnan(b[k]) || e > excess) worst = k, excess = std::isnan(e) ? INFINITY : e;
  }
  if (excess > 0)
    return ::testing::AssertionFailure() << "element " << worst << ": got " << a[worst] << ", want " << b[worst];
  return ::testing::AssertionSuccess();
}

}  // namespace onnx_test
