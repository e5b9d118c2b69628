// The tcp:// rendezvous store: see tcp_store.hpp.
#include "tcp_store.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace fabric {

namespace {

std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

bool write_full(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_full(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void put_u32(std::string* s, uint32_t v) {
  uint32_t be = htonl(v);
  s->append(reinterpret_cast<const char*>(&be), 4);
}

// Resolves host (a name or an address) for TCP.
sockaddr_storage resolve(const std::string& host, int port, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string p = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), p.c_str(), &hints, &res);
  if (rc != 0 || !res) throw std::runtime_error("cannot resolve " + host + ": " + gai_strerror(rc));
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return ss;
}

struct Client {
  int fd;
  std::string in;  // bytes received, not yet a whole request
};

}  // namespace

bool parse_tcp_url(const std::string& url, std::string* host, int* port) {
  if (url.rfind("tcp://", 0) != 0) return false;
  std::string rest = url.substr(6);
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = rest.substr(0, colon);
  if (host->size() > 2 && (*host)[0] == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  const std::string p = rest.substr(colon + 1);
  char* end = nullptr;
  long v = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end || v < 1 || v > 65535) return false;
  *port = static_cast<int>(v);
  return true;
}

TcpStoreServer::TcpStoreServer(const std::string& host, int port) {
  socklen_t len = 0;
  sockaddr_storage ss = resolve(host, port, &len);
  listen_fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw sys_error("socket");
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    std::runtime_error e = sys_error("cannot listen on " + host + ":" + std::to_string(port));
    ::close(listen_fd_);
    throw e;
  }
  if (::listen(listen_fd_, 128) != 0) {
    std::runtime_error e = sys_error("listen");
    ::close(listen_fd_);
    throw e;
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(listen_fd_);
    throw sys_error("pipe");
  }
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  char b = 0;
  ssize_t w = ::write(wake_[1], &b, 1);
  (void)w;
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void TcpStoreServer::serve() {
  std::map<std::string, std::string> data;
  std::vector<Client> clients;
  std::multimap<std::string, int> waiting;  // key -> client fd waiting for it
  auto answer = [](int fd, const std::string& value) {
    std::string msg;
    put_u32(&msg, static_cast<uint32_t>(value.size()));
    msg += value;
    write_full(fd, msg.data(), msg.size());
  };
  for (;;) {
    std::vector<pollfd> p = {{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Client& c : clients) p.push_back({c.fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[0].revents) break;  // shutting down
    if (p[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) clients.push_back({fd, ""});
    }
    for (size_t i = 2; i < p.size(); ++i) {
      if (!p[i].revents) continue;
      Client& c = clients[i - 2];
      char buf[4096];
      ssize_t r = ::recv(c.fd, buf, sizeof(buf), 0);
      if (r <= 0) {
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      c.in.append(buf, static_cast<size_t>(r));
      for (;;) {  // every whole request in the buffer
        if (c.in.size() < 5) break;
        uint32_t klen;
        std::memcpy(&klen, c.in.data() + 1, 4);
        klen = ntohl(klen);
        size_t need = 5 + klen;
        if (c.in.size() < need) break;
        const char op = c.in[0];
        std::string key = c.in.substr(5, klen);
        if (op == 'S') {
          if (c.in.size() < need + 4) break;
          uint32_t vlen;
          std::memcpy(&vlen, c.in.data() + need, 4);
          vlen = ntohl(vlen);
          if (c.in.size() < need + 4 + vlen) break;
          data[key] = c.in.substr(need + 4, vlen);
          c.in.erase(0, need + 4 + vlen);
          auto range = waiting.equal_range(key);
          for (auto it = range.first; it != range.second; ++it) answer(it->second, data[key]);
          waiting.erase(range.first, range.second);
        } else if (op == 'G') {
          c.in.erase(0, need);
          auto it = data.find(key);
          if (it != data.end())
            answer(c.fd, it->second);
          else
            waiting.emplace(key, c.fd);
        } else {  // not our protocol: drop the client
          ::close(c.fd);
          c.fd = -1;
          break;
        }
      }
    }
    for (auto it = clients.begin(); it != clients.end();) {
      if (it->fd < 0) {
        it = clients.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Client& c : clients) ::close(c.fd);
}

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout) : timeout_(timeout) {
  socklen_t len = 0;
  sockaddr_storage ss = resolve(host, port, &len);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw sys_error("socket");
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) == 0) break;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("cannot reach the rendezvous server at " + host + ":" + std::to_string(port) + ": " +
                               std::strerror(err) + " (is rank 0 running, and the address right?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 may not listen yet
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::set(const std::string& key, const std::vector<char>& value) {
  std::string msg(1, 'S');
  put_u32(&msg, static_cast<uint32_t>(key.size()));
  msg += key;
  put_u32(&msg, static_cast<uint32_t>(value.size()));
  msg.append(value.data(), value.size());
  if (!write_full(fd_, msg.data(), msg.size())) throw sys_error("rendezvous store: set '" + key + "'");
}

std::vector<char> TcpStore::get_within(const std::string& key, std::chrono::milliseconds timeout) {
  auto it = seen_.find(key);
  if (it != seen_.end()) return it->second;
  std::string msg(1, 'G');
  put_u32(&msg, static_cast<uint32_t>(key.size()));
  msg += key;
  if (!write_full(fd_, msg.data(), msg.size())) throw sys_error("rendezvous store: get '" + key + "'");
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  uint32_t vlen = 0;
  if (!read_full(fd_, &vlen, 4))
    throw std::runtime_error("rendezvous store: timed out after " + std::to_string(timeout.count()) +
                             " ms waiting for '" + key + "' (not every rank arrived)");
  vlen = ntohl(vlen);
  std::vector<char> v(vlen);
  if (vlen && !read_full(fd_, v.data(), vlen)) throw std::runtime_error("rendezvous store: the server went away");
  seen_[key] = v;
  return v;
}

std::vector<char> TcpStore::get(const std::string& key) { return get_within(key, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const std::string& k : keys) get_within(k, timeout);
}

std::shared_ptr<TcpStoreServer> serve_rendezvous(const std::string& url, const std::string& host, int port) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<TcpStoreServer>> servers;
  std::lock_guard<std::mutex> lock(mu);
  if (auto s = servers[url].lock()) return s;
  auto s = std::make_shared<TcpStoreServer>(host, port);
  servers[url] = s;
  return s;
}

}  // namespace fabric
