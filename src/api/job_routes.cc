#include "api/job_routes.h"

#include <algorithm>
#include <map>

#include "api/params.h"
#include "core/json_writer.h"

namespace vigil::api {
namespace {

using collect::jobs::JobEvidence;
using collect::jobs::TimedEvent;
using collect::jobs::TrackedJob;

constexpr int64_t kNsPerMs = 1'000'000;
// Lines a job's processes print after it was last seen alive (the launcher's
// summary of a failed rank) still belong to its end.
constexpr int64_t kAfterEndMs = 60'000;
// Progress is judged on the recent past only.
constexpr int64_t kStepWindowMs = 6 * 3600 * 1000;
constexpr size_t kStepIntervals = 20;
constexpr size_t kEventsShown = 50;

std::string LogSelector(const std::string& job) {
  std::string escaped;
  for (char c : job) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return "{job=\"" + escaped + "\"}";
}

// Events in the job's newest log lines, oldest first: one detector per
// stream, records in order.
std::vector<TimedEvent> EventsFromLogs(const JobRouteDeps& deps, const TrackedJob& t) {
  std::vector<TimedEvent> out;
  if (deps.logs == nullptr || t.job.name.empty()) return out;
  logstore::LogQuery q;
  q.matchers = {{logstore::MatchType::kEqual, "job", t.job.name}};
  q.start_ns = std::max<int64_t>(0, t.job.start_time_ms - 1000) * kNsPerMs;
  q.end_ns = t.ended ? (t.last_seen_ms + kAfterEndMs) * kNsPerMs : INT64_MAX;
  q.limit = deps.event_lines;
  q.forward = false;  // the newest lines: that is where a run ends
  auto result = deps.logs->Query(q);
  if (!result.ok()) return out;
  std::map<uint64_t, collect::training::LogEventDetector> detectors;
  for (auto it = result->entries.rbegin(); it != result->entries.rend(); ++it) {
    auto ev = detectors[it->ref.stream_id].Detect(it->line, 1);
    if (ev) out.push_back({it->time_ns / kNsPerMs, std::move(*ev)});
  }
  return out;
}

struct Progress {
  std::optional<double> last_step;
  std::optional<int64_t> last_step_ms;  // time of its newest sample
  std::optional<int64_t> last_change_ms;
  std::optional<int64_t> interval_ms;  // median of recent changes
};

Progress StepProgress(const JobRouteDeps& deps, const TrackedJob& t, int64_t now) {
  Progress p;
  if (deps.db == nullptr || t.job.name.empty()) return p;
  auto series = deps.db->Select({{tsdb::MatchType::kEqual, "__name__", "training_step"},
                                 {tsdb::MatchType::kEqual, "job", t.job.name}},
                                std::max(t.job.start_time_ms, now - kStepWindowMs), now);
  if (!series.ok()) return p;
  // Several streams (stdout, a log file) may report the step: merge by time.
  std::vector<wire::Sample> samples;
  for (const auto& s : *series) samples.insert(samples.end(), s.samples.begin(), s.samples.end());
  std::sort(samples.begin(), samples.end(),
            [](const wire::Sample& a, const wire::Sample& b) { return a.t_ms < b.t_ms; });
  std::vector<int64_t> changes;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i == 0 || samples[i].value != samples[i - 1].value) changes.push_back(samples[i].t_ms);
  }
  if (samples.empty()) return p;
  p.last_step = samples.back().value;
  p.last_step_ms = samples.back().t_ms;
  p.last_change_ms = changes.back();
  if (changes.size() >= 3) {
    std::vector<int64_t> gaps;
    for (size_t i = changes.size() > kStepIntervals ? changes.size() - kStepIntervals : 1;
         i < changes.size(); ++i) {
      gaps.push_back(changes[i] - changes[i - 1]);
    }
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    p.interval_ms = std::max<int64_t>(1, gaps[gaps.size() / 2]);
  }
  return p;
}

void WriteEvent(const TimedEvent& e, JsonWriter* w) {
  w->BeginObject();
  w->Key("time_ms").Int(e.time_ms);
  w->Key("event").String(collect::training::EventKindName(e.event.kind));
  w->Key("details").BeginObject();
  for (const auto& d : e.event.details) {
    w->Key(d.key);
    if (d.number) {
      w->Double(std::strtod(d.value.c_str(), nullptr));
    } else {
      w->String(d.value);
    }
  }
  w->EndObject();
  w->EndObject();
}

