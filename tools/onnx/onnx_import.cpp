// import_file: read the model, check it with ONNX's checker, infer shapes (the importer needs
// ranks and, where it folds shape computations or picks static sizes, dims), convert, and
// print the result the way the graph printer does.
#include "onnx_import.hpp"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <sstream>

#include "converter.hpp"
#include "tessera/jit.hpp"

namespace tsr::onnx {

namespace {

// The checker, given the model file's path where there is one: external data is looked up
// beside it.
void check(const ::onnx::ModelProto& model, const std::string& path) {
  try {
    if (path.empty()) ::onnx::checker::check_model(model);
    else ::onnx::checker::check_model(path);
  } catch (const std::exception& e) {
    throw Error(TSR_INVALID_ARGUMENT, std::string("the ONNX checker refuses the model: ") + e.what());
  }
}

Imported import_model(const std::string& bytes, const std::string& dir, const std::string& path) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw Error(TSR_INVALID_ARGUMENT, "not an ONNX model (the protobuf does not parse)");
  check(model, path);
  try {
    // Data propagation lets inference see through Shape -> Gather -> Concat -> Reshape chains.
    ::onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    throw Error(TSR_INVALID_ARGUMENT, std::string("ONNX shape inference fails on the model: ") + e.what());
  }
  Imported r = detail::Converter(model, dir).run();
  // The text as the graph printer writes it (trailing default arguments left out): parsing it
  // here also proves it names only ops and arguments this runtime knows.
  try {
    r.text = jit::Model::parse(r.text).text();
  } catch (const Error& e) {
    throw Error(TSR_INTERNAL, std::string("the importer wrote a graph the parser refuses (a bug): ") + e.what() +
                                  "\n" + r.text);
  }
  return r;
}

}  // namespace

Imported import_bytes(const std::string& bytes, const std::string& dir) { return import_model(bytes, dir, ""); }

Imported import_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(TSR_INVALID_ARGUMENT, "cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  try {
    return import_model(ss.str(), dir, path);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, _] : detail::op_table()) out.push_back(name);
  return out;
}

}  // namespace tsr::onnx
