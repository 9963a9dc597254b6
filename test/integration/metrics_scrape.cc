#include "metrics_scrape.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "http_client.h"

namespace oxide::testing {

double Scrape::Sum(const std::string& prefix) const {
  double total = 0;
  for (const auto& [series, value] : samples)
    if (series.rfind(prefix, 0) == 0) total += value;
  return total;
}

Scrape ParseScrape(const std::string& text) {
  Scrape scrape;
  std::istringstream in(text);
  const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re");
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
    const std::string inside = series.substr(open);
    for (std::sregex_iterator it(inside.begin(), inside.end(), label), end; it != end; ++it)
      scrape.labels.emplace_back((*it)[1], (*it)[2]);
  }
  return scrape;
}

Scrape ScrapeOf(const PluginProcess& plugin) {
  const std::string log = plugin.Log();
  const std::regex address(R"(http://127\.0\.0\.1:([0-9]+)/metrics)");
  std::string port;  // the last one: a restarted plugin may append to the same log
  for (std::sregex_iterator it(log.begin(), log.end(), address), end; it != end; ++it)
    port = (*it)[1];
  EXPECT_FALSE(port.empty()) << log;
  sim_test::HttpClient client("http://127.0.0.1:" + port);
  client.set_token(std::nullopt);
  sim_test::Reply reply = client.get("/metrics");
  EXPECT_EQ(reply.status, 200) << reply.body;
  return ParseScrape(reply.body);
}

}  // namespace oxide::testing
