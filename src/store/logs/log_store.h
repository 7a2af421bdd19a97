// LogStore: the server's log storage (DESIGN.md "Storage"; format in
// docs/logstore.md). Lines enter an in-memory head, searchable at once and
// backed by a WAL; every few seconds the head of each stream is cut into a
// zstd block with its time range, level counts and a token filter, stored in
// the day's SQLite partition. Keyword queries skip blocks whose filter rules a
// term out. Retention deletes whole days.
//
// Exactly-once: Append() drops records of a (node, source_id) that begin
// before the end_offset already committed for it (wire/log_batch.h). The
// committed offsets are recovered with the lines they describe.
//
// Thread safety: all methods may be called concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "store/logs/recompress.h"
#include "wire/log_batch.h"

namespace vigil::logstore {

struct Options {
  std::string dir;                    // $VIGIL_HOME/data/logs
  Env* env = nullptr;                 // nullptr: Env::Default()
  int retention_days = 7;             // whole days older are deleted; <= 0: never
  size_t block_max_lines = 4096;      // at most 2^20 (larger is clamped)
  size_t block_max_bytes = 1u << 20;  // at most 64 MiB (larger is clamped)
  // A stream's head older than this is cut. Heads are searched as blocks are
  // and the WAL keeps them durable, so a cut only has to come before the
  // head grows large: a minute makes blocks of a slow stream (a trainer's
  // line a second) 60 lines rather than 5, and one catalog write a minute.
  int64_t block_max_age_ms = 60'000;
  bool background_maintenance = true;  // false in tests: call Maintain()
  // Memory for block token filters (newest blocks first); the rest are read
  // from disk when a keyword query needs them. About 1 byte per stored line
  // on training logs, so 4 MiB keeps the newest few million lines' filters
  // and the store's memory does not grow with what it holds.
  size_t filter_memory_bytes = 4u << 20;
  // Bytes of line text the heads may hold in all. Above it, Append cuts
  // blocks itself before returning, so a backlog waits in the agent's files
  // (unread) rather than in this process's memory.
  size_t max_head_bytes = 2u << 20;
  // Archive recompression (docs/logstore.md "Archive recompression"): the
  // background thread rewrites the blocks of day files that ended more than
  // archive.min_age_ms ago with archive's zstd parameters, in slices of
  // archive.budget_ms (250 ms when 0), idle between slices so that it uses
  // at most archive_cpu_percent of one core on average; 0 turns it off.
  // Days that retention deletes within the hour are left alone. Once every
  // due file is done, it looks for late blocks every archive_interval_ms.
  ArchiveOptions archive;
  int archive_cpu_percent = 10;
  int64_t archive_interval_ms = 10 * 60 * 1000;
};

// Stream selector, with Prometheus semantics: an absent label equals "".
// Names: node, job, container, pod, namespace, source, stream, ..., and
// the per-record pseudo-label `level` (unknown|trace|debug|info|warn|error|fatal).
enum class MatchType { kEqual, kNotEqual, kRegex, kNotRegex };
struct LabelMatcher {
  MatchType type = MatchType::kEqual;
  std::string name;
  std::string value;  // regexes are RE2, fully anchored
};

// Line filters, all of which must hold (LogQL `|=`, `!=`, `|~`, `!~`).
enum class FilterType { kContains, kNotContains, kRegex, kNotRegex };
struct LineFilter {
  FilterType type = FilterType::kContains;
  std::string pattern;  // substring (case-sensitive) or RE2 (unanchored)
};

struct LogQuery {
  std::vector<LabelMatcher> matchers;  // at least one in the API; empty = all streams
  std::vector<LineFilter> filters;
  int64_t start_ns = 0;        // inclusive
  int64_t end_ns = INT64_MAX;  // exclusive
  size_t limit = 1000;
  bool forward = false;  // false: newest first (LogQL default "backward")
  // Paging: only the entries after this one in the query's order (time, then
  // append order `seq`): later ones going forward, earlier ones backward. A
  // client pages with the last entry it got, even inside one timestamp.
  std::optional<std::pair<int64_t, uint64_t>> after;  // (time_ns, seq)
};

// Where a line sits: its stream and its position in that stream. Stable for
// the line's life, so a client can ask for its context later.
struct LineRef {
  uint64_t stream_id = 0;
  uint64_t line_no = 0;  // 0-based position of the line in its stream
  bool operator==(const LineRef&) const = default;
};

struct LogEntry {
  LineRef ref;
  uint64_t seq = 0;  // store-wide append order (live tail cursor)
  // The stream's labels incl. node. Shared because they are immutable and
  // one set serves every entry of the stream, even after retention drops it.
  std::shared_ptr<const wire::Labels> labels;
  int64_t time_ns = 0;
  wire::LogLevel level = wire::LogLevel::kUnknown;
  uint8_t flags = 0;
  std::string line;
};

struct QueryResult {
  std::vector<LogEntry> entries;  // in the requested direction
  bool truncated = false;         // the limit was reached
  // What the query touched, for docs and benchmarks.
  uint64_t blocks_scanned = 0;
  uint64_t blocks_skipped = 0;
};

// Line counts by level in [start, end) buckets of `step_ns`.
struct LevelHistogram {
  int64_t start_ns = 0;
  int64_t step_ns = 0;
  std::vector<std::array<uint64_t, wire::kLogLevelCount>> buckets;
};

// Totals per stream (label set): the sum over every source_id that fed it
// (a rotated file keeps its labels under a new source_id).
struct SourceTotals {
  wire::Labels labels;  // incl. node
  uint64_t stream_id = 0;
  uint64_t lines = 0;
  uint64_t bytes = 0;
  wire::LogSourceCounters counters;  // cumulative
};

struct LogStoreStats {
  uint64_t streams = 0;
  uint64_t lines = 0;            // ever appended (after dedup)
  uint64_t duplicate_lines = 0;  // dropped by offset dedup
  uint64_t head_lines = 0;
  uint64_t head_bytes = 0;
  uint64_t blocks = 0;
  uint64_t disk_bytes = 0;
  int64_t oldest_ns = 0;
};

// Query, Since and Context return at most this many lines; a larger (or zero)
// limit is clamped to it rather than rejected.
inline constexpr size_t kMaxQueryLimit = 5000;
// Histogram refuses to build more buckets than this (InvalidArgument).
inline constexpr size_t kMaxHistogramBuckets = 100000;

class LogStore {
 public:
  static Result<std::unique_ptr<LogStore>> Open(const Options& options);
  virtual ~LogStore() = default;

