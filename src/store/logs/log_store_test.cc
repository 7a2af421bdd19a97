// LogStore behaviour: append and query in both directions, matchers and line
// filters, dedup by source offsets, context, live tail, histogram, labels,
// block skipping checked against a brute-force scan (also with digit-run
// keys, and with format-1 filters of older stores), retention, reopen.
#include "store/logs/log_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "core/coding.h"
#include "store/common/sqlite.h"
#include "store/logs/format.h"
#include "store/logs/log_store_test_util.h"

namespace vigil::logstore {
namespace {

using testing::FakeClockEnv;
using testing::kNowMs;
using testing::kSec;
using testing::kT0;
using testing::Lines;
using testing::MakeBatch;
using testing::MakeStream;
using testing::Rec;
using wire::LogLevel;

class LogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    if (store_) {
      ASSERT_TRUE(store_->Close().ok());
    }
    store_.reset();
    auto s = LogStore::Open(options_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // Lines "line 0" .. "line n-1" one second apart in one source.
  void AppendNumbered(const std::string& source, wire::Labels labels, int n, int first = 0) {
    std::vector<Rec> recs;
    for (int i = first; i < first + n; ++i) {
      recs.push_back({kT0 + i * kSec, i % 3 == 0 ? LogLevel::kError : LogLevel::kInfo,
                      "line " + std::to_string(i)});
    }
    uint64_t start = 0;
    for (int i = 0; i < first; ++i) start += ("line " + std::to_string(i)).size() + 1;
    ASSERT_TRUE(
        store_->Append("n1", MakeBatch({MakeStream(source, std::move(labels), start, recs)})).ok());
  }
  QueryResult Q(LogQuery q) {
    auto r = store_->Query(q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : QueryResult{};
  }
  // `|= pat` finds exactly the lines of `all` (oldest first) that contain it:
  // no block the token filter skipped held one.
  void ExpectContainsLikeBruteForce(const std::vector<std::string>& all, const std::string& pat) {
    LogQuery q;
    q.forward = true;
    q.limit = kMaxQueryLimit;
    q.filters = {{FilterType::kContains, pat}};
    std::vector<std::string> want;
    for (const auto& l : all) {
      if (l.find(pat) != std::string::npos) want.push_back(l);
    }
    EXPECT_EQ(Lines(Q(q).entries), want) << "pattern '" << pat << "'";
  }

  TempDir dir_;
  FakeClockEnv env_;
  Options options_ = testing::TestOptions(dir_.path(), &env_);
  std::unique_ptr<LogStore> store_;
};

TEST_F(LogStoreTest, QueryDirectionsLimitAndTimeRange) {
  AppendNumbered("s1", {{"job", "a"}}, 10);
  ASSERT_TRUE(store_->Maintain().ok());         // 10 lines, block_max_lines 4: blocks 4+4+2
  AppendNumbered("s1", {{"job", "a"}}, 3, 10);  // head only
  EXPECT_EQ(store_->Stats().blocks, 3u);
  EXPECT_EQ(store_->Stats().head_lines, 3u);

  LogQuery q;
  auto r = Q(q);
  ASSERT_EQ(r.entries.size(), 13u);
  EXPECT_EQ(r.entries.front().line, "line 12");  // backward: newest first
  EXPECT_EQ(r.entries.back().line, "line 0");
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.entries[0].labels->size(), 2u);  // job + node

  q.forward = true;
  q.limit = 5;
  r = Q(q);
  EXPECT_EQ(Lines(r.entries),
            (std::vector<std::string>{"line 0", "line 1", "line 2", "line 3", "line 4"}));
  EXPECT_TRUE(r.truncated);

  q.forward = false;
  q.limit = 2;
  r = Q(q);
  EXPECT_EQ(Lines(r.entries), (std::vector<std::string>{"line 12", "line 11"}));
  // Early stop: the newest blocks were enough.
  EXPECT_LE(r.blocks_scanned, 1u);

  q.limit = 100;
  q.start_ns = kT0 + 3 * kSec;
  q.end_ns = kT0 + 6 * kSec;
  r = Q(q);
  EXPECT_EQ(Lines(r.entries), (std::vector<std::string>{"line 5", "line 4", "line 3"}));
  EXPECT_EQ(r.entries[0].ref.line_no, 5u);
}

TEST_F(LogStoreTest, MergesStreamsByTimeThenSeq) {
  ASSERT_TRUE(store_
                  ->Append("n1", MakeBatch({MakeStream("a", {{"job", "a"}}, 0,
                                                       {{kT0 + 1, LogLevel::kInfo, "a1"},
                                                        {kT0 + 3, LogLevel::kInfo, "a3"}}),
                                            MakeStream("b", {{"job", "b"}}, 0,
                                                       {{kT0 + 2, LogLevel::kInfo, "b2"},
                                                        {kT0 + 3, LogLevel::kInfo, "b3"}})}))
                  .ok());
  LogQuery q;
  q.forward = true;
  EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"a1", "b2", "a3", "b3"}));
  ASSERT_TRUE(store_->Maintain().ok());
  q.forward = false;
  EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"b3", "a3", "b2", "a1"}));
}

