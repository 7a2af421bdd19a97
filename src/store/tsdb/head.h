// Head: the in-memory part of the store. Per series it keeps the samples of
// the open chunk window, closed windows waiting to be persisted, the last
// sample (for Latest) and the newest persisted time (so WAL replay never
// duplicates what chunks already hold).
//
// Windows are aligned to chunk_window_ms from the start of each UTC day and
// never span two days, so every chunk belongs to exactly one day partition.
// Memory is bounded by what arrives in one window plus what waits for the next
// Maintain: closed windows leave the head once persisted.
//
// Thread safety: none; the Db's head mutex guards its head.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <unordered_map>
#include <vector>

#include "wire/metric_batch.h"

namespace vigil::tsdb {

inline constexpr int64_t kDayMs = 24LL * 3600 * 1000;
inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

// Floor division: days and windows before 1970 round down, not toward zero.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t DayOf(int64_t t_ms) { return FloorDiv(t_ms, kDayMs); }

struct Window {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
};
Window WindowOf(int64_t t_ms, int64_t window_ms);

struct ChunkBuffer {
  Window window;
  uint64_t first_segment = 0;  // oldest WAL segment holding one of these samples
  std::vector<wire::Sample> samples;
};

struct HeadSeries {
  int64_t last_t = kNoTime;  // newest time accepted or persisted
  bool has_last = false;
  wire::Sample last;
  int64_t persisted_max_t = kNoTime;
  std::deque<ChunkBuffer> closed;  // oldest first; waiting for Maintain
  bool has_open = false;
  ChunkBuffer open;
};

// A closed window copied out for persistence.
struct PendingChunk {
  uint64_t series_id = 0;
  Window window;
  std::vector<wire::Sample> samples;
};

class Head {
 public:
  explicit Head(int64_t window_ms) : window_ms_(window_ms) {}

  HeadSeries* Find(uint64_t id);
  const HeadSeries* Find(uint64_t id) const;
  HeadSeries* GetOrCreate(uint64_t id) { return &series_[id]; }

  // False (and nothing stored) if `s` is at or before the series' last time.
  bool Append(HeadSeries* hs, const wire::Sample& s, uint64_t wal_segment);
  // Records what a persisted chunk holds (at open, from the partitions).
  void NotePersisted(HeadSeries* hs, const wire::Sample& last);

  // Closes open windows that ended at or before now_ms.
  void CloseEnded(int64_t now_ms);
  // Copies every closed window, each series' windows oldest first.
  std::vector<PendingChunk> CollectClosed() const;
  // Drops the first `count` closed windows of a series after they were persisted.
  void DropPersisted(uint64_t id, size_t count);

  // Oldest WAL segment still holding a sample that is not persisted;
  // `current` if none.
  uint64_t OldestNeededSegment(uint64_t current) const;

  // Appends the series' head samples in [mint, maxt] to `out`. Returns the time
  // of its oldest head sample (INT64_MAX if none): persisted data from that
  // time on is also in the head, which keeps a concurrent Maintain from
  // making a reader see a sample twice.
  int64_t CopyRange(uint64_t id, int64_t mint, int64_t maxt, std::vector<wire::Sample>* out) const;

  uint64_t sample_count() const { return samples_; }
  // Oldest head sample, kNoTime if none. Kept as samples arrive (every
  // range select asks, and a walk of every series each time was a share of
  // every alert evaluation); worked out again only after a drop.
  int64_t MinTime() const;
  const std::unordered_map<uint64_t, HeadSeries>& series() const { return series_; }

 private:
  int64_t window_ms_;
  // MinTime's answer while min_time_known_; both change under the owner's lock
  // (the head is not thread-safe), hence mutable for the const getter.
  mutable int64_t min_time_ = kNoTime;
  mutable bool min_time_known_ = true;
  // Node-based: HeadSeries pointers stay valid as series are added.
  std::unordered_map<uint64_t, HeadSeries> series_;
  uint64_t samples_ = 0;
};

}  // namespace vigil::tsdb
