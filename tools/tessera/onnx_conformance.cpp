// `tessera onnx-conformance DIR [--filter TEXT] [--failures] [--markdown]`: runs ONNX's
// backend node tests (DIR/<test>/model.onnx + test_data_set_0) through the importer and the
// graph runner, and prints per ONNX op how many passed, failed and are unsupported
// (tools/onnx/node_tests.hpp says how each is decided, and when integer inputs are made
// constants). The figures of docs/onnx.md.
#include <cstdio>
#include <map>

#include "cli.hpp"
#include "node_tests.hpp"

namespace tessera_cli {

namespace {

struct Counts {
  int passed = 0, failed = 0, unsupported = 0;
  int baked = 0;  // passed with integer inputs as constants (NodeTestResult::const_inputs)
  int total() const { return passed + failed + unsupported; }
  void add(const tsr::onnx::NodeTestResult& r) {
    (r.status == tsr::onnx::NodeTestResult::Passed ? passed
     : r.status == tsr::onnx::NodeTestResult::Failed ? failed : unsupported)++;
    baked += r.status == tsr::onnx::NodeTestResult::Passed && r.const_inputs;
  }
};

}  // namespace

int cmd_onnx_conformance(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--filter", true, "only the tests whose folder name contains TEXT"},
      {"--failures", false, "list every failed and unsupported test with the reason"},
      {"--markdown", false, "print the per-op table as Markdown (docs/onnx.md)"},
      {"--max-failed", true, "exit 1 when more than N tests fail (a regression check; unsupported ones do not count)"},
      {"--help", false, "this help"},
  };
  Args args;
  if (!parse_args("onnx-conformance", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help") || args.positional.size() != 1) {
    std::printf(
        "usage: tessera onnx-conformance DIR [options]\n\n"
        "Runs ONNX's backend node tests (DIR/<test>/model.onnx, test_data_set_0/input_*.pb and output_*.pb)\n"
        "through the importer and the graph runner; prints per ONNX op the tests passed, failed and\n"
        "unsupported. tools/onnx/gen_node_tests.py OUT writes the tests to OUT/node.\n\noptions:\n");
    print_options(specs);
    return args.has("--help") ? kExitOk : kExitUsage;
  }
  const std::vector<tsr::onnx::NodeTestResult> results =
      tsr::onnx::run_node_tests(args.positional[0], args.value("--filter"));
  if (results.empty()) {
    std::fprintf(stderr, "tessera onnx-conformance: no test folders (with model.onnx) under %s\n",
                 args.positional[0].c_str());
    return kExitFailure;
  }
  std::map<std::string, Counts> by_op;
  Counts all, expanded;
  for (const auto& r : results) {
    all.add(r);
    if (r.expanded) expanded.add(r);
    else by_op[r.op.empty() ? "(unreadable)" : r.op].add(r);
  }
  const bool md = args.has("--markdown");
  if (md) std::printf("| ONNX op | tests | passed | (of which with constant inputs) | failed | unsupported |\n|---|---|---|---|---|---|\n");
  else std::printf("%-28s %6s %7s %7s %7s %12s\n", "op", "tests", "passed", "(const)", "failed", "unsupported");
  int ops_all_pass = 0, ops_some_pass = 0;
  auto row = [&](const std::string& name, const Counts& c) {
    if (md) std::printf("| %s | %d | %d | %d | %d | %d |\n", name.c_str(), c.total(), c.passed, c.baked, c.failed, c.unsupported);
    else std::printf("%-28s %6d %7d %7d %7d %12d\n", name.c_str(), c.total(), c.passed, c.baked, c.failed, c.unsupported);
  };
  for (const auto& [op, c] : by_op) {
    row(op, c);
    ops_all_pass += c.passed == c.total();
    ops_some_pass += c.passed > 0;
  }
  if (expanded.total()) row("(function expansions)", expanded);
  std::printf("\ntotal: %d tests: %d passed (%d with integer inputs as constants), %d failed, %d unsupported; %zu ops: "
              "%d pass every test, %d pass some%s\n",
              all.total(), all.passed, all.baked, all.failed, all.unsupported, by_op.size(), ops_all_pass, ops_some_pass,
              expanded.total() ? " (function expansions counted apart)" : "");
  if (args.has("--failures"))
    for (const auto& r : results)
      if (r.status != tsr::onnx::NodeTestResult::Passed)
        std::printf("%s %s: %s\n", r.status == tsr::onnx::NodeTestResult::Failed ? "FAILED     " : "UNSUPPORTED",
                    r.test.c_str(), r.detail.c_str());
  if (args.has("--max-failed") && all.failed > std::stoi(args.value("--max-failed"))) {
    std::fprintf(stderr, "tessera onnx-conformance: %d tests failed, more than --max-failed %s\n", all.failed,
                 args.value("--max-failed").c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tessera_cli
