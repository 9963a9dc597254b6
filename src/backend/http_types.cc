#include "backend/http_types.h"

namespace oxide::backend {

const char* HttpMethodName(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return "GET";
    case HttpMethod::kPost:
      return "POST";
    case HttpMethod::kDelete:
      return "DELETE";
  }
  return "?";
}

std::string OutcomeLabel(const HttpResponse& response) {
  switch (response.transport_error) {
    case TransportError::kNone:
      return std::to_string(response.status);
    case TransportError::kTimeout:
      return "timeout";
    case TransportError::kConnect:
      return "connect";
    case TransportError::kTls:
      return "tls";
    case TransportError::kOther:
      return "error";
  }
  return "error";
}

}  // namespace oxide::backend
