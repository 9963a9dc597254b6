// Test support: one scrape of the plugin's /metrics, parsed (families' types, every sample, every
// label seen). The plugin listens on port 0; its start-up log names the port. gtest main thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "http_client.h"
#include "support/plugin_process.h"

namespace oxide::testing {

struct Scrape {
  std::map<std::string, std::string> types;                 // family -> type
  std::map<std::string, double> samples;                    // full series text -> value
  std::vector<std::pair<std::string, std::string>> labels;  // every (name, value) seen

  // The sum of the samples whose series text starts with `prefix`.
  double Sum(const std::string& prefix) const;
};

Scrape ParseScrape(const std::string& text);
// GET /metrics of `plugin` (at the last address its log names); the test fails when it cannot.
Scrape ScrapeOf(const PluginProcess& plugin);
// GET /healthz of `plugin` (its liveness), at the same address.
sim_test::Reply HealthzOf(const PluginProcess& plugin);

}  // namespace oxide::testing
