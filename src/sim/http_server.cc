#include "http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include <cctype>
#include <cstring>

namespace oxide_sim {

// One request/response exchange on a connection. Owned by MHD's per-request slot
// (a heap shared_ptr) and by any Responder still holding it.
struct Exchange {
  HttpServer* server = nullptr;
  MHD_Connection* connection = nullptr;
  HttpRequest request;
  bool headers_read = false;
  bool dispatched = false;
  bool suspended = false;
  bool closed = false;
  std::optional<HttpResponse> response;
};

struct HttpServer::Internals {
  static void* on_uri(void* cls, const char* uri, MHD_Connection* connection) {
    auto* server = static_cast<HttpServer*>(cls);
    auto exchange = std::make_shared<Exchange>();
    exchange->server = server;
    exchange->connection = connection;
    std::string full(uri == nullptr ? "" : uri);
    const size_t question = full.find('?');
    if (question == std::string::npos) {
      exchange->request.raw_path = full;
    } else {
      exchange->request.raw_path = full.substr(0, question);
      exchange->request.raw_query = full.substr(question + 1);
    }
    return new std::shared_ptr<Exchange>(std::move(exchange));
  }

  // Keep the URL exactly as sent: the router decodes it itself and must see %2F.
  static size_t keep_escaped(void*, MHD_Connection*, char* s) { return std::strlen(s); }

  static MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* headers = static_cast<std::map<std::string, std::string>*>(cls);
    std::string name(key == nullptr ? "" : key);
    for (char& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    (*headers)[name] = value == nullptr ? "" : value;
    return MHD_YES;
  }

