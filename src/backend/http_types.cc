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

}  // namespace oxide::backend
