// Helpers shared by the core's allocators (caching, pass-through) and their configuration:
// byte formatting, JSON snippets, out-of-memory messages and the raw-allocator call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/kernel.h"

namespace tsr::core {

constexpr size_t kKiB = size_t(1) << 10;
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kMinAlign = 64;  // every block address and size is a multiple
// Requests above this are refused outright (keeps all rounding arithmetic overflow-free).
constexpr size_t kMaxRequest = size_t(1) << 60;

// "1.50 GiB", "12.0 MiB", "512 bytes": three significant digits.
std::string format_bytes(uint64_t n);
// Appends s as a JSON string literal (quoted, escaped).
void append_json_string(std::string& out, const std::string& s);
void append_uint(std::string& out, uint64_t v);
// "out of memory on cpu:0 allocating 1.50 GiB (requested N bytes): A allocated, R reserved, limit L".
std::string oom_message(const std::string& device, size_t size, size_t nbytes, int64_t allocated, int64_t reserved,
                        size_t limit);
// Status for a host-side std::bad_alloc (bookkeeping could not be allocated).
tsr_status_t host_oom_status(const std::string& device, size_t nbytes);
// Calls the raw allocator (under the caller's lock: a raw allocator must not call back into
// the allocator above it). On failure returns false and stores the raw allocator's message.
bool raw_alloc(const tsr_raw_allocator_t* raw, tsr_device_t device, size_t nbytes, void** out, std::string* raw_msg);
// raw_alloc through raw->alloc_async(stream) when present.
bool raw_alloc_stream(const tsr_raw_allocator_t* raw, tsr_device_t device, size_t nbytes, tsr_stream_t* stream,
                      void** out, std::string* raw_msg);
std::string raw_name(const tsr_raw_allocator_t* raw);

}  // namespace tsr::core
