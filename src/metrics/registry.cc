#include "metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace oxide::metrics {
namespace {

const char* TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// `{a="x",b="y"}` plus an optional extra label (le for buckets); empty without labels.
std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
  return out;
}

void Sample(std::string* out, const std::string& name, std::string_view suffix,
            const std::string& labels, const std::string& value) {
  *out += name;
  *out += suffix;
  *out += labels;
  *out += ' ';
  *out += value;
  *out += '\n';
}

}  // namespace

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
  }
  char text[40];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);  // shortest exact
  return error == std::errc() ? std::string(text, end) : "NaN";
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Histogram::Histogram(const Buckets* bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i)
    counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  const auto at = std::lower_bound(bounds_->begin(), bounds_->end(), value);
  counts_[static_cast<size_t>(at - bounds_->begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> cumulative(bounds_->size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    cumulative[i] = running;
  }
  return cumulative;
}

uint64_t Histogram::count() const {
  return CumulativeCounts().back();
}

FamilyBase::FamilyBase(std::string name, std::string help, Type type,
                       std::vector<std::string> label_names, size_t max_children)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      max_children_(max_children) {}

FamilyBase::~FamilyBase() {
  for (Child* child = head_.load(); child != nullptr;) {
    Child* next = child->next;
    delete child;
    child = next;
  }
}

FamilyBase::Child* FamilyBase::Lookup(std::initializer_list<std::string_view> values) const {
  for (Child* child = head_.load(std::memory_order_acquire); child != nullptr;
       child = child->next) {
    if (std::equal(child->values.begin(), child->values.end(), values.begin(), values.end()))
      return child;
  }
  return nullptr;
}

FamilyBase::Child* FamilyBase::Find(std::initializer_list<std::string_view> values) {
  if (Child* found = Lookup(values)) return found;
  std::lock_guard<std::mutex> lock(insert_);
  if (Child* found = Lookup(values)) return found;  // another thread added it meanwhile
  if (values.size() != label_names_.size() ||
      size_.load(std::memory_order_relaxed) >= max_children_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (!overflow_) overflow_ = MakeChild();
    return overflow_.get();
  }
  std::unique_ptr<Child> child = MakeChild();
  child->values.assign(values.begin(), values.end());
  child->next = head_.load(std::memory_order_relaxed);
  Child* added = child.release();
  head_.store(added, std::memory_order_release);  // readers see it complete
  size_.fetch_add(1, std::memory_order_release);
  return added;
}

void FamilyBase::Render(std::string* out) const {
  *out += "# HELP " + name_ + ' ' + EscapeHelp(help_) + '\n';
  *out += "# TYPE " + name_ + ' ' + TypeName(type_) + '\n';
  // Oldest first, so that a family's series keep their order between scrapes.
  std::vector<const Child*> children;
  for (const Child* child = head_.load(std::memory_order_acquire); child != nullptr;
       child = child->next)
    children.push_back(child);
  for (auto it = children.rbegin(); it != children.rend(); ++it)
    RenderChild(**it, out);
}

std::string FamilyBase::Labels(const Child& child, std::string_view extra_name,
                               std::string_view extra_value) const {
  return LabelText(label_names_, child.values, extra_name, extra_value);
}

template <>
void Family<Counter>::RenderChild(const Child& child, std::string* out) const {
  Sample(out, name(), "", Labels(child),
         FormatValue(static_cast<double>(static_cast<const Node&>(child).metric.value())));
}

template <>
void Family<Gauge>::RenderChild(const Child& child, std::string* out) const {
  Sample(out, name(), "", Labels(child),
         FormatValue(static_cast<const Node&>(child).metric.value()));
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, Buckets bounds,
                                 size_t max_children)
    : FamilyBase(std::move(name), std::move(help), Type::kHistogram, std::move(label_names),
                 max_children),
      bounds_(std::move(bounds)) {}

void HistogramFamily::RenderChild(const Child& child, std::string* out) const {
  const Histogram& histogram = static_cast<const Node&>(child).metric;
  const std::vector<uint64_t> cumulative = histogram.CumulativeCounts();
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    const std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
    Sample(out, name(), "_bucket", Labels(child, "le", le),
           FormatValue(static_cast<double>(cumulative[i])));
  }
  const std::string labels = Labels(child);
  Sample(out, name(), "_sum", labels, FormatValue(histogram.sum()));
  Sample(out, name(), "_count", labels, FormatValue(static_cast<double>(cumulative.back())));
}

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names, size_t max_children) {
  return Keep(std::make_unique<CounterFamily>(std::move(name), std::move(help), Type::kCounter,
                                              std::move(label_names), max_children));
}

GaugeFamily& Registry::AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names, size_t max_children) {
  return Keep(std::make_unique<GaugeFamily>(std::move(name), std::move(help), Type::kGauge,
                                            std::move(label_names), max_children));
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names, Buckets bounds,
                                        size_t max_children) {
  return Keep(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(label_names), std::move(bounds), max_children));
}

void Registry::AddCollector(std::function<void(std::string*)> collect) {
  collectors_.push_back(std::move(collect));
}

std::vector<const FamilyBase*> Registry::families() const {
  std::vector<const FamilyBase*> all;
  for (const auto& family : families_)
    all.push_back(family.get());
  return all;
}

std::string Registry::Render() const {
  std::string out;
  out.reserve(16384);
  for (const auto& family : families_)
    family->Render(&out);
  out +=
      "# HELP oxide_csi_metrics_series_dropped_total Samples recorded for a label set beyond its "
      "family's cap on series (not exported).\n"
      "# TYPE oxide_csi_metrics_series_dropped_total counter\n";
  for (const auto& family : families_) {
    if (family->dropped() == 0) continue;
    out += "oxide_csi_metrics_series_dropped_total{family=\"" + family->name() + "\"} " +
           FormatValue(static_cast<double>(family->dropped())) + '\n';
  }
  for (const auto& collect : collectors_)
    collect(&out);
  return out;
}

}  // namespace oxide::metrics
