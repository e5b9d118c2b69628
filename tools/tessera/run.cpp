// `tessera run MODEL`: runs a saved model (docs/graphs.md) without any frontend code: inputs
// from safetensors files (or generated from the model's signature), outputs printed or written,
// and with --bench N, per-call latency percentiles and the run's memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "cli.hpp"
#ifdef TESSERA_HAVE_ONNX
#include "onnx_import.hpp"
#endif
#include "tessera/jit.hpp"
#include "tessera/serialize.hpp"
#include "tessera/tessera.hpp"

namespace tessera_cli {

namespace {

const std::vector<OptionSpec> kRunOptions = {
    {"--input", true, "NAME=FILE.safetensors: the input NAME (the file's entry NAME, or its only one); repeatable"},
    {"--dim", true, "SYMBOL=N: the size of a symbolic dim for generated inputs (default 1); repeatable"},
    {"--device", true, "load the weights and run there (default: where the model was traced)"},
    {"--output", true, "write the outputs to this safetensors file (by output name)"},
    {"--optimize", true, "run graph passes first: dce, cse, fold (comma-separated) or all"},
    {"--print-graph", false, "print the model's graph (after --optimize)"},
    {"--bench", true, "time N runs (after 3 warm-up runs) and print latency percentiles"},
    {"--seed", true, "seed of generated float inputs (default 0)"},
    {"--help", false, "this help"},
};

void usage() {
  std::printf(
      "usage: tessera run MODEL.tsm [options]\n\n"
      "Runs a model saved by tsr::jit (a traced graph with its weights) and prints its outputs.\n"
#ifdef TESSERA_HAVE_ONNX
      "MODEL may also be an ONNX file (.onnx), imported first (docs/onnx.md; CPU only).\n"
#endif
      "Inputs not given with --input are generated from the model's signature: normal floats,\n"
      "zero integers (valid token ids), symbolic dims from --dim.\n\noptions:\n");
  print_options(kRunOptions);
  print_options(kRuntimeOptions);
}

// Where a model comes from: a model file of tsr::jit, or an ONNX file imported on the fly
// (tools/onnx; its weights are CPU tensors, so it runs on the CPU).
tsr::jit::Model open_model(const std::string& path, const std::optional<tsr::Device>& device) {
#ifdef TESSERA_HAVE_ONNX
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0) {
    if (device && *device != tsr::Device::cpu())
      throw tsr::Error(TSR_UNIMPLEMENTED, "an ONNX file runs on the CPU here: save it with `tessera import-onnx " +
                                              path + " -o MODEL.tsm` and run that with --device");
    tsr::onnx::Imported m = tsr::onnx::import_file(path);
    tsr::jit::Model model = tsr::jit::Model::parse(m.text);
    for (const auto& [name, w] : m.weights) model.bind(name, w);
    return model;
  }
#endif
  return tsr::jit::Model::load(path, device);
}

std::map<std::string, std::string> pairs(const Args& args, const char* flag) {
  std::map<std::string, std::string> r;
  auto it = args.lists.find(flag);
  if (it == args.lists.end()) return r;
  for (const std::string& v : it->second) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      throw tsr::Error(TSR_INVALID_ARGUMENT, std::string(flag) + " " + v + ": expected NAME=VALUE");
    r[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return r;
}

tsr::Tensor read_input(const std::string& name, const std::string& file, tsr::Device dev) {
  tsr::StateDict sd = tsr::load_safetensors(file, dev);
  if (sd.size() == 1) return sd.begin()->second;
  if (!sd.contains(name))
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--input " + name + "=" + file + ": the file has " +
                                               std::to_string(sd.size()) + " tensors and none is named '" + name + "'");
  return sd.at(name);
}

tsr::Tensor make_input(const tsr::jit::IoInfo& in, const std::map<std::string, std::string>& dims, tsr::Device dev) {
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (in.symbols[d].empty()) {
      sizes.push_back(in.sizes[d]);
      continue;
    }
    auto it = dims.find(in.symbols[d]);
    sizes.push_back(it == dims.end() ? 1 : std::stoll(it->second));
  }
  bool floating = in.dtype == TSR_F32 || in.dtype == TSR_F64 || in.dtype == TSR_F16 || in.dtype == TSR_BF16;
  return floating ? tsr::randn(sizes, in.dtype, dev) : tsr::zeros(sizes, in.dtype, dev);
}

