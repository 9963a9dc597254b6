#include "metrics/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "metrics/microhttpd_library.h"

namespace oxide::metrics {
namespace {

constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

MHD_Result Answer(MHD_Connection* connection, unsigned status, const std::string& body,
                  const char* content_type, bool head_only = false) {
  // MHD copies the body (MUST_COPY), so the string may go when this returns.
  MHD_Response* response = Microhttpd().create_response_from_buffer(
      head_only ? 0 : body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  Microhttpd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    Microhttpd().add_response_header(response, "Allow", "GET, HEAD");
  const MHD_Result queued = Microhttpd().queue_response(connection, status, response);
  Microhttpd().destroy_response(response);
  return queued;
}

}  // namespace

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct MetricsServer::Internals {
  static MHD_Result OnAccess(void* self_pointer, MHD_Connection* connection, const char* url,
                             const char* method, const char*, const char*, size_t*, void**) {
    auto* self = static_cast<MetricsServer*>(self_pointer);
    const bool head = std::strcmp(method, "HEAD") == 0;
    if (std::strcmp(method, "GET") != 0 && !head) {
      return Answer(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served\n",
                    "text/plain; charset=utf-8");
    }
    if (std::strcmp(url, "/metrics") == 0) {
      self->scrapes_.fetch_add(1, std::memory_order_relaxed);
      return Answer(connection, MHD_HTTP_OK, self->registry_->Render(), kTextFormat, head);
    }
    if (std::strcmp(url, "/healthz") == 0) {
      const std::string problem = self->Unhealthy();
      if (!problem.empty()) {
        return Answer(connection, MHD_HTTP_SERVICE_UNAVAILABLE, problem + "\n",
                      "text/plain; charset=utf-8", head);
      }
      return Answer(connection, MHD_HTTP_OK, "ok\n", "text/plain; charset=utf-8", head);
    }
    return Answer(connection, MHD_HTTP_NOT_FOUND,
                  "not found: this endpoint serves /metrics and /healthz\n",
                  "text/plain; charset=utf-8", head);
  }
};

std::string MetricsServer::Unhealthy() const {
  const int64_t now = options_.now_ms();
  if (heartbeat_ != nullptr) {
    const int64_t age = now - heartbeat_->last_ms();
    if (age > options_.stale_after.count())
      return "the event loop has not turned for " + std::to_string(age) + " ms";
  }
  if (options_.write_health != nullptr) {
    Status writes = options_.write_health->Check(now, options_.commit_hung_after.count());
    if (!writes.ok()) return writes.message();
  }
  return "";
}

MetricsServer::MetricsServer(const Registry* registry, const LoopHeartbeat* heartbeat,
                             MetricsServerOptions options)
    : registry_(registry), heartbeat_(heartbeat), options_(std::move(options)) {
  if (!options_.now_ms) options_.now_ms = &SteadyMillis;
}

MetricsServer::~MetricsServer() {
  Stop();
}

Status MetricsServer::Start() {
  if (std::string error; !LoadMicrohttpd(&error)) return FailedPrecondition(error);
  sockaddr_storage address{};
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
  if (options_.host.find(':') != std::string::npos) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(options_.port);
    if (inet_pton(AF_INET6, options_.host.c_str(), &v6->sin6_addr) != 1)
      return FailedPrecondition("--metrics-address: \"" + options_.host +
                                "\" is not an IPv6 address");
    flags |= MHD_USE_IPv6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(options_.port);
    if (inet_pton(AF_INET, options_.host.c_str(), &v4->sin_addr) != 1)
      return FailedPrecondition("--metrics-address: \"" + options_.host +
                                "\" is not an IPv4 address");
  }
  daemon_ = Microhttpd().start_daemon(
      flags, options_.port, nullptr, nullptr, &Internals::OnAccess, this, MHD_OPTION_SOCK_ADDR,
      &address, MHD_OPTION_CONNECTION_LIMIT, options_.connection_limit,
      MHD_OPTION_CONNECTION_TIMEOUT, options_.idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      options_.max_request_bytes, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    return FailedPrecondition("cannot serve metrics on " + options_.host + ":" +
                              std::to_string(options_.port) + " (address in use or not local?)");
  }
  const MHD_DaemonInfo* info = Microhttpd().get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info == nullptr ? options_.port : info->port;
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (daemon_ == nullptr) return;
  Microhttpd().stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace oxide::metrics
