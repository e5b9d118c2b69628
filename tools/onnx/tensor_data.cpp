#include "tensor_data.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tsr::onnx::detail {

using ::onnx::TensorProto;

tsr_dtype_t to_tsr_dtype(int32_t d) {
  switch (d) {
    case TensorProto::FLOAT: return TSR_F32;
    case TensorProto::DOUBLE: return TSR_F64;
    case TensorProto::FLOAT16: return TSR_F16;
    case TensorProto::BFLOAT16: return TSR_BF16;
    case TensorProto::INT64: return TSR_I64;
    case TensorProto::INT32: return TSR_I32;
    case TensorProto::INT16: return TSR_I16;
    case TensorProto::INT8: return TSR_I8;
    case TensorProto::UINT8: return TSR_U8;
    case TensorProto::BOOL: return TSR_BOOL;
    default: return TSR_DTYPE_UNDEFINED;
  }
}

std::string onnx_dtype_name(int32_t d) {
  if (TensorProto::DataType_IsValid(d)) return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(d));
  return "dtype " + std::to_string(d);
}

bool is_float_dtype(int32_t d) {
  return d == TensorProto::FLOAT || d == TensorProto::DOUBLE || d == TensorProto::FLOAT16 ||
         d == TensorProto::BFLOAT16;
}

int64_t Folded::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool Folded::all_known() const {
  for (const Elem& e : elems)
    if (!e.known()) return false;
  return true;
}

std::vector<int64_t> Folded::ints(const std::string& what) const {
  std::vector<int64_t> out;
  for (const Elem& e : elems) {
    if (e.kind == Elem::Float) throw Error(TSR_INVALID_ARGUMENT, what + " holds floats where integers are expected");
    if (e.kind != Elem::Int) throw Error(TSR_UNIMPLEMENTED, what + " is computed at run time (from the inputs' sizes)");
    out.push_back(e.i);
  }
  return out;
}

Elem Elem::of_poly(const Poly& p) {
  Poly q;
  for (const auto& [m, c] : p) {
    if (c == 0) continue;
    for (size_t k = 1; k < m.size(); ++k)
      if (m[k] == m[k - 1]) return unknown();
    q[m] = c;
  }
  if (q.empty()) return of_int(0);
  if (q.size() == 1 && q.begin()->first.empty()) return of_int(q.begin()->second);
  Elem e;
  e.kind = Sym;
  e.poly = std::move(q);
  return e;
}

Poly Elem::as_poly() const {
  if (kind == Sym) return poly;
  return Poly{{{}, i}};
}

std::string Elem::text() const {
  if (kind == Int) return std::to_string(i);
  std::string s;
  // Higher degrees first, the constant last (the graph printer's order; it reorders anyway).
  std::vector<std::pair<std::vector<std::string>, int64_t>> terms(poly.begin(), poly.end());
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [m, c] : terms) {
    std::string t;
    const int64_t mag = c < 0 ? -c : c;
    if (m.empty() || mag != 1) t = std::to_string(mag);
    for (const std::string& x : m) t += (t.empty() ? "" : "*") + x;
    s += (c < 0 ? "-" : s.empty() ? "" : "+") + t;
  }
  return s;
}

Elem poly_add(const Elem& a, const Elem& b, int64_t sign) {
  Poly p = a.as_poly();
  for (const auto& [m, c] : b.as_poly()) p[m] += sign * c;
  return Elem::of_poly(p);
}

Elem poly_mul(const Elem& a, const Elem& b) {
  Poly p;
  for (const auto& [ma, ca] : a.as_poly())
    for (const auto& [mb, cb] : b.as_poly()) {
      std::vector<std::string> m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      p[m] += ca * cb;
    }
  return Elem::of_poly(p);
}

Elem poly_div(const Elem& a, int64_t d) {
  if (d == 0) return Elem::unknown();
  Poly p = a.as_poly();
  for (auto& [m, c] : p) {
    if (c % d) return Elem::unknown();
    c /= d;
  }
  return Elem::of_poly(p);
}

int64_t numel_of(const TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) throw Error(TSR_INVALID_ARGUMENT, "tensor '" + t.name() + "' has a negative dim");
    n *= d;
  }
  return n;
}

namespace {

std::string external_bytes(const TensorProto& t, const std::string& dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = std::stoll(kv.value());
    else if (kv.key() == "length") length = std::stoll(kv.value());
  }
  // A location is a file beside the model: refuse absolute paths and parent folders.
  if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos)
    throw Error(TSR_INVALID_ARGUMENT, "tensor '" + t.name() + "': bad external data location '" + location + "'");
  std::ifstream in(dir + "/" + location, std::ios::binary);
  if (!in) throw Error(TSR_INVALID_ARGUMENT, "tensor '" + t.name() + "': cannot open external data " + dir + "/" + location);
  in.seekg(offset);
  std::ostringstream ss;
  if (length >= 0) {
    std::string buf(static_cast<size_t>(length), '\0');
    in.read(&buf[0], length);
    if (in.gcount() != length)
      throw Error(TSR_INVALID_ARGUMENT, "tensor '" + t.name() + "': external data file is too short");
    return buf;
  }
  ss << in.rdbuf();
  return ss.str();
}

