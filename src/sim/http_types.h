// Plain request/response values passed between the HTTP server and the simulator.
// Created and consumed on the event-loop thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace oxide_sim {

struct HttpRequest {
  std::string method;
  std::string raw_path;   // exactly as sent, still percent-encoded
  std::string raw_query;  // the part after '?', still percent-encoded ("" if none)
  std::map<std::string, std::string> headers;  // keys lowercased
  std::string body;
  bool body_too_large = false;  // the body went over the server's limit and was discarded

  const std::string* header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? nullptr : &it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string body;  // empty for 204
  std::vector<std::pair<std::string, std::string>> headers;
  bool drop_connection = false;  // close the connection without answering
};

}  // namespace oxide_sim
