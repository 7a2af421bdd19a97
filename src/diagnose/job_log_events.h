// The failure and progress events in job runs' logs (OOMs, tracebacks, NCCL
// errors, ...), read incrementally for the job reports.
//
// A report is built every few seconds for every running job (the alert
// engine's job rules, the jobs API). Reading each run's newest lines again
// at every report made its cost grow with the runs' output; here the first
// read of a run takes its newest `window_lines` lines, and later reads take
// only the lines appended since (LogStore::Since, a sequence-number cursor,
// so no line is read twice or skipped). The events kept are those of the
// newest `window_lines` lines read, as a fresh read would give; when more
// than that arrived between two reads, the run is read afresh.
//
// Thread safety: every method may be called from any thread; reads of one
// run are serialised (its detectors carry state across lines).
#ifndef VIGIL_DIAGNOSE_JOB_LOG_EVENTS_H_
#define VIGIL_DIAGNOSE_JOB_LOG_EVENTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "diagnose/verdict.h"
#include "store/logs/log_store.h"

namespace vigil::diagnose {

// Which lines of the store belong to one run.
struct RunLines {
  std::vector<logstore::LabelMatcher> matchers;
  int64_t start_ns = 0;        // inclusive
  int64_t end_ns = INT64_MAX;  // exclusive (an ended run's last lines)
  // The run ended long enough ago that no line of it can still arrive: its
  // events are read once more, then kept as they are.
  bool final = false;
};

class JobLogEvents {
 public:
  explicit JobLogEvents(size_t window_lines) : window_lines_(window_lines) {}

  // The events of run `key` (any string naming it), oldest first. A read
  // error keeps the events already found.
  std::vector<TimedEvent> Get(const logstore::LogStore& logs, const std::string& key,
                              const RunLines& lines);

  // Whether the store holds a line of run `key` under `lines` (matchers and
  // start; its limit of one line). Remembered once true: a run whose lines
  // carry its `run` label keeps them, so only runs not labelled yet (found
  // passively: no stream matches, a cheap query) are asked again.
  bool HasLines(const logstore::LogStore& logs, const std::string& key, const RunLines& lines);

  // Forgets the runs not in `keys`.
  void Keep(const std::set<std::string>& keys);

 private:
  struct Run;
  void ReadFresh(const logstore::LogStore& logs, const RunLines& lines, Run* run) const;
  void ReadNew(const logstore::LogStore& logs, const RunLines& lines, Run* run) const;
  void Feed(const logstore::LogEntry& entry, Run* run) const;

  const size_t window_lines_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Run>> runs_;  // guarded by mu_
  std::set<std::string> with_lines_;                  // guarded by mu_
};

}  // namespace vigil::diagnose

#endif  // VIGIL_DIAGNOSE_JOB_LOG_EVENTS_H_