TEST_F(LogStoreTest, MatchersAndFilters) {
  ASSERT_TRUE(store_
                  ->Append("n1", MakeBatch({MakeStream("a", {{"job", "train"}}, 0,
                                                       {{kT0 + 1, LogLevel::kError, "CUDA error"},
                                                        {kT0 + 2, LogLevel::kInfo, "step 1"}}),
                                            MakeStream("b", {{"job", "eval"}}, 0,
                                                       {{kT0 + 3, LogLevel::kWarn, "slow step"},
                                                        {kT0 + 4, LogLevel::kInfo, "done"}})}))
                  .ok());
  ASSERT_TRUE(store_
                  ->Append("n2", MakeBatch({MakeStream("a", {{"job", "train"}}, 0,
                                                       {{kT0 + 5, LogLevel::kInfo, "n2 step"}})}))
                  .ok());
  for (int pass = 0; pass < 2; ++pass) {
    LogQuery q;
    q.forward = true;
    q.matchers = {{MatchType::kEqual, "job", "train"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"CUDA error", "step 1", "n2 step"}));
    q.matchers = {{MatchType::kEqual, "job", "train"}, {MatchType::kNotEqual, "node", "n2"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"CUDA error", "step 1"}));
    q.matchers = {{MatchType::kRegex, "job", "tr.*|ev"}};  // fully anchored: "ev" != "eval"
    EXPECT_EQ(Q(q).entries.size(), 3u);
    q.matchers = {{MatchType::kNotRegex, "job", "train"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"slow step", "done"}));
    q.matchers = {{MatchType::kEqual, "container", ""}};  // absent label equals ""
    EXPECT_EQ(Q(q).entries.size(), 5u);
    q.matchers = {{MatchType::kRegex, "level", "warn|error"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"CUDA error", "slow step"}));
    q.matchers = {{MatchType::kNotEqual, "level", "info"}, {MatchType::kEqual, "job", "eval"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"slow step"}));

    q.matchers.clear();
    q.filters = {{FilterType::kContains, "step"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"step 1", "slow step", "n2 step"}));
    q.filters = {{FilterType::kContains, "step"}, {FilterType::kNotContains, "slow"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"step 1", "n2 step"}));
    q.filters = {{FilterType::kRegex, "^(CUDA|done)"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"CUDA error", "done"}));
    q.filters = {{FilterType::kNotRegex, "step"}};
    EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"CUDA error", "done"}));
    q.filters = {{FilterType::kContains, "cuda"}};  // case-sensitive
    EXPECT_TRUE(Q(q).entries.empty());
    ASSERT_TRUE(store_->Close().ok());  // cuts every head: second pass reads blocks
    Reopen();
  }
}

TEST_F(LogStoreTest, InvalidRegexIsInvalidArgument) {
  LogQuery q;
  q.filters = {{FilterType::kRegex, "(unclosed"}};
  auto r = store_->Query(q);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("(unclosed"), std::string::npos);
  q.filters.clear();
  q.matchers = {{MatchType::kRegex, "job", "a["}};
  EXPECT_EQ(store_->Query(q).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Since(q, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Histogram(q, kSec).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LogStoreTest, DedupByCommittedOffsets) {
  auto s1 = MakeStream("src1", {{"job", "a"}}, 0,
                       {{kT0 + 1, LogLevel::kInfo, "one"}, {kT0 + 2, LogLevel::kInfo, "two"}});
  s1.counters.sampled_lines = 5;
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1})).ok());
  // A retried batch: nothing stored twice, counters not added twice.
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1})).ok());
  EXPECT_EQ(store_->Stats().lines, 2u);
  EXPECT_EQ(store_->Stats().duplicate_lines, 2u);
  // Overlapping offsets: "two" again plus "three".
  auto s2 = MakeStream("src1", {{"job", "a"}}, 4,
                       {{kT0 + 2, LogLevel::kInfo, "two"}, {kT0 + 3, LogLevel::kInfo, "three"}});
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s2})).ok());
  EXPECT_EQ(store_->Stats().lines, 3u);
  EXPECT_EQ(store_->Stats().duplicate_lines, 3u);
  // The same source id on another node is another source.
  ASSERT_TRUE(store_->Append("n2", MakeBatch({s1})).ok());
  EXPECT_EQ(store_->Stats().lines, 5u);
  // A rotated file: new source id, same labels, same stream, offsets from 0.
  auto s3 = MakeStream("src1-rotated", {{"job", "a"}}, 0, {{kT0 + 4, LogLevel::kInfo, "four"}});
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s3})).ok());
  LogQuery q;
  q.forward = true;
  q.matchers = {{MatchType::kEqual, "node", "n1"}};
  auto r = Q(q);
  EXPECT_EQ(Lines(r.entries), (std::vector<std::string>{"one", "two", "three", "four"}));
  EXPECT_EQ(r.entries[0].ref.stream_id, r.entries[3].ref.stream_id);
  EXPECT_EQ(r.entries[3].ref.line_no, 3u);
  // Counter-only stream (no records) still adds up.
  wire::LogStream c = MakeStream("src1-rotated", {{"job", "a"}}, s3.end_offset, {});
  c.end_offset += 100;
  c.counters.filtered_lines = 7;
  ASSERT_TRUE(store_->Append("n1", MakeBatch({c})).ok());
  auto check = [&] {
    auto src = store_->Sources();
    ASSERT_EQ(src.size(), 2u);  // one per stream (n1, n2)
    const SourceTotals& t = src[0].labels[1].value == "n1" ? src[0] : src[1];
    EXPECT_EQ(t.lines, 4u);
    EXPECT_EQ(t.bytes, 3u + 3 + 5 + 4);
    EXPECT_EQ(t.counters.sampled_lines, 5u);
    EXPECT_EQ(t.counters.filtered_lines, 7u);
    EXPECT_EQ(store_->Stats().streams, 2u);
  };
  check();
  Reopen();  // the offsets and totals survive a restart
  check();
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1, s2, s3})).ok());
  EXPECT_EQ(Q(q).entries.size(), 4u);
}

