// tessera.Tensor: the SDK's reference-counted tsr::Tensor, with its metadata, views, copies,
// autograd state and NumPy conversion. Operators, indexing and the op methods are added in
// Python (tessera/_tensor.py) over the registry ops, so there is one way to call an op.
#include <pybind11/numpy.h>

#include "common.hpp"

namespace tsr::py {
namespace {

using tsr::Tensor;

// NumPy's dtype for ours; bfloat16 has none (numpy() converts it to float32).
pyb::dtype numpy_dtype(tsr_dtype_t d) {
  switch (d) {
    case TSR_BOOL:
      return pyb::dtype("bool");
    case TSR_U8:
      return pyb::dtype("uint8");
    case TSR_I8:
      return pyb::dtype("int8");
    case TSR_I16:
      return pyb::dtype("int16");
    case TSR_I32:
      return pyb::dtype("int32");
    case TSR_I64:
      return pyb::dtype("int64");
    case TSR_F16:
      return pyb::dtype("float16");
    case TSR_F32:
      return pyb::dtype("float32");
    case TSR_F64:
      return pyb::dtype("float64");
    default:
      raise(TSR_UNIMPLEMENTED, std::string("NumPy has no dtype for ") + tsr::dtype_name(d));
  }
}

tsr_dtype_t from_numpy_dtype(const pyb::dtype& dt) {
  const char kind = dt.kind();
  const size_t size = static_cast<size_t>(dt.itemsize());
  if (kind == 'b') return TSR_BOOL;
  if (kind == 'u' && size == 1) return TSR_U8;
  if (kind == 'i') return size == 1 ? TSR_I8 : size == 2 ? TSR_I16 : size == 4 ? TSR_I32 : TSR_I64;
  if (kind == 'f') return size == 2 ? TSR_F16 : size == 4 ? TSR_F32 : TSR_F64;
  raise(TSR_INVALID_ARGUMENT, "unsupported NumPy dtype " + dt.attr("name").cast<std::string>());
}

// A copy of a NumPy array (any layout) as a new tensor on `device`.
Tensor from_numpy_copy(const pyb::array& a, tsr_dtype_t dtype, tsr_device_t device) {
  tsr_dtype_t src = from_numpy_dtype(a.dtype());
  pyb::array c = pyb::array::ensure(a, pyb::array::c_style | pyb::array::forcecast);
  std::vector<int64_t> shape(c.shape(), c.shape() + c.ndim());
  tsr_tensor_t* out = nullptr;
  check(tsr::api()->tensor_from_host(tsr::runtime(), c.data(), static_cast<int32_t>(shape.size()), shape.data(), src,
                                     device, &out));
  Tensor t = Tensor::adopt(out);
  return dtype == TSR_DTYPE_UNDEFINED || dtype == src ? t : t.to(dtype);
}

// A host view of a CPU tensor as a NumPy array sharing its memory; the array keeps a
// reference to the tensor.
pyb::array numpy_view(const Tensor& t) {
  std::vector<pyb::ssize_t> shape, strides;
  const auto item = static_cast<pyb::ssize_t>(tsr::itemsize(t.dtype()));
  for (int64_t s : t.sizes()) shape.push_back(s);
  for (int64_t s : t.strides()) strides.push_back(s * item);
  auto* keep = new Tensor(t);
  pyb::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return pyb::array(numpy_dtype(t.dtype()), shape, strides, t.numel() ? t.data_ptr() : nullptr, owner);
}

pyb::object item_of(const Tensor& t) {
  if (t.numel() != 1)
    raise(TSR_INVALID_ARGUMENT,
          "item(): a Tensor with " + std::to_string(t.numel()) + " elements cannot be converted to a Python scalar");
  if (t.dtype() == TSR_BOOL) return pyb::bool_(t.to(tsr::Device::cpu(), TSR_I64).item<int64_t>() != 0);
  if (tsr::is_floating(t.dtype()) || tsr::is_low_precision_float(t.dtype()))
    return pyb::float_(t.to(tsr::Device::cpu(), TSR_F64).item<double>());
  return pyb::int_(t.to(tsr::Device::cpu(), TSR_I64).item<int64_t>());
}

Tensor on_cpu(const Tensor& t) {
  Tensor c = t.device().d.type == TSR_DEVICE_TYPE_CPU ? t : t.to(tsr::Device::cpu());
  // NumPy has no bfloat16 or float8: they arrive as float32 (exact).
  const tsr_dtype_t dt = c.dtype();
  return dt == TSR_BF16 || dt == TSR_F8_E4M3FN || dt == TSR_F8_E5M2 || dt == TSR_F8_E8M0FNU ? c.to(TSR_F32) : c;
}

std::vector<int64_t> int_list(const pyb::handle& h) {
  if (pyb::isinstance<pyb::int_>(h)) return {h.cast<int64_t>()};
  std::vector<int64_t> v;
  for (const pyb::handle& x : h) v.push_back(x.cast<int64_t>());
  return v;
}

// size(*dims) / view(*shape) style arguments: one sequence or several ints.
std::vector<int64_t> shape_args(const pyb::args& args) {
  if (args.size() == 1 && !pyb::isinstance<pyb::int_>(args[0])) return int_list(args[0]);
  std::vector<int64_t> v;
  for (const pyb::handle& x : args) v.push_back(x.cast<int64_t>());
  return v;
}

}  // namespace

Tensor as_tensor(const pyb::handle& h, bool wrap_scalars) {
  if (pyb::isinstance<Tensor>(h)) return h.cast<Tensor>();
  if (pyb::isinstance<pyb::bool_>(h)) return tsr::wrap_scalar(h.cast<bool>());
  if (pyb::isinstance<pyb::int_>(h))
    return wrap_scalars ? tsr::wrap_scalar(h.cast<int64_t>())
                        : tsr::scalar_tensor_int(h.cast<int64_t>(), TSR_I64, false);
  if (pyb::isinstance<pyb::float_>(h))
    return wrap_scalars ? tsr::wrap_scalar(h.cast<double>()) : tsr::scalar_tensor(h.cast<double>(), TSR_F32, false);
  if (pyb::hasattr(h, "__dlpack__") && !pyb::isinstance<pyb::array>(h))
    return pyb::module_::import("tessera._C").attr("from_dlpack")(h).cast<Tensor>();
  // Sequences as PyTorch's tensor(): Python floats become float32, ints int64.
  pyb::array a = pyb::module_::import("numpy").attr("asarray")(h);
  tsr_dtype_t dt = TSR_DTYPE_UNDEFINED;
  if (!pyb::isinstance<pyb::array>(h) && a.dtype().kind() == 'f') dt = TSR_F32;
  return from_numpy_copy(a, dt, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0});
}

