// The verdict on a job: running, stalled, completed, crashed, killed or
// exited, and why, from the evidence Vigil has about it (docs/jobs.md
// "States"). Status must be right where popular tools get it wrong: a run
// that crashed is not shown as running, a run still training is not shown as
// crashed however many errors it logged, and a scheduler's SIGTERM
// (cancel, preemption), the OOM killer and a crash are told apart.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parse/training/log_events.h"
#include "wire/jobs.h"

namespace vigil::diagnose {

enum class JobState { kRunning, kStalled, kCompleted, kCrashed, kKilled, kExited };
const char* JobStateName(JobState state);  // "running", "stalled", ...

// How a `vigil run` wrapper saw its command end (its spool record), as the
// agent reports it (wire/jobs.h).
using RunExit = wire::RunExitRecord;

// An event read from the job's logs, with the time of its line.
struct TimedEvent {
  int64_t time_ms = 0;
  parse::training::Event event;
};

struct JobEvidence {
  bool ended = false;  // no process of the job is left
  int64_t end_ms = 0;  // when it was last seen alive (when ended)
  std::optional<RunExit> run_exit;
  std::vector<TimedEvent> events;  // oldest first
  // Progress, from the job's training_step series: when the step last
  // changed and its usual interval (median of recent ones).
  std::optional<int64_t> last_step_change_ms;
  std::optional<int64_t> step_interval_ms;
  int64_t now_ms = 0;
};

struct JobVerdict {
  JobState state = JobState::kRunning;
  // An event kind (docs/training-events.md), "signal", "exit_code",
  // "stalled", or "" when there is nothing to say.
  std::string reason;
  std::string reason_text;  // for a person, English
};

// A failure logged this long before a job ended explains the end; an
// older one (a traceback a run caught and survived) does not.
inline constexpr int64_t kFailureWindowMs = 120'000;

// A job is stalled when its step has not changed for this many usual
// intervals, and at least kMinStallMs.
inline constexpr int64_t kStallIntervals = 5;
inline constexpr int64_t kMinStallMs = 60'000;

JobVerdict Judge(const JobEvidence& evidence);

// Whether an event of this kind ends a run when it happens (a traceback, an
// OOM) rather than being a warning a run survives (nan loss, fp16 overflow,
// completion).
bool IsFailure(parse::training::EventKind kind);

}  // namespace vigil::diagnose
