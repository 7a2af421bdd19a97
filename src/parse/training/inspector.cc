#include "parse/training/inspector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace vigil::parse::training {
namespace {

// "loss", "eval_loss", "lm_loss", "val/loss": what a diverging run ruins.
bool IsLossName(std::string_view name) {
  if (name.size() < 4) return false;
  std::string_view tail = name.substr(name.size() - 4);
  for (size_t i = 0; i < 4; ++i) {
    char c = tail[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != "loss"[i]) return false;
  }
  return true;
}

const char* NonFiniteText(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace

Inspector::Inspector(Sink sink) : sink_(std::move(sink)) {}

void Inspector::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view piece = bytes.substr(0, nl);
    if (!overlong_) {
      size_t room = kMaxLineBytes - partial_.size();
      if (piece.size() > room) {
        partial_.append(piece.substr(0, room));
        overlong_ = true;
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) return;
    bytes.remove_prefix(nl + 1);
    std::string_view line = partial_;
    // "\r\n" ends a line like "\n"; a '\r' inside the line is a progress update.
    if (!overlong_ && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    OnLine(line);
    partial_.clear();
    overlong_ = false;
  }
}

void Inspector::Finish() {
  if (!partial_.empty()) {
    std::string_view line = partial_;
    if (!overlong_ && line.back() == '\r') line.remove_suffix(1);
    OnLine(line);
    partial_.clear();
    overlong_ = false;
  }
  joiner_.FlushAll(&records_);
  OnRecords();
  Drain(std::numeric_limits<int64_t>::max());
}

void Inspector::OnLine(std::string_view line) {
  ++line_;
  OnMetrics(line);
  // The line number stands in for the byte offset: records then say which
  // line they begin on.
  joiner_.Push(line, static_cast<uint64_t>(line_), 0, 0, 0, &records_);
  OnRecords();
  auto held = joiner_.PendingStartOffset();
  Drain(held ? static_cast<int64_t>(*held) : std::numeric_limits<int64_t>::max());
}

void Inspector::OnMetrics(std::string_view line) {
  samples_.clear();
  metrics_.Extract(line, &samples_);
  for (const MetricSample& s : samples_) {
    pending_.push_back({line_, 0, MetricSampleJson(line_, s)});
    if (!IsLossName(s.name)) continue;
    auto it = nonfinite_.find(s.name);
    if (std::isfinite(s.value)) {
      if (it != nonfinite_.end()) it->second = false;
      continue;
    }
    if (it == nonfinite_.end()) it = nonfinite_.emplace(s.name, false).first;
    if (it->second) continue;  // the run already raised its event
    it->second = true;
    Event ev;
    ev.kind = EventKind::kNanLoss;
    ev.line = line_;
    ev.AddString("metric", s.name);
    ev.AddString("value", NonFiniteText(s.value));
    if (s.step) ev.AddNumber("step", *s.step);
    pending_.push_back({line_, 1, EventJson(ev)});
    last_nan_line_ = line_;
  }
}

void Inspector::OnRecords() {
  for (const wire::LogRecord& r : records_) {
    for (const Event& ev : detector_.Detect(r.line, static_cast<int64_t>(r.offset))) {
      // "Loss is nan" on a line whose value already raised nan_loss.
      if (ev.kind == EventKind::kNanLoss && ev.line == last_nan_line_) continue;
      pending_.push_back({ev.line, 1, EventJson(ev)});
    }
  }
  records_.clear();
}

void Inspector::Drain(int64_t limit) {
  if (pending_.empty()) return;
  std::stable_sort(pending_.begin(), pending_.end(), [](const Item& a, const Item& b) {
    return a.line != b.line ? a.line < b.line : a.order < b.order;
  });
  size_t n = 0;
  while (n < pending_.size() && pending_[n].line < limit) {
    sink_(pending_[n].json);
    ++n;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
}

}  // namespace vigil::parse::training