void WriteJob(const JobRouteDeps& deps, const TrackedJob& t, bool with_events, int64_t now,
              JsonWriter* w) {
  const discover::DetectedJob& j = t.job;
  JobEvidence ev;
  ev.ended = t.ended;
  ev.end_ms = t.last_seen_ms;
  ev.run_exit = t.run_exit;
  ev.now_ms = now;
  if (with_events) ev.events = EventsFromLogs(deps, t);
  // What the kernel said about its processes (OOM killer, Xid) joins them in time.
  for (const collect::jobs::KernelEvent& k : t.kernel_events) {
    ev.events.push_back({k.time_ms, k.event});
  }
  std::stable_sort(ev.events.begin(), ev.events.end(),
                   [](const TimedEvent& a, const TimedEvent& b) { return a.time_ms < b.time_ms; });
  Progress progress = StepProgress(deps, t, now);
  ev.last_step_change_ms = progress.last_change_ms;
  ev.step_interval_ms = progress.interval_ms;
  collect::jobs::JobVerdict v = collect::jobs::Judge(ev);

  w->BeginObject();
  w->Key("id").String(j.id).Key("name").String(j.name);
  w->Key("kind").String(discover::JobKindName(j.kind));
  w->Key("framework").String(discover::FrameworkName(j.framework));
  w->Key("launcher").String(j.launcher).Key("trainer").String(j.trainer);
  w->Key("state").String(collect::jobs::JobStateName(v.state));
  w->Key("reason").String(v.reason).Key("reason_text").String(v.reason_text);
  w->Key("exit_code");
  if (t.run_exit && t.run_exit->exit_code) {
    w->Int(*t.run_exit->exit_code);
  } else {
    w->Null();
  }
  w->Key("exit_signal");
  if (t.run_exit && t.run_exit->signal != 0) {
    w->String("SIG" + t.run_exit->signal_name);
  } else {
    w->Null();
  }
  w->Key("node").String(deps.node).Key("container_id").String(j.container_id);
  w->Key("world_size").Int(j.world_size);
  w->Key("start_time_ms").Int(j.start_time_ms);
  w->Key("end_time_ms");
  if (t.ended) {
    w->Int(t.run_exit && t.run_exit->ended_ms > 0 ? t.run_exit->ended_ms : t.last_seen_ms);
  } else {
    w->Null();
  }
  w->Key("last_seen_ms").Int(t.last_seen_ms);
  w->Key("last_step");
  if (progress.last_step) {
    w->Double(*progress.last_step);
  } else {
    w->Null();
  }
  w->Key("last_step_time_ms");
  if (progress.last_step_ms) {
    w->Int(*progress.last_step_ms);
  } else {
    w->Null();
  }
  w->Key("processes").BeginArray();
  for (const auto& p : j.processes) {
    w->BeginObject().Key("pid").Int(p.pid).Key("rank").Int(p.rank);
    w->Key("local_rank").Int(p.local_rank);
    w->Key("role").String(discover::JobProcessRoleName(p.role));
    w->Key("cmdline").String(p.cmdline);
    w->EndObject();
  }
  w->EndArray();
  w->Key("events").BeginArray();
  size_t first = ev.events.size() > kEventsShown ? ev.events.size() - kEventsShown : 0;
  for (size_t i = first; i < ev.events.size(); ++i) WriteEvent(ev.events[i], w);
  w->EndArray();
  w->Key("log_query").String(LogSelector(j.name));
  w->EndObject();
}

HttpResponse Jobs(const JobRouteDeps& deps) {
  const int64_t now = deps.env->NowMillis();
  std::vector<TrackedJob> jobs = deps.tracker->Jobs();  // running first, newest first
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("jobs").BeginArray();
  for (size_t i = 0; i < jobs.size(); ++i) {
    WriteJob(deps, jobs[i], i < deps.jobs_with_events, now, &w);
  }
  w.EndArray().EndObject().EndObject();
  HttpResponse res;
  res.content_type = "application/json";
  res.body = w.Release();
  return res;
}

}  // namespace

void AddJobRoutes(Router* router, JobRouteDeps deps) {
  router->Handle("GET", "/api/v1/jobs", [deps](const HttpRequest&) { return Jobs(deps); });
}

}  // namespace vigil::api
