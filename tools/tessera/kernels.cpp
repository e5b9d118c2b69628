// `tessera kernels [--op NAME] [--schema] [--json]`: which op runs on which device type, for
// which dtypes. The matrix shows each kernel's dtypes in short form (best kernel first);
// --op NAME shows every kernel of one op in full. `--device TYPE --reach`: per op and dtype,
// whether it runs on TYPE and which missing kernels its forward or backward reaches
// (kernels_reach.cpp).
#include <algorithm>
#include <cstdio>

#include "cli.hpp"

namespace tessera_cli {

namespace {

std::vector<std::string> column_names(const Inventory& inv) {
  std::vector<std::string> cols;
  for (const DeviceTypeEntry& t : inv.device_types) cols.push_back(t.name);
  for (const OpEntry& o : inv.ops)
    for (const KernelEntry& k : o.kernels)
      if (std::find(cols.begin(), cols.end(), k.device_type) == cols.end()) cols.push_back(k.device_type);
  return cols;
}

std::string cell(const OpEntry& op, const std::string& type) {
  std::string s;
  for (const KernelEntry& k : op.kernels) {
    if (k.device_type != type) continue;
    if (!s.empty()) s += " | ";
    s += mask_to_names(k.dtype_mask, true);
    if (k.has_predicate) s += "*";
  }
  return s.empty() ? "-" : s;
}

void print_matrix(const std::vector<const OpEntry*>& ops, const std::vector<std::string>& cols, bool schema) {
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> width(cols.size() + 1, 2);
  width[0] = 2;
  std::vector<std::string> header = {"OP"};
  for (const std::string& c : cols) header.push_back(c);
  rows.push_back(header);
  for (const OpEntry* o : ops) {
    std::vector<std::string> r = {o->name};
    for (const std::string& c : cols) r.push_back(cell(*o, c));
    rows.push_back(r);
  }
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const auto& r = rows[ri];
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
    if (schema && ri > 0) std::printf("    %s\n", ops[ri - 1]->schema.c_str());
  }
  std::printf(
      "\n%zu ops. Cells: dtypes of each kernel for that device type, best first, '|' between "
      "kernels;\n'all' = every dtype, '*' = only on devices its predicate accepts, '-' = no kernel.\n",
      ops.size());
}

void print_op_detail(const OpEntry& o) {
  std::printf("%s\n  schema:  %s\n  outputs: %zu\n", o.name.c_str(), o.schema.c_str(), o.num_outputs);
  if (o.kernels.empty()) {
    std::printf("  kernels: none (implemented by the core, or not yet provided by any backend)\n");
    return;
  }
  std::printf("  kernels (dispatch order per device type):\n");
  for (const KernelEntry& k : o.kernels)
    std::printf("    %-8s %-28s plugin %-10s priority %-3d%s dtypes: %s\n", k.device_type.c_str(), k.name.c_str(),
                k.plugin.c_str(), k.priority, k.has_predicate ? " (device predicate)" : "",
                mask_to_names(k.dtype_mask, false).c_str());
}

}  // namespace

int cmd_kernels(int argc, char** argv) {
  std::vector<OptionSpec> specs = kRuntimeOptions;
  specs.push_back({"--op", true, "only this op, with every kernel in full"});
  specs.push_back({"--schema", false, "print each op's schema under its row (always in --op and --json)"});
  specs.push_back({"--device", true, "with --reach: the device type (\"cuda\", or a device \"cuda:0\")"});
  specs.push_back({"--reach", false, "per op and dtype: does it run on --device, and which missing kernels it reaches"});
  specs.push_back({"--json", false, "print as JSON"});
  specs.push_back({"--help", false, "this help"});
  Args args;
  int rc = kExitOk;
  if (!parse_command("kernels", "kernels [options]", argc, argv, specs, &args, &rc)) return rc;
  RuntimeSession session;
  if (!session.open(args)) return kExitInternal;
  Inventory inv = collect_inventory(core_api(), session.get());
  if (args.has("--reach")) return kernels_reach(args, session.get(), inv);
  if (args.values.count("--device")) {
    std::fprintf(stderr, "tessera kernels: --device goes with --reach\n");
    return kExitUsage;
  }
  std::vector<const OpEntry*> ops;
  std::string only = args.value("--op");
  if (!select_ops(inv, only, "kernels", &ops)) return kExitFailure;
  std::vector<std::string> cols = column_names(inv);
  if (args.has("--json")) {
    json jops = json::array();
    for (const OpEntry* o : ops) jops.push_back(*o);
    std::printf("%s\n", json{{"device_types", cols}, {"ops", jops}}.dump(2).c_str());
  } else if (!only.empty()) {
    print_op_detail(*ops.front());
  } else {
    print_matrix(ops, cols, args.has("--schema"));
  }
  return kExitOk;
}

}  // namespace tessera_cli
