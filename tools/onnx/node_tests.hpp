// ONNX's backend node tests (onnx/backend/test/data/node/<test>/model.onnx with
// test_data_set_0/input_*.pb and output_*.pb) run through the importer and the graph runner:
// the conformance figures of docs/onnx.md (`tessera onnx-conformance DIR`).
#pragma once

#include <string>
#include <vector>

namespace tsr::onnx {

struct NodeTestResult {
  enum Status { Passed, Failed, Unsupported };
  std::string test;  // the test folder's name (test_relu)
  std::string op;    // the op under test: the model's first node's op type ("" when unreadable)
  bool expanded = false;  // a function's expansion into other ops (test_*_expanded)
  // The importer needs shape-like inputs (axes, shapes, Slice bounds, ...) at import time, and
  // node tests pass them as graph inputs: a test refused for that is retried with its integer
  // and bool inputs made initializers, as an exported model has them.
  bool const_inputs = false;
  Status status = Failed;
  std::string detail;  // why it failed or is unsupported
};

// Runs every test folder under dir (sorted by name) whose name contains `filter`. Unsupported:
// the importer refuses the model, or the graph is valid and a Tessera kernel lacks the dtype
// (UNIMPLEMENTED while running). Failed: any other error, or an output that differs (float
// outputs: |got - want| <= 1e-7 + 1e-3 |want|, ONNX's backend test tolerance; others exact).
std::vector<NodeTestResult> run_node_tests(const std::string& dir, const std::string& filter = "");

}  // namespace tsr::onnx
