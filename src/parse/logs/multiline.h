// Multiline stage: joins the lines of one event that a program printed over
// several lines, so a traceback is one record, searchable and alertable as
// a whole:
//  * Python tracebacks, chained ones ("During handling of the above
//    exception..."/"The above exception was the direct cause..."), and the
//    log line that logger.exception() prints before them;
//  * Java stack traces ("Exception in thread", "java.lang.X: msg", "\tat",
//    "Caused by:", "... N more"), also after a log4j ERROR line;
//  * continuation lines (starting with whitespace) after an error or
//    "XxxWarning:" line (glog, C++, Python warnings' source line);
//  * NCCL error blocks: a "NCCL WARN" line and the "NCCL INFO ... -> N"
//    return-code trail from the same host:pid:tid;
//  * PyTorch CUDA errors and their hint lines ("CUDA kernel errors might be
//    asynchronously reported...", "For debugging consider passing
//    CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA`...",
//    "Exception raised from ...", "frame #N: ...").
// Worker prefixes ("[rank0]: ", "[default3]:") are allowed; every line of a
// record must carry the same one.
//
// Conservative: only a line that can start such a block is held; anything
// that is not a known continuation ends the block, and a normal line is never
// glued to the previous one. Records are bounded by max_bytes and max_lines;
// at the bound the record is emitted and the block goes on in a new record.
//
// The caller should keep one joiner per (source, stream): stdout and stderr
// of one container interleave. Records come out in offset order.
//
// Thread safety: not thread-safe; one instance per source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/log_batch.h"

namespace vigil::parse::logs {

struct MultilineOptions {
  bool enabled = true;              // false: every line is its own record
  int64_t flush_timeout_ms = 1000;  // emit a held record after this long without a continuation
  size_t max_bytes = 1u << 20;      // bytes of one record (inner '\n' included)
  size_t max_lines = 1000;
};

class MultilineJoiner {
 public:
  explicit MultilineJoiner(MultilineOptions options = {});

  // Feeds one line (UTF-8, no trailing newline) beginning at `offset`, with
  // its time (from the envelope or read time) and flags (wire::kLogFlag*).
  // `now_ms` is the caller's clock, for the flush timeout. Appends zero or
  // more completed records to *out, in offset order. Each record's level is
  // already set to DetectLevel() of its first line (level.h), so the caller
  // need not run the level stage again. Tentatively held blank lines after an
  // exception come out as their own records (level kUnknown).
  // `owner`, when given, is a string that `line` views from its first byte
  // (the tailer's copy of the line): a record that begins with this line may
  // take owner's buffer instead of copying the text, which spares an
  // allocation per line. *owner is left unspecified.
  void Push(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags, int64_t now_ms,
            std::vector<wire::LogRecord>* out, std::string* owner = nullptr);

  // Emits the held record if nothing continued it for flush_timeout_ms.
  void Flush(int64_t now_ms, std::vector<wire::LogRecord>* out);
  // Emits whatever is held (source closed, shutdown).
  void FlushAll(std::vector<wire::LogRecord>* out);

  // Offset of the first line still held, or none: the caller must not
  // checkpoint at or past it.
  std::optional<uint64_t> PendingStartOffset() const;
  bool holding() const { return state_ != State::kIdle; }

 private:
  enum class State : uint8_t {
    kIdle,
    kPyFrames,   // after "Traceback (most recent call last):"
    kException,  // after an exception line (Python final line, Java, CUDA)
    kPyChain,    // after "During handling of the above exception..."
    kErrorLine,  // after an error/warning line: indented lines continue it
    kNccl,       // after "NCCL WARN": same host:pid:tid "NCCL INFO ... -> N"
  };

  // Starts a record with `line` if it can begin a block; else emits it alone.
  void Start(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
             std::string* owner, std::vector<wire::LogRecord>* out);
  // The state after appending `body`, or kIdle when it does not continue.
  State Continues(std::string_view body) const;
  void Append(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
              std::vector<wire::LogRecord>* out);
  void Emit(std::vector<wire::LogRecord>* out);

  MultilineOptions options_;
  State state_ = State::kIdle;
  wire::LogRecord record_;
  size_t lines_ = 0;
  std::string prefix_;   // worker prefix every line of the record carries
  std::string nccl_id_;  // "host:pid:tid" of an NCCL block
  // Blank lines after an exception, held until we know whether a chained
  // traceback follows (then they belong to it) or not (own records).
  std::vector<wire::LogRecord> tentative_;
  int64_t last_push_ms_ = 0;
};

// Whether a line holds a Python traceback's header: at its start, or at its
// end after other output (a crash inside a tqdm loop writes the bar and
// then, with no newline between, "Traceback (most recent call last):").
bool IsTracebackHeader(std::string_view body);

}  // namespace vigil::parse::logs