// What the agent sends for bytes lost unread: a stream of its own, no
// records, the lost range as its offsets (collect/logs/log_agent.cc).
wire::LogStream LostStream(const std::string& source_id, uint64_t at, uint64_t bytes) {
  wire::LogStream s = MakeStream(source_id + "#lost", {{"job", "a"}}, at, {});
  s.end_offset = at + bytes;
  s.counters.lost_bytes = bytes;
  return s;
}

TEST_F(LogStoreTest, LostBytesAreCountedOnceAndSurviveReopen) {
  auto s1 = MakeStream("src1", {{"job", "a"}}, 0,
                       {{kT0 + 1, LogLevel::kInfo, "one"}, {kT0 + 2, LogLevel::kInfo, "two"}});
  s1.counters.truncated_lines = 1;
  wire::LogStream lost = LostStream("src1", s1.end_offset, 300);
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1, lost})).ok());
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1, lost})).ok());  // a retry adds nothing
  auto lost_bytes = [](LogStore& st) -> uint64_t {
    auto src = st.Sources();
    EXPECT_EQ(src.size(), 1u);  // the lost stream has the file's labels: one source
    if (src.empty()) return 0;
    EXPECT_EQ(src[0].lines, 2u);
    EXPECT_EQ(src[0].counters.truncated_lines, 1u);
    return src[0].counters.lost_bytes;
  };
  EXPECT_EQ(lost_bytes(*store_), 300u);

  // A crash image (nothing cut, no catalog snapshot since Open): the WAL
  // alone brings the counter back.
  TempDir crashed;
  std::filesystem::copy(
      dir_.path(), crashed.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  {
    auto copy = LogStore::Open(testing::TestOptions(crashed.path(), &env_));
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    EXPECT_EQ(lost_bytes(**copy), 300u);
    ASSERT_TRUE((*copy)->Close().ok());
  }

  Reopen();  // Close checkpointed the bookkeeping into the catalog
  EXPECT_EQ(lost_bytes(*store_), 300u);
  ASSERT_TRUE(store_->Append("n1", MakeBatch({lost})).ok());  // a retry after the restart
  EXPECT_EQ(lost_bytes(*store_), 300u);
  // A later loss of the same generation, past the first: added.
  ASSERT_TRUE(store_->Append("n1", MakeBatch({LostStream("src1", lost.end_offset, 50)})).ok());
  EXPECT_EQ(lost_bytes(*store_), 350u);
  Reopen();
  EXPECT_EQ(lost_bytes(*store_), 350u);
}

TEST_F(LogStoreTest, CatalogWrittenBeforeLostBytesOpens) {
  auto s1 = MakeStream("src1", {{"job", "a"}}, 0, {{kT0 + 1, LogLevel::kInfo, "one"}});
  s1.counters.sampled_lines = 5;
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1})).ok());
  ASSERT_TRUE(store_->Close().ok());
  store_.reset();
  // The sources table as stores before lost_bytes created it.
  {
    auto db = store::SqliteDb::Open(dir_.path() + "/catalog.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)
                    ->Exec("BEGIN;"
                           "CREATE TABLE old_sources(node TEXT NOT NULL, source_id TEXT NOT NULL,"
                           " stream_id INTEGER NOT NULL, end_offset INTEGER NOT NULL,"
                           " lines INTEGER NOT NULL, bytes INTEGER NOT NULL,"
                           " sampled INTEGER NOT NULL, filtered INTEGER NOT NULL,"
                           " truncated INTEGER NOT NULL, PRIMARY KEY(node, source_id));"
                           "INSERT INTO old_sources SELECT node, source_id, stream_id, end_offset,"
                           " lines, bytes, sampled, filtered, truncated FROM sources;"
                           "DROP TABLE sources;"
                           "ALTER TABLE old_sources RENAME TO sources;"
                           "COMMIT;")
                    .ok());
    auto cols = (*db)->Prepare("SELECT count(*) FROM pragma_table_info('sources')");
    ASSERT_TRUE(cols.ok());
    Status st;
    ASSERT_TRUE(cols->Step(&st));
    ASSERT_EQ(cols->ColumnInt64(0), 9);
  }
  Reopen();
  auto src = store_->Sources();
  ASSERT_EQ(src.size(), 1u);
  EXPECT_EQ(src[0].lines, 1u);
  EXPECT_EQ(src[0].counters.sampled_lines, 5u);
  EXPECT_EQ(src[0].counters.lost_bytes, 0u);
  ASSERT_TRUE(store_->Append("n1", MakeBatch({s1})).ok());  // the offsets came through too
  EXPECT_EQ(store_->Stats().duplicate_lines, 1u);
  ASSERT_TRUE(store_->Append("n1", MakeBatch({LostStream("src1", s1.end_offset, 70)})).ok());
  Reopen();  // into the column the upgrade added
  src = store_->Sources();
  ASSERT_EQ(src.size(), 1u);
  EXPECT_EQ(src[0].counters.sampled_lines, 5u);
  EXPECT_EQ(src[0].counters.lost_bytes, 70u);
}