void bind_tensor(pyb::module_& m) {
  pyb::class_<Tensor> t(m, "Tensor", "A tensor: a view (sizes, strides, offset) of a storage on one device.");
  t.def_property_readonly("shape", [](const Tensor& x) { return pyb::tuple(pyb::cast(x.sizes())); })
      .def(
          "size",
          [](const Tensor& x, const pyb::object& d) -> pyb::object {
            if (d.is_none()) return pyb::tuple(pyb::cast(x.sizes()));
            return pyb::int_(x.size(d.cast<int64_t>()));
          },
          pyb::arg("dim") = pyb::none())
      .def(
          "stride",
          [](const Tensor& x, const pyb::object& d) -> pyb::object {
            auto s = x.strides();
            if (d.is_none()) return pyb::tuple(pyb::cast(s));
            int64_t i = d.cast<int64_t>();
            return pyb::int_(s.at(static_cast<size_t>(i < 0 ? i + x.dim() : i)));
          },
          pyb::arg("dim") = pyb::none())
      .def_property_readonly("dtype", [](const Tensor& x) { return dtype_object(x.dtype()); })
      .def_property_readonly("device", [](const Tensor& x) { return device_object(x.device().d); })
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("__len__",
           [](const Tensor& x) {
             if (x.dim() == 0) raise(TSR_INVALID_ARGUMENT, "len() of a 0-d tensor");
             return x.size(0);
           })
      .def("storage_offset", &Tensor::storage_offset)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("data_ptr", [](const Tensor& x) { return reinterpret_cast<uintptr_t>(x.data_ptr()); })
      .def("element_size", [](const Tensor& x) { return tsr::itemsize(x.dtype()); })
      .def_property_readonly("is_floating_point", [](const Tensor& x) { return tsr::is_floating(x.dtype()) || tsr::is_low_precision_float(x.dtype()); })
      // views (no copy; autograd records them)
      .def("view", [](const Tensor& x, const pyb::args& a) { return x.view(shape_args(a)); })
      .def("reshape", [](const Tensor& x, const pyb::args& a) { return x.reshape(shape_args(a)); })
      .def("expand", [](const Tensor& x, const pyb::args& a) { return x.expand(shape_args(a)); })
      .def("permute", [](const Tensor& x, const pyb::args& a) { return x.permute(shape_args(a)); })
      .def("transpose", &Tensor::transpose, pyb::arg("dim0"), pyb::arg("dim1"))
      .def("t", &Tensor::t)
      .def_property_readonly("T",
                             [](const Tensor& x) {
                               std::vector<int64_t> d;
                               for (int64_t i = x.dim() - 1; i >= 0; --i) d.push_back(i);
                               return x.permute(d);
                             })
      .def("select", &Tensor::select, pyb::arg("dim"), pyb::arg("index"))
      .def("narrow", &Tensor::narrow, pyb::arg("dim"), pyb::arg("start"), pyb::arg("length"))
      .def("_slice", &Tensor::slice, pyb::arg("dim"), pyb::arg("start"), pyb::arg("end"), pyb::arg("step") = 1)
      .def("unsqueeze", &Tensor::unsqueeze, pyb::arg("dim"))
      .def(
          "squeeze",
          [](const Tensor& x, const pyb::object& d) {
            return d.is_none() ? x.squeeze() : x.squeeze(d.cast<int64_t>());
          },
          pyb::arg("dim") = pyb::none())
      .def("as_strided", &Tensor::as_strided, pyb::arg("size"), pyb::arg("stride"), pyb::arg("storage_offset") = 0)
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def(
          "copy_", [](Tensor& x, const pyb::object& src) -> Tensor& { return x.copy_(as_tensor(src, false)); },
          pyb::arg("src"))
      .def(
          "fill_", [](Tensor& x, double v) -> Tensor& { return x.fill_(v); }, pyb::arg("value"))
      .def(
          "_to",
          [](const Tensor& x, const pyb::object& device, const pyb::object& dtype, bool copy) {
            tsr_device_t dev = device.is_none() ? x.device().d : to_device(device);
            tsr_dtype_t dt = dtype.is_none() ? TSR_DTYPE_UNDEFINED : to_dtype(dtype);
            tsr_tensor_t* out = nullptr;
            check(tsr::api()->tensor_to(x.get(), dt, dev, copy ? 1 : 0, &out));
            return Tensor::adopt(out);
          },
          pyb::arg("device") = pyb::none(), pyb::arg("dtype") = pyb::none(), pyb::arg("copy") = false)
      .def("is_same", [](const Tensor& a, const Tensor& b) { return a.get() == b.get(); })
      .def("shares_storage", &Tensor::shares_storage)
      // host values
      .def("item", &item_of)
      .def(
          "numpy",
          [](const Tensor& x, bool force) {
            if (!force && x.requires_grad())
              raise(TSR_FAILED_PRECONDITION,
                    "can't call numpy() on a Tensor that requires grad; use tensor.detach().numpy()");
            Tensor c = on_cpu(x);
            return numpy_view(c);
          },
          pyb::arg("force") = false)
      .def("tolist", [](const Tensor& x) { return numpy_view(on_cpu(x.detach())).attr("tolist")(); })
      // autograd
      .def_property(
          "requires_grad", [](const Tensor& x) { return x.requires_grad(); },
          [](Tensor& x, bool on) { x.requires_grad_(on); })
      .def(
          "requires_grad_", [](Tensor& x, bool on) -> Tensor& { return x.requires_grad_(on); },
          pyb::arg("requires_grad") = true)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property(
          "grad",
          [](const Tensor& x) -> pyb::object {
            Tensor g = x.grad();
            return g.defined() ? pyb::cast(g) : pyb::none();
          },
          [](Tensor& x, const pyb::object& g) { x.set_grad(g.is_none() ? Tensor() : g.cast<Tensor>()); })
      .def_property_readonly("grad_fn_name",
                             [](const Tensor& x) -> pyb::object {
                               const char* n = x.grad_fn_name();
                               return n ? pyb::object(pyb::str(n)) : pyb::object(pyb::none());
                             })
      .def("detach", &Tensor::detach)
      .def("retain_grad", &Tensor::retain_grad)
      .def("_version", &Tensor::version)
      .def(
          "backward",
          [](const Tensor& x, const pyb::object& gradient, const pyb::object& retain_graph, bool create_graph) {
            Tensor g = gradient.is_none() ? Tensor() : as_tensor(gradient, false);
            bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
            // The GIL stays held: tensors freed here may be DLPack imports whose producer's
            // deleter touches Python objects.
            x.backward(g, retain, create_graph);
          },
          pyb::arg("gradient") = pyb::none(), pyb::arg("retain_graph") = pyb::none(), pyb::arg("create_graph") = false);

  m.def(
      "_from_numpy",
      [](const pyb::array& a, const pyb::object& dtype, const pyb::object& device) {
        return from_numpy_copy(a, dtype.is_none() ? TSR_DTYPE_UNDEFINED : to_dtype(dtype),
                               device.is_none() ? tsr_device_t{TSR_DEVICE_TYPE_CPU, 0} : to_device(device));
      },
      pyb::arg("array"), pyb::arg("dtype") = pyb::none(), pyb::arg("device") = pyb::none(),
      "A new tensor holding a copy of the NumPy array.");
  m.def(
      "_as_tensor", [](const pyb::object& o) { return as_tensor(o, false); }, pyb::arg("data"));
  m.def(
      "autograd_grad",
      [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs, const pyb::object& grad_outputs,
         bool retain_graph, bool create_graph, bool allow_unused) {
        std::vector<Tensor> gos;
        if (!grad_outputs.is_none())
          for (const pyb::handle& g : grad_outputs) gos.push_back(g.is_none() ? Tensor() : as_tensor(g, false));
        std::vector<Tensor> r = tsr::autograd::grad(outputs, inputs, gos, retain_graph, create_graph, allow_unused);
        pyb::list out;
        for (const Tensor& g : r) out.append(g.defined() ? pyb::cast(g) : pyb::none());
        return pyb::tuple(out);
      },
      pyb::arg("outputs"), pyb::arg("inputs"), pyb::arg("grad_outputs") = pyb::none(), pyb::arg("retain_graph") = false,
      pyb::arg("create_graph") = false, pyb::arg("allow_unused") = false);
}

}  // namespace tsr::py
