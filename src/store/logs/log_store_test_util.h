// Helpers for the log store tests: a settable wall clock, batch builders.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/env_wrapper.h"
#include "core/temp_dir.h"
#include "store/logs/log_store.h"

namespace vigil::logstore::testing {

inline constexpr int64_t kNowMs = int64_t{1764460800} * 1000;  // 2025-11-30T00:00:00Z
inline constexpr int64_t kT0 = kNowMs * 1000000;               // ns
inline constexpr int64_t kSec = 1000000000;

class FakeClockEnv final : public EnvWrapper {
 public:
  explicit FakeClockEnv(int64_t now_ms = kNowMs) : EnvWrapper(Env::Default()), now_(now_ms) {}
  void SetNow(int64_t ms) { now_ = ms; }
  int64_t NowMillis() override { return now_.load(); }

 private:
  std::atomic<int64_t> now_;
};

struct Rec {
  int64_t time_ns = 0;
  wire::LogLevel level = wire::LogLevel::kInfo;
  std::string line;
};

// Records at consecutive offsets from `start` (each line plus its newline).
inline wire::LogStream MakeStream(const std::string& source_id, wire::Labels labels, uint64_t start,
                                  const std::vector<Rec>& recs) {
  wire::LogStream s;
  s.source_id = source_id;
  s.labels = std::move(labels);
  s.start_offset = start;
  uint64_t off = start;
  for (const auto& r : recs) {
    wire::LogRecord lr;
    lr.time_ns = r.time_ns;
    lr.offset = off;
    lr.level = r.level;
    lr.line = r.line;
    off += r.line.size() + 1;
    s.records.push_back(std::move(lr));
  }
  s.end_offset = off;
  return s;
}

inline wire::LogBatch MakeBatch(std::vector<wire::LogStream> streams) {
  wire::LogBatch b;
  b.source = "n1";
  b.streams = std::move(streams);
  return b;
}

inline Options TestOptions(const std::string& dir, Env* env) {
  Options o;
  o.dir = dir;
  o.env = env;
  o.block_max_lines = 4;
  o.block_max_age_ms = 3600 * 1000;
  o.background_maintenance = false;
  return o;
}

inline std::vector<std::string> Lines(const std::vector<LogEntry>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) out.push_back(e.line);
  return out;
}

}  // namespace vigil::logstore::testing
