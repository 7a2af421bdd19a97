#include "diagnose/job_log_events.h"

#include <algorithm>
#include <deque>

#include "parse/training/log_events.h"

namespace vigil::diagnose {
namespace {

namespace training = parse::training;

constexpr int64_t kNsPerMs = 1'000'000;

// What identifies a run's lines: a change (a run whose lines start to carry
// its `run` label) means reading it afresh.
std::string Signature(const RunLines& lines) {
  std::string s = std::to_string(lines.start_ns);
  for (const logstore::LabelMatcher& m : lines.matchers) {
    s += '\x1f' + std::to_string(static_cast<int>(m.type)) + m.name + '\x1e' + m.value;
  }
  return s;
}

}  // namespace

struct JobLogEvents::Run {
  std::mutex mu;  // serialises the reads of this run
  std::string signature;
  bool read = false;    // read at least once
  bool frozen = false;  // final and read: nothing more to read
  uint64_t cursor = 0;  // the newest sequence number already considered
  uint64_t lines = 0;   // lines fed to the detectors
  // One detector per stream (stdout, a log file): records in order.
  std::map<uint64_t, training::LogEventDetector> detectors;
  // The events with the count of lines fed when each was found, oldest first.
  std::deque<std::pair<uint64_t, TimedEvent>> events;
};

std::vector<TimedEvent> JobLogEvents::Get(const logstore::LogStore& logs, const std::string& key,
                                          const RunLines& lines) {
  std::shared_ptr<Run> run;
  {
    std::lock_guard lock(mu_);
    std::shared_ptr<Run>& slot = runs_[key];
    if (!slot) slot = std::make_shared<Run>();
    run = slot;
  }
  std::lock_guard lock(run->mu);
  const std::string signature = Signature(lines);
  if (!run->read || run->signature != signature) {
    run->signature = signature;
    ReadFresh(logs, lines, run.get());
  } else if (!run->frozen) {
    ReadNew(logs, lines, run.get());
  }
  run->frozen = lines.final;
  // Only the newest window's events, as a fresh read of the run would give.
  while (!run->events.empty() && run->events.front().first + window_lines_ <= run->lines) {
    run->events.pop_front();
  }
  std::vector<TimedEvent> out;
  out.reserve(run->events.size());
  for (const auto& [line, event] : run->events) out.push_back(event);
  return out;
}

bool JobLogEvents::HasLines(const logstore::LogStore& logs, const std::string& key,
                            const RunLines& lines) {
  {
    std::lock_guard lock(mu_);
    if (with_lines_.count(key)) return true;
  }
  logstore::LogQuery q;
  q.matchers = lines.matchers;
  q.start_ns = lines.start_ns;
  q.end_ns = lines.end_ns;
  q.limit = 1;
  auto result = logs.Query(q);
  if (!result.ok() || result->entries.empty()) return false;
  std::lock_guard lock(mu_);
  with_lines_.insert(key);
  return true;
}

void JobLogEvents::Keep(const std::set<std::string>& keys) {
  std::lock_guard lock(mu_);
  std::erase_if(runs_, [&](const auto& r) { return keys.count(r.first) == 0; });
  std::erase_if(with_lines_, [&](const std::string& k) { return keys.count(k) == 0; });
}

// The run's newest window_lines lines, oldest first. The cursor starts at the
// store's newest sequence number as it was before the query: a line appended
// during the query is then either in its answer or after the cursor, and the
// newest seen line moves the cursor past what the answer held.
void JobLogEvents::ReadFresh(const logstore::LogStore& logs, const RunLines& lines,
                             Run* run) const {
  const uint64_t before = logs.LastSeq();
  logstore::LogQuery q;
  q.matchers = lines.matchers;
  q.start_ns = lines.start_ns;
  q.end_ns = lines.end_ns;
  q.limit = window_lines_;
  q.forward = false;  // the newest lines: that is where a run ends
  auto result = logs.Query(q);
  if (!result.ok()) return;  // not read: the next call tries again
  run->read = true;
  run->lines = 0;
  run->detectors.clear();
  run->events.clear();
  run->cursor = before;
  for (auto it = result->entries.rbegin(); it != result->entries.rend(); ++it) Feed(*it, run);
}

// The lines appended since the cursor; more than a window of them means the
// window is all new: read afresh.
void JobLogEvents::ReadNew(const logstore::LogStore& logs, const RunLines& lines, Run* run) const {
  logstore::LogQuery q;
  q.matchers = lines.matchers;
  q.limit = window_lines_;
  auto fresh = logs.Since(q, run->cursor);
  if (!fresh.ok()) return;
  if (fresh->size() >= window_lines_) {
    ReadFresh(logs, lines, run);
    return;
  }
  for (const logstore::LogEntry& e : *fresh) {
    if (e.time_ns < lines.start_ns || e.time_ns >= lines.end_ns) {
      run->cursor = std::max(run->cursor, e.seq);
      continue;
    }
    Feed(e, run);
  }
}

void JobLogEvents::Feed(const logstore::LogEntry& entry, Run* run) const {
  run->cursor = std::max(run->cursor, entry.seq);
  ++run->lines;
  training::LogEventDetector& detector = run->detectors[entry.ref.stream_id];
  for (training::Event& ev :
       detector.Detect(entry.line, static_cast<int64_t>(entry.ref.line_no) + 1)) {
    run->events.push_back({run->lines, {entry.time_ns / kNsPerMs, std::move(ev)}});
  }
}

}  // namespace vigil::diagnose
