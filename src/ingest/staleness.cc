#include "ingest/staleness.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "store/tsdb/stale.h"

namespace vigil::ingest {
namespace {

// Whether a series of `pass` belongs to it: every sample at the pass time.
// Values recorded at times of their own (AddAt) are not the pass's.
bool IsPassSeries(const wire::Series& s, int64_t pass_time_ms) {
  if (s.samples.empty()) return false;
  return std::all_of(s.samples.begin(), s.samples.end(),
                     [&](const wire::Sample& x) { return x.t_ms == pass_time_ms; });
}

// Whether a pass replaces the series `labels` (only_names: null for all).
bool InScope(const wire::Labels& labels, const std::vector<std::string>* only_names) {
  if (only_names == nullptr) return true;
  std::string_view name = wire::MetricName(labels);
  return std::find(only_names->begin(), only_names->end(), name) != only_names->end();
}

}  // namespace

size_t StalenessTracker::LabelsHash::operator()(const wire::Labels& labels) const {
  size_t h = labels.size();
  std::hash<std::string_view> hash;
  for (const wire::Label& l : labels) {
    // boost::hash_combine's mixing; names and values hashed apart so that
    // {a="bc"} and {ab="c"} differ.
    h ^= hash(l.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= hash(l.value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

StalenessTracker::Source* StalenessTracker::SourceFor(const std::string& name) {
  auto it = sources_.find(name);
  if (it != sources_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return &it->second;
  }
  if (sources_.size() >= options_.max_sources && !lru_.empty()) {
    sources_.erase(lru_.back());
    lru_.pop_back();
    ++stats_.sources_evicted;
  }
  lru_.push_front(name);
  Source& src = sources_[name];
  src.lru = lru_.begin();
  return &src;
}

std::vector<wire::Labels> StalenessTracker::Advance(const wire::MetricBatch& pass,
                                                    const std::vector<std::string>* only_names,
                                                    Source* src) {
  const uint64_t number = ++src->pass_number;
  for (const wire::Series& s : pass.series) {
    if (!IsPassSeries(s, pass.pass_time_ms)) continue;
    auto it = src->series.find(s.labels);
    if (it != src->series.end()) {
      it->second = number;
    } else if (src->series.size() < options_.max_series_per_source) {
      src->series.emplace(s.labels, number);
    } else {
      ++stats_.untracked_series;
    }
  }
  std::vector<wire::Labels> ended;
  for (auto it = src->series.begin(); it != src->series.end();) {
    if (it->second == number || !InScope(it->first, only_names)) {
      ++it;
      continue;
    }
    ended.push_back(it->first);
    it = src->series.erase(it);
  }
  return ended;
}

std::vector<wire::Series> StalenessTracker::Observe(const std::string& key,
                                                    const wire::MetricBatch& pass,
                                                    const std::vector<std::string>* only_names) {
  std::vector<wire::Series> markers;
  if (pass.pass_time_ms == 0) return markers;
  std::lock_guard<std::mutex> lock(mu_);
  Source* src = SourceFor(key);
  if (pass.pass_time_ms < src->pass_time_ms) {
    ++stats_.old_passes;
    return markers;
  }
  if (pass.pass_time_ms > src->pass_time_ms || !options_.same_time_is_retry) {
    // A source's first pass (an empty set) ends nothing.
    src->last_ended = Advance(pass, only_names, src);
    src->pass_time_ms = pass.pass_time_ms;
    stats_.markers += src->last_ended.size();
  }
  // A new pass, or the same pass again (a retry): its markers. (A marker at
  // the time of the series' last sample, two pushes in one millisecond, is
  // dropped by the store as out of order: the series then just fades.)
  markers.reserve(src->last_ended.size());
  for (const wire::Labels& labels : src->last_ended) {
    markers.push_back({labels, {{pass.pass_time_ms, tsdb::StaleNaN()}}});
  }
  return markers;
}

StalenessStats StalenessTracker::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  StalenessStats out = stats_;
  for (const auto& [name, src] : sources_) out.tracked_series += src.series.size();
  return out;
}

}  // namespace vigil::ingest
