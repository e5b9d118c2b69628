// Writing safetensors: validate every argument, then stream the header and each tensor's bytes
// into a temporary file beside the target and rename it into place, so that readers (and a
// run resumed after a crash) only ever see a complete file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "runtime/runtime.hpp"
#include "io/safetensors.hpp"
#include "runtime/status.hpp"

using json = nlohmann::json;

namespace tsr::core::st {

namespace {

tsr_status_t invalid(const std::string& what) { return make_status(TSR_INVALID_ARGUMENT, "safetensors_save: " + what); }

tsr_status_t errno_status(const std::string& what, const std::string& path, int err) {
  tsr_code_t code = err == ENOENT || err == ENOTDIR                 ? TSR_NOT_FOUND
                    : err == EACCES || err == EPERM || err == EROFS ? TSR_PERMISSION_DENIED
                    : err == ENOSPC || err == EDQUOT                ? TSR_RESOURCE_EXHAUSTED
                                                                    : TSR_UNAVAILABLE;
  return make_status(code, "safetensors_save: cannot " + what + " '" + path + "': " + std::strerror(err));
}

// JSON strings must be UTF-8; the serializer would throw mid-way, so check each string first.
bool valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

// Closes and removes the temporary file unless committed.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  tsr_status_t create() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      committed_ = true;  // nothing of ours to remove
      return errno_status("create", path_, errno);
    }
    return nullptr;
  }
  tsr_status_t write(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errno_status("write", path_, errno);
      c += w;
      n -= static_cast<size_t>(w);
    }
    return nullptr;
  }
  tsr_status_t commit(const std::string& target) {
    if (::fsync(fd_) != 0) return errno_status("sync", path_, errno);
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return errno_status("close", path_, errno);
    if (::rename(path_.c_str(), target.c_str()) != 0) return errno_status("rename into", target, errno);
    committed_ = true;
    // Make the rename itself durable; failing here loses nothing already visible.
    std::string dir = target.substr(0, target.find_last_of('/') == std::string::npos ? 0 : target.find_last_of('/'));
    int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)::fsync(dfd);
      ::close(dfd);
    }
    return nullptr;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Tensors reach the file in pieces of at most this many bytes gathered to the host (64 MiB, or
// TESSERA_SAVE_PIECE_BYTES, at least 16), so saving a tensor larger than the host memory one
// wants to spend on a buffer works; the tests shrink it to cover the piecewise paths.
uint64_t piece_bytes() {
  const char* env = std::getenv("TESSERA_SAVE_PIECE_BYTES");
  char* end = nullptr;
  unsigned long long v = env && *env ? std::strtoull(env, &end, 10) : 0;
  if (!env || !*env || *end || v == 0) return uint64_t{64} << 20;
  return std::max<unsigned long long>(v, 16);
}

// Writes the row-major bytes of the view (sizes, strides, offset) of t's storage. Pieces are runs
// of whole rows of the first dim, which are consecutive in the file; a row larger than a piece is
// written by recursing into it.
tsr_status_t write_rows(TempFile& tmp, const Tensor* t, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                        int64_t offset, std::vector<unsigned char>& buf, uint64_t cap) {
  const uint64_t esize = dtype_size(t->dtype);
  uint64_t numel = 1;
  for (int32_t d = 0; d < ndim; ++d) numel *= static_cast<uint64_t>(sizes[d]);  // checked when t was made
  const uint64_t bytes = numel * esize;
  if (bytes == 0) return nullptr;
  if (bytes <= cap || ndim == 0) {
    Tensor* v = make_view(t, ndim, sizes, strides, offset);
    tsr_status_t st = api_table()->tensor_copy_to_host(v, buf.data(), static_cast<size_t>(bytes));
    v->release();
    TSR_RETURN_IF_ERROR(st);
    return tmp.write(buf.data(), static_cast<size_t>(bytes));
  }
  const uint64_t row = bytes / static_cast<uint64_t>(sizes[0]);
  const int64_t rows_per_piece = static_cast<int64_t>(std::max<uint64_t>(1, cap / row));
  int64_t piece[TSR_MAX_DIMS];
  std::copy(sizes, sizes + ndim, piece);
  for (int64_t start = 0; start < sizes[0]; start += rows_per_piece) {
    const int64_t at = offset + start * strides[0];
    if (row > cap) {
      TSR_RETURN_IF_ERROR(write_rows(tmp, t, ndim - 1, sizes + 1, strides + 1, at, buf, cap));
    } else {
      piece[0] = std::min(rows_per_piece, sizes[0] - start);
      TSR_RETURN_IF_ERROR(write_rows(tmp, t, ndim, piece, strides, at, buf, cap));
    }
  }
  return nullptr;
}

}  // namespace