TEST_F(LogStoreTest, ContextAcrossHeadAndBlocks) {
  AppendNumbered("s", {{"job", "a"}}, 6);
  ASSERT_TRUE(store_->Maintain().ok());       // blocks [0..3] [4..5]
  AppendNumbered("s", {{"job", "a"}}, 4, 6);  // head 6..9
  LogQuery q;
  q.filters = {{FilterType::kContains, "line 5"}};
  auto r = Q(q);
  ASSERT_EQ(r.entries.size(), 1u);
  auto ctx = store_->Context(r.entries[0].ref, 3, 2);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  EXPECT_EQ(Lines(*ctx),
            (std::vector<std::string>{"line 2", "line 3", "line 4", "line 5", "line 6", "line 7"}));
  ctx = store_->Context(r.entries[0].ref, 100, 100);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(ctx->size(), 10u);
  EXPECT_EQ(store_->Context({r.entries[0].ref.stream_id, 99}, 1, 1).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->Context({12345, 0}, 1, 1).status().code(), StatusCode::kNotFound);
}

TEST_F(LogStoreTest, SinceIsALiveTailCursor) {
  EXPECT_EQ(store_->LastSeq(), 0u);
  AppendNumbered("s", {{"job", "a"}}, 5);
  ASSERT_TRUE(store_->Maintain().ok());
  uint64_t cursor = store_->LastSeq();
  EXPECT_EQ(cursor, 5u);
  AppendNumbered("s", {{"job", "a"}}, 3, 5);
  LogQuery q;
  auto r = store_->Since(q, cursor);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Lines(*r), (std::vector<std::string>{"line 5", "line 6", "line 7"}));
  r = store_->Since(q, 2);  // reaches into blocks, oldest first
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 6u);
  EXPECT_EQ(r->front().line, "line 2");
  q.limit = 2;
  r = store_->Since(q, 0);
  EXPECT_EQ(Lines(*r), (std::vector<std::string>{"line 0", "line 1"}));
  q.limit = 100;
  q.matchers = {{MatchType::kEqual, "level", "error"}};
  r = store_->Since(q, 0);
  EXPECT_EQ(Lines(*r), (std::vector<std::string>{"line 0", "line 3", "line 6"}));
  EXPECT_TRUE(store_->Since(q, store_->LastSeq())->empty());
}

