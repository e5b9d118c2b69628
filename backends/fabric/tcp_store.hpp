// The key-value store behind a "tcp://host:port" rendezvous, for processes on several machines
// (Debian's Gloo has File, Hash and Prefix stores but no TCP store; PyTorch's TCPStore plays this
// role there). Rank 0 runs the server on host:port; every rank, rank 0 included, is a client.
// It carries only the rendezvous (Gloo's addresses, a few hundred bytes per rank; NCCL's unique
// id, 128 bytes); the collectives themselves go through the engines' transports. It depends on
// nothing but POSIX sockets, so that both engine libraries compile it (the Gloo engine adapts it
// to gloo::rendezvous::Store).
//
// Protocol (one TCP connection per client, requests answered in order):
//   SET  'S' u32 key_len key u32 value_len value      no answer
//   GET  'G' u32 key_len key                          answer u32 value_len value, sent once the
//                                                     key exists (a client waits for it)
// A client's wait() is GETs of each key under a receive timeout.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fabric {

class TcpStoreServer {
 public:
  // Listens on host:port (port 0: any free port, see port()). Throws std::runtime_error.
  TcpStoreServer(const std::string& host, int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  int port() const { return port_; }

 private:
  void serve();
  int listen_fd_ = -1, wake_[2] = {-1, -1}, port_ = 0;
  std::thread thread_;
};

class TcpStore {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start later). Throws.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore();
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;
  void set(const std::string& key, const std::vector<char>& data);
  // The key's value, waiting up to the store's timeout for some rank to set it. Throws.
  std::vector<char> get(const std::string& key);
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout);

 private:
  std::vector<char> get_within(const std::string& key, std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::map<std::string, std::vector<char>> seen_;  // keys already fetched (wait then get)
};

// "tcp://host:port" -> host and port; false when malformed.
bool parse_tcp_url(const std::string& url, std::string* host, int* port);

// The server this process runs for `url` (as rank 0), started on first use and shared by the
// groups of this library that meet there; kept while one of them holds it. Throws
// std::runtime_error when the address cannot be listened on. (Each engine library has its own
// table: a Gloo group and an NCCL group of one process cannot both serve one address.)
std::shared_ptr<TcpStoreServer> serve_rendezvous(const std::string& url, const std::string& host, int port);

}  // namespace fabric
