#include "parse/logs/multiline.h"

#include <utility>

#include "parse/logs/level.h"

namespace vigil::parse::logs {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsBlank(std::string_view s) {
  for (char c : s) {
    if (!IsSpace(c) && c != '\r') return false;
  }
  return true;
}

// "[rank0]:" and "[rank0]: " are the same worker (a blank line may lose
// the space).
bool SamePrefix(std::string_view a, std::string_view b) {
  if (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  if (!b.empty() && b.back() == ' ') b.remove_suffix(1);
  return a == b;
}

// An exception line: a (dotted) class name then ':' or the end of the line.
// `strict` (a line that starts a record by itself) also wants a name that
// says it is an exception; after traceback frames any class name will do.
bool IsExceptionLine(std::string_view s, bool strict, bool need_dot = false) {
  // Most lines start with a digit, a bracket or a brace: out before the scan.
  if (s.empty() || !(IsAlpha(s[0]) || s[0] == '_')) return false;
  size_t i = 0;
  bool dot = false;
  while (i < s.size() &&
         (IsAlpha(s[i]) || IsDigit(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '$')) {
    dot |= s[i] == '.';
    ++i;
  }
  if (i < s.size() && s[i] != ':') return false;
  if (need_dot && !dot) return false;
  if (!strict) return true;
  std::string_view name = s.substr(0, i);
  return EndsWith(name, "Error") || EndsWith(name, "Exception") || EndsWith(name, "Throwable") ||
         name == "KeyboardInterrupt";
}

bool IsChainMessage(std::string_view s) {
  return s.starts_with("During handling of the above exception") ||
         s.starts_with("The above exception was the direct cause");
}

// Lines PyTorch, CUDA and the JVM print after an exception's message.
bool IsExceptionTail(std::string_view s) {
  return s.starts_with("CUDA kernel errors might be asynchronously reported") ||
         s.starts_with("For debugging consider passing CUDA_LAUNCH_BLOCKING") ||
         s.starts_with("Compile with `TORCH_USE_CUDA_DSA`") ||
         s.starts_with("Exception raised from ") || s.starts_with("Search for `cuda") ||
         (s.starts_with("frame #") && s.size() > 7 && IsDigit(s[7])) ||
         s.starts_with("Caused by: ") || s.starts_with("Suppressed: ");
}

// "host:pid:tid" of an NCCL line "node1:123:456 [0] NCCL INFO ...", or "".
std::string_view NcclId(std::string_view s) {
  size_t sp = s.substr(0, 129).find(' ');
  if (sp == std::string_view::npos || sp == 0) return {};
  // The '[' after the space comes first: it rules out almost every line that
  // starts a record, before the id is looked at.
  if (sp + 1 >= s.size() || s[sp + 1] != '[') return {};
  std::string_view id = s.substr(0, sp);
  size_t c2 = id.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return {};
  size_t c1 = id.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0 || c2 == c1 + 1 || c2 + 1 == id.size()) return {};
  for (size_t k = c1 + 1; k < id.size(); ++k) {
    if (k != c2 && !IsDigit(id[k])) return {};
  }
  return id;
}

// An NCCL return-code trail line: "... NCCL INFO file.cc:123 -> 2".
bool IsNcclTrail(std::string_view s) {
  if (s.find(" NCCL INFO ") == std::string_view::npos) return false;
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  size_t d = s.size();
  while (d > 0 && IsDigit(s[d - 1])) --d;
  return d < s.size() && EndsWith(s.substr(0, d), " -> ");
}

// A record's first line: `line` itself, moved out of *owner when it views
// owner from its first byte (see Push), else copied.
wire::LogRecord FirstLine(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
                          std::string* owner) {
  wire::LogRecord rec;
  rec.time_ns = time_ns;
  rec.offset = offset;
  rec.flags = flags;
  if (owner != nullptr && line.data() == owner->data() && line.size() <= owner->size()) {
    owner->resize(line.size());
    rec.line = std::move(*owner);
  } else {
    rec.line.assign(line);
  }
  return rec;
}

}  // namespace

bool IsTracebackHeader(std::string_view body) {
  constexpr std::string_view kHeader = "Traceback (most recent call last)";
  if (body.starts_with(kHeader)) return true;
  size_t e = body.size();
  while (e > 0 && (body[e - 1] == ' ' || body[e - 1] == '\r' || body[e - 1] == '\t')) --e;
  if (e > 0 && body[e - 1] == ':') --e;
  return e >= kHeader.size() && body.substr(e - kHeader.size(), kHeader.size()) == kHeader;
}

MultilineJoiner::MultilineJoiner(MultilineOptions options) : options_(options) {
  if (options_.max_lines == 0) options_.max_lines = 1;
}

MultilineJoiner::State MultilineJoiner::Continues(std::string_view body) const {
  bool indented = !body.empty() && IsSpace(body[0]);
  switch (state_) {
    case State::kPyFrames:
      if (indented) return State::kPyFrames;
      return IsExceptionLine(body, /*strict=*/false) ? State::kException : State::kIdle;
    case State::kException:
      if (indented || IsExceptionTail(body)) return State::kException;
      return IsChainMessage(body) ? State::kPyChain : State::kIdle;
    case State::kPyChain:
      return IsTracebackHeader(body) ? State::kPyFrames : State::kIdle;
    case State::kErrorLine:
      if (indented) return State::kErrorLine;
      if (IsTracebackHeader(body)) return State::kPyFrames;
      // log4j's logger.error("msg", e): the exception's class comes next.
      if (IsExceptionLine(body, /*strict=*/true, /*need_dot=*/true)) return State::kException;
      return State::kIdle;
    case State::kNccl:
      return NcclId(body) == nccl_id_ && IsNcclTrail(body) ? State::kNccl : State::kIdle;
    case State::kIdle:
      break;
  }
  return State::kIdle;
}

void MultilineJoiner::Start(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
                            std::string* owner, std::vector<wire::LogRecord>* out) {
  size_t pl = WorkerPrefixLen(line);
  std::string_view body = line.substr(pl);
  // The level of a record is its first line's; computing it here, once,
  // spares the level stage a second scan.
  const wire::LogLevel level = DetectLevel(line);
  State next = State::kIdle;
  if (body.empty() || IsSpace(body[0])) {
    next = State::kIdle;
  } else if (IsTracebackHeader(body)) {
    next = State::kPyFrames;
  } else if (body.starts_with("Exception in thread ") || body.starts_with("CUDA error") ||
             IsExceptionLine(body, /*strict=*/true)) {
    next = State::kException;
  } else if (std::string_view id = NcclId(body);
             !id.empty() && body.find(" NCCL WARN ") != std::string_view::npos) {
    next = State::kNccl;
    nccl_id_.assign(id);
  } else if (level >= wire::LogLevel::kError ||
             (level == wire::LogLevel::kWarn &&
              body.substr(0, kLevelScanBytes).find("Warning: ") != std::string_view::npos)) {
    next = State::kErrorLine;
  }
  // The prefix is copied before `line`'s bytes may move into the record.
  if (next != State::kIdle) prefix_.assign(line.substr(0, pl));
  wire::LogRecord rec = FirstLine(line, offset, time_ns, flags, owner);
  rec.level = level;
  if (next == State::kIdle) {
    out->push_back(std::move(rec));
    return;
  }
  record_ = std::move(rec);
  lines_ = 1;
  state_ = next;
}

void MultilineJoiner::Append(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
                             std::vector<wire::LogRecord>* out) {
  if (lines_ + 1 > options_.max_lines ||
      record_.line.size() + 1 + line.size() > options_.max_bytes) {
    // At the bound the block goes on in a new record; the state stays.
    const wire::LogLevel level = record_.level;
    out->push_back(std::move(record_));
    record_ = wire::LogRecord{};
    record_.level = level;  // the block's level, for every piece of it
    record_.time_ns = time_ns;
    record_.offset = offset;
    record_.flags = flags;
    record_.line.assign(line);
    lines_ = 1;
    return;
  }
  record_.line.push_back('\n');
  record_.line.append(line);
  record_.flags |= flags;
  ++lines_;
}

void MultilineJoiner::Emit(std::vector<wire::LogRecord>* out) {
  if (state_ == State::kIdle) return;
  out->push_back(std::move(record_));
  for (auto& t : tentative_) out->push_back(std::move(t));
  tentative_.clear();
  record_ = wire::LogRecord{};
  lines_ = 0;
  state_ = State::kIdle;
}

void MultilineJoiner::Push(std::string_view line, uint64_t offset, int64_t time_ns, uint8_t flags,
                           int64_t now_ms, std::vector<wire::LogRecord>* out, std::string* owner) {
  last_push_ms_ = now_ms;
  if (!options_.enabled) {
    const wire::LogLevel level = DetectLevel(line);
    out->push_back(FirstLine(line, offset, time_ns, flags, owner));
    out->back().level = level;
    return;
  }
  if (state_ == State::kIdle) {
    Start(line, offset, time_ns, flags, owner, out);
    return;
  }
  size_t pl = WorkerPrefixLen(line);
  std::string_view body = line.substr(pl);
  State next = State::kIdle;
  if (!SamePrefix(line.substr(0, pl), prefix_)) {
    next = State::kIdle;
  } else if (IsBlank(body)) {
    if (state_ == State::kException && tentative_.size() < 2) {
      tentative_.push_back(FirstLine(line, offset, time_ns, flags, owner));
      return;
    }
    if (state_ == State::kPyChain) {
      Append(line, offset, time_ns, flags, out);
      return;
    }
  } else {
    next = Continues(body);
    // Held blank lines belong to the block only when a chained traceback
    // follows them.
    if (!tentative_.empty() && next != State::kPyChain) next = State::kIdle;
  }
  if (next == State::kIdle) {
    Emit(out);
    Start(line, offset, time_ns, flags, owner, out);
    return;
  }
  for (auto& t : tentative_) Append(t.line, t.offset, t.time_ns, t.flags, out);
  tentative_.clear();
  Append(line, offset, time_ns, flags, out);
  state_ = next;
}

void MultilineJoiner::Flush(int64_t now_ms, std::vector<wire::LogRecord>* out) {
  if (state_ != State::kIdle && now_ms - last_push_ms_ >= options_.flush_timeout_ms) {
    Emit(out);
  }
}

void MultilineJoiner::FlushAll(std::vector<wire::LogRecord>* out) { Emit(out); }

std::optional<uint64_t> MultilineJoiner::PendingStartOffset() const {
  if (state_ == State::kIdle) return std::nullopt;
  return record_.offset;
}

}  // namespace vigil::parse::logs
