#include "metrics/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace oxide::metrics {

StatusOr<ListenAddress> ParseListenAddress(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("\"" + text + "\" is not HOST:PORT (e.g. 0.0.0.0:9810)");
  }
  std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    in6_addr unused{};
    if (inet_pton(AF_INET6, host.c_str(), &unused) != 1)
      return InvalidArgument("\"" + host + "\" is not an IPv6 address");
  } else {
    if (host.empty()) host = "0.0.0.0";
    in_addr unused{};
    if (inet_pton(AF_INET, host.c_str(), &unused) != 1) {
      return InvalidArgument("\"" + host +
                             "\" is not an IPv4 address (use [..] around an IPv6 one; names are "
                             "not resolved)");
    }
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return InvalidArgument("\"" + port + "\" is not a port (0-65535; 0 = any free port)");
  }
  return ListenAddress{.host = host, .port = static_cast<uint16_t>(std::stoi(port))};
}

}  // namespace oxide::metrics