TEST_F(LogStoreTest, HistogramCountsByLevel) {
  AppendNumbered("s", {{"job", "a"}}, 12);  // errors at 0,3,6,9
  ASSERT_TRUE(store_->Maintain().ok());
  AppendNumbered("s", {{"job", "a"}}, 2, 12);
  for (bool filtered : {false, true}) {
    LogQuery q;
    q.start_ns = kT0;
    q.end_ns = kT0 + 14 * kSec;
    if (filtered) q.filters = {{FilterType::kContains, "line"}};
    auto h = store_->Histogram(q, 4 * kSec);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->start_ns, kT0);
    ASSERT_EQ(h->buckets.size(), 4u);
    auto err = static_cast<int>(LogLevel::kError), info = static_cast<int>(LogLevel::kInfo);
    EXPECT_EQ(h->buckets[0][err], 2u);  // 0, 3
    EXPECT_EQ(h->buckets[0][info], 2u);
    EXPECT_EQ(h->buckets[2][err], 1u);  // 9
    EXPECT_EQ(h->buckets[3][err], 1u);  // 12
    EXPECT_EQ(h->buckets[3][info], 1u);
  }
  LogQuery q;  // open range: from the oldest line to the newest
  auto h = store_->Histogram(q, kSec);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->buckets.size(), 14u);
  q.start_ns = 1;
  q.end_ns = kT0;
  EXPECT_EQ(store_->Histogram(q, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Histogram(q, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LogStoreTest, LabelNamesAndValues) {
  ASSERT_TRUE(
      store_
          ->Append("n1", MakeBatch({MakeStream("a", {{"job", "train"}, {"pod", "p1"}}, 0,
                                               {{kT0, LogLevel::kInfo, "x"}}),
                                    MakeStream("b", {{"job", "eval"}}, 0,
                                               {{kT0 + 100 * kSec, LogLevel::kInfo, "y"}})}))
          .ok());
  EXPECT_EQ(store_->LabelNames(0, INT64_MAX),
            (std::vector<std::string>{"job", "level", "node", "pod"}));
  EXPECT_EQ(store_->LabelNames(kT0 + 50 * kSec, INT64_MAX),
            (std::vector<std::string>{"job", "level", "node"}));
  EXPECT_EQ(store_->LabelValues("job", 0, INT64_MAX), (std::vector<std::string>{"eval", "train"}));
  EXPECT_EQ(store_->LabelValues("job", 0, kT0 + 1), (std::vector<std::string>{"train"}));
  EXPECT_EQ(store_->LabelValues("level", 0, INT64_MAX).size(), 7u);
  EXPECT_TRUE(store_->LabelValues("nope", 0, INT64_MAX).empty());
}

// Random lines, random substring patterns: the store's answer equals a
// brute-force scan, and the token filter skips blocks for absent terms.
TEST_F(LogStoreTest, BlockSkippingNeverMissesAMatch) {
  options_.block_max_lines = 64;
  options_.filter_memory_bytes = 4000;  // some filters in memory, the rest read from disk
  Reopen();
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"error", "Error", "cuda",   "step", "loss",   "nan",
                                          "oom",   "x",     "node-3", "a.b",  "rank=1", "κόσμε"};
  std::vector<std::string> all;
  uint64_t next_offset = 0;
  for (int b = 0; b < 20; ++b) {
    std::vector<Rec> recs;
    for (int i = 0; i < 100; ++i) {
      std::string l;
      int n = 1 + static_cast<int>(rng() % 8);
      for (int j = 0; j < n; ++j) {
        if (j) l += (rng() % 4 == 0) ? ":" : " ";
        l += words[rng() % words.size()];
        if (rng() % 5 == 0) l += std::to_string(rng() % 1000);
      }
      if (b == 7 && i == 50) l = "the needle-in-haystack line";
      recs.push_back({kT0 + static_cast<int64_t>(all.size()) * kSec, LogLevel::kInfo, l});
      all.push_back(l);
    }
    auto s = MakeStream("s", {{"job", "r"}}, next_offset, recs);
    next_offset = s.end_offset;
    ASSERT_TRUE(store_->Append("n1", MakeBatch({s})).ok());
    if (b % 3 == 0) {
      ASSERT_TRUE(store_->Maintain().ok());
    }
  }
  ASSERT_GT(store_->Stats().blocks, 10u);
  for (int t = 0; t < 300; ++t) {
    if (t == 150) Reopen();  // filters loaded at Open, within the budget
    std::string pat;
    if (t % 3 == 0) {
      pat = words[rng() % words.size()];
    } else {
      const std::string& l = all[rng() % all.size()];
      size_t a = rng() % l.size();
      pat = l.substr(a, 1 + rng() % std::min<size_t>(12, l.size() - a));
    }
    ExpectContainsLikeBruteForce(all, pat);
  }
  LogQuery q;
  q.filters = {{FilterType::kContains, "needle-in-haystack"}};
  auto r = Q(q);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_GT(r.blocks_skipped, 10u);
  EXPECT_LE(r.blocks_scanned, 2u);
  q.filters = {{FilterType::kRegex, "needle-in-hay"}};  // a literal regex skips too
  r = Q(q);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_GT(r.blocks_skipped, 10u);
  q.filters = {{FilterType::kRegex, "needle-in-ha.stack"}};
  EXPECT_EQ(Q(q).entries.size(), 1u);
}

// A format-1 token filter (trigrams only, no format byte), written from its
// description in docs/logstore.md, as stores before digit-run keys wrote it.
std::string Format1Filter(const std::vector<std::string_view>& lines) {
  std::set<uint32_t> keys;
  auto fold = [](char c) {
    auto u = static_cast<uint8_t>(c);
    return u >= 'A' && u <= 'Z' ? u + 32u : uint32_t{u};
  };
  auto digit = [](uint32_t c) { return c >= '0' && c <= '9'; };
  for (std::string_view l : lines) {
    for (size_t i = 2; i < l.size(); ++i) {
      uint32_t a = fold(l[i - 2]), b = fold(l[i - 1]), c = fold(l[i]);
      if (!(digit(a) && digit(b) && digit(c))) keys.insert(a << 16 | b << 8 | c);
    }
  }
  uint32_t m = std::max<uint32_t>(64, static_cast<uint32_t>(keys.size()) * 8);
  m = (m + 7) & ~7u;
  std::string out;
  PutFixed32(&out, m);
  out.push_back(3);
  std::string bits(m / 8, '\0');
  for (uint32_t t : keys) {
    uint64_t x = t + 0x9e3779b97f4a7c15ull;  // splitmix64
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    uint32_t h1 = static_cast<uint32_t>(x), h2 = static_cast<uint32_t>(x >> 32) | 1;
    for (uint32_t i = 0; i < 3; ++i) {
      uint32_t bit = static_cast<uint32_t>((uint64_t{h1 + i * h2} * m) >> 32);
      bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
    }
  }
  return out + bits;
}

TEST(LogStoreFormat1, SpecWriterMatchesTheFormat1Collector) {
  // The bytes the format-1 collector wrote for these lines (format_test.cc).
  const std::string v1(
      "\xa0\x01\x00\x00\x03\xc2\x72\x48\x30\x84\x20\x49\x44\x05\x84\x04\x5c\x36\x18\x0a\x08"
      "\xb0\x41\x01\x03\x22\x98\xc7\x41\xe4\x24\x42\x98\xe6\xc4\x54\xc8\x84\x26\x62\x42\x92"
      "\x4c\x84\x48\xc0\x25\x04\x4a\x00\x11\x14\x15\x45\xe1\x61\x02",
      57);
  EXPECT_EQ(
      Format1Filter({"step 200123 Saved checkpoint-200100 to /ckpt/run-27", "loss=0.25 KB_X"}), v1);
}

// Counters in many blocks: a `|=` with digits reads only the blocks that can
// hold it and finds what a brute-force scan finds, before and after half of
// the blocks' filters are replaced by format-1 filters (a store written
// before digit-run keys), which can still skip on trigrams only.
TEST_F(LogStoreTest, DigitPatternsSkipBlocksAndFormat1FiltersStillWork) {
  options_.block_max_lines = 50;
  Reopen();
  std::mt19937 rng(1828);
  std::vector<std::string> all;
  uint64_t next_offset = 0;
  int step = 199950;
  for (int b = 0; b < 40; ++b) {
    std::vector<Rec> recs;
    for (int i = 0; i < 50; ++i) {
      std::string l;
      switch (rng() % 4) {
        case 0:
          l = "Saving checkpoint-" + std::to_string(step) + " to /ckpt/run-" +
              std::to_string(rng() % 100);
          break;
        case 1:
          l = "step=" + std::to_string(step) + " loss=" + std::to_string(rng() % 100000) + " GPU" +
              std::to_string(rng() % 8);
          break;
        case 2:
          l = std::to_string(rng()) + " Κόσμε id:" + std::to_string(rng() % 1000000);
          break;
        default:
          l = "epoch " + std::to_string(step / 1000) + " at " + std::to_string(step * 37);
      }
      if (b == 21 && i == 7) l = "needle in block 21";
      step += 1 + static_cast<int>(rng() % 3);
      recs.push_back({kT0 + static_cast<int64_t>(all.size()) * kSec, LogLevel::kInfo, l});
      all.push_back(l);
    }
    auto s = MakeStream("s", {{"job", "c"}}, next_offset, recs);
    next_offset = s.end_offset;
    ASSERT_TRUE(store_->Append("n1", MakeBatch({s})).ok());
    ASSERT_TRUE(store_->Maintain().ok());
  }
  ASSERT_EQ(store_->Stats().blocks, 40u);
  std::vector<std::string> patterns = {
      "checkpoint-2001", "CHECKPOINT-2001", "t-20", "=20010", "p=2000", "1828", "id:",
      "0 to /",          "needle"};
  for (int t = 0; t < 150; ++t) {
    const std::string& l = all[rng() % all.size()];
    size_t a = rng() % l.size();
    patterns.push_back(l.substr(a, 1 + rng() % std::min<size_t>(16, l.size() - a)));
  }
  auto check_all = [&] {
    for (const auto& pat : patterns) ExpectContainsLikeBruteForce(all, pat);
  };
  check_all();
  // One checkpoint line: its trigrams are in nearly every block, its digits
  // in one or two.
  std::string ckpt;
  for (const auto& l : all) {
    if (l.rfind("Saving checkpoint-2006", 0) == 0) ckpt = l.substr(7, 17);
  }
  ASSERT_FALSE(ckpt.empty());
  LogQuery q;
  q.filters = {{FilterType::kContains, ckpt}};
  QueryResult r = Q(q);
  EXPECT_EQ(r.entries.size(), 1u) << ckpt;
  EXPECT_LE(r.blocks_scanned, 2u) << ckpt;
  EXPECT_GE(r.blocks_skipped, 38u) << ckpt;

  // Rewrite the filters of the even blocks as format 1.
  ASSERT_TRUE(store_->Close().ok());
  store_.reset();
  int rewritten = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    std::string name = e.path().filename().string();
    if (ParsePartitionFileName(name) < 0) continue;
    auto db = store::SqliteDb::Open(e.path().string());
    ASSERT_TRUE(db.ok());
    std::vector<std::pair<int64_t, std::string>> filters;
    {
      auto sel = (*db)->Prepare("SELECT id, data FROM blocks WHERE id % 2 = 0");
      ASSERT_TRUE(sel.ok());
      Status st;
      while (sel->Step(&st)) {
        DecodedBlock block;
        ASSERT_TRUE(DecodeBlock(sel->ColumnBlob(1), &block).ok());
        std::vector<std::string_view> lines;
        for (size_t i = 0; i < block.size(); ++i) lines.push_back(block.line(i));
        filters.emplace_back(sel->ColumnInt64(0), Format1Filter(lines));
      }
      ASSERT_TRUE(st.ok());
    }
    for (const auto& [id, f] : filters) {
      auto up = (*db)->Prepare("UPDATE blocks SET filter = ? WHERE id = ?");
      ASSERT_TRUE(up.ok());
      up->BindBlob(1, f);
      up->BindInt64(2, id);
      ASSERT_TRUE(up->Run().ok());
      ++rewritten;
    }
  }
  ASSERT_EQ(rewritten, 20);
  Reopen();
  check_all();
  r = Q(q);
  EXPECT_EQ(r.entries.size(), 1u) << ckpt;
  EXPECT_GE(r.blocks_skipped, 19u) << ckpt;            // the format-2 blocks, at least
  q.filters = {{FilterType::kContains, "needle in"}};  // no digits: every format skips it
  r = Q(q);
  EXPECT_EQ(r.entries.size(), 1u);
  EXPECT_LE(r.blocks_scanned, 2u);
}

