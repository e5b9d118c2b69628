// Tessera SDK: training checkpoints in a process group. Rank 0 writes the file; every rank can
// load it, including ranks on machines that do not see rank 0's file system (multi-node runs
// without a shared directory): rank 0 reads the file and broadcasts its bytes through the group.
//
//   namespace dist = tsr::distributed;
//   dist::save_checkpoint(pg, member, "run.safetensors", ck);   // rank 0 writes; all return together
//   tsr::TrainingCheckpoint ck = dist::load_checkpoint(pg, member, "run.safetensors", dev);
//
// `member` is this process's device in the group (cpu for gloo and mpi, cuda:$LOCAL_RANK for
// nccl): the broadcast's tensors live there. The group must have one member in this process.
// The file format is tessera/checkpoint.hpp's (one safetensors file).
//
// Every rank calls these in the same order, as any collective. Errors: tsr::Error on every
// rank. When rank 0 cannot write or read the file, every rank throws that error's code with
// rank 0's message (so no rank goes on alone, or waits for a file that never comes). A
// checkpoint a rank cannot parse throws there (DATA_LOSS, as load_checkpoint). A group with
// several members in this process is INVALID_ARGUMENT. Collective errors (a rank that died)
// are the group's (DEADLINE_EXCEEDED after its timeout).
// Cost: load_checkpoint holds the file's bytes once more in memory on every rank while it
// parses them (a non-root rank parses a private temporary file, removed before returning).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/checkpoint.hpp"
#include "tessera/distributed/collectives.hpp"

namespace tsr::distributed {

namespace detail {

inline void require_one_member(const DeviceGroup& g, const char* what) {
  const tsr_comm_group_info_t i = g.info();
  if (i.num_local != 1)
    throw Error(TSR_INVALID_ARGUMENT, std::string(what) + ": the group has " + std::to_string(i.num_local) +
                                          " members in this process; a checkpoint is shared by one member per "
                                          "process (use a process group)");
}

// Rank 0's outcome and payload to every rank: a header {code, size} then `size` bytes (the
// payload on success, rank 0's error message otherwise). `bytes` is rank 0's input and every
// rank's output. Returns the code (TSR_OK on success).
inline tsr_code_t broadcast_outcome(const DeviceGroup& g, Device member, tsr_code_t code, std::string* bytes) {
  const bool root = g.rank() == 0;
  Tensor header = from_vector(std::vector<int64_t>{root ? static_cast<int64_t>(code) : 0,
                                                   root ? static_cast<int64_t>(bytes->size()) : 0},
                              {2}, member);
  g.broadcast({header}, 0).wait();
  const std::vector<int64_t> h = header.to_vector<int64_t>();
  if (h[1] > 0) {
    Tensor payload = root ? from_vector(std::vector<uint8_t>(bytes->begin(), bytes->end()), {h[1]}, member)
                          : empty({h[1]}, TSR_U8, member);
    g.broadcast({payload}, 0).wait();
    if (!root) {
      const std::vector<uint8_t> v = payload.to_vector<uint8_t>();
      bytes->assign(v.begin(), v.end());
    }
  } else if (!root) {
    bytes->clear();
  }
  return static_cast<tsr_code_t>(h[0]);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(TSR_NOT_FOUND, "cannot open " + path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error(TSR_DATA_LOSS, "cannot read " + path);
  return s;
}

}  // namespace detail

// Rank 0 writes `ck` to `path` (atomically, as tsr::save_checkpoint); every rank returns once the
// file is complete, or throws rank 0's error. Other ranks' `ck` is not used.
inline void save_checkpoint(const DeviceGroup& g, Device member, const std::string& path,
                            const TrainingCheckpoint& ck) {
  detail::require_one_member(g, "save_checkpoint");
  tsr_code_t code = TSR_OK;
  std::string message;
  if (g.rank() == 0) {
    try {
      ::tsr::save_checkpoint(path, ck);
    } catch (const Error& e) {
      code = e.code();
      message = e.what();
    }
  }
  code = detail::broadcast_outcome(g, member, code, &message);
  if (code != TSR_OK) throw Error(code, "save_checkpoint: rank 0 could not write " + path + ": " + message);
}

// Every rank gets the checkpoint at rank 0's `path`, its tensors on `dev`; only rank 0 reads the
// file.
inline TrainingCheckpoint load_checkpoint(const DeviceGroup& g, Device member, const std::string& path,
                                          Device dev = Device::cpu()) {
  detail::require_one_member(g, "load_checkpoint");
  std::string bytes;
  tsr_code_t code = TSR_OK;
  if (g.rank() == 0) {
    try {
      bytes = detail::read_file(path);
    } catch (const Error& e) {
      code = e.code();
      bytes = e.what();
    }
  }
  code = detail::broadcast_outcome(g, member, code, &bytes);
  if (code != TSR_OK) throw Error(code, "load_checkpoint: rank 0 could not read " + path + ": " + bytes);
  if (g.rank() == 0) return ::tsr::load_checkpoint(path, dev);
  // The safetensors reader takes a file: parse a private copy.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmp = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/tessera-checkpoint-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error(TSR_UNAVAILABLE, "load_checkpoint: cannot create a temporary file in " + tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  if (done != bytes.size()) {
    std::remove(tmp.c_str());
    throw Error(TSR_RESOURCE_EXHAUSTED, "load_checkpoint: cannot write the received checkpoint (" +
                                            std::to_string(bytes.size()) + " bytes) to " + tmp);
  }
  try {
    TrainingCheckpoint ck = ::tsr::load_checkpoint(tmp, dev);
    std::remove(tmp.c_str());
    return ck;
  } catch (const Error& e) {  // the message names the user's path, not the private copy
    std::remove(tmp.c_str());
    std::string m = e.what();
    for (size_t at = m.find(tmp); at != std::string::npos; at = m.find(tmp, at + path.size()))
      m.replace(at, tmp.size(), path);
    throw Error(e.code(), m + " (the bytes rank 0 read)");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace tsr::distributed
