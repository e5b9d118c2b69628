// `tessera ops [--where NAME] [--check] [--json]`: where every op is written. For one op
// (--where): its schema and the record that declares it, composite or primitive, its backward
// formula and where that is defined, every kernel per device type with its plugin, the SDK wrapper,
// the OpInfo and the doc row. --check: every public op (no leading '_') has an SDK wrapper, an
// OpInfo and a doc row (an in-place variant shares its out-of-place op's), or is exempt (op_coverage_exemptions.txt)
// with its reason; exit 1 otherwise, also for an exemption no longer needed. The registry gives what the core knows
// (op_source, kernels); op_index.hpp what the build read from the source tree.
#include <algorithm>
#include <cstdio>

#include "cli.hpp"
#include "op_index.hpp"

namespace tessera_cli {

namespace {

std::string where(const SourceRef* r) {
  return r ? std::string(r->file) + ":" + std::to_string(r->line) : std::string("-");
}

std::string record_where(const OpEntry& o) {
  if (!o.source_file.empty()) return o.source_file + ":" + std::to_string(o.source_line);
  return o.plugin.empty() ? "-" : "plugin " + o.plugin;
}

// The formula's function name without template arguments ("maxmin_backward<true>" ->
// "maxmin_backward"), as the source index knows it.
std::string formula_base(const std::string& f) { return f.substr(0, f.find('<')); }

std::string kind_of(const OpEntry& o) {
  if (o.composite) return "composite (autograd from the ops it calls)";
  if (!o.formula.empty()) return "primitive with a backward formula";
  return "primitive without a backward formula";
}

// An in-place variant ("add_" beside "add", its schema writing self) is documented and certified
// with its out-of-place op: the doc row describes both, and the OpInfo's in-place samples
// (Sample::run_inplace) run it. Its SDK wrapper is its own.
const OpEntry* inplace_base(const Inventory& inv, const OpEntry& o) {
  if (o.name.size() < 2 || o.name.back() != '_' || o.schema.find("Tensor(a!) self") == std::string::npos)
    return nullptr;
  std::string base = o.name.substr(0, o.name.size() - 1);
  for (const OpEntry& b : inv.ops)
    if (b.name == base) return &b;
  return nullptr;
}

const SourceRef* find_for(const Inventory& inv, const char* kind, const OpEntry& o) {
  if (const SourceRef* r = find_source(kind, o.name)) return r;
  if (std::string(kind) == "sdk") return nullptr;
  const OpEntry* base = inplace_base(inv, o);
  return base ? find_source(kind, base->name) : nullptr;
}

void print_where(const Inventory& inv, const OpEntry& o) {
  std::printf("%s\n", o.name.c_str());
  std::printf("  schema    %s\n", o.schema.c_str());
  std::printf("  declared  %s (%s)\n", record_where(o).c_str(), o.plugin.empty() ? "core" : o.plugin.c_str());
  std::printf("  kind      %s\n", kind_of(o).c_str());
  if (!o.formula.empty())
    std::printf("  backward  %s at %s\n", o.formula.c_str(),
                where(find_source("formula", formula_base(o.formula))).c_str());
  if (o.kernels.empty()) {
    std::printf("  kernels   none (%s)\n", o.composite ? "runs the ops it is written with" : "no backend provides one");
  } else {
    bool first = true;
    for (const KernelEntry& k : o.kernels) {
      std::printf("  %-9s %-6s %-28s plugin %-8s priority %d%s, %s\n", first ? "kernels" : "", k.device_type.c_str(),
                  k.name.c_str(), k.plugin.c_str(), k.priority, k.has_predicate ? " (device predicate)" : "",
                  mask_to_names(k.dtype_mask, true).c_str());
      first = false;
    }
  }
  std::printf("  sdk       %s\n", where(find_source("sdk", o.name)).c_str());
  const OpEntry* base = inplace_base(inv, o);
  std::string with = base && !find_source("opinfo", o.name) ? " (with " + base->name + ")" : "";
  std::printf("  opinfo    %s%s\n", where(find_for(inv, "opinfo", o)).c_str(), with.c_str());
  with = base && !find_source("doc", o.name) ? " (with " + base->name + ")" : "";
  std::printf("  docs      %s%s\n", where(find_for(inv, "doc", o)).c_str(), with.c_str());
  if (const SourceRef* e = find_source("exempt", o.name))
    std::printf("  exempt    lacks %s: %s (%s:%d)\n", e->file, e->note, "tools/tessera/op_coverage_exemptions.txt",
                e->line);
}

// What a public op lacks among sdk, opinfo and doc ("" when nothing).
std::string lacking(const Inventory& inv, const OpEntry& o) {
  std::string s;
  for (const char* kind : {"sdk", "opinfo", "doc"})
    if (!find_for(inv, kind, o)) s += (s.empty() ? "" : ",") + std::string(kind);
  return s;
}

bool is_public(const OpEntry& o) { return !o.name.empty() && o.name[0] != '_' && o.plugin.empty(); }

int check(const Inventory& inv) {
  int problems = 0, exempt = 0, checked = 0;
  for (const OpEntry& o : inv.ops) {
    if (!is_public(o)) continue;
    ++checked;
    std::string lacks = lacking(inv, o);
    const SourceRef* e = find_source("exempt", o.name);
    if (!e && lacks.empty()) continue;
    if (e && lacks == e->file) {
      ++exempt;
      continue;
    }
    ++problems;
    if (e && lacks.empty())
      std::printf("%s: exempt (%s) but lacks nothing now: remove its line %d from the exemption list\n", o.name.c_str(),
                  e->file, e->line);
    else if (e)
      std::printf("%s: lacks %s, but its exemption (line %d) says %s: correct it\n", o.name.c_str(), lacks.c_str(),
                  e->line, e->file);
    else
      std::printf("%s: lacks %s (add it, or an exemption with the reason)\n", o.name.c_str(), lacks.c_str());
  }
  for (size_t i = 0; i < kOpIndexSize; ++i) {
    const SourceRef& r = kOpIndex[i];
    if (std::string(r.kind) != "exempt") continue;
    bool known = std::any_of(inv.ops.begin(), inv.ops.end(), [&](const OpEntry& o) { return o.name == r.name; });
    if (!known) {
      ++problems;
      std::printf("%s: exempt (line %d) but no such op is registered: remove the line\n", r.name, r.line);
    }
  }
  std::printf("%d public ops: %d with an SDK wrapper, an OpInfo and a doc row, %d exempt, %d problems\n", checked,
              checked - exempt - problems, exempt, problems);
  return problems ? kExitFailure : kExitOk;
}

json op_json(const Inventory& inv, const OpEntry& o) {
  auto ref = [](const SourceRef* r) { return r ? json{{"file", r->file}, {"line", r->line}} : json(nullptr); };
  json j = o;
  j["declared"] = o.source_file.empty() ? json(nullptr) : json{{"file", o.source_file}, {"line", o.source_line}};
  j["plugin"] = o.plugin.empty() ? "core" : o.plugin;
  j["composite"] = o.composite;
  j["backward"] = o.formula.empty()
                      ? json(nullptr)
                      : json{{"formula", o.formula}, {"at", ref(find_source("formula", formula_base(o.formula)))}};
  j["sdk"] = ref(find_source("sdk", o.name));
  j["opinfo"] = ref(find_for(inv, "opinfo", o));
  j["doc"] = ref(find_for(inv, "doc", o));
  return j;
}

}  // namespace

int cmd_ops(int argc, char** argv) {
  std::vector<OptionSpec> specs = kRuntimeOptions;
  specs.push_back({"--where", true, "everything about one op: record, formula, kernels, SDK wrapper, OpInfo, doc row"});
  specs.push_back({"--check", false, "every public op has an SDK wrapper, an OpInfo and a doc row (or an exemption)"});
  specs.push_back({"--json", false, "print as JSON"});
  specs.push_back({"--help", false, "this help"});
  Args args;
  int rc = kExitOk;
  if (!parse_command("ops", "ops [--where NAME | --check] [options]", argc, argv, specs, &args, &rc)) return rc;
  RuntimeSession session;
  if (!session.open(args)) return kExitInternal;
  Inventory inv = collect_inventory(core_api(), session.get());
  std::vector<const OpEntry*> ops;
  std::string only = args.value("--where");
  if (!select_ops(inv, args.has("--check") ? "" : only, "ops", &ops)) return kExitFailure;
  if (args.has("--check")) return check(inv);
  if (args.has("--json")) {
    json j = json::array();
    for (const OpEntry* o : ops) j.push_back(op_json(inv, *o));
    std::printf("%s\n", (only.empty() ? j : j[0]).dump(2).c_str());
  } else if (!only.empty()) {
    print_where(inv, *ops.front());
  } else {
    for (const OpEntry* o : ops)
      std::printf("%-36s %-44s %s\n", o->name.c_str(), record_where(*o).c_str(),
                  o->composite ? "composite" : (o->formula.empty() ? "primitive" : "primitive+formula"));
    std::printf("\n%zu ops. `tessera ops --where NAME` shows one in full.\n", ops.size());
  }
  return kExitOk;
}

}  // namespace tessera_cli
