// Reading safetensors: map the file, validate the whole header before handing out a handle,
// copy single entries out of the mapping on demand.
//
// The file is untrusted input. Everything the header claims (lengths, shapes, offsets) is
// checked against the file's real size before any tensor byte is touched, with overflow-safe
// arithmetic, so a malformed file becomes a DATA_LOSS status naming what is wrong.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/runtime.hpp"
#include "io/safetensors.hpp"
#include "runtime/status.hpp"

// The DOM is a sorted map (O(log n) inserts; an ordered_map would be quadratic in the number
// of fields of a hostile header); HeaderReader records the file order of the entries.
using json = nlohmann::json;

tsr_safetensors_s::~tsr_safetensors_s() {
  if (map) munmap(const_cast<unsigned char*>(map), map_size);
}

namespace tsr::core::st {

namespace {

// The reference implementation refuses headers above 100 MB; so do we, before parsing.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct NameDtype {
  const char* name;
  tsr_dtype_t dtype;
};
constexpr NameDtype kDtypes[] = {{"BOOL", TSR_BOOL}, {"U8", TSR_U8},   {"I8", TSR_I8},   {"I16", TSR_I16},
                                 {"I32", TSR_I32},   {"I64", TSR_I64}, {"F16", TSR_F16}, {"BF16", TSR_BF16},
                                 {"F32", TSR_F32},   {"F64", TSR_F64}, {"F8_E4M3", TSR_F8_E4M3FN},
                                 {"F8_E5M2", TSR_F8_E5M2}, {"F8_E8M0", TSR_F8_E8M0FNU}};
// Named by the format but without a Tessera dtype: a valid file we cannot load (UNIMPLEMENTED,
// not DATA_LOSS, so a caller can tell "corrupt" from "too new for us").
// "F4" counts single e2m1 values (shape = values), where float4_e2m1fn_x2 counts bytes: a file
// of them is refused rather than reinterpreted.
constexpr const char* kForeignDtypes[] = {"U16", "U32", "U64", "F6_E2M3", "F6_E3M2", "F4", "C64", "C128"};

tsr_status_t bad(const std::string& path, const std::string& what) {
  return make_status(TSR_DATA_LOSS, "safetensors: '" + path + "': " + what);
}

// Tokens and values the file supplies are quoted in messages up to this many bytes.
constexpr size_t kMaxToken = 64;

// `s` cut to kMaxToken bytes (at a UTF-8 character boundary) with "..." when it was longer.
std::string bounded(const std::string& s) {
  if (s.size() <= kMaxToken) return s;
  size_t cut = kMaxToken;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

std::string quote_name(const std::string& s) {
  // Names come from the file: keep messages printable and bounded.
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > 80) out += "...";
  return out + "'";
}

// A JSON integer in [0, INT64_MAX]; false for negatives, floats, out-of-range values.
bool as_count(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return *out <= static_cast<uint64_t>(INT64_MAX);
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    *out = static_cast<uint64_t>(i);
    return i >= 0;
  }
  return false;
}

