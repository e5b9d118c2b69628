// Helpers both fabric libraries compile (the plugin and its lazily loaded Gloo engine): statuses,
// failures, and names for messages. Each library defines api() itself.
#include "group.hpp"

#include <sys/stat.h>

#include "tessera/dtype.hpp"

namespace fabric {

tsr_status_t make_status(tsr_code_t code, const std::string& message) {
  return api()->status_create(code, message.c_str());
}

void fail(tsr_code_t code, const std::string& message) { throw Failure{code, message}; }

std::string file_rendezvous_dir(const std::string& url) {
  const std::string dir = url.substr(7);  // after "file://"
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    fail(TSR_UNAVAILABLE, "group_create: the rendezvous directory " + dir +
                              " does not exist (a file:// rendezvous names a directory every process can reach)");
  return dir;
}

std::string shape_str(const tsr_tensor_t* t) {
  const tsr_api_t* a = api();
  const int32_t nd = a->tensor_ndim(t);
  const int64_t* s = a->tensor_sizes(t);
  std::string r = "[";
  for (int32_t i = 0; i < nd; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string tensor_desc(const tsr_tensor_t* t) {
  return std::string(tsr::dtype_name(api()->tensor_dtype(t))) + " " + shape_str(t);
}

std::string device_str(tsr_runtime_t* rt, tsr_device_t d) {
  char buf[64] = {0};
  if (tsr_status_t st = api()->device_describe(rt, d, buf, sizeof(buf))) {
    api()->status_free(st);
    return "device " + std::to_string(d.type) + ":" + std::to_string(d.index);
  }
  std::string s = buf;
  return s.substr(0, s.find(' '));  // "cpu:1 (2 threads)" -> "cpu:1"
}

const char* kind_name(tsr_collective_kind_t kind) {
  switch (kind) {
    case TSR_COLLECTIVE_ALL_REDUCE:
      return "all_reduce";
    case TSR_COLLECTIVE_REDUCE:
      return "reduce";
    case TSR_COLLECTIVE_BROADCAST:
      return "broadcast";
    case TSR_COLLECTIVE_ALL_GATHER:
      return "all_gather";
    case TSR_COLLECTIVE_REDUCE_SCATTER:
      return "reduce_scatter";
    case TSR_COLLECTIVE_ALL_TO_ALL:
      return "all_to_all";
    case TSR_COLLECTIVE_SEND:
      return "send";
    case TSR_COLLECTIVE_RECV:
      return "recv";
    case TSR_COLLECTIVE_BARRIER:
      return "barrier";
  }
  return "collective";
}

}  // namespace fabric
