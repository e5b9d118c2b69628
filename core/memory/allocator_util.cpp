#include "memory/allocator_util.hpp"

#include <charconv>
#include <cstdio>

#include "memory/allocator.hpp"
#include "runtime/status.hpp"

namespace tsr::core {

std::string format_bytes(uint64_t n) {
  if (n < kKiB) return std::to_string(n) + " bytes";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  const int prec = v < 10.0 ? 2 : (v < 100.0 ? 1 : 0);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", prec, v, kUnits[u]);
  return buf;
}

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string oom_message(const std::string& device, size_t size, size_t nbytes, int64_t allocated, int64_t reserved,
                        size_t limit) {
  std::string m = "out of memory on " + device + " allocating " + format_bytes(size) + " (requested " +
                  std::to_string(nbytes) + " bytes): " + format_bytes(static_cast<uint64_t>(allocated)) +
                  " allocated, " + format_bytes(static_cast<uint64_t>(reserved)) + " reserved, ";
  m += limit ? "limit " + format_bytes(limit) : std::string("no limit");
  return m;
}

tsr_status_t host_oom_status(const std::string& device, size_t nbytes) {
  try {
    return make_status(TSR_RESOURCE_EXHAUSTED, "out of host memory for allocator bookkeeping on " + device +
                                                   " (requested " + std::to_string(nbytes) + " bytes)");
  } catch (...) {
    return make_status(TSR_RESOURCE_EXHAUSTED, std::string());
  }
}

// Calls the raw allocator (under the caller's lock: a raw allocator must not call back into
// this allocator). On failure returns false and stores the raw allocator's message; its status
// is deleted here (the core made it through status_create, so it is a tsr_status_s).
bool raw_alloc(const tsr_raw_allocator_t* raw, tsr_device_t device, size_t nbytes, void** out, std::string* raw_msg) {
  void* p = nullptr;
  tsr_status_t st = raw->alloc(raw->self, device, nbytes, &p);
  if (st != nullptr) {
    if (raw_msg != nullptr) {
      try {
        *raw_msg = st->message;
      } catch (...) {
      }
    }
    free_status(st);
    return false;
  }
  if (p == nullptr) return false;
  *out = p;
  return true;
}

// Like raw_alloc, through alloc_async when the raw allocator has it.
bool raw_alloc_stream(const tsr_raw_allocator_t* raw, tsr_device_t device, size_t nbytes, tsr_stream_t* stream,
                      void** out, std::string* raw_msg) {
  if (raw->alloc_async == nullptr) return raw_alloc(raw, device, nbytes, out, raw_msg);
  void* p = nullptr;
  tsr_status_t st = raw->alloc_async(raw->self, device, nbytes, stream, &p);
  if (st != nullptr) {
    if (raw_msg != nullptr) {
      try {
        *raw_msg = st->message;
      } catch (...) {
      }
    }
    free_status(st);
    return false;
  }
  if (p == nullptr) return false;
  *out = p;
  return true;
}

tsr_status_t DeviceAllocator::no_pools() {
  return make_status(TSR_FAILED_PRECONDITION,
                     "memory pools need the caching allocator (this device's allocator is a "
                     "pass-through one: TESSERA_ALLOC_CONF allocator:native or a raw allocator "
                     "that caches itself)");
}

bool device_has_streams(const tsr_device_type_def_t* def) {
  return def != nullptr && def->stream_create && def->stream_destroy && def->stream_synchronize && def->stream_query &&
         def->stream_wait_event && def->event_create && def->event_destroy && def->event_record &&
         def->event_synchronize && def->event_query && def->event_elapsed_ms;
}

std::string raw_name(const tsr_raw_allocator_t* raw) { return raw->name ? std::string(raw->name) : std::string("raw"); }

}  // namespace tsr::core