tsr_status_t parse_entry(const std::string& path, const std::string& name, const json& v, uint64_t data_size,
                         Entry* e) {
  const std::string where = "entry " + quote_name(name);
  if (name.find('\0') != std::string::npos) return bad(path, where + ": the name contains a NUL character");
  if (!v.is_object()) return bad(path, where + " is JSON " + v.type_name() + ", not an object");
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets")
      return bad(path, where + ": unknown field " + quote_name(it.key()));
  auto dt = v.find("dtype"), shape = v.find("shape"), offs = v.find("data_offsets");
  if (dt == v.end() || shape == v.end() || offs == v.end())
    return bad(path, where + ": needs the fields dtype, shape and data_offsets");

  if (!dt->is_string()) return bad(path, where + ": dtype is JSON " + dt->type_name() + ", not a string");
  const std::string& dname = dt->get_ref<const std::string&>();
  e->dtype = dtype_from_name(dname);
  if (e->dtype == TSR_DTYPE_UNDEFINED) {
    for (const char* f : kForeignDtypes)
      if (dname == f)
        return make_status(TSR_UNIMPLEMENTED,
                           "safetensors: '" + path + "': " + where + ": dtype " + dname + " has no Tessera equivalent");
    return bad(path, where + ": unknown dtype " + quote_name(dname));
  }

  if (!shape->is_array()) return bad(path, where + ": shape is JSON " + shape->type_name() + ", not an array");
  if (shape->size() > TSR_MAX_DIMS)
    return bad(path, where + ": shape has " + std::to_string(shape->size()) + " dims (at most " +
                         std::to_string(TSR_MAX_DIMS) + ")");
  e->ndim = static_cast<int32_t>(shape->size());
  // numel and, for the strides of a contiguous tensor, the product with zero dims counted as 1
  // must both fit in int64 bytes.
  uint64_t itemsize = dtype_size(e->dtype), bytes = itemsize, stride_bytes = itemsize;
  bool overflow = false;
  for (int32_t d = 0; d < e->ndim; ++d) {
    uint64_t s = 0;
    const json& js = (*shape)[static_cast<size_t>(d)];
    if (!as_count(js, &s))
      return bad(path, where + ": shape[" + std::to_string(d) + "] = " + bounded(js.dump()) +
                           " is not a non-negative 64-bit integer");
    e->sizes[d] = static_cast<int64_t>(s);
    overflow |= __builtin_mul_overflow(bytes, s, &bytes);
    overflow |= __builtin_mul_overflow(stride_bytes, s ? s : 1, &stride_bytes);
  }
  std::string shape_text = shape_str(e->sizes, e->ndim);
  if (overflow || stride_bytes > static_cast<uint64_t>(INT64_MAX))
    return bad(path, where + ": shape " + shape_text + " of " + dname + " overflows 64-bit byte sizes");

  if (!offs->is_array() || offs->size() != 2)
    return bad(path, where + ": data_offsets must be an array [begin, end], found " + bounded(offs->dump()));
  if (!as_count((*offs)[0], &e->begin) || !as_count((*offs)[1], &e->end))
    return bad(path, where + ": data_offsets " + bounded(offs->dump()) + " are not non-negative 64-bit integers");
  std::string offs_text = "[" + std::to_string(e->begin) + ", " + std::to_string(e->end) + "]";
  if (e->begin > e->end) return bad(path, where + ": data_offsets " + offs_text + " have begin > end");
  if (e->end > data_size)
    return bad(path, where + ": data_offsets " + offs_text + " reach past the data section of " +
                         std::to_string(data_size) + " bytes (file truncated?)");
  if (e->end - e->begin != bytes)
    return bad(path, where + ": data_offsets " + offs_text + " hold " + std::to_string(e->end - e->begin) +
                         " bytes but shape " + shape_text + " of " + dname + " needs " + std::to_string(bytes));
  e->name = name;
  return nullptr;
}

// `keys`: v's keys in file order (v, a DOM object, holds them sorted).
tsr_status_t parse_metadata(const std::string& path, const json& v, const std::vector<std::string>& keys,
                            tsr_safetensors_s* f) {
  if (!v.is_object()) return bad(path, "__metadata__ is JSON " + std::string(v.type_name()) + ", not an object");
  for (const std::string& key : keys) {
    const json& value = v.at(key);
    if (!value.is_string())
      return bad(path, "__metadata__ " + quote_name(key) + " is JSON " + value.type_name() + ", not a string");
    const std::string& val = value.get_ref<const std::string&>();
    if (key.find('\0') != std::string::npos || val.find('\0') != std::string::npos)
      return bad(path, "__metadata__ " + quote_name(key) + " contains a NUL character");
    f->metadata.emplace_back(key, val);
  }
  return nullptr;
}

