// Test helpers for the tsdb tests: an Env whose wall clock the test sets (so
// window cutting and retention do not depend on the real time) and a fresh
// temporary directory per test.
#pragma once

#include <atomic>
#include <string>

#include "core/env_wrapper.h"
#include "core/temp_dir.h"
#include "store/tsdb/head.h"

namespace vigil::tsdb::testing {

// The tests' clock: a minute, and a day boundary to start from.
inline constexpr int64_t kMin = 60 * 1000;
inline constexpr int64_t kT0 = 20000 * kDayMs;  // 2024-10-04 00:00 UTC

// Forwards everything to Env::Default() except NowMillis().
class FakeClockEnv final : public EnvWrapper {
 public:
  explicit FakeClockEnv(int64_t now_ms) : EnvWrapper(Env::Default()), now_(now_ms) {}
  void SetNow(int64_t ms) { now_ = ms; }
  int64_t NowMillis() override { return now_.load(); }

 private:
  std::atomic<int64_t> now_;
};

using ::vigil::TempDir;

}  // namespace vigil::tsdb::testing
