// MetricBatch: the unit in which collectors hand samples to storage, locally
// or across the network (DESIGN.md: collectors never call the store directly).
// Byte layout in docs/wire.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace vigil::wire {

enum class MetricType : uint8_t { kUnknown = 0, kGauge = 1, kCounter = 2 };
const char* MetricTypeName(MetricType t);  // "gauge", "counter", "untyped"

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
  bool operator<(const Label& o) const {
    return name < o.name || (name == o.name && value < o.value);
  }
};
// Sorted by name, names unique; the metric name is the "__name__" label, as in Prometheus.
using Labels = std::vector<Label>;

inline constexpr std::string_view kMetricNameLabel = "__name__";

// Sorts labels by name and drops empty values (Prometheus treats an empty
// label as absent).
void NormalizeLabels(Labels* labels);
// The metric name of a label set ("" if none).
std::string_view MetricName(const Labels& labels);
// {a="1",b="2"} rendering used as a map key and in messages; with sep ", "
// it is Prometheus' own rendering (labels.String()), as its messages quote it.
std::string LabelsToString(const Labels& labels, std::string_view sep = ",");

struct Sample {
  int64_t t_ms = 0;
  double value = 0;
  bool operator==(const Sample&) const = default;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::kUnknown;
  std::string help;
  bool operator==(const MetricFamily&) const = default;
};

struct Series {
  Labels labels;
  std::vector<Sample> samples;
};

struct MetricBatch {
  std::string source;     // node name of the agent that collected it
  uint64_t sequence = 0;  // per-source, increasing: lets the server drop a retried batch
  // Non-zero: the batch is one complete collection pass at this time
  // (MetricBatchBuilder sets it), whose series are those with every sample at
  // it; the server marks a series of the source's previous pass that this one
  // lacks as ended (ingest/staleness.h). On the wire it is base_time_ms
  // (docs/wire.md). Zero: samples with no pass (pushed, read from logs).
  int64_t pass_time_ms = 0;
  std::vector<MetricFamily> families;  // metadata for metric names in this batch
  std::vector<Series> series;

  size_t SampleCount() const;
};

// The value of label `name`, or "" when the set has none (as PromQL sees it).
inline std::string_view LabelValue(const Labels& labels, std::string_view name) {
  for (const Label& l : labels) {
    if (l.name == name) return l.value;
  }
  return {};
}

// Bounds a decoder enforces on untrusted input.
inline constexpr size_t kMaxLabelsPerSeries = 64;
inline constexpr size_t kMaxLabelBytes = 4096;

// Label sets as the stores keep them (WAL records, catalogs): varint count,
// then the length-prefixed name and value of each label. GetLabels refuses
// more than max_labels.
void PutLabels(std::string* dst, const Labels& labels);
bool GetLabels(std::string_view* in, Labels* out, size_t max_labels);

// The head every payload starts with (docs/wire.md): version, source,
// sequence, base time, then the string table.
struct PayloadHead {
  uint64_t version = 0;  // 1 .. the decoder's max_version
  std::string_view source;
  uint64_t sequence = 0;
  int64_t base_time = 0;
  std::vector<std::string_view> symbols;
};
// `what` names the payload in errors ("metric batch", "log batch"); versions
// above `max_version` (the newest this build reads) are refused by name.
Status DecodePayloadHead(std::string_view* in, const char* what, uint64_t max_version,
                         PayloadHead* head);

// Shared by the payload decoders (metrics, logs): a string table as
// "varint n, n × string", bounded by the bytes left; views into the input.
bool DecodeSymbolTable(std::string_view* in, std::vector<std::string_view>* symbols);
// Labels sorted by name with no name twice, as every payload must send them.
bool SortedUniqueNames(const Labels& labels);

std::string EncodeMetricBatch(const MetricBatch& batch);
Result<MetricBatch> DecodeMetricBatch(std::string_view payload);

// Builds a batch from one collection pass. Collectors declare each family
// once, then add samples; all samples of one pass share the pass timestamp.
class MetricBatchBuilder {
 public:
  MetricBatchBuilder(std::string source, int64_t t_ms) : t_ms_(t_ms) {
    batch_.source = std::move(source);
    batch_.pass_time_ms = t_ms;
  }

  void Family(std::string_view name, MetricType type, std::string_view help);
  // `labels` need not be sorted and must not contain __name__.
  void Add(std::string_view name, Labels labels, double value);
  void Add(std::string_view name, double value) { Add(name, {}, value); }
  // A sample with a time of its own (a value a job recorded earlier, read
  // from its file now).
  void AddAt(std::string_view name, Labels labels, double value, int64_t t_ms);

  int64_t timestamp_ms() const { return t_ms_; }
  const MetricBatch& batch() const { return batch_; }
  MetricBatch Release() { return std::move(batch_); }

 private:
  int64_t t_ms_;
  MetricBatch batch_;
  std::unordered_map<std::string, size_t> family_index_;
};

}  // namespace vigil::wire