// Entries must tile the data section exactly, in some order (as the reference implementation
// requires): no byte claimed twice, none unclaimed.
tsr_status_t check_layout(const std::string& path, const std::vector<Entry>& entries, uint64_t data_size) {
  std::vector<const Entry*> order;
  order.reserve(entries.size());
  for (const Entry& e : entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t cursor = 0;
  const Entry* prev = nullptr;
  for (const Entry* e : order) {
    if (e->begin < cursor)
      return bad(path, "entry " + quote_name(e->name) + " (bytes " + std::to_string(e->begin) + ".." +
                           std::to_string(e->end) + ") overlaps entry " + quote_name(prev->name) + " (bytes " +
                           std::to_string(prev->begin) + ".." + std::to_string(prev->end) + ")");
    if (e->begin > cursor)
      return bad(path, "data section bytes " + std::to_string(cursor) + ".." + std::to_string(e->begin) +
                           " belong to no entry (before entry " + quote_name(e->name) + ")");
    cursor = e->end;
    prev = e;
  }
  if (cursor != data_size)
    return bad(path, "data section has " + std::to_string(data_size) + " bytes but the entries cover " +
                         std::to_string(cursor));
  return nullptr;
}

// The header's JSON, read with a SAX handler rather than the DOM parser with a callback: that
// parser walks the parent object after every closed value (looking for discarded ones), which is
// quadratic in the number of entries. The handler builds each top-level value on its own, in file
// order, and refuses what the DOM would silently accept or what a hostile header could use
// against us: duplicate keys (the DOM keeps the last), deep nesting (a valid header is an object
// of objects holding arrays), and values other than objects at the top level.
class HeaderReader {
 public:
  std::vector<std::pair<std::string, json>> members;  // the root object's, in file order
  std::vector<std::string> metadata_keys;             // __metadata__'s keys, in file order
  const char* root_type = nullptr;                    // JSON type of the root value
  std::string error;                                  // why the parse stopped

  bool null() { return place(json(nullptr)); }
  bool boolean(bool b) { return place(json(b)); }
  bool number_integer(json::number_integer_t v) { return place(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return place(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return place(json(v)); }
  bool string(json::string_t& s) { return place(json(std::move(s))); }
  bool binary(json::binary_t& b) { return place(json(std::move(b))); }  // not produced by JSON text
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    Level& top = levels_.back();
    const bool root = levels_.size() == 1;
    if (!top.keys.insert(k).second) return fail((root ? "duplicate entry " : "duplicate field ") + quote_name(k));
    if (root) members.emplace_back(k, json());
    // The DOM sorts an object's keys; metadata is handed out in file order (io.h), so its
    // order is kept here.
    if (levels_.size() == 2 && levels_[0].object && top.object && members.back().first == "__metadata__")
      metadata_keys.push_back(k);
    top.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string& last_token, const nlohmann::detail::exception& ex) {
    // The message quotes the last token, which may be a 100 KB number or string: bound it.
    std::string what = ex.what();
    size_t at = last_token.size() > kMaxToken ? what.find(last_token) : std::string::npos;
    if (at != std::string::npos) what.replace(at, last_token.size(), bounded(last_token));
    return fail("header is not valid JSON: " + what);
  }

 private:
  struct Level {
    json* value = nullptr;  // the container being filled; nullptr for the root
    bool object = false;
    std::set<std::string> keys;
    std::string key;  // of the member being read
  };
  std::vector<Level> levels_;

  bool fail(std::string why) {
    error = std::move(why);
    return false;
  }
  // Puts a parsed value where it belongs; returns false to stop the parse. `slot` receives its
  // address (nullptr when it is not kept: the root itself, or inside a root that is no object).
  bool place(json&& v, json** slot = nullptr) {
    json* at = nullptr;
    if (levels_.empty()) {
      root_type = v.type_name();
    } else if (levels_.size() == 1 && levels_.back().object) {
      if (!v.is_structured())
        return fail("entry " + quote_name(levels_.back().key) + " is JSON " + v.type_name() + ", not an object");
      at = &(members.back().second = std::move(v));
    } else if (Level& top = levels_.back(); top.value && top.object) {
      at = &((*top.value)[top.key] = std::move(v));
    } else if (top.value) {
      top.value->push_back(std::move(v));
      at = &top.value->back();
    }
    if (slot) *slot = at;
    return true;
  }
  bool open(json::value_t type) {
    if (levels_.size() > 2) return fail("header JSON nests deeper than a safetensors header can");
    json* at = nullptr;
    if (!place(json(type), &at)) return false;
    Level l;
    l.value = at;
    l.object = type == json::value_t::object;
    levels_.push_back(std::move(l));
    return true;
  }
  bool close() {
    levels_.pop_back();
    return true;
  }
};

tsr_status_t parse_header(tsr_safetensors_s* f, const char* text, size_t len, uint64_t data_size) {
  const std::string& path = f->path;
  HeaderReader reader;
  bool ok = false;
  try {
    ok = json::sax_parse(text, text + len, &reader);
  } catch (const std::exception& e) {  // allocation failure; the parser reports its errors to the reader
    return bad(path, std::string("cannot parse the header: ") + e.what());
  }
  if (!ok) return bad(path, reader.error);
  if (std::strcmp(reader.root_type, "object") != 0)
    return bad(path, std::string("header is JSON ") + reader.root_type + ", not an object");
  f->entries.reserve(reader.members.size());
  for (const auto& [key, v] : reader.members) {
    if (key == "__metadata__") {
      TSR_RETURN_IF_ERROR(parse_metadata(path, v, reader.metadata_keys, f));
      continue;
    }
    Entry e;
    TSR_RETURN_IF_ERROR(parse_entry(path, key, v, data_size, &e));
    f->index.emplace(e.name, f->entries.size());
    f->entries.push_back(std::move(e));
  }
  return check_layout(path, f->entries, data_size);
}

tsr_status_t errno_status(const std::string& what, const std::string& path, int err) {
  tsr_code_t code = err == ENOENT || err == ENOTDIR ? TSR_NOT_FOUND
                    : err == EACCES || err == EPERM ? TSR_PERMISSION_DENIED
                    : err == ENOMEM                 ? TSR_RESOURCE_EXHAUSTED
                                                    : TSR_UNAVAILABLE;
  return make_status(code, "safetensors: cannot " + what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

const char* dtype_to_name(tsr_dtype_t dt) {
  for (const NameDtype& d : kDtypes)
    if (d.dtype == dt) return d.name;
  return nullptr;
}
tsr_dtype_t dtype_from_name(const std::string& name) {
  for (const NameDtype& d : kDtypes)
    if (name == d.name) return d.dtype;
  return TSR_DTYPE_UNDEFINED;
}

tsr_status_t open(tsr_runtime_t* rt, const char* path, tsr_safetensors_t** out) {
  if (!rt || !path || !out)
    return make_status(TSR_INVALID_ARGUMENT, "safetensors_open: runtime, path and out are required");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return make_status(TSR_UNIMPLEMENTED, "safetensors_open: big-endian hosts are not supported");
#endif
  auto f = std::make_unique<tsr_safetensors_s>();
  f->runtime = rt;
  f->path = path;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever; the
  // fstat below refuses it (and directories, devices) before anything is read.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno_status("open", f->path, errno);
  struct stat sb {};
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    ::close(fd);
    return errno_status("stat", f->path, err);
  }
  if (!S_ISREG(sb.st_mode)) {
    ::close(fd);
    return make_status(TSR_INVALID_ARGUMENT, "safetensors: '" + f->path + "' is not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(sb.st_size);
  if (size < 8) {
    ::close(fd);
    return bad(f->path, "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  }
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (m == MAP_FAILED) return errno_status("map", f->path, err);
  f->map = static_cast<const unsigned char*>(m);
  f->map_size = size;

  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | f->map[i];
  if (header_len > size - 8)
    return bad(f->path, "header length " + std::to_string(header_len) + " exceeds the " + std::to_string(size - 8) +
                            " bytes after the length field (file truncated?)");
  if (header_len > kMaxHeaderBytes)
    return bad(f->path, "header length " + std::to_string(header_len) + " exceeds the format's 100 MB limit");
  f->data = f->map + 8 + header_len;
  uint64_t data_size = size - 8 - header_len;
  TSR_RETURN_IF_ERROR(
      parse_header(f.get(), reinterpret_cast<const char*>(f->map + 8), static_cast<size_t>(header_len), data_size));
  *out = f.release();
  return nullptr;
}

void close(tsr_safetensors_t* f) { delete f; }

size_t count(const tsr_safetensors_t* f) { return f ? f->entries.size() : 0; }

tsr_status_t entry(const tsr_safetensors_t* f, size_t i, const char** name, tsr_dtype_t* dtype, int32_t* ndim,
                   const int64_t** sizes) {
  if (!f) return make_status(TSR_INVALID_ARGUMENT, "safetensors_entry: file is NULL");
  if (i >= f->entries.size())
    return make_status(TSR_OUT_OF_RANGE, "safetensors_entry: index " + std::to_string(i) + " is past the " +
                                             std::to_string(f->entries.size()) + " entries of '" + f->path + "'");
  const Entry& e = f->entries[i];
  if (name) *name = e.name.c_str();
  if (dtype) *dtype = e.dtype;
  if (ndim) *ndim = e.ndim;
  if (sizes) *sizes = e.sizes;
  return nullptr;
}

tsr_status_t find(const tsr_safetensors_t* f, const char* name, size_t* index) {
  if (!f || !name || !index)
    return make_status(TSR_INVALID_ARGUMENT, "safetensors_find: file, name and index are required");
  auto it = f->index.find(name);
  if (it == f->index.end())
    return make_status(TSR_NOT_FOUND, "safetensors: '" + f->path + "' has no entry " + quote_name(name));
  *index = it->second;
  return nullptr;
}

tsr_status_t load(const tsr_safetensors_t* f, size_t i, tsr_device_t device, tsr_tensor_t** out) {
  if (!out) return make_status(TSR_INVALID_ARGUMENT, "safetensors_load: out is NULL");
  TSR_RETURN_IF_ERROR(entry(f, i, nullptr, nullptr, nullptr, nullptr));
  const Entry& e = f->entries[i];
  const unsigned char* src = f->data + e.begin;
  if (e.dtype == TSR_BOOL) {
    // Kernels may assume a bool byte is 0 or 1 (anything else is undefined behaviour in C++).
    for (uint64_t k = 0; k < e.end - e.begin; ++k)
      if (src[k] > 1)
        return bad(f->path, "entry " + quote_name(e.name) + ": BOOL element " + std::to_string(k) + " is byte " +
                                std::to_string(src[k]) + " (must be 0 or 1)");
  }
  tsr_status_t st = api_table()->tensor_from_host(f->runtime, src, e.ndim, e.sizes, e.dtype, device, out);
  return prefix_status(st, "safetensors: '" + f->path + "': entry " + quote_name(e.name));
}

size_t metadata_count(const tsr_safetensors_t* f) { return f ? f->metadata.size() : 0; }

tsr_status_t metadata_at(const tsr_safetensors_t* f, size_t i, const char** key, const char** value) {
  if (!f) return make_status(TSR_INVALID_ARGUMENT, "safetensors_metadata_at: file is NULL");
  if (i >= f->metadata.size())
    return make_status(TSR_OUT_OF_RANGE, "safetensors_metadata_at: index " + std::to_string(i) + " is past the " +
                                             std::to_string(f->metadata.size()) + " metadata keys of '" + f->path +
                                             "'");
  if (key) *key = f->metadata[i].first.c_str();
  if (value) *value = f->metadata[i].second.c_str();
  return nullptr;
}

const char* metadata_get(const tsr_safetensors_t* f, const char* key) {
  if (!f || !key) return nullptr;
  for (const auto& kv : f->metadata)
    if (kv.first == key) return kv.second.c_str();
  return nullptr;
}

}  // namespace tsr::core::st
