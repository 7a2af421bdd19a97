// DirSizeCache: a directory's size on disk, walked at most once per
// `max_age_ms`. Stats endpoints report it on every call (a Prometheus scrape
// every second), and a walk of a data directory costs a stat per file: a
// size a few seconds old is as useful and costs nothing.
//
// Thread safety: Get may be called from several threads; one mutex guards
// the cached value (a walk runs under it, so concurrent callers wait for
// one walk rather than each doing their own).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "core/env.h"
#include "core/status.h"

namespace vigil {

class DirSizeCache {
 public:
  DirSizeCache(Env* env, std::string dir, int64_t max_age_ms = 10'000)
      : env_(env), dir_(std::move(dir)), max_age_ms_(max_age_ms) {}

  // The size in bytes, walked again when the last walk is older than
  // max_age_ms (a failed walk is retried at the next call).
  Result<uint64_t> Get() {
    std::lock_guard lock(mu_);
    int64_t now = env_->MonotonicMillis();
    if (valid_ && now - walked_ms_ < max_age_ms_) return bytes_;
    VIGIL_ASSIGN_OR_RETURN(bytes_, env_->DirSize(dir_));
    valid_ = true;
    walked_ms_ = now;
    return bytes_;
  }

 private:
  Env* const env_;
  const std::string dir_;
  const int64_t max_age_ms_;
  std::mutex mu_;
  bool valid_ = false;     // guarded by mu_
  int64_t walked_ms_ = 0;  // guarded by mu_
  uint64_t bytes_ = 0;     // guarded by mu_
};

}  // namespace vigil
