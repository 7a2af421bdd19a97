// ManualClockEnv: Env::Default() with a wall clock the test sets (`now`), for
// code that stamps or ages what it keeps by Env::NowMillis (jobs, snapshots,
// pushed samples). With follow_monotonic the monotonic clock moves with
// `now` too (from the real one at construction), so a time derived from
// both (the boot time: wall minus monotonic) stays put as the test moves on.
//
// Thread safety: `now` is atomic, so a test may move it while background
// threads of the code under test (a store's maintenance) read it.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/env_wrapper.h"

namespace vigil {

class ManualClockEnv final : public EnvWrapper {
 public:
  static constexpr int64_t kDefaultStartMs = 1'764'460'800'000;  // 2025-11-30 00:00 UTC

  explicit ManualClockEnv(int64_t start_ms = kDefaultStartMs, bool follow_monotonic = false)
      : EnvWrapper(Env::Default()),
        now(start_ms),
        start_ms_(start_ms),
        mono_start_ms_(Env::Default()->MonotonicMillis()),
        follow_monotonic_(follow_monotonic) {}

  int64_t NowMillis() override { return now.load(); }
  int64_t MonotonicMillis() override {
    return follow_monotonic_ ? mono_start_ms_ + (now.load() - start_ms_)
                             : EnvWrapper::MonotonicMillis();
  }

  std::atomic<int64_t> now;

 private:
  const int64_t start_ms_;
  const int64_t mono_start_ms_;
  const bool follow_monotonic_;
};

}  // namespace vigil