std::string shape(const tsr::Tensor& t) {
  std::string s = "[";
  for (size_t d = 0; d < t.sizes().size(); ++d) s += (d ? ", " : "") + std::to_string(t.sizes()[d]);
  return s + "]";
}

void print_output(const std::string& name, const tsr::Tensor& t) {
  std::printf("%s: %s %s", name.c_str(), shape(t).c_str(), tsr::dtype_name(t.dtype()));
  std::vector<double> v = t.reshape({-1}).narrow(0, 0, std::min<int64_t>(t.numel(), 8)).to(tsr::Device::cpu(), TSR_F64)
                              .to_vector<double>();
  std::printf(" =");
  for (double x : v) std::printf(" %.6g", x);
  std::printf("%s\n", t.numel() > 8 ? " ..." : "");
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

int run(const Args& args) {
  std::optional<tsr::Device> device;
  if (args.values.count("--device")) device = tsr::Device(args.value("--device"));
  tsr::jit::Model model = open_model(args.positional.at(0), device);
  if (args.values.count("--optimize")) std::printf("%s", model.optimize(args.value("--optimize")).c_str());
  if (args.has("--print-graph")) std::printf("%s", model.text().c_str());

  tsr::Device dev = model.device();
  tsr::manual_seed(static_cast<uint64_t>(std::stoull(args.value("--seed", "0"))));
  auto files = pairs(args, "--input");
  auto dims = pairs(args, "--dim");
  std::vector<tsr::Tensor> inputs;
  for (const tsr::jit::IoInfo& in : model.inputs()) {
    auto f = files.find(in.name);
    inputs.push_back(f == files.end() ? make_input(in, dims, dev) : read_input(in.name, f->second, dev));
    files.erase(in.name);
  }
  if (!files.empty())
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--input " + files.begin()->first + ": the model has no input of that name");

  tsr::jit::RunStats stats;
  std::vector<tsr::Tensor> outs = model.run(inputs, &stats);
  std::vector<tsr::jit::IoInfo> out_info = model.outputs();
  for (size_t i = 0; i < outs.size(); ++i) print_output(out_info[i].name, outs[i]);
  if (args.values.count("--output")) {
    tsr::StateDict sd;
    for (size_t i = 0; i < outs.size(); ++i) sd.insert(out_info[i].name, outs[i]);
    tsr::save_safetensors(args.value("--output"), sd);
    std::printf("wrote %s\n", args.value("--output").c_str());
  }

  if (args.values.count("--bench")) {
    int n = std::max(1, std::atoi(args.value("--bench").c_str()));
    for (int i = 0; i < 3; ++i) model.run(inputs);
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<tsr::Tensor> r = model.run(inputs);
      tsr::api()->device_synchronize(tsr::runtime(), dev.d);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    double mean = 0;
    for (double x : ms) mean += x;
    mean /= static_cast<double>(ms.size());
    std::printf("%d runs on %s: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms (%lld nodes, %.2f us/node)\n", n,
                dev.str().c_str(), percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.99), mean,
                static_cast<long long>(stats.nodes), stats.nodes ? mean * 1000 / static_cast<double>(stats.nodes) : 0.0);
    std::printf("memory: peak %.3f MiB of intermediates alive at once (%.3f MiB if none were released)\n",
                static_cast<double>(stats.peak_bytes) / (1 << 20), static_cast<double>(stats.total_bytes) / (1 << 20));
  }
  return kExitOk;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  std::vector<OptionSpec> specs = kRunOptions;
  specs.insert(specs.end(), kRuntimeOptions.begin(), kRuntimeOptions.end());
  Args args;
  if (!parse_args("run", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    usage();
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "tessera run: expected one MODEL file (tessera run --help)\n");
    return kExitUsage;
  }
  RuntimeSession session;
  if (!session.open(args)) return kExitInternal;
  tsr::set_runtime(session.get());
  int rc = kExitOk;
  try {
    rc = run(args);
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "tessera run: %s\n", e.what());
    rc = e.code() == TSR_INVALID_ARGUMENT || e.code() == TSR_NOT_FOUND ? kExitFailure : kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera run: %s\n", e.what());
    rc = kExitUsage;
  }
  tsr::set_runtime(nullptr);
  return rc;
}

}  // namespace tessera_cli
