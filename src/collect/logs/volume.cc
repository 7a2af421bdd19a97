#include "collect/logs/volume.h"

#include <algorithm>

namespace vigil::collect::logs {

VolumeController::VolumeController(VolumeOptions options) : options_(options) {
  if (options_.sample_initial_n == 0) options_.sample_initial_n = 1;
  if (options_.sample_double_every == 0) options_.sample_double_every = 1;
  capacity_milli_ = static_cast<int64_t>(std::max<uint32_t>(options_.burst, 1)) * 1000;
  tokens_milli_ = capacity_milli_;
}

void VolumeController::Refill(int64_t now_ms) {
  if (last_ms_ == INT64_MIN) {
    last_ms_ = now_ms;
    return;
  }
  if (now_ms <= last_ms_) return;
  // Clamped so the product cannot overflow; a minute refills any bucket.
  int64_t elapsed = std::min<int64_t>(now_ms - last_ms_, 60'000);
  // lines_per_second lines per 1000 ms = lines_per_second milli-lines per ms.
  tokens_milli_ = std::min(
      capacity_milli_, tokens_milli_ + elapsed * static_cast<int64_t>(options_.lines_per_second));
  last_ms_ = now_ms;
}

VolumeDecision VolumeController::Admit(wire::LogLevel level, int64_t now_ms) {
  if (options_.min_level != wire::LogLevel::kUnknown && level != wire::LogLevel::kUnknown &&
      level < options_.min_level) {
    ++counters_.filtered_lines;
    return VolumeDecision::kFiltered;
  }
  if (options_.lines_per_second == 0) {
    ++kept_;
    return VolumeDecision::kKeep;
  }
  Refill(now_ms);
  if (tokens_milli_ >= 1000) {
    tokens_milli_ -= 1000;
    flooding_ = false;
    ++kept_;
    return VolumeDecision::kKeep;
  }
  flooding_ = true;
  if (level >= options_.protect_level && !options_.sample_protected) {
    ++kept_;
    return VolumeDecision::kKeep;
  }
  int64_t second = now_ms / 1000;
  if (second != excess_second_) {
    excess_second_ = second;
    excess_ = 0;
    next_keep_ = 0;
    excess_kept_ = 0;
  }
  uint64_t index = excess_++;
  if (index == next_keep_) {
    ++excess_kept_;
    uint64_t shift = std::min<uint64_t>(excess_kept_ / options_.sample_double_every, 20);
    next_keep_ += static_cast<uint64_t>(options_.sample_initial_n) << shift;
    ++kept_;
    return VolumeDecision::kKeep;
  }
  ++counters_.sampled_lines;
  return VolumeDecision::kSampled;
}

wire::LogSourceCounters VolumeController::TakeCounters() {
  wire::LogSourceCounters c = counters_;
  counters_ = wire::LogSourceCounters{};
  return c;
}

}  // namespace vigil::collect::logs
