// What Vigil reads from a training log, as `vigil inspect-log` prints it:
// one JSON object per metric value and per event, in line order. It answers
// "why is my loss not showing?" by showing exactly what the agent would take
// from the same text.
//
// The same stages as the agent, on a byte stream (a file or stdin):
// physical lines (a '\r' progress update stays inside its line; a line is
// cut at kMaxLineBytes), the metric extractor per physical line, and the
// multiline joiner (parse/logs/multiline.h) then the event detector per
// record. A `nan_loss` event is raised from the metric values themselves:
// once per run of consecutive non-finite values of a loss-like metric.
//
// Output order: by line; on one line, metric values before events. Lines a
// held record covers (a traceback in progress) wait until the record ends,
// so memory stays bounded by one record.
//
// Thread safety: not thread-safe; one instance per stream.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "parse/logs/multiline.h"
#include "parse/training/log_events.h"
#include "parse/training/log_metrics.h"

namespace vigil::parse::training {

inline constexpr size_t kMaxLineBytes = 1u << 20;

class Inspector {
 public:
  // Receives each output object, without a newline.
  using Sink = std::function<void(std::string_view json)>;

  explicit Inspector(Sink sink);

  // Any split of the stream into pieces gives the same output.
  void Feed(std::string_view bytes);
  // End of stream: a last line without '\n' counts; held records are closed.
  void Finish();

  int64_t lines() const { return line_; }

 private:
  struct Item {
    int64_t line;
    int order;  // 0: metric, 1: event (metrics first on one line)
    std::string json;
  };

  void OnLine(std::string_view line);
  void OnMetrics(std::string_view line);
  void OnRecords();
  // Emits, in order, the items before `limit` (the first line still held).
  void Drain(int64_t limit);

  Sink sink_;
  LogMetricExtractor metrics_;
  parse::logs::MultilineJoiner joiner_;
  LogEventDetector detector_;

  std::string partial_;    // the current line's bytes so far
  bool overlong_ = false;  // the current line passed kMaxLineBytes: the rest is dropped
  int64_t line_ = 0;       // physical lines seen
  std::vector<MetricSample> samples_;
  std::vector<wire::LogRecord> records_;
  std::vector<Item> pending_;
  // Loss-like metrics now in a run of non-finite values.
  std::map<std::string, bool, std::less<>> nonfinite_;
  int64_t last_nan_line_ = 0;  // line of the last nan_loss raised from a metric
};

}  // namespace vigil::parse::training