// Many blocks are scanned on several threads and merged in order: every
// limit, direction and filter must give what a serial scan gives.
TEST_F(LogStoreTest, ParallelBlockScanEqualsASerialScan) {
  options_.block_max_lines = 16;
  Reopen();
  AppendNumbered("s", {{"job", "a"}}, 40 * 16);  // errors every third line
  ASSERT_TRUE(store_->Maintain().ok());
  ASSERT_EQ(store_->Stats().blocks, 40u);
  const int n = 40 * 16;
  for (const std::string pat : {"", "line", "7", "line 63"}) {
    std::vector<std::string> match;  // oldest first
    for (int i = 0; i < n; ++i) {
      std::string l = "line " + std::to_string(i);
      if (l.find(pat) != std::string::npos) match.push_back(l);
    }
    for (bool forward : {true, false}) {
      for (size_t limit : {1, 7, 100, 5000}) {
        LogQuery q;
        q.forward = forward;
        q.limit = limit;
        if (!pat.empty()) q.filters = {{FilterType::kContains, pat}};
        std::vector<std::string> want = match;
        if (!forward) std::reverse(want.begin(), want.end());
        bool truncated = want.size() > limit;
        if (truncated) want.resize(limit);
        QueryResult r = Q(q);
        EXPECT_EQ(Lines(r.entries), want) << pat << " " << forward << " " << limit;
        EXPECT_EQ(r.truncated, truncated) << pat << " " << forward << " " << limit;
      }
    }
    LogQuery q;
    if (!pat.empty()) q.filters = {{FilterType::kContains, pat}};
    auto h = store_->Histogram(q, 10 * kSec);
    ASSERT_TRUE(h.ok());
    uint64_t total = 0;
    for (const auto& b : h->buckets) {
      for (uint64_t c : b) total += c;
    }
    EXPECT_EQ(total, match.size()) << pat;
  }
}

