#include "ingest/staleness.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

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

std::vector<wire::Labels> StalenessTracker::Diff(const wire::MetricBatch& pass,
                                                 const std::vector<size_t>& members,
                                                 const std::vector<uint64_t>& ids,
                                                 const std::vector<std::string>* only_names,
                                                 Source* src) {
  std::unordered_set<uint64_t> now;
  std::vector<uint64_t> next;
  for (size_t i : members) {
    if (now.count(ids[i])) continue;  // a series twice in one pass
    if (next.size() >= options_.max_series_per_source) {
      ++stats_.untracked_series;
      continue;
    }
    now.insert(ids[i]);
    next.push_back(ids[i]);
    src->labels.try_emplace(ids[i], pass.series[i].labels);  // copied once per series
  }
  std::vector<wire::Labels> ended;
  for (uint64_t id : src->ids) {
    if (now.count(id)) continue;
    auto it = src->labels.find(id);
    if (!InScope(it->second, only_names)) {
      // Not this pass's to replace (a POST of other names): still the source's.
      if (next.size() < options_.max_series_per_source) {
        next.push_back(id);
        continue;
      }
    } else {
      ended.push_back(std::move(it->second));
    }
    src->labels.erase(it);
  }
  src->ids = std::move(next);
  return ended;
}

std::vector<wire::Series> StalenessTracker::Observe(const std::string& key,
                                                    const wire::MetricBatch& pass,
                                                    const std::vector<uint64_t>& ids,
                                                    const std::vector<std::string>* only_names) {
  std::vector<wire::Series> markers;
  if (pass.pass_time_ms == 0 || ids.size() != pass.series.size()) return markers;
  // The pass's own series, by index, and their ids in pass order.
  std::vector<size_t> members;
  std::vector<uint64_t> member_ids;
  members.reserve(pass.series.size());
  member_ids.reserve(pass.series.size());
  for (size_t i = 0; i < pass.series.size(); ++i) {
    if (!IsPassSeries(pass.series[i], pass.pass_time_ms)) continue;
    members.push_back(i);
    member_ids.push_back(ids[i]);
  }
  std::lock_guard<std::mutex> lock(mu_);
  Source* src = SourceFor(key);
  if (pass.pass_time_ms < src->pass_time_ms) {
    ++stats_.old_passes;
    return markers;
  }
  src->pass_time_ms = pass.pass_time_ms;
  // The usual pass: the same series as the last, in the same order.
  if (only_names == nullptr && member_ids == src->ids) return markers;
  std::vector<wire::Labels> ended = Diff(pass, members, ids, only_names, src);
  stats_.markers += ended.size();
  markers.reserve(ended.size());
  for (wire::Labels& labels : ended) {
    markers.push_back({std::move(labels), {{pass.pass_time_ms, tsdb::StaleNaN()}}});
  }
  return markers;
}

StalenessStats StalenessTracker::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  StalenessStats out = stats_;
  for (const auto& [name, src] : sources_) out.tracked_series += src.ids.size();
  return out;
}

}  // namespace vigil::ingest
