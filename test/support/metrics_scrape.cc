#include "support/metrics_scrape.h"

#include <gtest/gtest.h>

#include <sstream>

#include "http_client.h"

namespace oxide::testing {

double Scrape::Sum(const std::string& prefix) const {
  double total = 0;
  for (const auto& [series, value] : samples)
    if (series.rfind(prefix, 0) == 0) total += value;
  return total;
}

namespace {

// The (name, value) pairs of `{a="x",b="y\"z"}`; values stay escaped.
std::vector<std::pair<std::string, std::string>> LabelsOf(const std::string& inside) {
  std::vector<std::pair<std::string, std::string>> labels;
  size_t at = 1;  // past '{'
  while (at < inside.size() && inside[at] != '}') {
    const size_t equals = inside.find("=\"", at);
    if (equals == std::string::npos) break;
    std::string name = inside.substr(at, equals - at);
    size_t end = equals + 2;
    while (end < inside.size() && inside[end] != '"')
      end += inside[end] == '\\' ? 2 : 1;
    labels.emplace_back(std::move(name), inside.substr(equals + 2, end - equals - 2));
    at = end + 1;
    if (at < inside.size() && inside[at] == ',') ++at;
  }
  return labels;
}

}  // namespace

Scrape ParseScrape(const std::string& text) {
  Scrape scrape;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      scrape.types[name] = type;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    scrape.samples[series] = std::stod(line.substr(space + 1));
    const size_t open = series.find('{');
    if (open == std::string::npos) continue;
    for (auto& label : LabelsOf(series.substr(open)))
      scrape.labels.push_back(std::move(label));
  }
  return scrape;
}

namespace {
// The metrics endpoint the plugin last logged, "http://127.0.0.1:<port>".
std::string MetricsBaseUrl(const PluginProcess& plugin) {
  const std::string log = plugin.Log();
  // The last "http://127.0.0.1:<port>/metrics": a restarted plugin may append to the same log,
  // and other records may name the simulator's address.
  const std::string prefix = "http://127.0.0.1:";
  std::string port;
  for (size_t at = log.rfind(prefix); at != std::string::npos && port.empty();
       at = at == 0 ? std::string::npos : log.rfind(prefix, at - 1)) {
    size_t end = at + prefix.size();
    while (end < log.size() && isdigit(static_cast<unsigned char>(log[end])))
      ++end;
    if (end > at + prefix.size() && log.compare(end, 8, "/metrics") == 0)
      port = log.substr(at + prefix.size(), end - at - prefix.size());
  }
  EXPECT_FALSE(port.empty()) << log;
  return "http://127.0.0.1:" + port;
}

sim_test::Reply Get(const PluginProcess& plugin, const std::string& path) {
  sim_test::HttpClient client(MetricsBaseUrl(plugin));
  client.set_token(std::nullopt);
  return client.get(path);
}
}  // namespace

Scrape ScrapeOf(const PluginProcess& plugin) {
  sim_test::Reply reply = Get(plugin, "/metrics");
  EXPECT_EQ(reply.status, 200) << reply.body;
  return ParseScrape(reply.body);
}

sim_test::Reply HealthzOf(const PluginProcess& plugin) {
  return Get(plugin, "/healthz");
}

}  // namespace oxide::testing
