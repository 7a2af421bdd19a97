// Encodings of the log store: WAL records and frames (torn tails), blocks,
// the token filter (never a false "absent", digit-run keys, format 1 filters
// still read), partition names.
#include "store/logs/format.h"

#include <gtest/gtest.h>
#include <zstd.h>

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

TEST(LogStoreFormat, LostBytesTakeRecordType3AndType2StaysAsItWas) {
  WalLinesRecord r;
  r.stream_id = 3;
  r.node = "n1";
  r.source_id = "file:1#lost";
  r.end_offset = 4396;
  r.counters = {4, 0, 1, 0};
  // Without lost bytes: type 2, byte for byte the layout older stores wrote
  // (and read: a WAL without losses stays readable by them).
  std::string old_layout(1, '\x02');
  PutVarint64(&old_layout, 3);
  PutLengthPrefixed(&old_layout, "n1");
  PutLengthPrefixed(&old_layout, "file:1#lost");
  for (uint64_t v : {4396, 4, 0, 1, 0, 0}) PutVarint64(&old_layout, v);  // ..., dups, n
  std::string body;
  EncodeLinesHeader(&body, r, 0);
  EXPECT_EQ(body, old_layout);
  WalRecord rec;
  rec.lines.counters.lost_bytes = 99;  // a reused record must not keep it
  ASSERT_TRUE(DecodeWalRecord(old_layout, &rec).ok());
  EXPECT_EQ(rec.type, WalRecordType::kLines);
  EXPECT_EQ(rec.lines.counters, (wire::LogSourceCounters{4, 0, 1, 0}));
  EXPECT_EQ(rec.lines.end_offset, 4396u);

  r.counters.lost_bytes = 4096;
  body.clear();
  EncodeLinesHeader(&body, r, 1);
  AddWalLine(&body, 7, 3, 0, "x");
  EXPECT_EQ(body[0], 3);
  ASSERT_TRUE(DecodeWalRecord(body, &rec).ok());
  EXPECT_EQ(rec.type, WalRecordType::kLines);
  EXPECT_EQ(rec.lines.counters, (wire::LogSourceCounters{4, 0, 1, 4096}));
  EXPECT_EQ(rec.lines.end_offset, 4396u);
  EXPECT_EQ(rec.lines.duplicates, 0u);
  ASSERT_EQ(rec.lines.lines.size(), 1u);
  EXPECT_EQ(rec.lines.lines[0].text, "x");
  for (size_t n = 0; n < body.size(); ++n) {
    EXPECT_FALSE(DecodeWalRecord(body.substr(0, n), &rec).ok()) << n;
  }
  body[0] = 4;  // an unknown type is refused
  EXPECT_FALSE(DecodeWalRecord(body, &rec).ok());
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

// Texts where the digit split has edges: digits and '0's at every offset of
// the 16-byte loads, lines of only digits or none, non-ASCII bytes, a
// skeleton byte '0' that was a real '0'.
std::vector<std::string> DigitHeavyTexts() {
  std::mt19937 rng(7);
  std::vector<std::string> texts = {"",
                                    "0",
                                    "9",
                                    "00000000000000000000000000000000000",
                                    "no digits at all, none",
                                    "\xff\xfe\x30\x39\xc3\xa9 \x00 7"};
  const std::string alphabet = "0123456789000abcXYZ .:-\n\xe4\xb8\xad";
  for (int i = 0; i < 300; ++i) {
    std::string t;
    size_t n = rng() % 70;
    for (size_t j = 0; j < n; ++j) t.push_back(alphabet[rng() % alphabet.size()]);
    texts.push_back(t);
  }
  return texts;
}

std::vector<BlockLine> LinesOf(const std::vector<std::string>& texts) {
  std::vector<BlockLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    lines.push_back({static_cast<int64_t>(i) * 1000, i, static_cast<uint8_t>(i % 7), 0, texts[i]});
  }
  return lines;
}

