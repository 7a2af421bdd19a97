// Failure and lifecycle events read from a job's log records: why a training
// run died (CUDA out of memory, an NCCL error or watchdog timeout, a
// device-side assert, a segfault, the OOM killer, an Xid), or that it ended
// normally. A record is one or more physical lines the multiline stage joined
// (parse/logs/multiline.h): a whole Python traceback, an NCCL WARN block,
// a CUDA error with its hint lines. Each record yields at most one event of
// a specific kind (the most specific: a traceback ending in
// torch.OutOfMemoryError is `cuda_oom`) and, when it holds a Python
// traceback, a `traceback` event too, with the exception and the innermost
// frame of the user's code ("where in my code did it crash?").
// docs/training-events.md lists the kinds, the texts that raise them and
// their details.
//
// Runs on every record of every job, so no regex: each rule looks for a
// fixed phrase first, and a record that holds none of them (almost all) is
// rejected after a few substring scans.
//
// Thread safety: a LogEventDetector keeps a short memory of recent events
// (one failure often prints the same fact several times: one assertion line
// per CUDA thread, torchrun's exit code and its signal line) and is not
// thread-safe; keep one per source. EventJson is pure.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::parse::training {

enum class EventKind : uint8_t {
  kCudaOom,
  kNcclError,
  kNcclTimeout,
  kDeviceAssert,
  kCudaError,
  kNoKernelImage,
  kDriverTooOld,
  kTraceback,
  kNanLoss,
  kLossOverflow,
  kDataloaderKilled,
  kSegfault,
  kOomKilled,
  kXid,
  kCompleted,
};

// "cuda_oom", "nccl_error", ...: the name `vigil inspect-log` prints.
const char* EventKindName(EventKind kind);
// The kind EventKindName gives `name`; nullopt for any other text.
std::optional<EventKind> EventKindFromName(std::string_view name);

// Text details are cut at this many bytes (at a UTF-8 boundary): a message
// is for a person to recognise, not the whole record.
inline constexpr size_t kMaxDetailBytes = 300;

struct EventDetail {
  std::string key;
  std::string value;    // a number's decimal text when `number`
  bool number = false;  // printed bare in JSON
};

struct Event {
  EventKind kind = EventKind::kTraceback;
  int64_t line = 0;                  // 1-based physical line of the text that decided the kind
  std::vector<EventDetail> details;  // in print order

  void AddString(std::string_view key, std::string_view value);  // cut to kMaxDetailBytes
  void AddNumber(std::string_view key, int64_t value);
  // A number as the log wrote it ("32768.0"); must be a valid JSON number.
  void AddNumberText(std::string_view key, std::string_view text);
  const EventDetail* Find(std::string_view key) const;
};

// {"line": 12, "event": "xid", "xid": 79, "pci": "0000:3b:00", ...}: keys
// line, event, then the details in order; ", " and ": " separate.
std::string EventJson(const Event& event);

namespace internal {
struct Line;  // log_events.cc
}

class LogEventDetector {
 public:
  // How far back (in lines) a repeated fact of one failure is recognised.
  static constexpr int64_t kRepeatWindowLines = 200;

  // Classifies one record: its text (physical lines joined by '\n') and the
  // 1-based number of its first physical line. At most three events: the
  // specific kind first, a cause it reports (a CUDA error inside an NCCL
  // warning), then the traceback.
  std::vector<Event> Detect(std::string_view record, int64_t first_line);

 private:
  // The first specific rule that matches, when its event is not a repeat;
  // a cause it reports (a CUDA error inside an NCCL warning) goes to *extra.
  std::optional<Event> Specific(const std::vector<internal::Line>& lines,
                                std::vector<Event>* extra);
  // Whether `ev` repeats a recent event of the same kind and key (e.g. the
  // same pid); remembers it when not.
  bool Repeats(const Event& ev, std::string_view key);

  struct Recent {
    EventKind kind;
    std::string key;
    int64_t line;
  };
  std::deque<Recent> recent_;  // a few entries, oldest first
  // The last physical line that was a traceback frame ("  File ..."), 0
  // when none is open: frames and their exception may come as separate
  // records (a post that starts mid-traceback).
  static constexpr int64_t kFrameGapLines = 2;
  int64_t last_frame_line_ = 0;
  std::string open_frame_;  // "train.py:30 in step": the frame to report for them
  bool open_frame_is_user_ = false;
  // DeepSpeed's count of steps skipped for fp16 overflow, as last printed.
  int64_t skipped_steps_ = 0;
  int64_t last_overflow_line_ = 0;  // of the last explicit overflow line
};

}  // namespace vigil::parse::training
