// Encodings of the log store: WAL records and frames (torn tails), blocks,
// the trigram token filter (never a false "absent"), partition names.
#include "store/logs/format.h"

#include <gtest/gtest.h>

#include <random>

#include "core/coding.h"
#include "core/temp_dir.h"
#include "store/logs/wal.h"

namespace vigil::logstore {
namespace {

TEST(LogStoreFormat, PartitionNames) {
  EXPECT_EQ(PartitionFileName(0), "1970-01-01.db");
  int64_t day = DayOf(int64_t{1764460800} * 1000000000);  // 2025-11-30T00:00:00Z
  EXPECT_EQ(PartitionFileName(day), "2025-11-30.db");
  EXPECT_EQ(ParsePartitionFileName("2025-11-30.db"), day);
  EXPECT_EQ(ParsePartitionFileName("2025-02-30.db"), -1);
  EXPECT_EQ(ParsePartitionFileName("catalog.db"), -1);
  EXPECT_EQ(ParsePartitionFileName("2025-11-30.db-wal"), -1);
  EXPECT_EQ(DayOf(-5), 0);
}

TEST(LogStoreFormat, WalRecordsRoundTrip) {
  std::string body;
  wire::Labels labels = {{"job", "train"}, {"node", "n1"}};
  EncodeStreamRecord(&body, 7, labels);
  WalRecord rec;
  ASSERT_TRUE(DecodeWalRecord(body, &rec).ok());
  EXPECT_EQ(rec.type, WalRecordType::kStream);
  EXPECT_EQ(rec.stream_id, 7u);
  EXPECT_EQ(rec.labels, labels);

  body.clear();
  WalLinesRecord r;
  r.stream_id = 3;
  r.node = "n1";
  r.source_id = "file:1";
  r.end_offset = 999;
  r.counters.sampled_lines = 4;
  r.duplicates = 2;
  r.first_line_no = 10;
  r.first_seq = 100;
  EncodeLinesHeader(&body, r, 2);
  AddWalLine(&body, -5, 5, 3, "hello");
  AddWalLine(&body, 123456789, 0, 0, "");
  ASSERT_TRUE(DecodeWalRecord(body, &rec).ok());
  ASSERT_EQ(rec.type, WalRecordType::kLines);
  EXPECT_EQ(rec.lines.stream_id, 3u);
  EXPECT_EQ(rec.lines.node, "n1");
  EXPECT_EQ(rec.lines.source_id, "file:1");
  EXPECT_EQ(rec.lines.end_offset, 999u);
  EXPECT_EQ(rec.lines.counters.sampled_lines, 4u);
  EXPECT_EQ(rec.lines.duplicates, 2u);
  EXPECT_EQ(rec.lines.first_line_no, 10u);
  EXPECT_EQ(rec.lines.first_seq, 100u);
  ASSERT_EQ(rec.lines.lines.size(), 2u);
  EXPECT_EQ(rec.lines.lines[0].time_ns, -5);
  EXPECT_EQ(rec.lines.lines[0].level, 5);
  EXPECT_EQ(rec.lines.lines[0].flags, 3);
  EXPECT_EQ(rec.lines.lines[0].text, "hello");
  EXPECT_EQ(rec.lines.lines[1].text, "");
  // Every truncation of a valid record is rejected, never a crash.
  for (size_t n = 0; n < body.size(); ++n) {
    EXPECT_FALSE(DecodeWalRecord(body.substr(0, n), &rec).ok()) << n;
  }
}

TEST(LogStoreFormat, WalTornTailIsCutAndReplayGoesOn) {
  TempDir dir;
  Env* env = Env::Default();
  std::string wal_dir = dir.Join("wal");
  ASSERT_TRUE(env->CreateDirs(wal_dir).ok());
  auto w = OpenWalWriter(env, wal_dir, 1);
  ASSERT_TRUE(w.ok());
  std::string frames;
  for (int i = 0; i < 3; ++i) {
    std::string body;
    EncodeStreamRecord(&body, static_cast<uint64_t>(i + 1), {{"n", std::to_string(i)}});
    AppendWalFrame(&frames, body);
  }
  ASSERT_TRUE((*w)->Write(frames).ok());
  ASSERT_TRUE((*w)->Close().ok());
  // Tear the last frame.
  std::string path = WalSegmentPath(wal_dir, 1);
  auto data = env->ReadFile(path, 1 << 20);
  ASSERT_TRUE(data.ok());
  ASSERT_TRUE(env->WriteFileAtomic(path, data->substr(0, data->size() - 3)).ok());
  std::vector<uint64_t> ids;
  auto stats = ReplayWal(env, wal_dir, [&](uint64_t, std::string_view body) {
    WalRecord r;
    EXPECT_TRUE(DecodeWalRecord(body, &r).ok());
    ids.push_back(r.stream_id);
    return Status::Ok();
  });
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(stats->torn_segments, 1u);
  // The tail is gone from the file: a second replay is clean.
  ids.clear();
  stats = ReplayWal(env, wal_dir, [&](uint64_t, std::string_view) {
    ids.push_back(0);
    return Status::Ok();
  });
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(stats->torn_segments, 0u);
}

TEST(LogStoreFormat, BlockRoundTrip) {
  std::vector<std::string> texts = {"first line", "", "ERROR: CUDA out of memory", "x\ny"};
  std::vector<BlockLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    lines.push_back({1000 - static_cast<int64_t>(i) * 7, 50 + i * 3, static_cast<uint8_t>(i),
                     static_cast<uint8_t>(i % 2), texts[i]});
  }
  BlockHeader h;
  std::string data = EncodeBlock(lines, &h);
  EXPECT_EQ(h.min_time, 1000 - 21);
  EXPECT_EQ(h.max_time, 1000);
  EXPECT_EQ(h.min_seq, 50u);
  EXPECT_EQ(h.max_seq, 59u);
  EXPECT_EQ(h.level_counts[2], 1u);
  DecodedBlock b;
  ASSERT_TRUE(DecodeBlock(data, &b).ok());
  ASSERT_EQ(b.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(b.line(i), texts[i]);
    EXPECT_EQ(b.times[i], lines[i].time_ns);
    EXPECT_EQ(b.seqs[i], lines[i].seq);
    EXPECT_EQ(b.meta[i] & 0x0f, lines[i].level);
    EXPECT_EQ(b.meta[i] >> 4, lines[i].flags);
  }
  // Damaged blocks fail cleanly.
  for (size_t n = 0; n < data.size(); ++n) {
    EXPECT_FALSE(DecodeBlock(std::string_view(data).substr(0, n), &b).ok());
  }
  std::mt19937 rng(1);
  for (int i = 0; i < 200; ++i) {
    std::string bad = data;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    (void)DecodeBlock(bad, &b);  // must not crash
  }
}

TEST(LogStoreFormat, TrigramFilterHasNoFalseNegatives) {
  std::mt19937 rng(42);
  const std::string alphabet = "abcdefgABCDEFG0123 _-:./";
  TrigramCollector collector;
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> lines;
    for (int i = 0; i < 300; ++i) {
      std::string l;
      size_t n = rng() % 60;
      for (size_t j = 0; j < n; ++j) l.push_back(alphabet[rng() % alphabet.size()]);
      lines.push_back(l);
      collector.Add(l);
    }
    std::string filter = collector.Build();
    for (int q = 0; q < 300; ++q) {
      const std::string& l = lines[rng() % lines.size()];
      if (l.size() < 3) continue;
      size_t a = rng() % (l.size() - 2), len = 3 + rng() % (l.size() - a - 2);
      std::string pat = l.substr(a, len);
      // Case folding: an upper-cased pattern must also pass.
      for (char& c : pat) {
        if (rng() % 2 && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      }
      EXPECT_TRUE(FilterMayContain(filter, PatternTrigrams(pat))) << pat;
    }
  }
  // And it rules things out.
  collector.Add("the quick brown fox jumps over the lazy dog");
  std::string filter = collector.Build();
  EXPECT_FALSE(FilterMayContain(filter, PatternTrigrams("zyxwvut-never-there")));
  EXPECT_TRUE(FilterMayContain(filter, PatternTrigrams("QUICK")));
  EXPECT_TRUE(FilterMayContain("garbage", PatternTrigrams("anything")));
  EXPECT_TRUE(PatternTrigrams("ab").empty());
}

TEST(LogStoreFormat, DigitOnlyTrigramsAreNotKeys) {
  // Every block of a numeric log holds them all, so they are left out of
  // filters and patterns alike; the trigrams around the digits still count.
  EXPECT_TRUE(PatternTrigrams("271828").empty());
  auto fold = [](const char* s) {
    return (uint32_t{static_cast<uint8_t>(s[0])} << 16) |
           (uint32_t{static_cast<uint8_t>(s[1])} << 8) | static_cast<uint8_t>(s[2]);
  };
  std::vector<uint32_t> t = PatternTrigrams("t-2718");
  EXPECT_EQ(t.size(), 2u);  // "t-2", "-27"
  EXPECT_TRUE(std::binary_search(t.begin(), t.end(), fold("t-2")));
  EXPECT_TRUE(std::binary_search(t.begin(), t.end(), fold("-27")));

  TrigramCollector collector;
  collector.Add("step 123456 done");
  std::string filter = collector.Build();
  EXPECT_TRUE(FilterMayContain(filter, PatternTrigrams("p 1234")));
  EXPECT_TRUE(FilterMayContain(filter, PatternTrigrams("999999")));  // nothing to rule out with
  EXPECT_FALSE(FilterMayContain(filter, PatternTrigrams("x 1234")));
}

}  // namespace
}  // namespace vigil::logstore
