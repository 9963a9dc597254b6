// Test support: a keep-alive libcurl client for the simulator. Every JSON response body of
// an /v1 request is appended to $OXIDE_SIM_RESPONSE_DIR/<pid>.jsonl for the schema test.
// One client per thread.
#pragma once

#include <curl/curl.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sim_test {

struct Reply {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lowercased names
  CURLcode curl_code = CURLE_OK;
  nlohmann::json json() const;
  std::string header(const std::string& name) const;
};

class HttpClient {
 public:
  explicit HttpClient(std::string base_url, std::string token = "oxide-token-test-secret");
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Reply get(const std::string& path) { return request("GET", path, std::nullopt); }
  Reply del(const std::string& path) { return request("DELETE", path, std::nullopt); }
  Reply post(const std::string& path, const nlohmann::json& body) {
    return request("POST", path, body.dump());
  }
  Reply put(const std::string& path, const nlohmann::json& body) {
    return request("PUT", path, body.dump());
  }
  Reply request(const std::string& method, const std::string& path,
                const std::optional<std::string>& body,
                const std::vector<std::string>& extra_headers = {});

  void set_token(std::optional<std::string> token) { token_ = std::move(token); }
  void set_ca_file(std::string path) { ca_file_ = std::move(path); }
  // A new connection per request (libcurl silently retries a request once when a reused
  // connection closes, which would hide dropped connections).
  void set_fresh_connect(bool fresh) { fresh_connect_ = fresh; }

 private:
  void record(const std::string& method, const std::string& path, const Reply& reply);
  CURL* curl_;
  std::string base_url_;
  std::optional<std::string> token_;
  std::string ca_file_;
  bool fresh_connect_ = false;
};

// Standard request bodies.
nlohmann::json blank_disk(const std::string& name, uint64_t size_gib = 1, int block_size = 4096);

}  // namespace sim_test
