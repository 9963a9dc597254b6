// Prometheus-style metrics that any thread may record and any thread may render, with no lock a
// recorder and a scrape share: values are relaxed atomics, and each family's children (one per
// set of label values) form an append-only list that readers walk without a lock. Only creating a
// child takes the family's mutex, which renders never take, so the event loop never waits on a
// scrape. Families are registered before any render (at start, on the main thread); after that
// the registry's list of families is fixed.
//
// Cardinality is bounded by construction: each family has a cap on its children; values for
// label sets beyond it go to one "overflow" child that is not exported (counted in
// oxide_csi_metrics_series_dropped_total). Callers pass only values from small fixed sets (a CSI
// method, a gRPC code, an Oxide operationId), never ids, names or secrets.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace oxide::metrics {

class Counter {
 public:
  void Increment(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Upper bounds of a histogram's buckets, increasing; +Inf is implied.
using Buckets = std::vector<double>;

class Histogram {
 public:
  explicit Histogram(const Buckets* bounds);
  void Observe(double value);
  // Cumulative counts per bound, then +Inf (== count); and the sum of all observations.
  std::vector<uint64_t> CumulativeCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  uint64_t count() const;

 private:
  const Buckets* bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // per bucket, not cumulative; last = +Inf
  std::atomic<double> sum_{0};
};

enum class Type { kCounter, kGauge, kHistogram };

// One metric family: its name, help, type and label names, and a child per label-value set.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, Type type, std::vector<std::string> label_names,
             size_t max_children);
  virtual ~FamilyBase();
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  size_t children() const { return size_.load(std::memory_order_acquire); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Appends the HELP and TYPE lines and every child's samples (text format 0.0.4).
  void Render(std::string* out) const;

 protected:
  struct Child {
    std::vector<std::string> values;
    Child* next = nullptr;
    virtual ~Child() = default;
  };
  // The child for these values, made on first use; the overflow child beyond the cap.
  Child* Find(std::initializer_list<std::string_view> values);
  virtual std::unique_ptr<Child> MakeChild() const = 0;
  virtual void RenderChild(const Child& child, std::string* out) const = 0;
  // The child's `{name="value",...}` with an optional extra label (le); empty without labels.
  std::string Labels(const Child& child, std::string_view extra_name = {},
                     std::string_view extra_value = {}) const;

 private:
  Child* Lookup(std::initializer_list<std::string_view> values) const;

  std::string name_;
  std::string help_;
  Type type_;
  std::vector<std::string> label_names_;
  size_t max_children_;
  std::atomic<Child*> head_{nullptr};  // newest first
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> dropped_{0};
  std::unique_ptr<Child> overflow_;
  std::mutex insert_;  // taken only to add a child; never by Render
};

template <typename Metric>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  Metric& With(std::initializer_list<std::string_view> values) {
    return static_cast<Node*>(Find(values))->metric;
  }

 protected:
  struct Node : Child {
    Metric metric;
  };
  std::unique_ptr<Child> MakeChild() const override { return std::make_unique<Node>(); }
  void RenderChild(const Child& child, std::string* out) const override;
};

class HistogramFamily : public FamilyBase {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  Buckets bounds, size_t max_children);
  Histogram& With(std::initializer_list<std::string_view> values) {
    return static_cast<Node*>(Find(values))->metric;
  }
  const Buckets& bounds() const { return bounds_; }

 protected:
  struct Node : Child {
    explicit Node(const Buckets* bounds) : metric(bounds) {}
    Histogram metric;
  };
  std::unique_ptr<Child> MakeChild() const override { return std::make_unique<Node>(&bounds_); }
  void RenderChild(const Child& child, std::string* out) const override;

 private:
  Buckets bounds_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;

// The families of one process, rendered together. Add* at start only (main thread), before the
// first Render(); the returned references live as long as the registry.
class Registry {
 public:
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names = {}, size_t max_children = 256);
  GaugeFamily& AddGauge(std::string name, std::string help,
                        std::vector<std::string> label_names = {}, size_t max_children = 256);
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names, Buckets bounds,
                                size_t max_children = 256);
  // Text appended after the families at each render, made on the rendering thread (process
  // figures read from /proc). Start only.
  void AddCollector(std::function<void(std::string*)> collect);

  // Any thread: the exposition text (format 0.0.4).
  std::string Render() const;
  std::vector<const FamilyBase*> families() const;

 private:
  template <typename F>
  F& Keep(std::unique_ptr<F> family) {
    F& kept = *family;
    families_.push_back(std::move(family));
    return kept;
  }

  std::vector<std::unique_ptr<FamilyBase>> families_;
  std::vector<std::function<void(std::string*)>> collectors_;
};

// Text format helpers (also used by collectors).
std::string FormatValue(double value);
std::string EscapeLabelValue(std::string_view value);

}  // namespace oxide::metrics