tsr_status_t save(tsr_runtime_t* rt, const char* path, size_t n, const char* const* names, tsr_tensor_t* const* tensors,
                  size_t nmeta, const char* const* keys, const char* const* values) {
  if (!rt || !path || !*path) return invalid("runtime and a non-empty path are required");
  if (n > 0 && (!names || !tensors)) return invalid("names and tensors are required when n > 0");
  if (nmeta > 0 && (!keys || !values)) return invalid("meta_keys and meta_values are required when nmeta > 0");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return make_status(TSR_UNIMPLEMENTED, "safetensors_save: big-endian hosts are not supported");
#endif

  // The header is assembled as text, one dumped entry at a time, to keep the caller's order.
  std::string header = "{";
  if (nmeta > 0) {
    json meta = json::object();
    for (size_t i = 0; i < nmeta; ++i) {
      if (!keys[i] || !values[i]) return invalid("metadata " + std::to_string(i) + " has a NULL key or value");
      if (meta.contains(keys[i])) return invalid(std::string("duplicate metadata key '") + keys[i] + "'");
      if (!valid_utf8(keys[i]) || !valid_utf8(values[i]))
        return invalid(std::string("metadata key '") + keys[i] + "' or its value is not valid UTF-8");
      meta[keys[i]] = values[i];
    }
    header += "\"__metadata__\":" + meta.dump();
  }

  std::unordered_set<std::string> seen;
  uint64_t offset = 0, largest = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!names[i] || !tensors[i]) return invalid("entry " + std::to_string(i) + " has a NULL name or tensor");
    std::string name = names[i];
    if (name == "__metadata__") return invalid("'__metadata__' is reserved and cannot name a tensor");
    if (!seen.insert(name).second) return invalid("duplicate tensor name '" + name + "'");
    if (!valid_utf8(name)) return invalid("tensor name '" + name + "' is not valid UTF-8");
    const tsr_tensor_t* t = tensors[i];
    const char* dname = dtype_to_name(t->dtype);
    if (!dname)
      return invalid("tensor '" + name + "' has dtype " + dtype_name(t->dtype) + ", which safetensors cannot name");
    uint64_t bytes = static_cast<uint64_t>(t->numel) * dtype_size(t->dtype);
    json shape = json::array();
    for (int32_t d = 0; d < t->ndim; ++d) shape.push_back(t->sizes[d]);
    json e = json::object();
    e["dtype"] = dname;
    e["shape"] = std::move(shape);
    e["data_offsets"] = json::array({offset, offset + bytes});
    header += (header.size() > 1 ? "," : "") + json(name).dump() + ":" + e.dump();
    offset += bytes;
    largest = std::max(largest, bytes);
  }

  // Pad with spaces (allowed by the format) so the data section starts 8-byte aligned, which
  // lets a reader use the mapping in place.
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * i));

  static std::atomic<uint64_t> counter{0};
  TempFile tmp(std::string(path) + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  TSR_RETURN_IF_ERROR(tmp.create());
  TSR_RETURN_IF_ERROR(tmp.write(len, sizeof len));
  TSR_RETURN_IF_ERROR(tmp.write(header.data(), header.size()));
  const uint64_t cap = piece_bytes();
  std::vector<unsigned char> buf(static_cast<size_t>(std::min(largest, cap)));
  for (size_t i = 0; i < n; ++i) {
    // Any device, any strides: the core gathers row-major bytes of each piece to the host.
    const Tensor* t = tensors[i];
    tsr_status_t st = write_rows(tmp, t, t->ndim, t->sizes, t->strides, t->offset, buf, cap);
    if (st) return prefix_status(st, std::string("safetensors_save: tensor '") + names[i] + "'");
  }
  return tmp.commit(path);
}

}  // namespace tsr::core::st
