// On-disk encodings of the log store (byte layouts in docs/logstore.md): WAL
// record bodies, compressed blocks and their token filter, label sets and
// day-partition names. Pure functions; decoders take untrusted bytes and fail
// with Corruption, never crash, and bound every allocation by the input.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/log_batch.h"

namespace vigil::logstore {

inline constexpr int64_t kDayNs = int64_t{86400} * 1000 * 1000 * 1000;
// Labels a stream may have in the WAL and catalog (the wire allows 32, plus node).
inline constexpr size_t kMaxStreamLabels = 64;

// "unknown" ... "fatal" (kept here so the store does not depend on the
// collector's level parser).
const char* LevelName(int level);

// Day number (days since 1970-01-01) of a time; negative times go to day 0.
int64_t DayOf(int64_t time_ns);
// "2026-11-30.db" for a day number.
std::string PartitionFileName(int64_t day);
// Day number of a partition file name, or -1 when the name is not one.
int64_t ParsePartitionFileName(std::string_view name);

// ---- WAL records ---------------------------------------------------------

// On disk a lines record is type 2, or type 3 when it carries lost_bytes
// (type 2 with one more counter: stores before it read every record of a
// WAL without losses). Decoded, both are kLines.
enum class WalRecordType : uint8_t { kStream = 1, kLines = 2, kLinesWithLost = 3 };

struct WalLine {
  int64_t time_ns = 0;
  uint8_t level = 0;
  uint8_t flags = 0;
  std::string_view text;  // points into the record body
};

// One LogStream as the store accepted it: the new committed offset of its
// source, the counters it carried and the lines it kept (line numbers and
// sequence numbers are consecutive from first_line_no / first_seq).
struct WalLinesRecord {
  uint64_t stream_id = 0;
  std::string_view node;
  std::string_view source_id;
  uint64_t end_offset = 0;
  wire::LogSourceCounters counters;
  uint64_t duplicates = 0;
  uint64_t first_line_no = 0;
  uint64_t first_seq = 0;
  std::vector<WalLine> lines;
};

struct WalRecord {
  WalRecordType type = WalRecordType::kLines;
  uint64_t stream_id = 0;  // kStream
  wire::Labels labels;     // kStream
  WalLinesRecord lines;    // kLines
};

void EncodeStreamRecord(std::string* dst, uint64_t id, const wire::Labels& labels);
// Appends the header of a lines record (type 3 when r.counters.lost_bytes is
// not 0, else type 2); lines follow with AddWalLine.
void EncodeLinesHeader(std::string* dst, const WalLinesRecord& r, uint64_t line_count);
void AddWalLine(std::string* dst, int64_t time_ns, uint8_t level, uint8_t flags,
                std::string_view text);
// The views in `out` point into `body`.
Status DecodeWalRecord(std::string_view body, WalRecord* out);

// ---- blocks --------------------------------------------------------------

// A line as the block codec sees it.
struct BlockLine {
  int64_t time_ns = 0;
  uint64_t seq = 0;
  uint8_t level = 0;
  uint8_t flags = 0;
  std::string_view text;
};

// The summary kept in the partition row (and in memory) for each block.
struct BlockHeader {
  uint64_t stream_id = 0;
  uint64_t first_line_no = 0;
  uint64_t last_line_no = 0;  // inclusive; lines are consecutive
  int64_t min_time = 0;
  int64_t max_time = 0;
  uint64_t min_seq = 0;
  uint64_t max_seq = 0;
  std::array<uint32_t, wire::kLogLevelCount> level_counts{};
  uint64_t raw_bytes = 0;  // sum of line sizes
  uint64_t lines() const { return last_line_no - first_line_no + 1; }
};

// Block formats (docs/logstore.md "Blocks"): 1 is one zstd frame of the
// payload; 2 (written since 2026-11-30) moves the text's ASCII digits to a
// frame of their own and leaves a '0' in their place: the "skeleton" left
// repeats from line to line, and each frame gets a literal coder fitted to
// it (1/8.2 of training-log text at level 1 instead of 1/6.6).
inline constexpr uint8_t kBlockFormatSingleFrame = 1;
inline constexpr uint8_t kBlockFormatDigitsApart = 2;

class TrigramCollector;

// Encodes blocks (format 2) with one zstd context and buffers kept from one
// block to the next. Not thread-safe; one per encoding thread.
class BlockEncoder {
 public:
  BlockEncoder();
  ~BlockEncoder();
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;

