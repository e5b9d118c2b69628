// The key-value store behind a "tcp://host:port" rendezvous, for processes on several machines
// (Debian's Gloo has File, Hash and Prefix stores but no TCP store; PyTorch's TCPStore plays this
// role there). Rank 0 runs the server on host:port; every rank, rank 0 included, is a client.
// It carries only the rendezvous (a few hundred bytes of addresses per rank); the collectives
// themselves go through Gloo's transport.
//
// Protocol (one TCP connection per client, requests answered in order):
//   SET  'S' u32 key_len key u32 value_len value      no answer
//   GET  'G' u32 key_len key                          answer u32 value_len value, sent once the
//                                                     key exists (a client waits for it)
// A client's wait() is GETs of each key under a receive timeout.
#pragma once

#include <gloo/rendezvous/store.h>

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

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until `timeout` (the server may start later). Throws.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::vector<char> get_within(const std::string& key, std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::map<std::string, std::vector<char>> seen_;  // keys already fetched (wait then get)
};

// "tcp://host:port" -> host and port; false when malformed.
bool parse_tcp_url(const std::string& url, std::string* host, int* port);

}  // namespace fabric
