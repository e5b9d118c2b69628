// The model file: safetensors whose tensors are the graph's weights (named as its values) and
// whose metadata holds the graph's text, the format name and its version. Loading validates
// everything (the text, every weight's dtype and shape, no tensor the graph does not use)
// before the model is handed out.
#include "graph/model_file.hpp"

#include <cstring>

#include "graph/text.hpp"
#include "io/safetensors.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::graph {

namespace {
constexpr const char* kFormatKey = "format";
constexpr const char* kFormat = "tessera.model";
constexpr const char* kVersionKey = "tessera.model.version";
constexpr const char* kGraphKey = "tessera.graph";

bool same_type(const Type& t, const Tensor* w) {
  if (t.dtype != w->dtype || static_cast<int>(t.dims.size()) != w->ndim) return false;
  for (int d = 0; d < w->ndim; ++d)
    if (!t.dims[static_cast<size_t>(d)].sym.empty() || t.dims[static_cast<size_t>(d)].size != w->sizes[d]) return false;
  return true;
}

struct FileCloser {
  tsr_safetensors_t* f;
  ~FileCloser() {
    if (f) st::close(f);
  }
};
}  // namespace

tsr_status_t bind(Graph& g, const std::string& name, Tensor* weight) {
  if (!weight) return make_status(TSR_INVALID_ARGUMENT, "model_bind: tensor is NULL");
  auto it = g.by_name.find(name);
  if (it == g.by_name.end())
    return make_status(TSR_NOT_FOUND, "model_bind: the model has no param or const named '" + name + "'");
  Value& v = g.values[static_cast<size_t>(it->second)];
  if ((v.kind != ValueKind::Param && v.kind != ValueKind::Const) || v.inline_scalar)
    return make_status(TSR_INVALID_ARGUMENT, "model_bind: %" + name + " is not a param or a stored const");
  if (weight->runtime != g.rt) return make_status(TSR_INVALID_ARGUMENT, "model_bind: the tensor belongs to another runtime");
  if (!same_type(v.type, weight))
    return make_status(TSR_INVALID_ARGUMENT, "model_bind: %" + name + " is " + type_str(v.type) + ", got " +
                                                 describe(g.rt, weight));
  if (weight->device.type != g.device.type || weight->device.index != g.device.index)
    return make_status(TSR_INVALID_ARGUMENT, "model_bind: %" + name + " must be on " + device_str(g.rt, g.device) +
                                                 ", got " + describe(g.rt, weight));
  weight->retain();
  if (v.weight) v.weight->release();
  v.weight = weight;
  return nullptr;
}

tsr_status_t save(const Graph& g, const char* path) {
  for (int id : g.weights)
    if (!g.values[static_cast<size_t>(id)].weight)
      return make_status(TSR_FAILED_PRECONDITION,
                         "model_save: %" + g.values[static_cast<size_t>(id)].name + " has no tensor (bind one first)");
  std::vector<const char*> names;
  std::vector<tsr_tensor_t*> tensors;
  for (int id : g.weights) {
    const Value& v = g.values[static_cast<size_t>(id)];
    if (v.inline_scalar) continue;  // written in the text
    names.push_back(v.name.c_str());
    tensors.push_back(v.weight);
  }
  std::string text = print(g);
  const char* keys[] = {kFormatKey, kVersionKey, kGraphKey};
  const char* values[] = {kFormat, "1", text.c_str()};
  return prefix_status(st::save(g.rt, path, names.size(), names.data(), tensors.data(), 3, keys, values), "model_save");
}

tsr_status_t load(Runtime* rt, const char* path, const tsr_device_t* device, std::unique_ptr<tsr_model_s>* out) {
  if (!rt || !path) return make_status(TSR_INVALID_ARGUMENT, "model_load: runtime and path are required");
  tsr_safetensors_t* f = nullptr;
  TSR_RETURN_IF_ERROR(prefix_status(st::open(rt, path, &f), "model_load"));
  FileCloser closer{f};
  std::string where = std::string("model_load: ") + path;
  const char* format = st::metadata_get(f, kFormatKey);
  const char* text = st::metadata_get(f, kGraphKey);
  if (!format || std::strcmp(format, kFormat) != 0 || !text)
    return make_status(TSR_INVALID_ARGUMENT, where + ": not a Tessera model (a safetensors file without the '" +
                                                 std::string(kFormatKey) + "': '" + kFormat + "' and '" + kGraphKey +
                                                 "' metadata)");
  const char* version = st::metadata_get(f, kVersionKey);
  if (!version || std::strcmp(version, "1") != 0)
    return make_status(TSR_INVALID_ARGUMENT, where + ": model format version " + (version ? version : "(none)") +
                                                 " is not supported (this core reads version 1)");
  ParseOptions opts;
  if (device) {
    TSR_RETURN_IF_ERROR(check_device(rt, *device, "model_load"));
    opts.move_device = true;
    opts.device = *device;
  }
  std::unique_ptr<tsr_model_s> g;
  TSR_RETURN_IF_ERROR(prefix_status(parse(rt, text, opts, &g), where));
  size_t stored = 0;
  for (int id : g->weights) {
    Value& v = g->values[static_cast<size_t>(id)];
    if (v.inline_scalar) continue;
    ++stored;
    size_t index = 0;
    tsr_status_t st = st::find(f, v.name.c_str(), &index);
    if (st) {
      free_status(st);
      return make_status(TSR_INVALID_ARGUMENT, where + ": the graph's %" + v.name + " has no tensor in the file");
    }
    Tensor* w = nullptr;
    TSR_RETURN_IF_ERROR(prefix_status(st::load(f, index, g->device, &w), where));
    if (!same_type(v.type, w)) {
      std::string msg = where + ": the file's '" + v.name + "' is " + describe(rt, w) + " but the graph declares " +
                        type_str(v.type);
      w->release();
      return make_status(TSR_INVALID_ARGUMENT, msg);
    }
    v.weight = w;
  }
  if (st::count(f) != stored)
    return make_status(TSR_INVALID_ARGUMENT, where + ": the file holds " + std::to_string(st::count(f)) +
                                                 " tensors but the graph uses " + std::to_string(stored));
  *out = std::move(g);
  return nullptr;
}

}  // namespace tsr::core::graph
