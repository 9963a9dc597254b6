// The registry's exposition text (format 0.0.4), the cap on series, and recorders on several
// threads while another renders.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

namespace oxide::metrics {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

bool Has(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text))
    if (l == line) return true;
  return false;
}

TEST(Registry, CountersAndGaugesRenderWithHelpTypeAndEscapedLabels) {
  Registry registry;
  CounterFamily& counter =
      registry.AddCounter("t_requests_total", "Requests.\nSecond line \\ here", {"method", "code"});
  GaugeFamily& gauge = registry.AddGauge("t_in_flight", "In flight.");
  counter.With({"Create", "OK"}).Increment();
  counter.With({"Create", "OK"}).Increment(2);
  counter.With({"Del\"ete\n", "NOT_FOUND"}).Increment();
  gauge.With({}).Set(-2.5);

  const std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "# HELP t_requests_total Requests.\\nSecond line \\\\ here")) << text;
  EXPECT_TRUE(Has(text, "# TYPE t_requests_total counter")) << text;
  EXPECT_TRUE(Has(text, "t_requests_total{method=\"Create\",code=\"OK\"} 3")) << text;
  EXPECT_TRUE(Has(text, "t_requests_total{method=\"Del\\\"ete\\n\",code=\"NOT_FOUND\"} 1")) << text;
  EXPECT_TRUE(Has(text, "# TYPE t_in_flight gauge")) << text;
  EXPECT_TRUE(Has(text, "t_in_flight -2.5")) << text;
}

TEST(Registry, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry registry;
  HistogramFamily& family = registry.AddHistogram("t_seconds", "Latency.", {"op"}, {0.1, 1, 10});
  Histogram& h = family.With({"get"});
  for (double v : {0.05, 0.1, 0.5, 2.0, 100.0})
    h.Observe(v);
  const std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "# TYPE t_seconds histogram")) << text;
  EXPECT_TRUE(Has(text, "t_seconds_bucket{op=\"get\",le=\"0.1\"} 2")) << text;  // le is inclusive
  EXPECT_TRUE(Has(text, "t_seconds_bucket{op=\"get\",le=\"1\"} 3")) << text;
  EXPECT_TRUE(Has(text, "t_seconds_bucket{op=\"get\",le=\"10\"} 4")) << text;
  EXPECT_TRUE(Has(text, "t_seconds_bucket{op=\"get\",le=\"+Inf\"} 5")) << text;
  EXPECT_TRUE(Has(text, "t_seconds_sum{op=\"get\"} 102.65")) << text;
  EXPECT_TRUE(Has(text, "t_seconds_count{op=\"get\"} 5")) << text;
}

TEST(Registry, LabelSetsBeyondTheCapAreDroppedAndCounted) {
  Registry registry;
  CounterFamily& family = registry.AddCounter("t_capped_total", "Capped.", {"k"}, 3);
  for (int i = 0; i < 10; ++i)
    family.With({"v" + std::to_string(i)}).Increment();
  family.With({"v0"}).Increment();  // an existing series still counts
  EXPECT_EQ(family.children(), 3U);
  EXPECT_EQ(family.dropped(), 7U);
  const std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "t_capped_total{k=\"v0\"} 2")) << text;
  EXPECT_FALSE(Has(text, "t_capped_total{k=\"v3\"} 1")) << text;
  EXPECT_TRUE(Has(text, "oxide_csi_metrics_series_dropped_total{family=\"t_capped_total\"} 7"))
      << text;
}

TEST(Registry, AWrongNumberOfLabelValuesGoesToTheOverflowSeries) {
  Registry registry;
  CounterFamily& family = registry.AddCounter("t_two_total", "Two labels.", {"a", "b"});
  family.With({"only-one"}).Increment();
  EXPECT_EQ(family.children(), 0U);
  EXPECT_EQ(family.dropped(), 1U);
}

TEST(Registry, ValuesFormatExactly) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(1795559710.25), "1795559710.25");
  EXPECT_EQ(FormatValue(0.0025), "0.0025");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

// Recorders on four threads create series and record while a fifth renders; the totals come out
// exact. Under TSan this is the check that recording and rendering share no unguarded state.
TEST(Registry, RecordersAndARendererRunAtOnce) {
  Registry registry;
  CounterFamily& counter = registry.AddCounter("t_total", "Total.", {"worker"});
  HistogramFamily& histogram = registry.AddHistogram("t_h_seconds", "H.", {"worker"}, {0.5});
  constexpr int kPerThread = 20000;
  std::atomic<bool> done{false};
  std::thread renderer([&] {
    while (!done.load()) {
      const std::string text = registry.Render();
      ASSERT_NE(text.find("# TYPE t_total counter"), std::string::npos);
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      const std::string name = "w" + std::to_string(w % 2);  // two threads share each series
      for (int i = 0; i < kPerThread; ++i) {
        counter.With({name}).Increment();
        histogram.With({name}).Observe(i % 2 == 0 ? 0.1 : 1.0);
      }
    });
  }
  for (std::thread& worker : workers)
    worker.join();
  done = true;
  renderer.join();
  const std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "t_total{worker=\"w0\"} 40000")) << text;
  EXPECT_TRUE(Has(text, "t_total{worker=\"w1\"} 40000")) << text;
  EXPECT_TRUE(Has(text, "t_h_seconds_bucket{worker=\"w1\",le=\"0.5\"} 20000")) << text;
  EXPECT_TRUE(Has(text, "t_h_seconds_count{worker=\"w1\"} 40000")) << text;
}

}  // namespace
}  // namespace oxide::metrics