TEST_F(LogStoreTest, RetentionDeletesOldDays) {
  options_.retention_days = 2;
  Reopen();
  int64_t day_ns = int64_t{86400} * kSec;
  ASSERT_TRUE(
      store_
          ->Append("n1", MakeBatch({MakeStream("s", {{"job", "a"}}, 0,
                                               {{kT0 - 5 * day_ns, LogLevel::kInfo, "old"},
                                                {kT0 - 5 * day_ns + 1, LogLevel::kInfo, "old2"}})}))
          .ok());
  ASSERT_TRUE(store_->Close().ok());  // cut into the old day's partition
  Reopen();
  ASSERT_TRUE(store_
                  ->Append("n1", MakeBatch({MakeStream("s", {{"job", "a"}}, 9,
                                                       {{kT0, LogLevel::kInfo, "new"}})}))
                  .ok());
  ASSERT_TRUE(store_->Close().ok());
  Reopen();
  std::string old_file = dir_.Join("2025-11-25.db");
  // Retention ran in Close's Maintain, before reopening.
  EXPECT_FALSE(std::filesystem::exists(old_file));
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("2025-11-30.db")));
  LogQuery q;
  EXPECT_EQ(Lines(Q(q).entries), (std::vector<std::string>{"new"}));
  EXPECT_EQ(store_->Stats().blocks, 1u);
}

TEST_F(LogStoreTest, BackgroundMaintenanceCutsByAge) {
  options_.background_maintenance = true;
  options_.block_max_age_ms = 0;
  Reopen();
  AppendNumbered("s", {{"job", "a"}}, 3);
  for (int i = 0; i < 100 && store_->Stats().blocks == 0; ++i) Env::Default()->SleepMillis(50);
  EXPECT_EQ(store_->Stats().blocks, 1u);
  EXPECT_EQ(store_->Stats().head_lines, 0u);
  LogQuery q;
  EXPECT_EQ(Q(q).entries.size(), 3u);
  EXPECT_GT(store_->Stats().disk_bytes, 0u);
}