TEST(LogStoreFormat, DigitsApartRoundTrip) {
  const std::vector<std::string> texts = DigitHeavyTexts();
  BlockHeader h;
  BlockEncoder encoder;  // reused: each block stands alone
  for (int round = 0; round < 3; ++round) {
    std::string filter;
    std::string data = encoder.Encode(LinesOf(texts), &h, round == 1 ? &filter : nullptr);
    EXPECT_EQ(static_cast<uint8_t>(data[0]), kBlockFormatDigitsApart);
    auto parts = SplitBlock(data);
    ASSERT_TRUE(parts.ok()) << parts.status().ToString();
    ASSERT_EQ(parts->frames.size(), 2u);  // the payload, the digits
    DecodedBlock b;
    ASSERT_TRUE(DecodeBlock(data, &b).ok());
    ASSERT_EQ(b.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) ASSERT_EQ(b.line(i), texts[i]) << i;
    EXPECT_EQ(filter.empty(), round != 1);
  }
  // A block without digits has no digits frame.
  std::vector<std::string> plain = {"alpha", "beta", "", "gamma delta"};
  std::string data = EncodeBlock(LinesOf(plain), &h);
  auto parts = SplitBlock(data);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->frames.size(), 1u);
  DecodedBlock b;
  ASSERT_TRUE(DecodeBlock(data, &b).ok());
  EXPECT_EQ(b.line(3), "gamma delta");
}

TEST(LogStoreFormat, DigitsThatDoNotFitTheTextAreCorruption) {
  std::vector<std::string> texts = {"step 12 loss 0.5", "step 13 loss 0.25"};
  BlockHeader h;
  std::string data = EncodeBlock(LinesOf(texts), &h);
  auto parts = SplitBlock(data);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->frames.size(), 2u);
  // The same blob with a digits frame one digit short, and one digit long.
  for (std::string digits : {"120513025", "12051302", "1205130250"}) {
    std::string blob(1, static_cast<char>(kBlockFormatDigitsApart));
    PutVarint64(&blob, parts->frames[0].raw_size);
    PutVarint64(&blob, digits.size());
    blob.append(parts->frames[0].data);
    std::string frame(ZSTD_compressBound(digits.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), digits.data(), digits.size(), 1));
    blob += frame;
    DecodedBlock b;
    Status st = DecodeBlock(blob, &b);
    if (digits == "120513025") {
      ASSERT_TRUE(st.ok()) << st.ToString();  // the real digits: the control
      EXPECT_EQ(b.line(1), texts[1]);
    } else {
      EXPECT_FALSE(st.ok());
    }
  }
  // A format-2 header with a digit count but no digits frame.
  std::string cut(1, static_cast<char>(kBlockFormatDigitsApart));
  PutVarint64(&cut, parts->frames[0].raw_size);
  PutVarint64(&cut, 9);
  cut.append(parts->frames[0].data);
  DecodedBlock b;
  EXPECT_FALSE(DecodeBlock(cut, &b).ok());
  EXPECT_FALSE(SplitBlock(std::string(1, 9)).ok());  // unknown format
}

// A format-2 blob around a payload and digits given as they are.
std::string DigitsApartBlob(const std::string& payload, const std::string& digits) {
  std::string blob(1, static_cast<char>(kBlockFormatDigitsApart));
  PutVarint64(&blob, payload.size());
  PutVarint64(&blob, digits.size());
  for (const std::string* part : {&payload, &digits}) {
    if (part->empty() && part == &digits) break;
    std::string frame(ZSTD_compressBound(part->size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), part->data(), part->size(), 1));
    blob += frame;
  }
  return blob;
}

