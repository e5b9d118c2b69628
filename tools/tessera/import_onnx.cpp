// `tessera import-onnx MODEL.onnx [--print] [-o OUT.tsm]`: imports an ONNX model (tools/onnx,
// docs/onnx.md) into a Tessera graph. --print writes the graph text to stdout; -o saves the model
// (graph and weights) for `tessera run` and the C host.
#include <cstdio>

#include "cli.hpp"
#include "onnx_import.hpp"
#include "tessera/jit.hpp"

namespace tessera_cli {

namespace {

void usage(const std::vector<OptionSpec>& specs) {
  std::printf(
      "usage: tessera import-onnx MODEL.onnx [--print] [-o OUT.tsm]\n\n"
      "Imports an ONNX model (opsets %d to %d) into a Tessera graph: its inputs, weights (params),\n"
      "nodes calling Tessera ops, and outputs (docs/onnx.md). Without --print or -o it only checks\n"
      "that the model imports, and says how many nodes and weights it has.\n\noptions:\n",
      tsr::onnx::kMinOpset, tsr::onnx::kMaxOpset);
  print_options(specs);
}

}  // namespace

int cmd_import_onnx(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--print", false, "print the graph text"},
      {"-o", true, "save the model (graph text and weights) to this file"},
      {"--ops", false, "list the ONNX ops the importer maps, and exit"},
      {"--help", false, "this help"},
  };
  Args args;
  if (!parse_args("import-onnx", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    usage(specs);
    return kExitOk;
  }
  if (args.has("--ops")) {
    for (const std::string& op : tsr::onnx::supported_ops()) std::printf("%s\n", op.c_str());
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "tessera import-onnx: expected one MODEL.onnx (see tessera import-onnx --help)\n");
    return kExitUsage;
  }
  tsr::onnx::Imported m;
  try {
    m = tsr::onnx::import_file(args.positional[0]);
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "tessera import-onnx: %s\n", e.what());
    return kExitFailure;
  }
  if (args.has("--print")) std::fputs(m.text.c_str(), stdout);
  if (args.has("-o")) {
    try {
      tsr::jit::Model model = tsr::jit::Model::parse(m.text);
      for (const auto& [name, w] : m.weights) model.bind(name, w);
      model.save(args.value("-o"));
    } catch (const tsr::Error& e) {
      std::fprintf(stderr, "tessera import-onnx: saving %s: %s\n", args.value("-o").c_str(), e.what());
      return kExitInternal;
    }
    std::fprintf(stderr, "tessera import-onnx: saved %s (%zu weights)\n", args.value("-o").c_str(), m.weights.size());
  }
  if (!args.has("--print") && !args.has("-o")) {
    // Statements by kind: nodes start with '%' (docs/graphs.md).
    size_t nodes = 0, inputs = 0;
    for (size_t p = 0; p < m.text.size(); p = m.text.find('\n', p) + 1) {
      nodes += m.text[p] == '%';
      inputs += m.text.compare(p, 6, "input ") == 0;
      if (m.text.find('\n', p) == std::string::npos) break;
    }
    std::printf("%s: imported: %zu inputs, %zu weights, %zu nodes\n", args.positional[0].c_str(), inputs,
                m.weights.size(), nodes);
  }
  return kExitOk;
}

}  // namespace tessera_cli
