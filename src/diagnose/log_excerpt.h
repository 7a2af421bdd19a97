// The few log lines of a job that a notification quotes (issue:
// notifications, "a short excerpt of the relevant log lines"): where the
// job's newest failure was told (the line that decided its kind — a
// traceback's exception, an NCCL error, a kernel OOM line — with the lines
// just before it, a traceback's innermost frames), else the job's last lines
// before the alert (what it was printing when it stalled or diverged).
//
// Log text is untrusted and goes to chat apps, mail and a browser: each line
// is made printable here (no ANSI escapes or control bytes, the last '\r'
// progress update only, valid UTF-8, cut to a bound); each channel
// still escapes it for its own format.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/logs/log_store.h"

namespace vigil::diagnose {

struct ExcerptOptions {
  size_t max_lines = 8;         // in all
  size_t lines_before = 5;      // before a failure's deciding line
  size_t lines_after = 2;       // after it (the rest of an exception's message)
  size_t tail_lines = 5;        // when no failure was told
  size_t max_line_bytes = 240;  // each line, "…" marking a cut
  // A failure told this long before the alert or earlier is history, not
  // its cause: the excerpt is then the job's last lines.
  int64_t failure_window_ms = 10 * 60'000;
};

// The excerpt from a job's lines up to the alert at `at_ms`, oldest first
// (several streams may be mixed: a failure's context is taken from its own
// stream only). Empty when there are no lines.
std::vector<std::string> SelectExcerpt(const std::vector<logstore::LogEntry>& oldest_first,
                                       int64_t at_ms, const ExcerptOptions& options = {});

// `line` as one printable line: ANSI escape sequences and control bytes
// removed, tabs as spaces, only what follows its last '\r' (a progress bar's
// newest update), invalid UTF-8 replaced by U+FFFD, trailing spaces
// trimmed, cut to `max_bytes` at a character boundary.
std::string PrintableLine(std::string_view line, size_t max_bytes);

}  // namespace vigil::diagnose