// Payloads whose line ends do not add up fail as Corruption.
TEST(LogStoreFormat, BadLineEndsAreCorruption) {
  // Columns of two lines (times 0, 0; levels 0; seqs 0, 0), then `rest`.
  auto payload = [](std::string rest) {
    return std::string("\x02\x00\x00\x00\x00\x00\x00", 7) + rest;
  };
  DecodedBlock b;
  // The control: no multi-line record, "a0" + "b".
  ASSERT_TRUE(
      DecodeBlock(DigitsApartBlob(payload(std::string("\x00", 1) + "a0\nb\n"), "7"), &b).ok());
  EXPECT_EQ(b.line(0), "a7");
  EXPECT_EQ(b.line(1), "b");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {std::string("\x00", 1) + "a0\nb", "7"},            // the last line has no end
      {std::string("\x00", 1) + "a0\nb\nc\n", "7"},       // a line too many
      {std::string("\x00", 1) + "a0\n", "7"},             // a line short
      {std::string("\x00", 1) + "a0\nb\n", ""},           // a digit short
      {std::string("\x03", 1) + "a0\nb\n", "7"},          // more multi-line records than lines
      {std::string("\x01\x00\x05", 3) + "a0\nb\n", "7"},  // a given length past a line end
      {std::string("\x01\x00\x09", 3) + "a0\nb\n", "7"},  // ... past the text
      {std::string("\x01\x05\x01", 3) + "a0\nb\n", "7"},  // a line index past the lines
  };
  for (const auto& [rest, digits] : bad) {
    EXPECT_FALSE(DecodeBlock(DigitsApartBlob(payload(rest), digits), &b).ok()) << rest;
  }
  // A given length that spans a '\n' of its line is how multi-line records read.
  ASSERT_TRUE(
      DecodeBlock(DigitsApartBlob(payload(std::string("\x01\x00\x04", 3) + "a\n0b\nc\n"), "7"), &b)
          .ok());
  EXPECT_EQ(b.line(0), "a\n7b");
  EXPECT_EQ(b.line(1), "c");
}

// Blocks written before the digit split (format 1, one frame) still read.
TEST(LogStoreFormat, ReadsFormat1Blocks) {
  const std::vector<std::string> texts = DigitHeavyTexts();
  // The format-1 payload: n, time deltas, meta, seq deltas, lengths, texts.
  std::string payload;
  PutVarint64(&payload, texts.size());
  for (size_t i = 0; i < texts.size(); ++i) PutVarsint64(&payload, i == 0 ? 0 : 1000);
  for (size_t i = 0; i < texts.size(); ++i) payload.push_back(static_cast<char>(i % 7));
  for (size_t i = 0; i < texts.size(); ++i) PutVarint64(&payload, i == 0 ? 0 : 1);
  for (const auto& t : texts) PutVarint64(&payload, t.size());
  for (const auto& t : texts) payload += t;
  std::string blob(1, static_cast<char>(kBlockFormatSingleFrame));
  PutVarint64(&blob, payload.size());
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 1));
  blob += frame;
  DecodedBlock b;
  ASSERT_TRUE(DecodeBlock(blob, &b).ok());
  ASSERT_EQ(b.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(b.line(i), texts[i]);
    EXPECT_EQ(b.times[i], static_cast<int64_t>(i) * 1000);
    EXPECT_EQ(b.seqs[i], i);
    EXPECT_EQ(b.meta[i], i % 7);
  }
  auto parts = SplitBlock(blob);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->format, kBlockFormatSingleFrame);
  ASSERT_EQ(parts->frames.size(), 1u);
  EXPECT_EQ(parts->frames[0].raw_size, payload.size());
}

