#include "store/tsdb/head.h"

#include <algorithm>

namespace vigil::tsdb {
namespace {

void CopyBuffer(const ChunkBuffer& b, int64_t mint, int64_t maxt, std::vector<wire::Sample>* out) {
  if (b.samples.empty() || b.samples.back().t_ms < mint || b.samples.front().t_ms > maxt) return;
  auto lo = std::lower_bound(b.samples.begin(), b.samples.end(), mint,
                             [](const wire::Sample& s, int64_t t) { return s.t_ms < t; });
  for (auto it = lo; it != b.samples.end() && it->t_ms <= maxt; ++it) out->push_back(*it);
}

}  // namespace

Window WindowOf(int64_t t_ms, int64_t window_ms) {
  int64_t day_start = DayOf(t_ms) * kDayMs;
  int64_t start = day_start + FloorDiv(t_ms - day_start, window_ms) * window_ms;
  return {start, std::min(start + window_ms, day_start + kDayMs)};
}

HeadSeries* Head::Find(uint64_t id) {
  auto it = series_.find(id);
  return it == series_.end() ? nullptr : &it->second;
}

const HeadSeries* Head::Find(uint64_t id) const {
  auto it = series_.find(id);
  return it == series_.end() ? nullptr : &it->second;
}

bool Head::Append(HeadSeries* hs, const wire::Sample& s, uint64_t wal_segment) {
  if (hs->last_t != kNoTime && s.t_ms <= hs->last_t) return false;
  Window w = WindowOf(s.t_ms, window_ms_);
  if (hs->has_open && hs->open.window.start != w.start) {
    hs->closed.push_back(std::move(hs->open));
    hs->has_open = false;
  }
  if (!hs->has_open) {
    hs->open = ChunkBuffer{w, wal_segment, {}};
    hs->has_open = true;
  }
  hs->open.samples.push_back(s);
  if (min_time_known_ && (min_time_ == kNoTime || s.t_ms < min_time_)) min_time_ = s.t_ms;
  hs->last_t = s.t_ms;
  hs->last = s;
  hs->has_last = true;
  ++samples_;
  return true;
}

void Head::NotePersisted(HeadSeries* hs, const wire::Sample& last) {
  if (hs->persisted_max_t != kNoTime && last.t_ms <= hs->persisted_max_t) return;
  hs->persisted_max_t = last.t_ms;
  if (hs->last_t == kNoTime || last.t_ms > hs->last_t) {
    hs->last_t = last.t_ms;
    hs->last = last;
    hs->has_last = true;
  }
}

void Head::CloseEnded(int64_t now_ms) {
  for (auto& [id, hs] : series_) {
    if (!hs.has_open || hs.open.window.end > now_ms) continue;
    hs.closed.push_back(std::move(hs.open));
    hs.has_open = false;
  }
}

std::vector<PendingChunk> Head::CollectClosed() const {
  std::vector<PendingChunk> out;
  for (const auto& [id, hs] : series_) {
    for (const auto& b : hs.closed) out.push_back({id, b.window, b.samples});
  }
  return out;
}

void Head::DropPersisted(uint64_t id, size_t count) {
  HeadSeries* hs = Find(id);
  if (hs == nullptr) return;
  for (size_t i = 0; i < count && !hs->closed.empty(); ++i) {
    const auto& b = hs->closed.front();
    if (!b.samples.empty())
      hs->persisted_max_t = std::max(hs->persisted_max_t, b.samples.back().t_ms);
    samples_ -= b.samples.size();
    hs->closed.pop_front();
    min_time_known_ = false;
  }
}

uint64_t Head::OldestNeededSegment(uint64_t current) const {
  uint64_t oldest = current;
  for (const auto& [id, hs] : series_) {
    if (!hs.closed.empty()) oldest = std::min(oldest, hs.closed.front().first_segment);
    if (hs.has_open) oldest = std::min(oldest, hs.open.first_segment);
  }
  return oldest;
}

int64_t Head::CopyRange(uint64_t id, int64_t mint, int64_t maxt,
                        std::vector<wire::Sample>* out) const {
  const HeadSeries* hs = Find(id);
  if (hs == nullptr) return std::numeric_limits<int64_t>::max();
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const auto& b : hs->closed) {
    if (!b.samples.empty()) first = std::min(first, b.samples.front().t_ms);
    CopyBuffer(b, mint, maxt, out);
  }
  if (hs->has_open) {
    if (!hs->open.samples.empty()) first = std::min(first, hs->open.samples.front().t_ms);
    CopyBuffer(hs->open, mint, maxt, out);
  }
  return first;
}

int64_t Head::MinTime() const {
  if (min_time_known_) return min_time_;
  int64_t min = kNoTime;
  for (const auto& [id, hs] : series_) {
    const ChunkBuffer* b = !hs.closed.empty() ? &hs.closed.front()
                           : hs.has_open      ? &hs.open
                                              : nullptr;
    if (b == nullptr || b->samples.empty()) continue;
    if (min == kNoTime || b->samples.front().t_ms < min) min = b->samples.front().t_ms;
  }
  min_time_ = min;
  min_time_known_ = true;
  return min;
}

}  // namespace vigil::tsdb
