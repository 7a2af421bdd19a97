// Backoff: how long an agent waits before retrying a send the server did not
// acknowledge. Exponential with full jitter ("decorrelated" retries), so a
// fleet of agents that lost one server does not come back in lockstep.
//
// Thread safety: one Backoff per sender; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace vigil::ship {

struct BackoffOptions {
  int64_t initial_ms = 100;
  int64_t max_ms = 30'000;
  double multiplier = 2.0;
  // The delay is drawn uniformly from [delay * (1 - jitter), delay].
  double jitter = 0.5;
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, uint64_t seed = std::random_device{}())
      : options_(options), rng_(seed), next_ms_(options.initial_ms) {}

  // The delay before the next attempt; grows until Reset().
  int64_t NextDelayMs() {
    int64_t ceiling = next_ms_;
    next_ms_ = std::min<int64_t>(
        static_cast<int64_t>(static_cast<double>(next_ms_) * options_.multiplier), options_.max_ms);
    auto floor = static_cast<int64_t>(static_cast<double>(ceiling) * (1.0 - options_.jitter));
    std::uniform_int_distribution<int64_t> pick(std::max<int64_t>(floor, 1), ceiling);
    ++failures_;
    return pick(rng_);
  }
  // After a success.
  void Reset() {
    next_ms_ = options_.initial_ms;
    failures_ = 0;
  }
  uint64_t consecutive_failures() const { return failures_; }

 private:
  BackoffOptions options_;
  std::mt19937_64 rng_;
  int64_t next_ms_;
  uint64_t failures_ = 0;
};

}  // namespace vigil::ship
