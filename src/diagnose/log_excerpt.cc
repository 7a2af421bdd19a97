#include "diagnose/log_excerpt.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/strings.h"
#include "parse/logs/encoding.h"
#include "parse/training/log_events.h"

namespace vigil::diagnose {
namespace {

namespace training = parse::training;

constexpr int64_t kNsPerMs = 1'000'000;

struct PhysicalLine {
  uint64_t stream_id = 0;
  std::string_view text;
};

// An escape sequence's length from `i` (at ESC): CSI ("ESC [ ... final"),
// OSC ("ESC ] ... BEL or ESC \"), else ESC and the byte after it.
size_t EscapeLength(std::string_view s, size_t i) {
  size_t j = i + 1;
  if (j >= s.size()) return 1;
  if (s[j] == '[') {
    ++j;
    while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7e)) ++j;
    return std::min(s.size(), j + 1) - i;
  }
  if (s[j] == ']') {
    for (++j; j < s.size(); ++j) {
      if (s[j] == '\a') return j + 1 - i;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
    }
    return s.size() - i;
  }
  return 2;
}

// The physical line `flat[at]` belongs to as the range of lines to quote:
// up to `before` lines before it and `after` after it, of its stream only.
std::vector<size_t> AroundLine(const std::vector<PhysicalLine>& flat, size_t at,
                               const ExcerptOptions& o) {
  const uint64_t stream = flat[at].stream_id;
  std::vector<size_t> before;
  for (size_t i = at; i-- > 0 && before.size() < o.lines_before;) {
    if (flat[i].stream_id == stream) before.push_back(i);
  }
  std::vector<size_t> out(before.rbegin(), before.rend());
  out.push_back(at);
  for (size_t i = at + 1, n = 0; i < flat.size() && n < o.lines_after; ++i) {
    if (flat[i].stream_id == stream) out.push_back(i), ++n;
  }
  // Within max_lines, the deciding line and what precedes it first.
  while (out.size() > o.max_lines) {
    if (out.back() != at) {
      out.pop_back();
    } else {
      out.erase(out.begin());
    }
  }
  return out;
}

}  // namespace

std::string PrintableLine(std::string_view line, size_t max_bytes) {
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) {
    // "...\r" ends a progress update; the text after the last non-final
    // '\r' is what a terminal shows.
    std::string_view head = line.substr(0, cr);
    line = cr + 1 < line.size() ? line.substr(cr + 1) : head.substr(head.rfind('\r') + 1);
  }
  std::string out;
  out.reserve(std::min(line.size(), max_bytes + 4));
  for (size_t i = 0; i < line.size() && out.size() <= max_bytes + 3;) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {
      i += EscapeLength(line, i);
      continue;
    }
    if (c == '\t') out += ' ';
    if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
    ++i;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  // Invalid UTF-8 would make the JSON encoders downstream refuse the message.
  std::string valid;
  parse::logs::AppendSanitizedUtf8(out, &valid);
  if (valid.size() > max_bytes) {
    return std::string(CutUtf8(valid, max_bytes > 3 ? max_bytes - 3 : 0)) + "…";
  }
  return valid;
}

std::vector<std::string> SelectExcerpt(const std::vector<logstore::LogEntry>& entries,
                                       int64_t at_ms, const ExcerptOptions& o) {
  std::vector<PhysicalLine> flat;
  std::map<uint64_t, training::LogEventDetector> detectors;
  std::optional<size_t> failure;  // flat index of the newest failure's deciding line
  for (const logstore::LogEntry& e : entries) {
    const size_t first = flat.size();
    for (std::string_view piece : Split(e.line, '\n')) flat.push_back({e.ref.stream_id, piece});
    const size_t count = flat.size() - first;
    for (const training::Event& ev : detectors[e.ref.stream_id].Detect(e.line, 1)) {
      if (ev.kind == training::EventKind::kCompleted) continue;
      if (e.time_ns / kNsPerMs < at_ms - o.failure_window_ms) continue;
      size_t offset = ev.line >= 1 ? static_cast<size_t>(ev.line - 1) : 0;
      failure = first + std::min(offset, count == 0 ? 0 : count - 1);
    }
  }
  std::vector<size_t> chosen;
  if (failure && *failure < flat.size()) {
    chosen = AroundLine(flat, *failure, o);
  } else {
    for (size_t i = flat.size(); i-- > 0 && chosen.size() < o.tail_lines;) {
      if (!TrimSpace(flat[i].text).empty()) chosen.insert(chosen.begin(), i);
    }
  }
  std::vector<std::string> out;
  for (size_t i : chosen) out.push_back(PrintableLine(flat[i].text, o.max_line_bytes));
  return out;
}

}  // namespace vigil::diagnose
