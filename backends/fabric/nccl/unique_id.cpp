// Sharing NCCL's unique id through the rendezvous: see unique_id.hpp.
#include "unique_id.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../group.hpp"
#include "../tcp_store.hpp"

namespace fabric {
namespace {

using Clock = std::chrono::steady_clock;

std::string file_name(const std::string& key) {
  std::string k = key;
  for (char& c : k)
    if (c == '/') c = '_';
  return "tessera-nccl-" + k;
}

void write_file(const std::string& path, const std::vector<char>& id) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail(TSR_UNAVAILABLE, "group_create: rank 0 cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < id.size()) {
    ssize_t w = ::write(fd, id.data() + done, id.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(TSR_UNAVAILABLE, "group_create: rank 0 cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  // rename is atomic: a reader sees no file or the whole id, never part of it.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(TSR_UNAVAILABLE, "group_create: rank 0 cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
  }
}

void read_file(const std::string& path, double timeout_s, std::vector<char>* id) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      size_t done = 0;
      while (done < id->size()) {
        ssize_t r = ::read(fd, id->data() + done, id->size() - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        done += static_cast<size_t>(r);
      }
      ::close(fd);
      if (done == id->size()) return;
      fail(TSR_UNAVAILABLE, "group_create: " + path + " holds " + std::to_string(done) + " bytes, not the " +
                                std::to_string(id->size()) + " of an NCCL unique id");
    }
    if (Clock::now() > deadline)
      fail(TSR_DEADLINE_EXCEEDED, "group_create: rank 0's NCCL unique id did not appear at " + path + " within " +
                                      std::to_string(timeout_s) + " s (did rank 0 start, with the same rendezvous?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

void share_unique_id(const std::string& rendezvous, const std::string& key, bool publish, double timeout_s,
                     std::vector<char>* id, std::shared_ptr<void>* keep) {
  if (rendezvous.rfind("file://", 0) == 0) {
    const std::string dir = file_rendezvous_dir(rendezvous);
    const std::string path = dir + "/" + file_name(key);
    if (publish)
      write_file(path, *id);
    else
      read_file(path, timeout_s, id);
    return;
  }
  std::string host;
  int port = 0;
  if (!parse_tcp_url(rendezvous, &host, &port))
    fail(TSR_INVALID_ARGUMENT, "group_create: rendezvous '" + rendezvous + "' is not tcp://host:port");
  const std::string k = "tessera-nccl/" + key;
  try {
    if (publish) *keep = serve_rendezvous(rendezvous, host, port);
    TcpStore store(host, port, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    if (publish) {
      store.set(k, *id);
      // Rank 0 also reads the key back: the server has then stored it, whatever happens to
      // this connection next.
      store.get(k);
      return;
    }
    std::vector<char> v = store.get(k);
    if (v.size() != id->size())
      fail(TSR_UNAVAILABLE, "group_create: the rendezvous at " + rendezvous + " holds " + std::to_string(v.size()) +
                                " bytes under " + k + ", not an NCCL unique id");
    *id = std::move(v);
  } catch (const std::exception& e) {
    const std::string m = e.what();
    fail(m.find("timed out") != std::string::npos ? TSR_DEADLINE_EXCEEDED : TSR_UNAVAILABLE,
         "group_create: " + std::string(publish ? "rank 0 cannot publish" : "cannot fetch") +
             " the NCCL unique id at " + rendezvous + ": " + m);
  }
}

}  // namespace fabric