// The collector skips the trigram pass of a skeleton it has seen in the same
// block; what it saw in the block before must not count.
TEST(LogStoreFormat, SkeletonsSeenInAnEarlierBlockStillGetTrigrams) {
  TrigramCollector collector;
  collector.Add("Saving checkpoint 12 to /ckpt");
  collector.Add("Saving checkpoint 99 to /ckpt");  // same skeleton
  std::string first = collector.Build();
  collector.Add("Saving checkpoint 57 to /ckpt");
  std::string second = collector.Build();
  for (const std::string& f : {first, second}) {
    EXPECT_TRUE(FilterMayContain(f, PatternFilterKeys("Saving checkpoint")));
    EXPECT_TRUE(FilterMayContain(f, PatternFilterKeys("to /ckpt")));
    EXPECT_FALSE(FilterMayContain(f, PatternFilterKeys("checkpoint to")));
  }
  EXPECT_TRUE(FilterMayContain(first, PatternFilterKeys("checkpoint 99 to")));
  EXPECT_FALSE(FilterMayContain(first, PatternFilterKeys("checkpoint 5")));
  EXPECT_TRUE(FilterMayContain(second, PatternFilterKeys("checkpoint 5")));
  // Many distinct skeletons in one block (the table grows) and then few.
  std::vector<std::string> lines;
  for (int i = 0; i < 5000; ++i)
    lines.push_back("line-" + std::string(1, 'a' + i % 26) + "-" +
                    std::string(1, 'a' + i / 26 % 26) + "-" + std::string(1, 'a' + i / 676));
  for (const auto& l : lines) collector.Add(l);
  std::string big = collector.Build();
  for (const auto& l : lines) ASSERT_TRUE(FilterMayContain(big, PatternFilterKeys(l))) << l;
  collector.Add("tail");
  std::string small = collector.Build();
  EXPECT_TRUE(FilterMayContain(small, PatternFilterKeys("tail")));
  EXPECT_FALSE(FilterMayContain(small, PatternFilterKeys("line-")));
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
      EXPECT_TRUE(FilterMayContain(filter, PatternFilterKeys(pat))) << pat;
    }
  }
  // And it rules things out.
  collector.Add("the quick brown fox jumps over the lazy dog");
  std::string filter = collector.Build();
  EXPECT_FALSE(FilterMayContain(filter, PatternFilterKeys("zyxwvut-never-there")));
  EXPECT_TRUE(FilterMayContain(filter, PatternFilterKeys("QUICK")));
  EXPECT_TRUE(FilterMayContain("garbage", PatternFilterKeys("anything")));
  EXPECT_TRUE(PatternFilterKeys("ab").empty());
}

TEST(LogStoreFormat, DigitOnlyTrigramsAreNotKeys) {
  // Every block of a numeric log holds them all, so they are left out of
  // filters and patterns alike; the trigrams around the digits still count.
  EXPECT_TRUE(PatternFilterKeys("271828").empty());
  auto fold = [](const char* s) {
    return (uint32_t{static_cast<uint8_t>(s[0])} << 16) |
           (uint32_t{static_cast<uint8_t>(s[1])} << 8) | static_cast<uint8_t>(s[2]);
  };
  std::vector<uint32_t> t = PatternFilterKeys("t-2718").trigrams;
  EXPECT_EQ(t.size(), 2u);  // "t-2", "-27"
  EXPECT_TRUE(std::binary_search(t.begin(), t.end(), fold("t-2")));
  EXPECT_TRUE(std::binary_search(t.begin(), t.end(), fold("-27")));

  TrigramCollector collector;
  collector.Add("step 123456 done");
  std::string filter = collector.Build();
  EXPECT_TRUE(FilterMayContain(filter, PatternFilterKeys("p 1234")));
  EXPECT_TRUE(FilterMayContain(filter, PatternFilterKeys("999999")));  // nothing to rule out with
  EXPECT_FALSE(FilterMayContain(filter, PatternFilterKeys("x 1234")));
}

