// Helpers shared by the tailer tests: a hand-moved clock, an application-like
// writer, and the agent loop in miniature (ship, acknowledge, commit).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "collect/logs/tailer.h"
#include "core/env_wrapper.h"
#include "core/temp_dir.h"

namespace vigil::collect::logs::tailtest {

// A clock the test moves by hand.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  int64_t MonotonicMillis() override { return now_ms.load(); }
  std::atomic<int64_t> now_ms{1000000};
};

// Atomic writes without fsync: the property test commits thousands of
// times; durability is CheckpointStore's own test's business.
class NoSyncEnv : public EnvWrapper {
 public:
  NoSyncEnv() : EnvWrapper(Env::Default()) {}
  Status WriteFileAtomic(const std::string& p, std::string_view d) override {
    std::string tmp = p + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return IoError("open " + tmp);
    bool ok = ::write(fd, d.data(), d.size()) == static_cast<ssize_t>(d.size());
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), p.c_str()) != 0) return IoError("write " + p);
    return Status::Ok();
  }
};

// A writer that keeps its fd, as an application does, so it can go on
// writing to a file after it was renamed or deleted.
class Writer {
 public:
  explicit Writer(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0) << path;
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void Write(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = ::write(fd_, s.data(), s.size());
      ASSERT_GT(n, 0);
      s.remove_prefix(static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

inline std::string Numbered(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

struct Collected {
  std::vector<TailChunk> chunks;
  std::vector<std::string> lines;
};

// Reads until `quiet` consecutive empty chunks.
inline Collected Drain(FileTailer& t, size_t max_bytes = 1 << 16, int quiet = 2) {
  Collected c;
  for (int empties = 0, guard = 0; empties < quiet && guard < 100000; ++guard) {
    auto r = t.ReadSome(max_bytes);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    if (r->empty()) {
      ++empties;
      continue;
    }
    empties = 0;
    for (const auto& l : r->lines) c.lines.push_back(l.bytes);
    c.chunks.push_back(std::move(r).value());
  }
  return c;
}

inline std::vector<std::string> NumberedLines(int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i <= to; ++i) v.push_back("line " + std::to_string(i));
  return v;
}

inline TailerOptions Fast(ClockEnv* env) {
  TailerOptions o;
  o.env = env;
  o.rotate_wait_ms = 0;
  return o;
}

class TailerTest : public ::testing::Test {
 protected:
  TempDir tmp_;
  std::string path_ = tmp_.Join("app.log");
  ClockEnv env_;
  NoSyncEnv nosync_;
};

// The agent loop in miniature: ship chunks, commit what was acknowledged.
struct Pipeline {
  CheckpointStore* store;
  std::vector<std::string> delivered;
  std::map<std::string, uint64_t> server_end;  // what the server dedups on

  void Ship(const TailChunk& c, bool ack) {
    if (c.first_of_source) {
      ASSERT_TRUE(store->Commit(c.StartCheckpoint()).ok());
    }
    uint64_t& hi = server_end[c.source_id];
    for (const auto& l : c.lines) {
      if (l.offset >= hi) delivered.push_back(l.bytes);
    }
    hi = std::max(hi, c.end_offset);
    if (!ack) return;
    ASSERT_TRUE(store->Commit(c.EndCheckpoint()).ok());
    if (c.finished()) {
      ASSERT_TRUE(store->Forget(c.source_id).ok());
    }
    for (const auto& lost : c.lost) ASSERT_TRUE(store->Forget(lost.checkpoint.source_id()).ok());
  }
  int Pump(FileTailer& t, size_t max_bytes, bool ack = true) {
    int n = 0;
    for (int empties = 0; empties < 2;) {
      auto c = t.ReadSome(max_bytes);
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (!c.ok() || c->empty()) {
        ++empties;
        continue;
      }
      empties = 0;
      Ship(*c, ack);
      ++n;
    }
    return n;
  }
};

}  // namespace vigil::collect::logs::tailtest
