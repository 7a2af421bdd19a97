#include "diagnose/verdict.h"

#include <algorithm>
#include <string_view>

namespace vigil::diagnose {
namespace {

using parse::training::EventKind;

std::string DurationText(int64_t ms) {
  int64_t s = std::max<int64_t>(0, ms / 1000);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h " + std::to_string(s % 3600 / 60) + "m";
}

// What a person should read about an event: its message, else the
// exception, with the Xid's meaning in front.
std::string EventText(const parse::training::Event& e) {
  std::string text;
  if (const auto* m = e.Find("message")) text = m->value;
  if (text.empty()) {
    if (const auto* x = e.Find("exception")) text = x->value;
  }
  if (e.kind == EventKind::kOomKilled && text.empty()) {
    text = "killed by the kernel's OOM killer: the machine ran out of memory";
    if (const auto* p = e.Find("process")) text += " (" + p->value + ")";
  }
  if (e.kind == EventKind::kXid) {
    std::string head = "Xid";
    if (const auto* x = e.Find("xid")) head += " " + x->value;
    if (const auto* m = e.Find("meaning")) head += ": " + m->value;
    text = head;
  }
  return text.empty() ? std::string(parse::training::EventKindName(e.kind)) : text;
}

JobVerdict FromEvent(JobState state, const TimedEvent& e) {
  return {state, parse::training::EventKindName(e.event.kind), EventText(e.event)};
}

// Signals a scheduler, a user or a supervisor sends to stop a job: a cancel
// or a preemption (srun, kubelet, systemd), not a crash.
bool IsStopSignal(std::string_view name) {
  return name == "TERM" || name == "INT" || name == "HUP" || name == "QUIT" || name == "USR1" ||
         name == "USR2" || name == "XCPU";
}

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return "running";
    case JobState::kStalled:
      return "stalled";
    case JobState::kCompleted:
      return "completed";
    case JobState::kCrashed:
      return "crashed";
    case JobState::kKilled:
      return "killed";
    case JobState::kExited:
      return "exited";
  }
  return "exited";
}

bool IsFailure(EventKind kind) {
  switch (kind) {
    case EventKind::kNanLoss:
    case EventKind::kLossOverflow:
    case EventKind::kCompleted:
      return false;
    default:
      return true;
  }
}

JobVerdict Judge(const JobEvidence& ev) {
  if (!ev.ended) {
    // Alive: whatever it logged, it is running, unless its step stopped.
    if (ev.last_step_change_ms && ev.step_interval_ms) {
      int64_t quiet = ev.now_ms - *ev.last_step_change_ms;
      int64_t limit = std::max(kStallIntervals * *ev.step_interval_ms, kMinStallMs);
      if (quiet > limit) {
        return {JobState::kStalled, "stalled",
                "no training step for " + DurationText(quiet) + " (usually every " +
                    DurationText(*ev.step_interval_ms) +
                    ") while its processes are alive; a hung collective (NCCL) looks like this"};
      }
    }
    return {JobState::kRunning, "", ""};
  }

  // The last failure near the end. A traceback says less than the kind it
  // comes with (a CUDA OOM is reported as both): it is the reason only when
  // nothing more specific is near the end.
  const TimedEvent* failure = nullptr;
  const TimedEvent* traceback = nullptr;
  const TimedEvent* completed = nullptr;
  const TimedEvent* nan = nullptr;
  for (const TimedEvent& e : ev.events) {
    if (e.event.kind == EventKind::kCompleted) completed = &e;
    if (e.event.kind == EventKind::kNanLoss) nan = &e;
    if (!IsFailure(e.event.kind) || e.time_ms < ev.end_ms - kFailureWindowMs) continue;
    (e.event.kind == EventKind::kTraceback ? traceback : failure) = &e;
  }
  if (failure == nullptr) failure = traceback;
  auto crashed = [&](std::string fallback_reason, std::string fallback_text) -> JobVerdict {
    if (failure != nullptr) return FromEvent(JobState::kCrashed, *failure);
    if (nan != nullptr) return FromEvent(JobState::kCrashed, *nan);
    return {JobState::kCrashed, std::move(fallback_reason), std::move(fallback_text)};
  };

  if (ev.run_exit) {
    const RunExit& x = *ev.run_exit;
    std::string sig = x.signal_name;
    if (x.exit_code) {
      int code = *x.exit_code;
      if (code == 0) return {JobState::kCompleted, "", "exited with status 0"};
      // A shell or launcher reports a child killed by signal N as 128 + N.
      if (code == 128 + 9) sig = "KILL";
      if (code == 128 + 15) sig = "TERM";
      if (code == 128 + 2) sig = "INT";
      if (sig.empty()) return crashed("exit_code", "exited with status " + std::to_string(code));
    }
    if (IsStopSignal(sig)) {
      return {JobState::kKilled, "signal",
              "stopped by SIG" + sig + " (a scheduler's cancel or preemption, or a user)"};
    }
    if (sig == "KILL") {
      if (failure != nullptr && failure->event.kind == EventKind::kOomKilled) {
        return FromEvent(JobState::kCrashed, *failure);
      }
      return {JobState::kKilled, "signal", "killed by SIGKILL"};
    }
    if (sig == "SEGV" || sig == "BUS") return crashed("segfault", "killed by SIG" + sig);
    return crashed("signal", "killed by SIG" + sig);
  }

  if (failure != nullptr && (completed == nullptr || failure->time_ms >= completed->time_ms)) {
    return FromEvent(JobState::kCrashed, *failure);
  }
  if (completed != nullptr) return FromEvent(JobState::kCompleted, *completed);
  return {JobState::kExited, "",
          "ended; its exit status is unknown (start it with `vigil run` to record it) and its "
          "log shows no error"};
}

}  // namespace vigil::diagnose