template <class T, class Field>
std::string pack(const Field& f) {
  std::string s(f.size() * sizeof(T), '\0');
  for (int k = 0; k < f.size(); ++k) {
    T v = static_cast<T>(f.Get(k));
    std::memcpy(&s[static_cast<size_t>(k) * sizeof(T)], &v, sizeof(T));
  }
  return s;
}

}  // namespace

std::string tensor_bytes(const TensorProto& t, const std::string& dir) {
  tsr_dtype_t dt = to_tsr_dtype(t.data_type());
  if (dt == TSR_DTYPE_UNDEFINED)
    throw Error(TSR_UNIMPLEMENTED, "tensor '" + t.name() + "' is " + onnx_dtype_name(t.data_type()) +
                                       ", a dtype Tessera does not have");
  const size_t size = static_cast<size_t>(numel_of(t)) * itemsize(dt);
  std::string bytes;
  if (t.data_location() == TensorProto::EXTERNAL) {
    bytes = external_bytes(t, dir);
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    // The typed fields: 16-bit and smaller types travel in int32_data, one element each
    // (float16/bfloat16 as their bits).
    switch (t.data_type()) {
      case TensorProto::FLOAT: bytes = pack<float>(t.float_data()); break;
      case TensorProto::DOUBLE: bytes = pack<double>(t.double_data()); break;
      case TensorProto::INT64: bytes = pack<int64_t>(t.int64_data()); break;
      case TensorProto::INT32: bytes = pack<int32_t>(t.int32_data()); break;
      case TensorProto::INT16: bytes = pack<int16_t>(t.int32_data()); break;
      case TensorProto::INT8: bytes = pack<int8_t>(t.int32_data()); break;
      case TensorProto::UINT8: bytes = pack<uint8_t>(t.int32_data()); break;
      case TensorProto::BOOL: bytes = pack<uint8_t>(t.int32_data()); break;
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16: bytes = pack<uint16_t>(t.int32_data()); break;
      default: break;
    }
  }
  if (bytes.size() != size)
    throw Error(TSR_INVALID_ARGUMENT, "tensor '" + t.name() + "' holds " + std::to_string(bytes.size()) +
                                          " bytes of data where its dtype and dims need " + std::to_string(size));
  return bytes;
}

Folded fold_tensor(const TensorProto& t, const std::string& dir) {
  Folded f;
  f.dtype = t.data_type();
  f.dims.assign(t.dims().begin(), t.dims().end());
  const std::string bytes = tensor_bytes(t, dir);
  const int64_t n = numel_of(t);
  tsr_dtype_t dt = to_tsr_dtype(t.data_type());
  f.elems.reserve(static_cast<size_t>(n));
  dispatch_all(dt, "onnx import", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < n; ++k) {
      T v;
      std::memcpy(&v, bytes.data() + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
      if (is_floating(dt))
        f.elems.push_back(Elem::of_float(static_cast<double>(static_cast<float>(v))));
      else
        f.elems.push_back(Elem::of_int(static_cast<int64_t>(v)));
    }
  });
  // float64 through float would lose digits: read it again exactly.
  if (dt == TSR_F64)
    for (int64_t k = 0; k < n; ++k) std::memcpy(&f.elems[static_cast<size_t>(k)].f, bytes.data() + k * 8, 8);
  return f;
}

namespace {
Tensor from_bytes(const void* data, const std::vector<int64_t>& dims, tsr_dtype_t dt) {
  tsr_tensor_t* out = nullptr;
  check(api()->tensor_from_host(runtime(), data, static_cast<int32_t>(dims.size()), dims.data(), dt,
                                Device::cpu().d, &out));
  return Tensor::adopt(out);
}
}  // namespace

Tensor make_weight(const TensorProto& t, const std::string& dir) {
  const std::string bytes = tensor_bytes(t, dir);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  return from_bytes(bytes.data(), dims, to_tsr_dtype(t.data_type()));
}

Tensor make_weight(const Folded& f) {
  tsr_dtype_t dt = to_tsr_dtype(f.dtype);
  if (dt == TSR_DTYPE_UNDEFINED)
    throw Error(TSR_UNIMPLEMENTED, "a constant is " + onnx_dtype_name(f.dtype) + ", a dtype Tessera does not have");
  // Built as float64 or int64 and converted by the runtime (its rounding, e.g. to float16).
  if (is_floating(dt)) {
    std::vector<double> v;
    for (const Elem& e : f.elems) v.push_back(e.as_double());
    Tensor t = from_bytes(v.data(), f.dims, TSR_F64);
    return dt == TSR_F64 ? t : t.to(dt);
  }
  std::vector<int64_t> v;
  for (const Elem& e : f.elems) v.push_back(e.i);
  Tensor t = from_bytes(v.data(), f.dims, TSR_I64);
  return dt == TSR_I64 ? t : t.to(dt);
}

}  // namespace tsr::onnx::detail
