#include "ingest/training_metrics.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "parse/training/log_metrics.h"

namespace vigil::ingest {
namespace {

std::string HelpFor(std::string_view metric) {
  static const std::map<std::string_view, std::string_view> kHelp = {
      {"loss", "Training loss"},
      {"learning_rate", "Learning rate"},
      {"grad_norm", "Gradient norm"},
      {"samples_per_second", "Training throughput in samples per second"},
      {"tokens_per_second", "Training throughput in tokens per second"},
      {"iterations_per_second", "Training iterations per second"},
      {"step", "Training step (iteration) the job reported"},
      {"epoch", "Training epoch the job reported"},
  };
  auto it = kHelp.find(metric);
  std::string help =
      it != kHelp.end() ? std::string(it->second) : "Value of '" + std::string(metric) + "'";
  return help + ", read from the job's log lines.";
}

// A hash of a line with every ASCII digit taken as '0': the lines of one
// template, whatever their numbers, hash alike. Eight bytes at a time; a
// byte is a digit when, xored with '0', it is below 10 (the high bits are
// masked before the add so that no carry crosses bytes).
uint64_t TemplateHash(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  uint64_t h = s.size() * 0x9e3779b97f4a7c15ull;
  auto mix = [&h](uint64_t w) {
    const uint64_t x = w ^ (0x30 * kOnes);
    const uint64_t not_digit = ((x & (0x7f * kOnes)) + 0x76 * kOnes) | x;
    const uint64_t digit_bytes = ((~not_digit & (0x80 * kOnes)) >> 7) * 0xff;
    w = (w & ~digit_bytes) | (0x30 * kOnes & digit_bytes);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  };
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    mix(w);
  }
  if (i < s.size()) {
    uint64_t w = 0;  // zero bytes are not digits
    std::memcpy(&w, s.data() + i, s.size() - i);
    mix(w);
  }
  return h;
}

// Templates remembered per source (then forgotten all at once).
constexpr size_t kMaxTemplates = 1024;

}  // namespace

struct TrainingMetricsFromLogs::SeriesState {
  std::string name;             // its series name (the key in SourceState::series)
  int64_t last_ms = INT64_MIN;  // time of its newest stored value
  double tokens = 0;            // values it may still take now (token bucket)
  int64_t refilled_ms = 0;
};

struct TrainingMetricsFromLogs::SourceState {
  parse::training::LogMetricExtractor extractor;
  std::unordered_map<std::string, SeriesState> series;  // by series name
  // By TemplateHash of a record: the series its last record's values went
  // to, one entry per value that reached the rate check (only records
  // whose every value did).
  std::unordered_map<uint64_t, std::vector<SeriesState*>> templates;
  // The series of a metric name as the extractor found it: the name need
  // not be turned into a series name (a new string) for every value.
  // Elements of `series` never move.
  std::unordered_map<std::string, SeriesState*> by_metric;
  std::list<std::string>::iterator lru;
};

TrainingMetricsFromLogs::TrainingMetricsFromLogs() : TrainingMetricsFromLogs(Options{}) {}
TrainingMetricsFromLogs::TrainingMetricsFromLogs(Options options) : options_(options) {}
TrainingMetricsFromLogs::~TrainingMetricsFromLogs() = default;

TrainingMetricsFromLogs::SourceState* TrainingMetricsFromLogs::StateFor(const std::string& key) {
  auto it = sources_.find(key);
  if (it != sources_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second->lru);
    return it->second.get();
  }
  if (sources_.size() >= std::max<size_t>(1, options_.max_sources)) {
    sources_.erase(lru_.back());
    lru_.pop_back();
    ++stats_.sources_evicted;
  }
  lru_.push_front(key);
  auto state = std::make_unique<SourceState>();
  state->lru = lru_.begin();
  return sources_.emplace(key, std::move(state)).first->second.get();
}

// What one stream's records add to the output batch, kept across its records.
struct TrainingMetricsFromLogs::StreamOutput {
  const wire::LogStream* stream;
  wire::MetricBatch* out;
  std::map<std::string, size_t>* family_index;  // names already in out->families
  // Series of this stream in `out`, by series name.
  std::unordered_map<std::string, size_t> series_of;
};

void TrainingMetricsFromLogs::Extract(const wire::LogBatch& batch,
                                      const std::vector<uint64_t>& committed,
                                      wire::MetricBatch* out) {
  std::lock_guard lock(mu_);
  std::map<std::string, size_t> family_index;
  for (size_t f = 0; f < out->families.size(); ++f) family_index[out->families[f].name] = f;
  for (size_t si = 0; si < batch.streams.size(); ++si) {
    const wire::LogStream& stream = batch.streams[si];
    const uint64_t from = si < committed.size() ? committed[si] : 0;
    std::string key = batch.source;
    key.push_back('\0');
    key += stream.source_id;
    SourceState* state = nullptr;
    StreamOutput output{&stream, out, &family_index, {}};
    for (const wire::LogRecord& rec : stream.records) {
      if (rec.offset < from) continue;  // stored before: read then
      if (state == nullptr) state = StateFor(key);
      ExtractRecord(rec, state, &output);
    }
  }
}

