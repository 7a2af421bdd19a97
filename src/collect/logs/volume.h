// Volume stage: per-source volume control, so one job printing in a tight
// loop cannot flood the node's disk, the network or the server, and so what
// is dropped is never silent (every drop is counted by reason and shipped as
// wire::LogSourceCounters).
//
//  * Level floor: records below `min_level` are dropped as filtered. Records
//    whose level is unknown are kept (most plain prints have no level).
//  * Rate limit: a token bucket of `lines_per_second` with room for `burst`
//    lines. While it is empty the source is flooding, and records below
//    `protect_level` are sampled: of the excess in one second the 1st is
//    kept, then 1 in `sample_initial_n`, and N doubles after every
//    `sample_double_every` kept excess lines (so the kept share shrinks as
//    the flood grows, and a flood of F lines/s keeps about
//    sample_double_every * log2(F / ...) of them). Records at or above
//    protect_level are never sampled unless sample_protected is set.
//
// Deterministic: time comes in as now_ms, so tests assert exact counts.
//
// Thread safety: not thread-safe; one instance per source.
#pragma once

#include <cstdint>

#include "wire/log_batch.h"

namespace vigil::collect::logs {

struct VolumeOptions {
  uint32_t lines_per_second = 10000;                    // 0: no rate limit
  uint32_t burst = 20000;                               // bucket size, in lines
  wire::LogLevel min_level = wire::LogLevel::kUnknown;  // floor; kUnknown keeps everything
  wire::LogLevel protect_level = wire::LogLevel::kWarn;
  bool sample_protected = false;
  uint32_t sample_initial_n = 10;
  uint32_t sample_double_every = 100;
};

enum class VolumeDecision : uint8_t { kKeep, kSampled, kFiltered };

class VolumeController {
 public:
  explicit VolumeController(VolumeOptions options = {});

  // Decides one record's fate and counts it. `now_ms` must not go backwards
  // (a smaller value is treated as no time passing).
  VolumeDecision Admit(wire::LogLevel level, int64_t now_ms);

  // Drops since the last TakeCounters() (sampled_lines, filtered_lines; the
  // caller adds truncated_lines from the envelope and tailer).
  const wire::LogSourceCounters& counters() const { return counters_; }
  wire::LogSourceCounters TakeCounters();

  bool flooding() const { return flooding_; }
  uint64_t kept_lines() const { return kept_; }

 private:
  void Refill(int64_t now_ms);

  VolumeOptions options_;
  int64_t tokens_milli_;  // 1000 per line: integer arithmetic keeps it exact
  int64_t capacity_milli_;
  int64_t last_ms_ = INT64_MIN;
  bool flooding_ = false;
  int64_t excess_second_ = -1;  // the second the excess counters below belong to
  uint64_t excess_ = 0;         // excess lines seen in that second
  uint64_t next_keep_ = 0;      // index of the next excess line to keep
  uint64_t excess_kept_ = 0;
  uint64_t kept_ = 0;
  wire::LogSourceCounters counters_;
};

}  // namespace vigil::collect::logs
