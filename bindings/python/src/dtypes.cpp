// tessera.dtype and tessera.device: small immutable value classes. Arguments also accept names
// ('float32', 'torch.float32', 'cpu:1') so code written for PyTorch reads naturally.
#include <pybind11/operators.h>

#include <cstring>

#include "common.hpp"

namespace tsr::py {
namespace {

const tsr_dtype_t kAllDtypes[] = {TSR_BOOL,      TSR_U8,      TSR_I8,           TSR_I16,       TSR_I32,
                                  TSR_I64,       TSR_F16,     TSR_BF16,         TSR_F32,       TSR_F64,
                                  TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F4_E2M1FN_X2, TSR_F8_E8M0FNU};

tsr_dtype_t dtype_named(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  if (name.rfind("tessera.", 0) == 0) name = name.substr(8);
  // PyTorch's aliases.
  if (name == "float") return TSR_F32;
  if (name == "double") return TSR_F64;
  if (name == "half") return TSR_F16;
  if (name == "long") return TSR_I64;
  if (name == "int") return TSR_I32;
  if (name == "short") return TSR_I16;
  for (tsr_dtype_t d : kAllDtypes)
    if (name == tsr::dtype_name(d)) return d;
  raise(TSR_INVALID_ARGUMENT, "unknown dtype '" + name + "'");
}

}  // namespace

tsr_dtype_t to_dtype(const pyb::handle& h) {
  if (pyb::isinstance<DType>(h)) return h.cast<DType>().code;
  if (pyb::isinstance<pyb::str>(h)) return dtype_named(h.cast<std::string>());
  // torch.float32 and numpy dtypes print as their names.
  if (pyb::hasattr(h, "name") && pyb::isinstance<pyb::str>(h.attr("name")))
    return dtype_named(h.attr("name").cast<std::string>());
  return dtype_named(pyb::str(h).cast<std::string>());
}

pyb::object dtype_object(tsr_dtype_t d) { return pyb::cast(DType{d}); }

std::string device_text(tsr_device_t d) {
  const char* type = tsr::api()->device_type_name(tsr::runtime(), d.type);
  return std::string(type ? type : "?") + ":" + std::to_string(d.index);
}

tsr_device_t to_device(const pyb::handle& h) {
  if (pyb::isinstance<PyDevice>(h)) return h.cast<PyDevice>().d;
  std::string text = pyb::str(h).cast<std::string>();
  tsr_device_t d{};
  check(tsr::api()->device_parse(tsr::runtime(), text.c_str(), &d));
  return d;
}

pyb::object device_object(tsr_device_t d) { return pyb::cast(PyDevice{d}); }

void bind_dtypes(pyb::module_& m) {
  pyb::class_<DType>(m, "dtype", "An element type: tessera.float32, tessera.int64, tessera.bool, ...")
      .def_property_readonly("name", [](const DType& d) { return std::string(tsr::dtype_name(d.code)); })
      .def_property_readonly("itemsize", [](const DType& d) { return tsr::itemsize(d.code); })
      .def_property_readonly("is_floating_point", [](const DType& d) { return tsr::is_floating(d.code) || tsr::is_low_precision_float(d.code); })
      .def("__repr__", [](const DType& d) { return std::string("tessera.") + tsr::dtype_name(d.code); })
      .def("__str__", [](const DType& d) { return std::string("tessera.") + tsr::dtype_name(d.code); })
      .def("__eq__",
           [](const DType& d, const pyb::object& o) {
             if (pyb::isinstance<DType>(o)) return d.code == o.cast<DType>().code;
             if (pyb::isinstance<pyb::str>(o)) {
               try {
                 return d.code == to_dtype(o);
               } catch (const pyb::error_already_set&) {
                 return false;
               }
             }
             return false;
           })
      .def("__hash__", [](const DType& d) { return static_cast<int>(d.code); })
      .def(pyb::pickle([](const DType& d) { return std::string(tsr::dtype_name(d.code)); },
                       [](const std::string& n) { return DType{dtype_named(n)}; }));
  for (tsr_dtype_t d : kAllDtypes) m.attr(tsr::dtype_name(d)) = DType{d};
}

void bind_devices(pyb::module_& m) {
  pyb::class_<PyDevice>(m, "device", "A device: tessera.device('cpu:0'), 'cuda:1'.")
      .def(pyb::init([](const pyb::object& o) { return PyDevice{to_device(o)}; }), pyb::arg("device"))
      .def_property_readonly("type",
                             [](const PyDevice& d) {
                               const char* t = tsr::api()->device_type_name(tsr::runtime(), d.d.type);
                               return std::string(t ? t : "?");
                             })
      .def_property_readonly("index", [](const PyDevice& d) { return d.d.index; })
      .def("__str__", [](const PyDevice& d) { return device_text(d.d); })
      .def("__repr__", [](const PyDevice& d) { return "tessera.device('" + device_text(d.d) + "')"; })
      .def("__eq__",
           [](const PyDevice& d, const pyb::object& o) {
             if (pyb::isinstance<PyDevice>(o))
               return d.d.type == o.cast<PyDevice>().d.type && d.d.index == o.cast<PyDevice>().d.index;
             if (pyb::isinstance<pyb::str>(o)) {
               tsr_device_t other{};
               std::string text = o.cast<std::string>();
               tsr_status_t st = tsr::api()->device_parse(tsr::runtime(), text.c_str(), &other);
               if (st) {
                 tsr::api()->status_free(st);
                 return false;
               }
               return d.d.type == other.type && d.d.index == other.index;
             }
             return false;
           })
      .def("__hash__", [](const PyDevice& d) { return d.d.type * 4096 + d.d.index; });
}

}  // namespace tsr::py