// Every substring of every line of a block, in any letter case, passes the
// block's filter. The lines are built to put digit runs where the collector
// has edges: at line starts and ends, across its 64-byte windows, longer
// than the 8 digits a key looks at, right after non-ASCII bytes, in lines
// too short for its 16-byte loads.
TEST(LogStoreFormat, DigitRunKeysNeverMissASubstring) {
  std::mt19937 rng(271828);
  auto digits = [&](size_t n) {
    std::string d;
    for (size_t i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + rng() % 10));
    return d;
  };
  const std::vector<std::string> words = {"checkpoint-", "Step=",  "RUN-", "κόσμε ", "\xff\xfe",
                                          " ",           "a",      "id:",  "-",      "x.",
                                          "Loss=0.",     "/ckpt/", "\t",   "e-"};
  TrigramCollector collector;
  for (int block = 0; block < 12; ++block) {
    std::vector<std::string> lines;
    uint64_t step = 200000 + rng() % 50000;
    for (int i = 0; i < 40; ++i) {
      std::string l;
      switch (rng() % 6) {
        case 0:  // a counter, as steps and checkpoints are
          l = "Saving checkpoint-" + std::to_string(step++) + " (shard 3 of 8)";
          break;
        case 1:  // a run that starts at the line start, or ends the line
          l = rng() % 2 ? digits(1 + rng() % 12) + " done" : "step " + digits(1 + rng() % 12);
          break;
        case 2: {  // a run across the 64-byte window edge, at every offset near it
          size_t at = 56 + rng() % 12;
          l = std::string(at - 2, 'p') + words[rng() % words.size()].substr(0, 2);
          l.resize(at, 'q');
          l += digits(1 + rng() % 20) + "x";
          break;
        }
        case 3:  // short lines
          l = words[rng() % words.size()].substr(0, 1 + rng() % 2) + digits(rng() % 5);
          break;
        default: {
          size_t n = 1 + rng() % 12;
          for (size_t j = 0; j < n; ++j) {
            l += words[rng() % words.size()];
            if (rng() % 2) l += digits(1 + rng() % 10);
          }
        }
      }
      lines.push_back(l);
      collector.Add(l);
    }
    std::string filter = collector.Build();
    for (const auto& l : lines) {
      for (size_t a = 0; a < l.size(); ++a) {
        for (size_t len = 1; len <= 20 && a + len <= l.size(); ++len) {
          std::string pat = l.substr(a, len);
          ASSERT_TRUE(FilterMayContain(filter, PatternFilterKeys(pat)))
              << "'" << pat << "' of '" << l << "'";
          for (char& c : pat) {
            if (c >= 'a' && c <= 'z' && rng() % 2) c = static_cast<char>(c - 32);
            if (c >= 'A' && c <= 'Z' && rng() % 2) c = static_cast<char>(c + 32);
          }
          ASSERT_TRUE(FilterMayContain(filter, PatternFilterKeys(pat)))
              << "'" << pat << "' of '" << l << "'";
        }
      }
    }
  }
}

TEST(LogStoreFormat, DigitRunKeysRuleOutOtherNumbers) {
  // Steps 200000..200199 in one block, and "-27" and "t-2" in it too: the
  // trigrams of checkpoint-271828 are all there, its digit prefixes are not.
  TrigramCollector collector;
  for (int s = 200000; s < 200200; ++s) {
    collector.Add("Saving model checkpoint to /ckpt/run-27/checkpoint-" + std::to_string(s));
  }
  std::string filter = collector.Build();
  auto may = [&](std::string_view p) { return FilterMayContain(filter, PatternFilterKeys(p)); };
  EXPECT_FALSE(may("checkpoint-271828"));
  EXPECT_FALSE(may("CHECKPOINT-271828"));
  EXPECT_FALSE(may("t-2718"));
  EXPECT_FALSE(may("checkpoint-2002"));  // prefixes 2000 and 2001 only
  EXPECT_TRUE(may("checkpoint-200123"));
  EXPECT_TRUE(may("Checkpoint-2001"));
  EXPECT_TRUE(may("t-200"));
  EXPECT_TRUE(may("run-27/"));
  // Patterns that cannot use a run: it starts the pattern (the bytes before
  // it are unknown), has fewer than 2 bytes before it, or has under 3 digits.
  EXPECT_TRUE(PatternFilterKeys("271828").digit_runs.empty());
  EXPECT_TRUE(PatternFilterKeys("-271828").digit_runs.empty());
  EXPECT_TRUE(PatternFilterKeys("t-27").digit_runs.empty());
  EXPECT_EQ(PatternFilterKeys("t-271").digit_runs.size(), 1u);
  EXPECT_EQ(PatternFilterKeys("t-271828").digit_runs.size(), 4u);      // 3..6 digits
  EXPECT_EQ(PatternFilterKeys("t-2718281828").digit_runs.size(), 6u);  // 3..8 digits
  EXPECT_EQ(PatternFilterKeys("T-271").digit_runs, PatternFilterKeys("t-271").digit_runs);
  EXPECT_TRUE(may("t-2"));  // too short to use its digits: never ruled out by them

  // The next block starts afresh: the same run is keyed again, others not.
  collector.Add("Saving model checkpoint to /ckpt/run-27/checkpoint-200199");
  filter = collector.Build();
  EXPECT_TRUE(may("checkpoint-200199"));
  EXPECT_FALSE(may("checkpoint-200000"));
}