  // Compresses lines and fills the header's summary fields (not stream_id /
  // first_line_no, which the caller sets). With a filter, also builds the
  // block's token filter into it (from the same pass over the text).
  std::string Encode(const std::vector<BlockLine>& lines, BlockHeader* header,
                     std::string* filter = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One block with a fresh encoder (tests, tools).
std::string EncodeBlock(const std::vector<BlockLine>& lines, BlockHeader* header);

// Decoded block. Lines' text views point into `text`.
struct DecodedBlock {
  std::vector<int64_t> times;
  std::vector<uint64_t> seqs;
  std::vector<uint8_t> meta;      // level | flags << 4
  std::vector<uint32_t> offsets;  // line i is text[offsets[i], offsets[i+1])
  std::string text;
  size_t size() const { return times.size(); }
  std::string_view line(size_t i) const {
    return std::string_view(text).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
};
// Reads both formats.
Status DecodeBlock(std::string_view data, DecodedBlock* out);

// The parts of a block's `data` blob: its header (format byte and sizes,
// kept as they are by whoever recompresses the frames) and its zstd frames
// with the size each decompresses to. Format 1: the payload. Format 2: the
// payload with digits masked, then the digits (no frame when there are
// none). Corruption for an unknown format, a bad size or a frame that does
// not end inside the blob; frame contents are not checked.
struct BlockFrame {
  uint64_t raw_size = 0;
  std::string_view data;
};
struct BlockParts {
  uint8_t format = 0;
  std::string_view header;
  std::vector<BlockFrame> frames;
};
Result<BlockParts> SplitBlock(std::string_view data);

// ---- token filter -------------------------------------------------------
//
// A bloom filter of the distinct case-folded byte trigrams of a block's
// skeletons (lines with every ASCII digit replaced by '0'; trigrams "000"
// left out), plus digit-run keys: for each run of digits with two
// bytes of its line before it, (those two bytes, the run's first k digits)
// for k = 1..8, where a (bytes, k) group with more than 16 distinct values in
// the block is stored as one "saturated" key instead. A line that contains
// pattern P contains every trigram of P's skeleton, and every digit-run key
// of a run that starts inside P after two bytes of P; a block is skipped for
// `|= P` only when the filter proves one of them absent (layout and rules in
// docs/logstore.md "Token filter"). Numbers are the digit-run keys' business:
// trigrams of skeletons cost one pass per distinct skeleton of a block (a
// tenth of training-log text), not one per line.

// Appends text with every ASCII digit replaced by '0' to skeleton and those
// digits, in order, to digits.
void SplitDigits(std::string_view text, std::string* skeleton, std::string* digits);

class TrigramCollector {
 public:
  TrigramCollector();
  // One line: text, and its skeleton (SplitDigits) when the caller has it.
  void Add(std::string_view text, std::string_view skeleton);
  void Add(std::string_view text);
  // The filter for everything added since the last Build, then resets.
  std::string Build();

 private:
  // A run of digits in a line: where it starts, its context (the two bytes
  // before it, folded, a digit as '0') and its length (at most 8 counted).
  struct DigitRun {
    uint32_t offset;
    uint16_t ctx;
    uint8_t len;
  };
  void AddTrigrams(std::string_view skeleton);
  void FindDigitRuns(std::string_view text, std::vector<DigitRun>* runs);
  uint64_t FindDigitRuns(const uint8_t* p, size_t base, uint64_t cur, uint64_t next, uint64_t carry,
                         std::vector<DigitRun>* runs);
  void AddDigitRun(const uint8_t* q, const DigitRun& run);
  // The index of skeleton among the block's distinct ones, added when new
  // (-1: new but not kept, past 4 GiB of them).
  int64_t SkeletonIndex(std::string_view skeleton, bool* is_new);
  size_t Slot(uint64_t key) const;
  bool InsertDigitKey(uint64_t key);  // true when it was new

  void AddTrigram(uint32_t t);
  std::vector<uint32_t> trigram_slots_;  // the set of distinct_, see AddTrigram
  int trigram_shift_;                    // 32 - log2(trigram_slots_.size())
  std::vector<uint32_t> distinct_;
  // The block's distinct skeletons: their bytes one after the other, their
  // digit runs in runs_, and an open-addressing set of the entries, by
  // index + 1.
  struct SkeletonEntry {
    uint64_t hash;
    uint32_t offset, size;
    uint32_t first_run, run_count;
  };
  std::string skeleton_bytes_;
  std::vector<SkeletonEntry> skeletons_;
  std::vector<uint32_t> skeleton_slots_;
  std::vector<DigitRun> runs_, scratch_runs_;
  std::string scratch_skeleton_, scratch_digits_;  // Add(text)
  // Digit-run keys. Per two-byte context: the first digits of its runs (the
  // k = 1 group, never saturated) in first_digits_; bit k-1 of full_ is set
  // once the (context, k) group holds more than 16 values (bit 8: the context
  // is in touched_); group_ holds 8 bytes, the distinct values seen per k = 2..8
  // and, in the last byte, the length of the context's last run, whose
  // digits are in last_ (a repeated run is not looked up again).
  std::vector<uint16_t> full_;          // 2^16
  std::vector<uint16_t> first_digits_;  // 2^16: bit d, the k = 1 key of digit d
  std::vector<uint8_t> group_;          // 2^16 * 8
  std::vector<uint32_t> last_;          // 2^16
  std::vector<uint16_t> touched_;
  std::vector<uint64_t> table_;  // open addressing set of digit keys, 0 = empty
  int table_shift_;              // 64 - log2(table_.size())
  std::vector<uint64_t> digit_keys_;
};

// The keys of lowercase(pattern) a filter can be asked for. Empty when the
// filter can never rule the pattern out (shorter than 3 bytes, or digits
// only).
struct FilterKeys {
  std::vector<uint32_t> trigrams;             // formats 1, 2: no three-digit ones
  std::vector<uint32_t> skeleton_trigrams;    // format 3: of the skeleton, no "000"
  std::vector<uint64_t> digit_runs;           // format 2 digit-run keys (see format.cc)
  std::vector<uint64_t> skeleton_digit_runs;  // format 3's
  bool empty() const {
    return trigrams.empty() && skeleton_trigrams.empty() && digit_runs.empty() &&
           skeleton_digit_runs.empty();
  }
};
FilterKeys PatternFilterKeys(std::string_view pattern);
// False only when the filter proves some key absent. A malformed filter says
// "may contain"; a filter written before digit-run keys existed (format 1)
// is asked for the trigrams only.
bool FilterMayContain(std::string_view filter, const FilterKeys& keys);

}  // namespace vigil::logstore
