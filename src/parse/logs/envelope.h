// Envelope stage: undoes the wrapping a container runtime puts around each
// line a process wrote, so later stages see the process's own text.
//
//  * Docker json-file: {"log":"text\n","stream":"stdout","time":"2024-...Z"}
//    One JSON object per line. Docker cuts lines over 16 KiB into several
//    objects; only the last one's "log" ends in "\n".
//  * CRI (containerd, CRI-O, Kubernetes /var/log/pods):
//    "2024-01-02T03:04:05.123456789Z stdout F text", tag P = partial piece
//    (more follows), F = full (last piece).
//  * Plain: anything else passes through as it is.
//
// Pieces are joined per stream (stdout and stderr interleave in one file) up
// to a size bound; beyond it the record is emitted at once, flagged
// truncated, and the rest of its pieces are skipped. A line that claims an
// envelope but does not parse is passed through raw, never dropped, and
// counted (malformed_lines()).
//
// Thread safety: an EnvelopeParser is per source and not thread-safe; the
// free functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wire/log_batch.h"

namespace vigil::parse::logs {

enum class EnvelopeFormat : uint8_t {
  kAuto = 0,  // decide per line: '{' -> docker, RFC3339 + stream + tag -> CRI, else plain
  kPlain = 1,
  kDocker = 2,
  kCri = 3,
};

// Parses RFC 3339 with optional fraction (up to 9 digits) and a Z or ±hh:mm
// offset, e.g. "2024-01-02T03:04:05.123456789Z", "2024-01-02T11:04:05+08:00".
// Returns nanoseconds since the Unix epoch (UTC).
std::optional<int64_t> ParseRfc3339Nano(std::string_view s);

// One docker json-file line, parsed. `log` is unescaped into *log_out
// (cleared first), without its trailing "\n" (reported as `complete`).
struct DockerLine {
  std::string_view stream;  // "stdout", "stderr" (a view into the input)
  int64_t time_ns = 0;      // 0 when the line has no "time"
  bool complete = false;    // "log" ended with "\n"
};
// False when the line is not a docker json-file object with a string "log".
// Unknown keys are skipped; a value may be any JSON value.
bool ParseDockerLine(std::string_view line, std::string* log_out, DockerLine* out);

// One CRI line: views into the input.
struct CriLine {
  std::string_view text;
  std::string_view stream;
  int64_t time_ns = 0;
  bool complete = false;  // tag F (or a tag with no P)
};
bool ParseCriLine(std::string_view line, CriLine* out);

// A logical line, after joining. Views stay valid until the next call on the
// parser that returned it.
struct EnvelopeRecord {
  std::string_view text;    // the process's text, without trailing newline
  std::string_view stream;  // "stdout"/"stderr"; empty for plain lines
  int64_t time_ns = 0;      // from the envelope; 0 when there is none
  uint64_t offset = 0;      // offset of the first physical line
  uint8_t flags = 0;        // wire::kLogFlagTruncated, wire::kLogFlagPartial
};

struct EnvelopeOptions {
  EnvelopeFormat format = EnvelopeFormat::kAuto;
  // Bound on a joined record (bytes of text). Matches the agent's line cap.
  size_t max_bytes = 1u << 20;
};

class EnvelopeParser {
 public:
  explicit EnvelopeParser(EnvelopeOptions options = {});

  // Feeds one physical line (without its '\n') that begins at `offset`.
  // Returns the completed logical line, or nullptr when the piece is held
  // (a partial) or skipped (the tail of a truncated record).
  const EnvelopeRecord* Push(std::string_view raw, uint64_t offset);

  // Emits one held partial record (flagged kLogFlagPartial), for EOF or an
  // idle timeout; nullptr when nothing is held. Call until nullptr.
  const EnvelopeRecord* Flush();

  // Offset of the first physical line still held (a partial piece), so the
  // caller never checkpoints past it.
  std::optional<uint64_t> PendingStartOffset() const;

  uint64_t malformed_lines() const { return malformed_; }
  uint64_t truncated_lines() const { return truncated_; }

 private:
  // Stdout, stderr, anything else: Docker and CRI interleave streams, and a
  // piece joins only the pending record of its own stream.
  struct Slot {
    std::string text;
    uint64_t offset = 0;
    int64_t time_ns = 0;
    bool active = false;    // holds a partial record
    bool skipping = false;  // emitted truncated; drop pieces until the last
  };
  static int SlotIndex(std::string_view stream);
  const EnvelopeRecord* Piece(std::string_view text, std::string_view stream, int64_t time_ns,
                              bool complete, uint64_t offset);
  const EnvelopeRecord* Plain(std::string_view raw, uint64_t offset);

  EnvelopeOptions options_;
  Slot slots_[3];
  std::string log_;  // docker "log" unescaped
  std::string out_;  // the emitted joined text
  EnvelopeRecord record_;
  uint64_t malformed_ = 0;
  uint64_t truncated_ = 0;
};

}  // namespace vigil::parse::logs