  // Stores the batch's records under node `node` and makes them searchable.
  // Durable (WAL synced) when it returns OK. Records at or after an already
  // committed offset of their source are stored; earlier ones are counted as
  // duplicates and dropped.
  virtual Status Append(std::string_view node, const wire::LogBatch& batch) = 0;

  virtual Result<QueryResult> Query(const LogQuery& query) const = 0;
  // Up to `before` lines before and `after` lines after `ref` in its stream,
  // oldest first, including the line itself.
  virtual Result<std::vector<LogEntry>> Context(LineRef ref, size_t before, size_t after) const = 0;
  // Lines matching `query` appended after store-wide sequence `after_seq`,
  // oldest first, at most query.limit (live tail; time range ignored). Only
  // lines already durable are returned, so a cursor never skips a line.
  virtual Result<std::vector<LogEntry>> Since(const LogQuery& query, uint64_t after_seq) const = 0;
  // The newest sequence number handed out (0 when empty).
  virtual uint64_t LastSeq() const = 0;

  virtual Result<LevelHistogram> Histogram(const LogQuery& query, int64_t step_ns) const = 0;
  virtual std::vector<std::string> LabelNames(int64_t start_ns, int64_t end_ns) const = 0;
  virtual std::vector<std::string> LabelValues(std::string_view name, int64_t start_ns,
                                               int64_t end_ns) const = 0;
  virtual std::vector<SourceTotals> Sources() const = 0;
  // The end offset committed for a source of `node` (0 if unknown): records
  // that begin before it are already stored. Lets a consumer of the same
  // batches (training metrics) take each line exactly once, as Append does.
  virtual uint64_t CommittedOffset(std::string_view node, std::string_view source_id) const = 0;

  // Cuts due blocks, truncates the WAL, applies retention. Runs by itself
  // unless Options::background_maintenance is false.
  virtual Status Maintain() = 0;
  virtual LogStoreStats Stats() const = 0;
  // Cuts every head into blocks and closes. Idempotent.
  virtual Status Close() = 0;
};

}  // namespace vigil::logstore
