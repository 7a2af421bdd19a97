// LogBatch: the unit in which the agent's log pipeline hands records to the
// server (frame kind 2), locally or across the network. Byte layout in
// docs/wire.md ("Logs batch payload").
//
// Exactly-once in effect: every stream in a batch names its source and the
// byte range [start_offset, end_offset) of that source the records came from.
// The server remembers, durably and together with the lines, the highest
// end_offset it has stored per (node, source_id) and drops records that begin
// before it. So a batch retried after a lost acknowledgement, or re-read after
// an agent restart from an older checkpoint, is never stored twice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/metric_batch.h"  // Label, Labels

namespace vigil::wire {

// Severity detected from the line (parse/logs/level.h). Ordered, so a level
// floor is a comparison.
enum class LogLevel : uint8_t {
  kUnknown = 0,
  kTrace = 1,
  kDebug = 2,
  kInfo = 3,
  kWarn = 4,
  kError = 5,
  kFatal = 6,
};
inline constexpr int kLogLevelCount = 7;
// "unknown", "trace", "debug", "info", "warn", "error", "fatal".
const char* LogLevelName(LogLevel level);
// Accepts the names above and common aliases (warning, err, critical, crit,
// panic); false when the text names no level.
bool ParseLogLevelName(std::string_view name, LogLevel* level);

// Record flags.
inline constexpr uint8_t kLogFlagTruncated = 1;  // cut at the line size cap; the rest was skipped
inline constexpr uint8_t kLogFlagPartial = 2;    // flushed before its newline arrived (timeout/EOF)
inline constexpr uint8_t kLogFlagInvalidUtf8 = 4;  // bytes were converted or replaced (U+FFFD)

struct LogRecord {
  int64_t time_ns = 0;  // from the envelope (docker/CRI) when there is one, else read time
  uint64_t offset = 0;  // byte offset in the source where the record begins
  LogLevel level = LogLevel::kUnknown;
  uint8_t flags = 0;
  std::string line;  // UTF-8, without the trailing newline; multiline records keep inner '\n'
  bool operator==(const LogRecord&) const = default;
};

// Per-source counters since the previous batch, so volume control is never
// silent: the server adds them to the source's totals.
struct LogSourceCounters {
  uint64_t sampled_lines = 0;    // dropped by rate-limit sampling
  uint64_t filtered_lines = 0;   // below the level floor or excluded by a rule
  uint64_t truncated_lines = 0;  // cut at the size cap (also flagged on the record)
  // Bytes the tailer knows were lost before they were read (truncated or
  // rotated away unread; a lower bound). The agent sends them on a stream of
  // their own with no records (collect/logs/log_agent.cc "lost bytes").
  // Payload version 2 only (docs/wire.md): a version-1 batch carries 0.
  uint64_t lost_bytes = 0;
  bool operator==(const LogSourceCounters&) const = default;
};

// One source's records, in offset order.
struct LogStream {
  // Stable, agent-unique identity of the byte sequence the offsets refer to,
  // e.g. "file:<dev>:<inode>:<fingerprint>:<generation>". A copytruncate or
  // inode reuse makes a new generation, so offsets never go backwards within
  // one source_id.
  std::string source_id;
  // Stream labels, sorted by name: job, container, pod, namespace, source
  // (the path), stream (stdout/stderr), ... The server adds node.
  Labels labels;
  uint64_t start_offset = 0;  // where the first record (or skipped byte) begins
  uint64_t end_offset = 0;    // just past the last byte this stream consumed
  LogSourceCounters counters;
  std::vector<LogRecord> records;
  bool operator==(const LogStream&) const = default;
};

struct LogBatch {
  std::string source;     // node name of the agent
  uint64_t sequence = 0;  // per-source, increasing (as MetricBatch)
  std::vector<LogStream> streams;

  size_t RecordCount() const;
  size_t ByteCount() const;  // sum of line sizes
};

// Bounds a decoder enforces on untrusted input.
inline constexpr size_t kMaxLogLineBytes = 4u << 20;  // agent cap is 1 MiB by default
inline constexpr size_t kMaxLogLabels = 32;

// Payload version 1 when no stream carries lost_bytes (so a server that
// reads only version 1 still takes it), else version 2. The decoder reads
// both.
inline constexpr uint64_t kLogPayloadVersion = 2;  // the newest
std::string EncodeLogBatch(const LogBatch& batch);
Result<LogBatch> DecodeLogBatch(std::string_view payload);

}  // namespace vigil::wire