  static MHD_Result queue(Exchange& exchange) {
    HttpResponse& out = *exchange.response;
    if (out.drop_connection) return MHD_NO;
    MHD_Response* response =
        MHD_create_response_from_buffer(out.body.size(), out.body.data(), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    for (const auto& [name, value] : out.headers) {
      MHD_add_response_header(response, name.c_str(), value.c_str());
    }
    const MHD_Result result =
        MHD_queue_response(exchange.connection, static_cast<unsigned>(out.status), response);
    MHD_destroy_response(response);
    return result;
  }

  static MHD_Result on_access(void* cls, MHD_Connection* connection, const char*,
                              const char* method, const char*, const char* upload_data,
                              size_t* upload_data_size, void** slot) {
    auto* server = static_cast<HttpServer*>(cls);
    if (*slot == nullptr) return MHD_NO;  // the URI callback always fills the slot
    std::shared_ptr<Exchange> exchange = *static_cast<std::shared_ptr<Exchange>*>(*slot);
    if (!exchange->headers_read) {
      exchange->headers_read = true;
      exchange->request.method = method == nullptr ? "" : method;
      MHD_get_connection_values(connection, MHD_HEADER_KIND, &collect_header,
                                &exchange->request.headers);
      return MHD_YES;
    }
    if (*upload_data_size != 0) {
      HttpRequest& request = exchange->request;
      if (!request.body_too_large) {
        if (request.body.size() + *upload_data_size > server->options_.max_body_bytes) {
          request.body_too_large = true;
          request.body.clear();
          request.body.shrink_to_fit();
        } else {
          request.body.append(upload_data, *upload_data_size);
        }
      }
      *upload_data_size = 0;
      return MHD_YES;
    }
    if (exchange->response) return queue(*exchange);
    if (exchange->dispatched) return MHD_YES;
    exchange->dispatched = true;
    server->handler_(std::move(exchange->request), Responder(exchange));
    if (exchange->response) return queue(*exchange);
    MHD_suspend_connection(connection);
    exchange->suspended = true;
    server->suspended_.insert(exchange);
    return MHD_YES;
  }

  static void on_completed(void*, MHD_Connection*, void** slot, MHD_RequestTerminationCode) {
    auto* holder = static_cast<std::shared_ptr<Exchange>*>(*slot);
    if (holder == nullptr) return;
    (*holder)->closed = true;
    (*holder)->connection = nullptr;
    delete holder;
    *slot = nullptr;
  }
};

void Responder::send(HttpResponse response) const {
  Exchange& exchange = *exchange_;
  if (exchange.response || exchange.closed) return;
  exchange.response = std::move(response);
  if (exchange.suspended) {
    exchange.suspended = false;
    exchange.server->suspended_.erase(exchange_);
    MHD_resume_connection(exchange.connection);
    exchange.server->run_soon();
  }
}

HttpServer::~HttpServer() {
  stop();
}

bool HttpServer::start(const Options& options, Handler handler, std::string* error) {
  options_ = options;
  handler_ = std::move(handler);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
  const bool tls = options.tls_cert_pem.has_value();
  if (tls) flags |= MHD_USE_TLS;
  daemon_ = MHD_start_daemon(
      flags, options.port, nullptr, nullptr, &Internals::on_access, this,
      MHD_OPTION_URI_LOG_CALLBACK, &Internals::on_uri, this, MHD_OPTION_UNESCAPE_CALLBACK,
      &Internals::keep_escaped, this, MHD_OPTION_NOTIFY_COMPLETED, &Internals::on_completed, this,
      MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_CONNECTION_LIMIT, options.connection_limit,
      MHD_OPTION_CONNECTION_TIMEOUT, options.idle_timeout_s, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024U,
      MHD_OPTION_HTTPS_MEM_CERT, tls ? options.tls_cert_pem->c_str() : nullptr,
      MHD_OPTION_HTTPS_MEM_KEY, tls ? options.tls_key_pem->c_str() : nullptr, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    *error = tls ? "cannot start the HTTPS server on 127.0.0.1:" + std::to_string(options.port) +
                       " (port in use, or bad certificate/key)"
                 : "cannot start the HTTP server on 127.0.0.1:" + std::to_string(options.port) +
                       " (port in use?)";
    return false;
  }
  const MHD_DaemonInfo* port_info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = port_info == nullptr ? options.port : port_info->port;
  const MHD_DaemonInfo* epoll_info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
  uv_poll_init(loop_, &poll_, epoll_info->epoll_fd);
  uv_timer_init(loop_, &timer_);
  poll_.data = this;
  timer_.data = this;
  handles_open_ = true;
  uv_poll_start(&poll_, UV_READABLE, [](uv_poll_t* handle, int, int) {
    static_cast<HttpServer*>(handle->data)->run_and_reschedule();
  });
  run_soon();
  return true;
}

void HttpServer::run_soon() {
  if (!handles_open_) return;
  run_requested_ = true;
  if (in_run_) return;  // run_and_reschedule will see the flag when MHD_run returns
  uv_timer_start(
      &timer_,
      [](uv_timer_t* handle) { static_cast<HttpServer*>(handle->data)->run_and_reschedule(); }, 0,
      0);
}

void HttpServer::run_and_reschedule() {
  if (daemon_ == nullptr) return;
  run_requested_ = false;
  in_run_ = true;
  MHD_run(daemon_);
  in_run_ = false;
  if (daemon_ == nullptr) return;
  MHD_UNSIGNED_LONG_LONG timeout_ms = 0;
  // A connection resumed during MHD_run needs another pass right away.
  if (run_requested_) timeout_ms = 0;
  if (run_requested_ || MHD_get_timeout(daemon_, &timeout_ms) == MHD_YES) {
    uv_timer_start(
        &timer_,
        [](uv_timer_t* handle) { static_cast<HttpServer*>(handle->data)->run_and_reschedule(); },
        static_cast<uint64_t>(timeout_ms), 0);
  } else {
    uv_timer_stop(&timer_);
  }
}

void HttpServer::stop() {
  if (daemon_ == nullptr) return;
  auto pending = suspended_;
  for (const auto& exchange : pending) {
    HttpResponse unavailable;
    unavailable.status = 503;
    unavailable.drop_connection = true;
    Responder(exchange).send(std::move(unavailable));
  }
  if (handles_open_) uv_poll_stop(&poll_);
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  if (handles_open_) {
    handles_open_ = false;
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  }
}

}  // namespace oxide_sim
