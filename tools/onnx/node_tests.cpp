#include "node_tests.hpp"

#include <dirent.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx_import.hpp"
#include "tensor_data.hpp"
#include "tessera/jit.hpp"

namespace tsr::onnx {

namespace {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool read_file(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *bytes = ss.str();
  return true;
}

// input_0.pb, input_1.pb, ... in index order.
std::vector<::onnx::TensorProto> read_set(const std::string& dir, const std::string& prefix) {
  std::vector<::onnx::TensorProto> out;
  for (int k = 0;; ++k) {
    std::string bytes;
    if (!read_file(dir + "/" + prefix + std::to_string(k) + ".pb", &bytes)) break;
    ::onnx::TensorProto t;
    if (!t.ParseFromString(bytes))
      throw Error(TSR_UNIMPLEMENTED, prefix + std::to_string(k) + ".pb is not a tensor (a sequence or optional value)");
    out.push_back(std::move(t));
  }
  return out;
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
  return s + "]";
}

// "" when got matches want, else what differs.
std::string compare(const Tensor& got, const ::onnx::TensorProto& want_proto) {
  // ONNX 1.12's test data stores bfloat16 results as their uint16 bits: compare the bits.
  if (want_proto.data_type() == ::onnx::TensorProto::UINT16 && got.dtype() == TSR_BF16) {
    const std::string bits = want_proto.raw_data();
    const Tensor c = got.contiguous();
    if (bits.size() != static_cast<size_t>(c.numel()) * 2) return "a different element count";
    return std::memcmp(bits.data(), c.data_ptr(), bits.size()) ? "bfloat16 bits differ" : "";
  }
  const tsr_dtype_t want_dt = detail::to_tsr_dtype(want_proto.data_type());
  if (got.dtype() != want_dt)
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want_dt);
  const std::vector<int64_t> want_dims(want_proto.dims().begin(), want_proto.dims().end());
  if (got.sizes() != want_dims) return "shape " + dims_str(got.sizes()) + ", expected " + dims_str(want_dims);
  const Tensor want = detail::make_weight(want_proto, ".");
  const std::vector<double> a = got.to_vector<double>(), b = want.to_vector<double>();
  const bool exact = !is_floating(want_dt);
  for (size_t k = 0; k < a.size(); ++k) {
    const bool same = exact ? a[k] == b[k]
                            : (std::isnan(a[k]) && std::isnan(b[k])) || a[k] == b[k] ||
                                  std::fabs(a[k] - b[k]) <= 1e-7 + 1e-3 * std::fabs(b[k]);
    if (!same) {
      std::ostringstream ss;
      ss << "element " << k << " is " << a[k] << ", expected " << b[k];
      return ss.str();
    }
  }
  return "";
}

bool is_integer_or_bool(int32_t dt) {
  return dt == ::onnx::TensorProto::INT64 || dt == ::onnx::TensorProto::INT32 || dt == ::onnx::TensorProto::BOOL;
}

// The model with some inputs (data from the test set) turned into initializers: the integer and
// bool ones, or (all_but_first) every one after the first (Resize's float scales, say);
// `inputs` keeps only the others.
std::string bake_inputs(::onnx::ModelProto model, std::vector<::onnx::TensorProto>* inputs, bool all_but_first) {
  ::onnx::GraphProto* g = model.mutable_graph();
  std::vector<::onnx::TensorProto> kept;
  ::google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> graph_inputs;
  size_t k = 0;
  for (const ::onnx::ValueInfoProto& vi : g->input()) {
    bool is_init = false;
    for (const auto& t : g->initializer()) is_init = is_init || t.name() == vi.name();
    if (is_init) {
      *graph_inputs.Add() = vi;
      continue;
    }
    if (k < inputs->size() && (all_but_first ? k > 0 : is_integer_or_bool((*inputs)[k].data_type()))) {
      ::onnx::TensorProto t = (*inputs)[k];
      t.set_name(vi.name());
      *g->add_initializer() = t;
    } else {
      *graph_inputs.Add() = vi;
      if (k < inputs->size()) kept.push_back((*inputs)[k]);
    }
    ++k;
  }
  g->mutable_input()->Swap(&graph_inputs);
  if (model.ir_version() < 4) model.set_ir_version(4);  // initializers that are not inputs
  *inputs = kept;
  return model.SerializeAsString();
}

NodeTestResult run_one(const std::string& dir, const std::string& name) {
  NodeTestResult r;
  r.test = name;
  r.expanded = name.size() > 9 && name.compare(name.size() - 9, 9, "_expanded") == 0;
  const std::string path = dir + "/" + name;
  std::string bytes;
  ::onnx::ModelProto model;
  if (read_file(path + "/model.onnx", &bytes) && model.ParseFromString(bytes) && model.graph().node_size())
    r.op = model.graph().node(0).op_type();
  try {
    std::vector<::onnx::TensorProto> input_protos = read_set(path + "/test_data_set_0", "input_");
    Imported m;
    // As is; then with integer inputs as constants; then with every input but the first.
    for (int attempt = 0;; ++attempt) {
      std::vector<::onnx::TensorProto> baked = input_protos;
      try {
        m = attempt == 0 ? import_file(path + "/model.onnx")
                         : import_bytes(bake_inputs(model, &baked, attempt == 2), path);
        input_protos = baked;
        r.const_inputs = attempt > 0;
        break;
      } catch (const Error& e) {
        if (attempt == 2 || e.code() != TSR_UNIMPLEMENTED ||
            std::string(e.what()).find("computed at run time") == std::string::npos)
          throw;
      }
    }
    std::vector<Tensor> inputs;
    for (const ::onnx::TensorProto& t : input_protos) inputs.push_back(detail::make_weight(t, "."));
    const std::vector<::onnx::TensorProto> want = read_set(path + "/test_data_set_0", "output_");
    jit::Model g = jit::Model::parse(m.text);
    for (const auto& [n, w] : m.weights) g.bind(n, w);
    std::vector<Tensor> got = g.run(inputs);
    if (got.size() != want.size()) {
      r.detail = std::to_string(got.size()) + " outputs, expected " + std::to_string(want.size());
      return r;
    }
    for (size_t k = 0; k < got.size(); ++k) {
      std::string diff = compare(got[k], want[k]);
      if (!diff.empty()) {
        r.detail = "output " + std::to_string(k) + ": " + diff;
        return r;
      }
    }
    r.status = NodeTestResult::Passed;
  } catch (const Error& e) {
    r.status = e.code() == TSR_UNIMPLEMENTED ? NodeTestResult::Unsupported : NodeTestResult::Failed;
    r.detail = e.what();
    // Strip the model path the importer puts first.
    const std::string prefix = path + "/model.onnx: ";
    if (r.detail.compare(0, prefix.size(), prefix) == 0) r.detail = r.detail.substr(prefix.size());
  } catch (const std::exception& e) {
    r.detail = e.what();
  }
  return r;
}

}  // namespace

std::vector<NodeTestResult> run_node_tests(const std::string& dir, const std::string& filter) {
  std::vector<NodeTestResult> out;
  for (const std::string& name : list_dir(dir)) {
    if (name.find(filter) == std::string::npos) continue;
    std::string probe;
    if (!read_file(dir + "/" + name + "/model.onnx", &probe)) continue;
    out.push_back(run_one(dir, name));
  }
  return out;
}

}  // namespace tsr::onnx
