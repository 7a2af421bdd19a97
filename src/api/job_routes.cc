#include "api/job_routes.h"

#include <cstdlib>

#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"
#include "parse/training/xid.h"

namespace vigil::api {
namespace {

namespace training = parse::training;

constexpr size_t kEventsShown = 50;
constexpr size_t kEfficiencyShown = 50;
constexpr int64_t kNodeEventsWindowMs = 24 * 3600 * 1000;
constexpr size_t kNodeEventsShown = 500;

// "event" and "details" of an event; an Xid's meaning and action also in
// Chinese (the UI and notifications speak both).
void WriteEventBody(const training::Event& e, JsonWriter* w) {
  w->Key("event").String(training::EventKindName(e.kind));
  w->Key("details").BeginObject();
  for (const auto& d : e.details) {
    w->Key(d.key);
    if (d.number) {
      w->Double(std::strtod(d.value.c_str(), nullptr));
    } else {
      w->String(d.value);
    }
  }
  if (e.kind == training::EventKind::kXid) {
    const training::EventDetail* code = e.Find("xid");
    const training::XidInfo& info =
        training::DescribeXid(static_cast<int>(ParseInt64(code ? code->value : "").value_or(0)));
    w->Key("meaning_zh").String(info.meaning_zh).Key("action_zh").String(info.action_zh);
  }
  w->EndObject();
}

template <typename T>
void IntOrNull(const std::optional<T>& v, JsonWriter* w) {
  if (v) {
    w->Int(*v);
  } else {
    w->Null();
  }
}

void WriteProcessesAndGpus(const diagnose::JobReport& r, JsonWriter* w) {
  w->Key("processes").BeginArray();
  for (const wire::JobProcessRecord& p : r.job.processes) {
    w->BeginObject().Key("pid").Int(p.pid).Key("rank").Int(p.rank);
    w->Key("local_rank").Int(p.local_rank);
    w->Key("role").String(p.role);
    w->Key("cmdline").String(p.cmdline);
    w->EndObject();
  }
  w->EndArray();
  w->Key("gpus").BeginArray();
  for (const diagnose::JobGpu& g : r.gpus) {
    w->BeginObject().Key("gpu").String(g.gpu).Key("uuid").String(g.uuid).Key("memory_bytes");
    if (g.memory_bytes) {
      w->Double(*g.memory_bytes);
    } else {
      w->Null();
    }
    w->EndObject();
  }
  w->EndArray();
}

// The job's efficiency report, or null when there is none to give (no
// reporter, or the store failed: the rest of the answer still stands).
void WriteEfficiency(diagnose::EfficiencyReporter* efficiency, const diagnose::JobReport& r,
                     int64_t now, JsonWriter* w) {
  if (efficiency == nullptr) {
    w->Null();
    return;
  }
  auto e = efficiency->For(r, now);
  if (e.ok()) {
    diagnose::WriteEfficiencyJson(*e, w);
  } else {
    w->Null();
  }
}

// What GET /api/v1/jobs adds to each job when asked (efficiency=1).
struct JobExtras {
  bool efficiency = false;
  diagnose::EfficiencyReporter* reporter = nullptr;
  int64_t now = 0;
};

void WriteJob(const diagnose::JobReport& r, JsonWriter* w, const JobExtras& extras = {}) {
  const wire::JobRecord& j = r.job;
  w->BeginObject();
  w->Key("id").String(j.id).Key("name").String(j.name);
  w->Key("kind").String(j.kind);
  w->Key("framework").String(j.framework);
  w->Key("launcher").String(j.launcher).Key("trainer").String(j.trainer);
  w->Key("state").String(r.state);
  w->Key("reason").String(r.verdict.reason).Key("reason_text").String(r.verdict.reason_text);
  w->Key("exit_code");
  IntOrNull(j.run_exit ? j.run_exit->exit_code : std::nullopt, w);
  w->Key("exit_signal");
  if (j.run_exit && j.run_exit->signal != 0) {
    w->String("SIG" + j.run_exit->signal_name);
  } else {
    w->Null();
  }
  w->Key("node").String(r.node).Key("container_id").String(j.container_id);
  // Whose job: who an alert about it should reach (-1 and "" when not known).
  w->Key("user").String(j.user).Key("uid").Int(j.uid);
  w->Key("world_size").Int(j.world_size);
  w->Key("start_time_ms").Int(j.start_time_ms);
  w->Key("end_time_ms");
  if (j.ended) {
    w->Int(j.run_exit && j.run_exit->ended_ms > 0 ? j.run_exit->ended_ms : j.last_seen_ms);
  } else {
    w->Null();
  }
  w->Key("last_seen_ms").Int(j.last_seen_ms);
  w->Key("last_step");
  if (r.progress.last_step) {
    w->Double(*r.progress.last_step);
  } else {
    w->Null();
  }
  w->Key("last_step_time_ms");
  IntOrNull(r.progress.last_step_ms, w);
  WriteProcessesAndGpus(r, w);
  w->Key("events").BeginArray();
  size_t first = r.events.size() > kEventsShown ? r.events.size() - kEventsShown : 0;
  for (size_t i = first; i < r.events.size(); ++i) {
    w->BeginObject().Key("time_ms").Int(r.events[i].time_ms);
    WriteEventBody(r.events[i].event, w);
    w->EndObject();
  }
  w->EndArray();
  w->Key("log_query").String(diagnose::JobLogSelector(r));
  // The same matchers select its training series (PromQL).
  w->Key("series_selector").String(diagnose::JobLogSelector(r));
  if (extras.efficiency) {
    w->Key("efficiency");
    WriteEfficiency(extras.reporter, r, extras.now, w);
  }
  w->EndObject();
}

// GET /api/v1/jobs[?node=][&efficiency=1]: running jobs first, then the
// newest, across nodes.
net::HttpResponse Jobs(const JobRouteDeps& deps, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  // Efficiency costs a few range queries per job (until it settles): only
  // when asked, and for the first kEfficiencyShown (running, then newest):
  // a first request over a long history must not compute hundreds at once.
  const bool efficiency = Param(*params, "efficiency").value_or("") == "1";
  JobExtras extras{efficiency, deps.efficiency, deps.reporter->NowMillis()};
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("jobs").BeginArray();
  size_t shown = 0;
  for (const diagnose::JobReport& r : deps.reporter->Reports(Param(*params, "node").value_or(""))) {
    extras.reporter = shown++ < kEfficiencyShown ? deps.efficiency : nullptr;
    WriteJob(r, &w, extras);
  }
  w.EndArray().EndObject().EndObject();
  return JsonOk(w.Release());
}

// GET /api/v1/jobs/efficiency?id=[&node=]: one job's efficiency report. A
// job id is unique per node (its pid, start and boot); `node` tells two
// nodes' apart.
net::HttpResponse JobEfficiency(const JobRouteDeps& deps, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  const std::string id = Param(*params, "id").value_or("");
  if (id.empty()) return Error(400, "bad_data", "id is required (a job id from /api/v1/jobs)");
  if (deps.efficiency == nullptr) {
    return Error(503, "unavailable", "this server has no metrics store for efficiency reports");
  }
  const std::string node = Param(*params, "node").value_or("");
  for (const diagnose::JobReport& r : deps.reporter->Reports(node)) {
    if (r.job.id != id) continue;
    auto e = deps.efficiency->For(r, deps.reporter->NowMillis());
    if (!e.ok()) return FromStatus(e.status());
    JsonWriter w;
    w.BeginObject().Key("status").String("success").Key("data").BeginObject();
    w.Key("job_id").String(r.job.id).Key("node").String(r.node).Key("name").String(r.job.name);
    w.Key("efficiency");
    diagnose::WriteEfficiencyJson(*e, &w);
    w.EndObject().EndObject();
    return JsonOk(w.Release());
  }
  return Error(404, "not_found", "no job " + id + (node.empty() ? "" : " on node " + node));
}

// GET /api/v1/events?start_ms=&end_ms=[&node=]: the nodes' kernel events (OOM
// kills, Xid errors) and the Xids NVML reported that the kernel did not log.
net::HttpResponse NodeEvents(diagnose::JobReporter* reporter, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  const int64_t now = reporter->NowMillis();
  auto ms_param = [&](const char* key, int64_t fallback) -> std::optional<int64_t> {
    auto v = Param(*params, key);
    if (!v || v->empty()) return fallback;
    return ParseInt64(*v);
  };
  auto end = ms_param("end_ms", now);
  auto start = end ? ms_param("start_ms", *end - kNodeEventsWindowMs) : std::nullopt;
  if (!end || !start) {
    return Error(400, "bad_data", "start_ms and end_ms must be integers (Unix ms)");
  }
  std::vector<diagnose::NodeEvent> events =
      reporter->NodeEvents(*start, *end, Param(*params, "node").value_or(""));
  size_t first = events.size() > kNodeEventsShown ? events.size() - kNodeEventsShown : 0;
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("events").BeginArray();
  for (size_t i = first; i < events.size(); ++i) {
    const diagnose::NodeEvent& e = events[i];
    w.BeginObject().Key("time_ms").Int(e.time_ms).Key("node").String(e.node);
    w.Key("source").String(e.source).Key("gpu").String(e.gpu).Key("job_id").String(e.job_id);
    WriteEventBody(e.event, &w);
    w.EndObject();
  }
  w.EndArray().EndObject().EndObject();
  return JsonOk(w.Release());
}

}  // namespace

void AddJobRoutes(net::Router* router, JobRouteDeps deps) {
  diagnose::JobReporter* reporter = deps.reporter;
  router->Handle("GET", "/api/v1/jobs",
                 [deps](const net::HttpRequest& req) { return Jobs(deps, req); });
  router->Handle("GET", "/api/v1/jobs/efficiency",
                 [deps](const net::HttpRequest& req) { return JobEfficiency(deps, req); });
  router->Handle("GET", "/api/v1/events",
                 [reporter](const net::HttpRequest& req) { return NodeEvents(reporter, req); });
}

}  // namespace vigil::api
