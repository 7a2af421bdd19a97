// Training metrics read passively from a job's log lines: loss, learning
// rate, grad norm, throughput, step, epoch and any other numeric value a
// trainer prints, with no SDK and no code change. See docs/training-metrics.md
// for what is recognised, the canonical names and the rules.
//
// This runs on every line of every job, so there is no regex: a vectorised
// scan rejects a line with no digit or no separator in tens of nanoseconds,
// and a warm extractor allocates nothing for a line that gives no metric.
//
// Thread safety: a LogMetricExtractor is stateful per source (one per stream
// of one job: it keeps the last YOLO table headers across lines) and not
// thread-safe. The free functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::parse::training {

struct MetricSample {
  std::string name;             // canonical or the line's own key
  double value = 0;             // may be NaN/Inf
  std::optional<int64_t> step;  // only when the text gives one
};

// Stateful per source (one per stream of one job); not thread-safe.
class LogMetricExtractor {
 public:
  // `line` is one physical line of output without its '\n'. It may hold
  // '\r'-separated progress updates and ANSI escape sequences. Appends what
  // it finds, in order of appearance, to *out.
  void Extract(std::string_view line, std::vector<MetricSample>* out);

 private:
  // Column names of the last table headers seen: Ultralytics YOLO prints
  // "Epoch GPU_mem box_loss ..." (training) and "Class Images ..."
  // (validation) once, then rows of bare values.
  std::vector<std::string> train_columns_, val_columns_;
  // Reused across calls so a warm extractor allocates only for what it
  // finds: the line without ANSI escapes, the names of keys as written.
  std::string clean_, names_;
  std::vector<MetricSample> segment_, previous_;
  // The keys seen lately with what the parser worked out about them
  // (canonical name, blocked, metric-looking), packed; see KeyFactsOf.
  std::vector<std::pair<std::string, uint8_t>> key_memo_;
  // Pretty-printed JSON across lines (a trainer_state.json, detectron's
  // json_stats): the open containers ('{', '[') and whether the innermost
  // object has shown a step or epoch. Bounded (kMaxJsonDepth).
  std::string json_open_;
  bool json_counter_ = false;
  // Whether `text` is a member line ("key": number,) of an object that is
  // a record of training metrics; updates the containers from the line.
  bool JsonRecordMember(std::string_view text);
  // A dict announced by the line before it: a line that gave a step and
  // ends in ':' ("train | step: 140 | steps/sec: 0.1 | output:", TF Model
  // Garden's controller), then a dict printed one member a line
  // ("{'learning_rate': 0.0001," ... "'training_loss': 0.47}"). 1: the last
  // line announced one; 2: inside it.
  uint8_t announced_ = 0;
  // Whether `text` is a member line of the announced dict; follows it.
  [[gnu::noinline]] bool AnnouncedMember(std::string_view text);
  // Sets announced_ when `text`, which gave out[first..], announces a dict.
  [[gnu::noinline]] void NoteAnnouncement(std::string_view text,
                                          const std::vector<MetricSample>& out, size_t first);
};

// One sample as `vigil inspect-log` prints it, without a newline:
// {"line": 3, "metric": "loss", "value": 1.234, "step": 100}. The value is
// the shortest round-trip decimal; non-finite values are "nan", "inf",
// "-inf"; "step" only when the sample has one.
// `position_key` names the position: "line" in a log, "record" in a
// TensorBoard event file.
std::string MetricSampleJson(int64_t line, const MetricSample& sample,
                             std::string_view position_key = "line");

// Series of training metrics are named "training_<metric>".
inline constexpr std::string_view kTrainingMetricPrefix = "training_";

// "loss" -> "training_loss"; characters a metric name cannot hold become '_'
// ("eval/loss" -> "training_eval_loss"); nothing usable gives the bare prefix.
std::string TrainingSeriesName(std::string_view metric);

// The canonical name of a metric key as a trainer writes it ("lr",
// "learning rate", "tok/s", ...), or the key itself when it has none.
std::string CanonicalMetricName(std::string_view key);

}  // namespace vigil::parse::training
