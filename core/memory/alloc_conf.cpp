// TESSERA_ALLOC_CONF: "key:value,..." entries, optionally prefixed by a device type name.
// See AllocConf in memory/allocator.hpp for the keys.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "memory/allocator.hpp"
#include "memory/allocator_util.hpp"
#include "runtime/status.hpp"

namespace tsr::core {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool parse_uint(const std::string& v, uint64_t* out) {
  if (v.empty()) return false;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
  }
  auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
  return r.ec == std::errc() && r.ptr == v.data() + v.size();
}

bool parse_double(const std::string& v, double* out) {
  if (v.empty()) return false;
  auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
  return r.ec == std::errc() && r.ptr == v.data() + v.size() && std::isfinite(*out);
}

tsr_status_t bad_value(const std::string& key, const std::string& value, const char* expected) {
  return make_status(TSR_INVALID_ARGUMENT,
                     "TESSERA_ALLOC_CONF: bad value '" + value + "' for key '" + key + "' (expected " + expected + ")");
}

// Validates key:value and stores it into *conf. `full_key` is the key as written (for messages).
tsr_status_t apply_entry(const std::string& full_key, const std::string& key, const std::string& value,
                         AllocConf* conf) {
  constexpr uint64_t kMaxMb = uint64_t(1) << 40;  // keeps N MiB far from overflow
  if (key == "allocator") {
    if (value.empty()) return bad_value(full_key, value, "an allocator name");
    conf->allocator = value;
  } else if (key == "max_split_size_mb") {
    uint64_t n = 0;
    if (!parse_uint(value, &n) || n == 0 || n > kMaxMb) {
      return bad_value(full_key, value, "a positive integer number of MiB");
    }
    conf->max_split_size = static_cast<size_t>(n) * kMiB;
  } else if (key == "limit_mb") {
    uint64_t n = 0;
    if (!parse_uint(value, &n) || n > kMaxMb) {
      return bad_value(full_key, value, "a non-negative integer number of MiB, 0 for no limit");
    }
    conf->limit_bytes = static_cast<size_t>(n) * kMiB;
  } else if (key == "garbage_collection_threshold") {
    double f = 0.0;
    if (!parse_double(value, &f) || f < 0.0 || f > 1.0) {
      return bad_value(full_key, value, "a number between 0 and 1");
    }
    conf->gc_threshold = f;
  } else if (key == "roundup_bytes") {
    uint64_t n = 0;
    if (!parse_uint(value, &n) || n < kMinAlign || n % kMinAlign != 0 || n > (kMaxMb * kMiB)) {
      return bad_value(full_key, value, "a multiple of 64 bytes, at least 64");
    }
    conf->roundup_bytes = static_cast<size_t>(n);
  } else if (key == "per_process_memory_fraction") {
    double f = 0.0;
    if (!parse_double(value, &f) || !(f > 0.0) || f > 1.0) {
      return bad_value(full_key, value, "a number in (0, 1]");
    }
    conf->memory_fraction = f;
  } else if (key == "guard_bytes") {
    uint64_t n = 0;
    if (!parse_uint(value, &n) || n % kMinAlign != 0 || n > kMiB) {
      return bad_value(full_key, value, "a multiple of 64 bytes up to 1048576, 0 for off");
    }
    conf->guard_bytes = static_cast<size_t>(n);
  } else {
    return make_status(TSR_INVALID_ARGUMENT, "TESSERA_ALLOC_CONF: unknown key '" + full_key + "'");
  }
  return nullptr;
}

}  // namespace

tsr_status_t parse_alloc_conf(const std::string& text, const std::string& type_name, AllocConf* out) {
  try {
    struct Entry {
      std::string full_key, key, value;
      bool typed;
    };
    std::vector<Entry> entries;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t comma = text.find(',', pos);
      if (comma == std::string::npos) comma = text.size();
      const std::string tok = trim(text.substr(pos, comma - pos));
      pos = comma + 1;
      if (tok.empty()) continue;  // "", "a:1,,b:2", trailing comma
      const size_t colon = tok.find(':');
      if (colon == std::string::npos) {
        return make_status(TSR_INVALID_ARGUMENT, "TESSERA_ALLOC_CONF: entry '" + tok + "' is not key:value");
      }
      Entry e;
      e.full_key = trim(tok.substr(0, colon));
      e.value = trim(tok.substr(colon + 1));
      const size_t dot = e.full_key.find('.');
      e.typed = dot != std::string::npos;
      std::string prefix;
      if (e.typed) {
        prefix = trim(e.full_key.substr(0, dot));
        e.key = trim(e.full_key.substr(dot + 1));
        if (prefix.empty()) {
          return make_status(TSR_INVALID_ARGUMENT, "TESSERA_ALLOC_CONF: empty device type in '" + e.full_key + "'");
        }
      } else {
        e.key = e.full_key;
      }
      AllocConf scratch;  // syntax check of every entry, whatever type it is for
      TSR_RETURN_IF_ERROR(apply_entry(e.full_key, e.key, e.value, &scratch));
      if (!e.typed || prefix == type_name) entries.push_back(std::move(e));
    }
    // Untyped entries first, then "TYPE." ones, so the type-specific value wins.
    AllocConf conf;
    for (int pass = 0; pass < 2; ++pass) {
      for (const Entry& e : entries) {
        if (e.typed == (pass == 1)) {
          TSR_RETURN_IF_ERROR(apply_entry(e.full_key, e.key, e.value, &conf));
        }
      }
    }
    *out = std::move(conf);
    return nullptr;
  } catch (const std::bad_alloc&) {
    return make_status(TSR_RESOURCE_EXHAUSTED, "TESSERA_ALLOC_CONF: out of memory");
  }
}

std::vector<std::string> alloc_conf_device_prefixes(const std::string& text) {
  std::vector<std::string> prefixes;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string tok = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    const size_t colon = tok.find(':'), dot = tok.find('.');
    if (colon != std::string::npos && dot != std::string::npos && dot < colon)
      prefixes.push_back(trim(tok.substr(0, dot)));
  }
  return prefixes;
}

}  // namespace tsr::core