TEST(LogStoreFormat, DigitRunsWithLeadingZerosAreOtherRuns) {
  // "0123" and "123" after the same bytes have digits of the same value but
  // other keys; a run repeated right after is not keyed again, a different
  // one is. Many contexts, so that no Bloom false positive hides a miss.
  TrigramCollector collector;
  std::vector<std::string> ctxs;
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b : std::string("=:-")) ctxs.push_back(std::string{a, b});
  }
  for (const auto& c : ctxs) {
    for (const char* run : {"0123", "123", "123", "01234", "0123"}) collector.Add(c + run + " x");
  }
  std::string filter = collector.Build();
  for (const auto& c : ctxs) {
    for (const char* run : {"0123", "123", "012", "01234"}) {
      EXPECT_TRUE(FilterMayContain(filter, PatternFilterKeys(c + run))) << c + run;
    }
  }
  EXPECT_FALSE(FilterMayContain(filter, PatternFilterKeys("id=124")));
}

TEST(LogStoreFormat, DigitRunGroupsSaturate) {
  // Random ids after the same two bytes: more than 16 distinct prefixes per
  // length turn into one "saturated" key per length, so the filter stays
  // small, and every id still passes.
  std::mt19937 rng(5);
  TrigramCollector collector;
  std::vector<std::string> lines;
  for (int i = 0; i < 2000; ++i) {
    lines.push_back("request id=" + std::to_string(10000000 + rng() % 90000000) + " ok");
    collector.Add(lines.back());
  }
  std::string filter = collector.Build();
  EXPECT_LT(filter.size(), 1000u);
  for (const auto& l : lines) {
    ASSERT_TRUE(FilterMayContain(filter, PatternFilterKeys(l.substr(5))));
    ASSERT_TRUE(FilterMayContain(filter, PatternFilterKeys("ID=" + l.substr(11, 4))));
  }
  EXPECT_FALSE(FilterMayContain(filter, PatternFilterKeys("xid=123")));  // trigram "xid"
}

TEST(LogStoreFormat, DigitKeyBudgetOverflowIsSafe) {
  // More distinct keys than a collector tracks (2^18): the rest of their
  // groups are stored as saturated, never dropped.
  TrigramCollector collector;
  std::vector<std::string> runs;
  for (int c = 0; c < 3200; ++c) {
    std::string ctx = {static_cast<char>('a' + c % 26), static_cast<char>(0x80 + c / 26)};
    for (int v = 0; v < 16; ++v) {
      runs.push_back(ctx + std::to_string(10000000 + c * 16 + v) + ";");
    }
  }
  for (size_t i = 0; i < runs.size(); i += 8) {
    std::string l;
    for (size_t j = i; j < std::min(runs.size(), i + 8); ++j) l += runs[j];
    collector.Add(l);
  }
  std::string filter = collector.Build();
  for (const auto& r : runs) ASSERT_TRUE(FilterMayContain(filter, PatternFilterKeys(r))) << r;
}

