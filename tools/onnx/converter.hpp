// The importer's core: walks an ONNX graph (already checked and shape-inferred) in node order,
// keeping for every ONNX value what is known of it (dtype, shape, graph name, constant data),
// and writes the graph text. Each ONNX op is mapped by a handler (ops_*.cpp) that sees one node
// through a NodeCtx: its inputs, attributes and inferred output types, and emits Tessera nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "names.hpp"
#include "onnx_import.hpp"
#include "tensor_data.hpp"

namespace tsr::onnx::detail {

// A dim as the importer knows it: a size, a symbol of the graph inputs, or unknown.
struct Dim {
  int64_t size = -1;  // >= 0 when static
  std::string sym;    // the Tessera symbol when the inputs decide it
  bool is_static() const { return size >= 0; }
  bool known() const { return size >= 0 || !sym.empty(); }
  bool operator==(const Dim& o) const { return size == o.size && sym == o.sym; }
};

struct Shape {
  bool has_rank = false;
  std::vector<Dim> dims;
  int rank() const { return static_cast<int>(dims.size()); }
};

// What the importer knows of one ONNX value.
struct Value {
  std::string onnx_name;
  int32_t dtype = 0;  // ONNX TensorProto::DataType, 0 when unknown
  Shape shape;
  std::string ref;  // the graph value's name without '%'; empty until it exists in the graph
  // Known at import time: an initializer or a Constant's tensor (any size), and/or its elements
  // (small tensors: folded shape computations, axes, scalars).
  const ::onnx::TensorProto* data = nullptr;
  std::shared_ptr<const Folded> folded;
  bool is_const() const { return data != nullptr || folded != nullptr; }
};

// Literals of the graph text.
std::string lit(int64_t v);
std::string lit(const std::vector<int64_t>& v);
std::string lit_bool(bool b);
// A float argument: as written by the graph printer (shortest round-tripping double).
std::string lit_double(double d);
// A float32 attribute: its shortest decimal that reads back as the same float, so 1e-5f is
// written "1e-05" rather than 9.99999974737875e-06.
std::string lit_float(float f);
std::string dtype_lit(int32_t onnx_dtype);  // "float32"; UNIMPLEMENTED for dtypes Tessera lacks

class Converter;

// One node being converted, as its handler sees it. Errors a handler throws (fail, unsupported,
// or any tsr::Error) are reported with the node's index, name and op type.
class NodeCtx {
 public:
  NodeCtx(Converter& cv, const ::onnx::NodeProto& node, int opset);

  const ::onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  const std::string& op_type() const { return node_.op_type(); }

  // Inputs. ONNX leaves optional inputs out at the end or names them "".
  int num_inputs() const { return node_.input_size(); }
  bool has_input(int i) const;
  const Value& in(int i) const;  // INVALID_ARGUMENT when absent
  // "%name" of input i as a graph value (constants become params or 0-dim const statements).
  std::string tensor(int i);
  // Input i's elements, which must be known at import time (`what` names it in errors).
  const Folded& constant(int i, const std::string& what);
  bool is_constant(int i) const;
  // The rank of input i (INVALID_ARGUMENT when shape inference did not find it).
  int rank(int i) const;
  // Input i's dims, every one static (else UNIMPLEMENTED naming `why`).
  std::vector<int64_t> static_dims(int i, const std::string& why) const;
  int32_t dtype(int i) const { return in(i).dtype; }

  // Attributes. Every attribute of the node must be read by its handler: one left unread is an
  // UNIMPLEMENTED "unsupported attribute" error.
  bool has_attr(const std::string& name);
  int64_t attr_int(const std::string& name, int64_t def);
  float attr_float(const std::string& name, float def);
  std::string attr_string(const std::string& name, const std::string& def);
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& def);
  std::vector<float> attr_floats(const std::string& name);
  const ::onnx::TensorProto& attr_tensor(const std::string& name);
  // Marks attributes read (accepted and ignored).
  void ignore_attr(const std::string& name);
  std::set<std::string> unread_attrs() const;

  // Outputs.
  int num_outputs() const { return node_.output_size(); }
  // Whether output k is named and read by a later node or the graph outputs.
  bool output_used(int k) const;
  // What shape inference found for output k (dtype 0 / no rank when it found nothing).
  Value out_info(int k);  // falls back on infer.cpp's rules where inference found nothing

  // Emits `op(args)` and returns its result's reference ("%name"). With output k >= 0 the node
  // defines ONNX output k (named after it, typed from shape inference where complete); with -1
  // it is an intermediate of a composition.
  std::string emit(const std::string& op, const std::vector<std::string>& args, int output = -1);
  // An op with several results: outputs[j] is the ONNX output result j defines (-1: none).
  // Output 0 from y, whose dims are the node's with `axis` moved last (of r): permutes it back.
  void emit_axis_from_last(const std::string& y, int64_t axis, int64_t r);
  std::vector<std::string> emit_multi(const std::string& op, const std::vector<std::string>& args,
                                      const std::vector<int>& outputs);
  // A 0-dim constant of the given dtype written inline; returns its reference.
  std::string scalar(int32_t dtype, double v);
  // ONNX output k is the existing graph value `ref` (Identity, Dropout at inference).
  void alias(int k, const std::string& ref);
  // ONNX output k is known at import time.
  void define_folded(int k, Folded f);
  void define_data(int k, const ::onnx::TensorProto& t);  // a Constant's tensor (any size)
  // ONNX output k is input i (Identity): constants stay constants.
  void forward(int k, int i);
  bool defined(int k) const;

  [[noreturn]] void fail(const std::string& msg) const;         // INVALID_ARGUMENT
  [[noreturn]] void unsupported(const std::string& msg) const;  // UNIMPLEMENTED

 private:
  Converter& cv_;
  const ::onnx::NodeProto& node_;
  int opset_;
  std::set<std::string> read_;
  std::vector<bool> defined_;
  const ::onnx::AttributeProto* attr(const std::string& name, int type);
};

using OpHandler = void (*)(NodeCtx&);
using OpTable = std::map<std::string, OpHandler>;
void add_math_ops(OpTable& t);   // ops_math.cpp
void add_nn_ops(OpTable& t);     // ops_nn.cpp
void add_resize_ops(OpTable& t); // ops_resize.cpp
void add_shape_ops(OpTable& t);  // ops_shape.cpp
const OpTable& op_table();

class Converter {
 public:
  Converter(const ::onnx::ModelProto& model, std::string dir);
  Imported run();

 private:
  friend class NodeCtx;
  const ::onnx::ModelProto& model_;
  std::string dir_;
  Names names_;  // value names and dim symbols: the parser refuses a symbol that is also a value name
  std::map<std::string, std::string> sym_of_param_;  // ONNX dim_param -> Tessera symbol
  std::unordered_map<std::string, Value> values_;     // by ONNX name
  std::unordered_map<std::string, const ::onnx::TypeProto*> inferred_;
  std::set<std::string> used_;  // ONNX names some node or the graph outputs read
  std::string inputs_text_, weights_text_, nodes_text_;
  std::vector<std::pair<std::string, Tensor>> weights_;

  Value info_of(const std::string& onnx_name, const ::onnx::TypeProto* type);
  Shape shape_of(const ::onnx::TensorShapeProto& s);
  void add_input(const ::onnx::ValueInfoProto& vi);
  void convert_node(const ::onnx::NodeProto& node, int index, int opset);
  std::string materialize(Value& v);
  std::string type_text(const Value& v) const;  // "" when not complete
  Value& value(const std::string& onnx_name);
};

}  // namespace tsr::onnx::detail
