// HTTP/1.1 (+TLS) server: libmicrohttpd in external-epoll mode driven by a libuv loop.
// Every method and callback runs on the thread that runs the uv loop; nothing here locks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "http_types.h"

struct MHD_Daemon;

namespace oxide_sim {

struct Exchange;

// Answers one request, now or later (from a timer). Copyable; only the first send counts.
class Responder {
 public:
  explicit Responder(std::shared_ptr<Exchange> exchange) : exchange_(std::move(exchange)) {}
  void send(HttpResponse response) const;

 private:
  std::shared_ptr<Exchange> exchange_;
};

class HttpServer {
 public:
  struct Options {
    uint16_t port = 0;
    std::optional<std::string> tls_cert_pem;
    std::optional<std::string> tls_key_pem;
    size_t max_body_bytes = 1024 * 1024;
    unsigned connection_limit = 4096;
    unsigned idle_timeout_s = 300;  // a keep-alive connection idle this long is closed
  };
  using Handler = std::function<void(HttpRequest&&, Responder)>;

  explicit HttpServer(uv_loop_t* loop) : loop_(loop) {}
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds 127.0.0.1:port. On failure returns false and sets *error.
  bool start(const Options& options, Handler handler, std::string* error);
  uint16_t port() const { return port_; }
  // Answers every suspended request with 503, closes all connections and the listener.
  void stop();

  // Internal plumbing used by the MHD callbacks and Responder.
  void run_soon();
  struct Internals;

 private:
  friend struct Internals;
  friend class Responder;
  void run_and_reschedule();

  uv_loop_t* loop_;
  MHD_Daemon* daemon_ = nullptr;
  uv_poll_t poll_{};
  uv_timer_t timer_{};
  bool handles_open_ = false;
  bool in_run_ = false;
  bool run_requested_ = false;
  uint16_t port_ = 0;
  Options options_;
  Handler handler_;
  std::set<std::shared_ptr<Exchange>> suspended_;
};

}  // namespace oxide_sim
