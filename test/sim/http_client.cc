#include "http_client.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace sim_test {
namespace {

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  std::string line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' '))
      value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
      value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * count;
}

}  // namespace

nlohmann::json Reply::json() const {
  return nlohmann::json::parse(body, nullptr, false);
}

std::string Reply::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpClient::HttpClient(std::string base_url, std::string token)
    : curl_(curl_easy_init()), base_url_(std::move(base_url)), token_(std::move(token)) {}

HttpClient::~HttpClient() {
  curl_easy_cleanup(curl_);
}

Reply HttpClient::request(const std::string& method, const std::string& path,
                          const std::optional<std::string>& body,
                          const std::vector<std::string>& extra_headers) {
  Reply reply;
  curl_easy_reset(curl_);
  const std::string url = base_url_ + path;
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &reply.headers);
  if (!ca_file_.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, ca_file_.c_str());
  if (fresh_connect_) {
    curl_easy_setopt(curl_, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(curl_, CURLOPT_FORBID_REUSE, 1L);
  }
  curl_slist* headers = nullptr;
  if (token_) headers = curl_slist_append(headers, ("Authorization: Bearer " + *token_).c_str());
  bool has_type = false;
  for (const auto& header : extra_headers) {
    headers = curl_slist_append(headers, header.c_str());
    has_type |= header.rfind("Content-Type", 0) == 0;
  }
  if (body) {
    if (!has_type) headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else if (method == "GET") {
    curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
  }
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
  reply.curl_code = curl_easy_perform(curl_);
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(headers);
  record(method, path, reply);
  return reply;
}

void HttpClient::record(const std::string& method, const std::string& path, const Reply& reply) {
  const char* dir = std::getenv("OXIDE_SIM_RESPONSE_DIR");
  if (dir == nullptr || reply.curl_code != CURLE_OK || path.rfind("/v1/", 0) != 0) return;
  if (reply.body.empty()) return;
  const auto parsed = nlohmann::json::parse(reply.body, nullptr, false);
  nlohmann::json line = {{"method", method},
                         {"path", path.substr(0, path.find('?'))},
                         {"status", reply.status},
                         {"body", parsed.is_discarded() ? nlohmann::json(reply.body) : parsed},
                         {"raw_is_json", !parsed.is_discarded()}};
  std::ofstream out(std::string(dir) + "/" + std::to_string(::getpid()) + ".jsonl", std::ios::app);
  out << line.dump() << "\n";
}

nlohmann::json blank_disk(const std::string& name, uint64_t size_gib, int block_size) {
  return {{"name", name},
          {"description", "test disk"},
          {"size", size_gib * 1024ULL * 1024 * 1024},
          {"disk_backend",
           {{"type", "distributed"},
            {"disk_source", {{"type", "blank"}, {"block_size", block_size}}}}}};
}

}  // namespace sim_test