TEST(LogStoreFormat, ReadsOlderFilterFormats) {
  // Written by the format-1 collector (trigrams only; no format byte) for
  // the lines "step 200123 Saved checkpoint-200100 to /ckpt/run-27" and
  // "loss=0.25 KB_X".
  const std::string v1(
      "\xa0\x01\x00\x00\x03\xc2\x72\x48\x30\x84\x20\x49\x44\x05\x84\x04\x5c\x36\x18\x0a\x08"
      "\xb0\x41\x01\x03\x22\x98\xc7\x41\xe4\x24\x42\x98\xe6\xc4\x54\xc8\x84\x26\x62\x42\x92"
      "\x4c\x84\x48\xc0\x25\x04\x4a\x00\x11\x14\x15\x45\xe1\x61\x02",
      57);
  const std::vector<std::string> lines = {"step 200123 Saved checkpoint-200100 to /ckpt/run-27",
                                          "loss=0.25 KB_X"};
  for (const auto& l : lines) {
    for (size_t a = 0; a < l.size(); ++a) {
      for (size_t len = 1; a + len <= l.size(); ++len) {
        ASSERT_TRUE(FilterMayContain(v1, PatternFilterKeys(l.substr(a, len)))) << l.substr(a, len);
      }
    }
  }
  EXPECT_TRUE(FilterMayContain(v1, PatternFilterKeys("SAVED")));
  EXPECT_FALSE(FilterMayContain(v1, PatternFilterKeys("unsaved")));
  // Its trigrams "t-2" and "-27" are there; a format-1 filter has no digit
  // keys to rule the rest out with, a new filter of the same lines has.
  EXPECT_TRUE(FilterMayContain(v1, PatternFilterKeys("checkpoint-271828")));
  // The same lines' filter as format 2 wrote it (trigrams of the text, and
  // digit-run keys): a byte per digit-run key (3..6 digits after "p " and
  // after "t-") more, and the format byte.
  const std::string v2(
      "\xe0\x01\x00\x00\x83\x02\x82\x29\x21\x02\x83\x20\x10\x49\x18\x15\x20\xa8\x00\x27"
      "\x93\x30\x95\xc2\x00\x36\x90\x44\x01\x45\xe8\x2c\x3c\x08\x71\x16\x44\x50\x3a\x4b"
      "\x1b\x17\x64\x84\xcf\x08\x23\x24\x21\x63\x8a\x88\x00\x2b\x43\x40\x11\x00\x21\x48"
      "\x5c\x48\x24\x3c\x30\x01",
      66);
  EXPECT_EQ(v2.size(), v1.size() + 1 + 8);
  TrigramCollector collector;
  for (const auto& l : lines) collector.Add(l);
  const std::string v3 = collector.Build();
  EXPECT_EQ(static_cast<uint8_t>(v3[4]), 0x83);  // 0x80 | k: a format byte follows
  EXPECT_EQ(v3[5], 3);                           // format 3
  // Skeleton trigrams ("p 0", "t-0", "n-0", "=0.", ... instead of their
  // digits), and keys of the short runs too: "27" after "n-", "0" and "25"
  // after "=" and ".".
  for (const std::string* f : {&v2, &v3}) {
    for (const auto& l : lines) {
      for (size_t a = 0; a < l.size(); ++a) {
        for (size_t len = 1; a + len <= l.size(); ++len) {
          ASSERT_TRUE(FilterMayContain(*f, PatternFilterKeys(l.substr(a, len))))
              << l.substr(a, len);
        }
      }
    }
    EXPECT_FALSE(FilterMayContain(*f, PatternFilterKeys("checkpoint-271828")));
    EXPECT_TRUE(FilterMayContain(*f, PatternFilterKeys("checkpoint-2001")));
    EXPECT_FALSE(FilterMayContain(*f, PatternFilterKeys("unsaved")));
  }
  // Format 2 rules "run-99" out with the trigram "-99", format 3 with the
  // key ("n-", 1, "9") ("n-0" is in its skeleton trigrams).
  EXPECT_FALSE(FilterMayContain(v2, PatternFilterKeys("run-99")));
  EXPECT_FALSE(FilterMayContain(v3, PatternFilterKeys("run-99")));
  EXPECT_TRUE(FilterMayContain(v3, PatternFilterKeys("run-2")));
  // Damaged headers say "may contain".
  for (uint8_t format : {0, 1, 4, 9}) {
    std::string bad = v3;
    bad[5] = static_cast<char>(format);  // unknown format
    EXPECT_TRUE(FilterMayContain(bad, PatternFilterKeys("unsaved")));
  }
  EXPECT_TRUE(FilterMayContain(v2.substr(0, v2.size() - 1), PatternFilterKeys("unsaved")));
  EXPECT_TRUE(FilterMayContain(v3.substr(0, v3.size() - 1), PatternFilterKeys("unsaved")));
  EXPECT_TRUE(FilterMayContain(v1.substr(0, 4), PatternFilterKeys("unsaved")));
}

}  // namespace
}  // namespace vigil::logstore