void TrainingMetricsFromLogs::ExtractRecord(const wire::LogRecord& rec, SourceState* state,
                                            StreamOutput* output) {
  const int64_t line_ms = rec.time_ns / 1'000'000;
  const bool memo_on = options_.skip_saturated_templates;
  const uint64_t shape = memo_on ? TemplateHash(rec.line) : 0;
  if (memo_on) {
    auto memo = state->templates.find(shape);
    if (memo != state->templates.end() && !memo->second.empty() &&
        AllOutOfTokens(memo->second, line_ms)) {
      // A flood: every value this template gave would be thinned.
      stats_.thinned += memo->second.size();
      ++stats_.records_skipped;
      return;
    }
  }
  std::vector<SeriesState*>& checked = checked_;  // under mu_
  checked.clear();
  bool every_value_checked = true;
  std::vector<parse::training::MetricSample>& found = found_;  // under mu_
  found.clear();
  // A record may be several physical lines (a joined traceback).
  std::string_view text = rec.line;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    state->extractor.Extract(text.substr(0, nl), &found);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  for (size_t i = 0; i < found.size(); ++i) {
    const auto& sample = found[i];
    bool superseded = false;  // a later value of the same metric in this record
    for (size_t j = i + 1; j < found.size() && !superseded; ++j) {
      superseded = found[j].name == sample.name;
    }
    if (superseded) continue;
    SeriesState* ss = SeriesFor(state, sample.name, line_ms);
    if (ss == nullptr) {
      every_value_checked = false;
      continue;
    }
    checked.push_back(ss);
    Refill(ss, line_ms);
    if (ss->tokens < 1) {
      ++stats_.thinned;
      continue;
    }
    ss->tokens -= 1;
    const int64_t t = ss->last_ms == INT64_MIN ? line_ms : std::max(line_ms, ss->last_ms + 1);
    ss->last_ms = t;
    Emit(*ss, sample, t, output);
  }
  if (memo_on && every_value_checked) {
    if (state->templates.size() >= kMaxTemplates) state->templates.clear();
    state->templates[shape] = checked;
  }
}

TrainingMetricsFromLogs::SeriesState* TrainingMetricsFromLogs::SeriesFor(SourceState* state,
                                                                         const std::string& metric,
                                                                         int64_t line_ms) {
  if (auto cached = state->by_metric.find(metric); cached != state->by_metric.end()) {
    return cached->second;
  }
  std::string name = TrainingSeriesName(metric);
  if (name.size() == kTrainingMetricPrefix.size()) return nullptr;  // no usable character
  auto it = state->series.find(name);
  if (it == state->series.end()) {
    if (state->series.size() >= options_.max_names_per_source) {
      ++stats_.names_dropped;
      return nullptr;
    }
    it = state->series.emplace(name, SeriesState{}).first;
    it->second.name = name;
    it->second.tokens = options_.burst;
    it->second.refilled_ms = line_ms;
  }
  // Bounded: several spellings may share a series, not without end.
  if (state->by_metric.size() < 4 * options_.max_names_per_source) {
    state->by_metric.emplace(metric, &it->second);
  }
  return &it->second;
}

void TrainingMetricsFromLogs::Emit(const SeriesState& ss,
                                   const parse::training::MetricSample& sample, int64_t t,
                                   StreamOutput* output) {
  const std::string& name = ss.name;
  wire::MetricBatch* out = output->out;
  // find before emplace: emplace builds a node (a copy of the name) even
  // when the key is there.
  auto sit = output->series_of.find(name);
  if (sit == output->series_of.end()) {
    sit = output->series_of.emplace(name, out->series.size()).first;
    wire::Series series;
    series.labels = output->stream->labels;
    series.labels.push_back({std::string(wire::kMetricNameLabel), name});
    wire::NormalizeLabels(&series.labels);
    out->series.push_back(std::move(series));
  }
  out->series[sit->second].samples.push_back({t, sample.value});
  if (output->family_index->find(name) == output->family_index->end()) {
    output->family_index->emplace(name, out->families.size());
    out->families.push_back({name, wire::MetricType::kGauge, HelpFor(sample.name)});
  }
  ++stats_.samples;
}

void TrainingMetricsFromLogs::Refill(SeriesState* ss, int64_t line_ms) const {
  if (line_ms > ss->refilled_ms) {
    ss->tokens =
        std::min(options_.burst, ss->tokens + static_cast<double>(line_ms - ss->refilled_ms) *
                                                  options_.rate_per_second / 1000.0);
    ss->refilled_ms = line_ms;
  }
}

bool TrainingMetricsFromLogs::AllOutOfTokens(const std::vector<SeriesState*>& series,
                                             int64_t line_ms) const {
  for (SeriesState* ss : series) {
    Refill(ss, line_ms);
    if (ss->tokens >= 1) return false;
  }
  return true;
}

TrainingMetricsStats TrainingMetricsFromLogs::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace vigil::ingest