TEST_F(LogStoreTest, ConcurrentAppendsQueriesAndMaintenance) {
  options_.background_maintenance = true;
  options_.block_max_age_ms = 0;
  options_.block_max_lines = 16;
  Reopen();
  constexpr int kThreads = 4, kBatches = 60, kPerBatch = 5;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t off = 0;
      for (int b = 0; b < kBatches; ++b) {
        std::vector<Rec> recs;
        for (int i = 0; i < kPerBatch; ++i) {
          recs.push_back({kT0 + (b * kPerBatch + i) * kSec, LogLevel::kInfo,
                          "t" + std::to_string(t) + " n" + std::to_string(b * kPerBatch + i)});
        }
        auto s = MakeStream("src" + std::to_string(t), {{"t", std::to_string(t)}}, off, recs);
        off = s.end_offset;
        EXPECT_TRUE(store_->Append("n1", MakeBatch({s})).ok());
        if (b % 10 == 0) {
          EXPECT_TRUE(store_->Append("n1", MakeBatch({s})).ok());  // a retry
        }
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread reader([&] {
    uint64_t cursor = 0;
    size_t tailed = 0;
    while (!done) {
      LogQuery q;
      q.filters = {{FilterType::kContains, "n1"}};
      EXPECT_TRUE(store_->Query(q).ok());
      auto r = store_->Since(LogQuery{}, cursor);
      ASSERT_TRUE(r.ok());
      for (const auto& e : *r) {
        EXPECT_GT(e.seq, cursor);
        cursor = e.seq;
      }
      tailed += r->size();
    }
    EXPECT_LE(tailed, static_cast<size_t>(kThreads * kBatches * kPerBatch));
  });
  for (auto& t : threads) t.join();
  done = true;
  reader.join();
  LogQuery q;
  q.limit = kMaxQueryLimit;
  EXPECT_EQ(Q(q).entries.size(), static_cast<size_t>(kThreads * kBatches * kPerBatch));
  EXPECT_EQ(store_->LastSeq(), static_cast<uint64_t>(kThreads * kBatches * kPerBatch));
  Reopen();
  EXPECT_EQ(Q(q).entries.size(), static_cast<size_t>(kThreads * kBatches * kPerBatch));
  EXPECT_EQ(store_->Stats().lines, static_cast<uint64_t>(kThreads * kBatches * kPerBatch));
}

TEST_F(LogStoreTest, ManyBlocksInOneRoundAreEncodedInParallel) {
  AppendNumbered("s1", {{"job", "a"}}, 100);
  AppendNumbered("s2", {{"job", "b"}}, 60);
  ASSERT_TRUE(store_->Maintain().ok());  // 25 + 15 blocks in one round
  EXPECT_EQ(store_->Stats().blocks, 40u);
  EXPECT_EQ(store_->Stats().head_lines, 0u);
  LogQuery q;
  q.forward = true;
  q.matchers = {{MatchType::kEqual, "job", "a"}};
  auto r = Q(q);
  ASSERT_EQ(r.entries.size(), 100u);
  for (size_t i = 0; i < r.entries.size(); ++i) {
    EXPECT_EQ(r.entries[i].line, "line " + std::to_string(i));
    EXPECT_EQ(r.entries[i].ref.line_no, i);
  }
  q.filters = {{FilterType::kContains, "line 57"}};
  r = Q(q);
  EXPECT_EQ(Lines(r.entries), (std::vector<std::string>{"line 57"}));
  EXPECT_GT(r.blocks_skipped, 20u);
}

TEST_F(LogStoreTest, ClosedStoreRefusesAppends) {
  ASSERT_TRUE(store_->Close().ok());
  ASSERT_TRUE(store_->Close().ok());
  EXPECT_FALSE(store_->Append("n1", MakeBatch({})).ok());
}

}  // namespace
}  // namespace vigil::logstore

namespace vigil::logstore {
namespace {

// A backlog waits in the agent's files, not in the store's memory: past
// max_head_bytes, Append cuts blocks itself before acknowledging.
TEST(LogStoreMemoryTest, HeadsStayUnderTheCapWithoutBackgroundMaintenance) {
  TempDir dir;
  testing::FakeClockEnv env;
  Options o = testing::TestOptions(dir.path(), &env);
  o.block_max_lines = 100000;  // size alone would never cut
  o.block_max_bytes = 64u << 20;
  o.max_head_bytes = 256u << 10;  // 256 KiB
  auto store = LogStore::Open(o);
  ASSERT_TRUE(store.ok());
  std::string text(200, 'x');
  uint64_t off = 0;
  for (int b = 0; b < 40; ++b) {  // 40 batches of 100 lines of ~200 bytes: ~800 KiB
    std::vector<testing::Rec> recs;
    for (int i = 0; i < 100; ++i) {
      recs.push_back({testing::kT0 + (b * 100 + i) * testing::kSec, wire::LogLevel::kInfo,
                      text + std::to_string(b * 100 + i)});
    }
    auto s = testing::MakeStream("src", {{"job", std::to_string(b % 4)}}, off, recs);
    off = s.end_offset;
    ASSERT_TRUE((*store)->Append("n1", testing::MakeBatch({s})).ok());
    EXPECT_LE((*store)->Stats().head_bytes, o.max_head_bytes) << "after batch " << b;
  }
  LogStoreStats st = (*store)->Stats();
  EXPECT_EQ(st.lines, 4000u);
  EXPECT_GT(st.blocks, 0u);
  LogQuery q;
  q.limit = 5000;
  auto all = (*store)->Query(q);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->entries.size(), 4000u);
  ASSERT_TRUE((*store)->Close().ok());
}

}  // namespace
}  // namespace vigil::logstore
