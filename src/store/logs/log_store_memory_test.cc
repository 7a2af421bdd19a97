// The heads' chunked text (log_store_impl.h "HeadChunk"): blocks are encoded
// straight out of the head while appends and queries go on, so every line
// must read back whole, exactly once, from the head, from a block, and after
// a reopen (WAL replay refills the head).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/logs/log_store_test_util.h"

namespace vigil::logstore {
namespace {

using testing::kSec;
using testing::kT0;

// Line i of the test stream: its number, then a size that varies a lot,
// including empty lines and lines larger than a head chunk (64 KiB).
std::string LineText(uint64_t i) {
  if (i % 97 == 5) return "";
  std::string s = "line " + std::to_string(i) + " ";
  size_t pad = i % 211 == 7 ? (100u << 10) + i : (i * 37) % 300;
  s.append(pad, static_cast<char>('a' + i % 26));
  return s;
}

wire::LogBatch BatchOf(uint64_t first, uint64_t n, uint64_t* offset) {
  std::vector<testing::Rec> recs;
  for (uint64_t i = first; i < first + n; ++i) {
    recs.push_back({kT0 + static_cast<int64_t>(i) * kSec, wire::LogLevel::kInfo, LineText(i)});
  }
  auto s = testing::MakeStream("src", {{"job", "train"}}, *offset, recs);
  *offset = s.end_offset;
  return testing::MakeBatch({s});
}

// Every line 0..n-1, in order, once, with its own text.
void ExpectAllLines(const LogStore& store, uint64_t n) {
  LogQuery q;
  q.forward = true;
  q.limit = kMaxQueryLimit;
  auto r = store.Query(q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entries.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(r->entries[i].ref.line_no, i);
    ASSERT_EQ(r->entries[i].line, LineText(i)) << "line " << i;
  }
}

TEST(LogStoreHeadChunkTest, LinesOfEverySizeReadBackFromHeadBlocksAndReplay) {
  TempDir dir;
  testing::FakeClockEnv env;
  Options o = testing::TestOptions(dir.path(), &env);
  o.block_max_lines = 50;
  o.max_head_bytes = 64u << 20;  // only Maintain cuts
  constexpr uint64_t kLines = 1200;
  uint64_t offset = 0;
  TempDir copy;  // the files as a crash would leave them: WAL not cut into blocks
  {
    auto store = LogStore::Open(o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (uint64_t i = 0; i < kLines / 2; i += 30) {
      ASSERT_TRUE((*store)->Append("n1", BatchOf(i, 30, &offset)).ok());
    }
    ExpectAllLines(**store, kLines / 2);  // all in the head
    ASSERT_TRUE((*store)->Maintain().ok());
    EXPECT_EQ((*store)->Stats().head_lines, 0u);
    ExpectAllLines(**store, kLines / 2);  // all in blocks
    for (uint64_t i = kLines / 2; i < kLines; i += 40) {
      ASSERT_TRUE((*store)->Append("n1", BatchOf(i, 40, &offset)).ok());
    }
    ExpectAllLines(**store, kLines);  // blocks, then the head
    // Context across the boundary between blocks and head.
    auto ctx = (*store)->Context({1, kLines / 2}, 3, 3);
    ASSERT_TRUE(ctx.ok());
    ASSERT_EQ(ctx->size(), 7u);
    for (size_t k = 0; k < ctx->size(); ++k) {
      EXPECT_EQ((*ctx)[k].line, LineText(kLines / 2 - 3 + k));
    }
    std::filesystem::copy(dir.path(), copy.path(), std::filesystem::copy_options::recursive);
    ASSERT_TRUE((*store)->Close().ok());
  }
  Options crashed = o;
  crashed.dir = copy.path();
  auto store = LogStore::Open(crashed);  // the head comes back from the WAL
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_GT((*store)->Stats().head_lines, 0u);
  ExpectAllLines(**store, kLines);
  ASSERT_TRUE((*store)->Close().ok());
  store = LogStore::Open(o);  // Close cut every head
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Stats().head_lines, 0u);
  ExpectAllLines(**store, kLines);
}

// Blocks are cut from the head in place while the appender fills the same
// chunks and readers copy lines out: every line reads whole at all times.
TEST(LogStoreHeadChunkTest, CutsInPlaceWhileAppendingAndReading) {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.block_max_lines = 64;
  o.block_max_bytes = 16u << 10;
  o.block_max_age_ms = 1;
  o.max_head_bytes = 32u << 10;  // the appender cuts too
  o.background_maintenance = true;
  o.retention_days = 0;  // the lines' times are older than the real clock's week
  auto store = LogStore::Open(o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  constexpr uint64_t kLines = 4000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, seen{0};
  std::thread reader([&] {
    uint64_t after = 0;
    while (!done) {
      LogQuery q;
      q.limit = 500;
      auto r = (*store)->Since(q, after);
      if (!r.ok()) {
        ++bad;
        continue;
      }
      for (const LogEntry& e : *r) {
        bad += e.line != LineText(e.ref.line_no) || e.seq != after + 1;
        after = e.seq;
        ++seen;
      }
      auto ctx = (*store)->Context({1, after / 2}, 20, 20);
      if (after > 0 && ctx.ok()) {
        for (const LogEntry& e : *ctx) bad += e.line != LineText(e.ref.line_no);
      }
    }
  });
  uint64_t offset = 0;
  for (uint64_t i = 0; i < kLines; i += 25) {
    ASSERT_TRUE((*store)->Append("n1", BatchOf(i, 25, &offset)).ok());
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(seen.load(), 0u);
  ASSERT_TRUE((*store)->Close().ok());
  store = LogStore::Open(o);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Stats().lines, kLines);
  for (uint64_t from = 0; from < kLines; from += kMaxQueryLimit) {
    LogQuery q;
    q.forward = true;
    q.start_ns = kT0 + static_cast<int64_t>(from) * kSec;
    auto r = (*store)->Query(q);
    ASSERT_TRUE(r.ok());
    for (size_t k = 0; k < r->entries.size(); ++k) {
      ASSERT_EQ(r->entries[k].ref.line_no, from + k);
      ASSERT_EQ(r->entries[k].line, LineText(from + k));
    }
  }
}

}  // namespace
}  // namespace vigil::logstore
