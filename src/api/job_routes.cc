#include "api/job_routes.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>

#include "api/gpu_evidence.h"
#include "api/params.h"
#include "parse/training/xid.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

using collect::jobs::JobEvidence;
using collect::jobs::TimedEvent;
using collect::jobs::TrackedJob;
namespace training = parse::training;

constexpr int64_t kNsPerMs = 1'000'000;
// Lines a job's processes print after it was last seen alive (the launcher's
// summary of a failed rank) still belong to its end.
constexpr int64_t kAfterEndMs = 60'000;
// Progress is judged on the recent past only.
constexpr int64_t kStepWindowMs = 6 * 3600 * 1000;
constexpr size_t kStepIntervals = 20;
constexpr size_t kEventsShown = 50;
// An Xid NVML reported within this long of one the kernel logged with the
// same code is the same fault (the kernel's line has the pid and PCI address).
constexpr int64_t kSameXidMs = 60'000;
constexpr int64_t kNodeEventsWindowMs = 24 * 3600 * 1000;
constexpr size_t kNodeEventsShown = 500;

using training::EventKind;

// {job="<name>", node="<node>"}: the job's lines in the log API and the UI.
std::string LogSelector(const std::string& job, const std::string& node) {
  auto quoted = [](const std::string& v) {
    std::string out = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    return out + "\"";
  };
  return "{job=" + quoted(job) + ", node=" + quoted(node) + "}";
}

// Events in the job's newest log lines, oldest first: one detector per
// stream, records in order.
std::vector<TimedEvent> EventsFromLogs(const JobRouteDeps& deps, const std::string& node,
                                       const TrackedJob& t) {
  std::vector<TimedEvent> out;
  if (deps.logs == nullptr || t.job.name.empty()) return out;
  logstore::LogQuery q;
  q.matchers = {{logstore::MatchType::kEqual, "job", t.job.name},
                {logstore::MatchType::kEqual, "node", node}};
  q.start_ns = std::max<int64_t>(0, t.job.start_time_ms - 1000) * kNsPerMs;
  q.end_ns = t.ended ? (t.last_seen_ms + kAfterEndMs) * kNsPerMs : INT64_MAX;
  q.limit = deps.event_lines;
  q.forward = false;  // the newest lines: that is where a run ends
  auto result = deps.logs->Query(q);
  if (!result.ok()) return out;
  std::map<uint64_t, training::LogEventDetector> detectors;
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

Progress StepProgress(const JobRouteDeps& deps, const std::string& node, const TrackedJob& t,
                      int64_t now) {
  Progress p;
  if (deps.db == nullptr || t.job.name.empty()) return p;
  auto series = deps.db->Select({{tsdb::MatchType::kEqual, "__name__", "training_step"},
                                 {tsdb::MatchType::kEqual, "job", t.job.name},
                                 {tsdb::MatchType::kEqual, "node", node}},
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
  if (e.kind == EventKind::kXid) {
    const training::EventDetail* code = e.Find("xid");
    const training::XidInfo& info =
        training::DescribeXid(static_cast<int>(ParseInt64(code ? code->value : "").value_or(0)));
    w->Key("meaning_zh").String(info.meaning_zh).Key("action_zh").String(info.action_zh);
  }
  w->EndObject();
}

void WriteEvent(const TimedEvent& e, JsonWriter* w) {
  w->BeginObject();
  w->Key("time_ms").Int(e.time_ms);
  WriteEventBody(e.event, w);
  w->EndObject();
}

// An Xid NVML reported, as an event like the kernel's.
training::Event XidEvent(const GpuXid& x) {
  training::Event ev;
  ev.kind = EventKind::kXid;
  const training::XidInfo& info = training::DescribeXid(x.xid);
  ev.AddNumber("xid", x.xid);
  ev.AddString("gpu", x.gpu);
  ev.AddNumber("count", x.count);
  ev.AddString("source", "nvml");
  ev.AddString("meaning", info.meaning_en);
  ev.AddString("action", info.action_en);
  return ev;
}

std::optional<int64_t> XidCode(const training::Event& e) {
  if (e.kind != EventKind::kXid) return std::nullopt;
  const training::EventDetail* code = e.Find("xid");
  return code ? ParseInt64(code->value) : std::nullopt;
}

// Whether `events` already hold Xid `code` within kSameXidMs of `time_ms`.
template <typename Events, typename TimeOf, typename EventOf>
bool HasXidNear(const Events& events, int code, int64_t time_ms, TimeOf time_of, EventOf event_of) {
  return std::any_of(events.begin(), events.end(), [&](const auto& e) {
    return XidCode(event_of(e)) == code && std::llabs(time_of(e) - time_ms) <= kSameXidMs;
  });
}

// The GPU a kernel event's PCI address names ("" when unknown).
std::string GpuOf(const training::Event& e, const std::map<std::string, std::string>& by_pci) {
  const training::EventDetail* pci = e.Find("pci");
  if (pci == nullptr) return "";
  auto it = by_pci.find(PciKey(pci->value));
  return it == by_pci.end() ? "" : it->second;
}

// One node's jobs as a request sees them: this node's from the tracker, or
// another's from the snapshot its agent sent (RemoteJobs), with the node's
// kernel events and which GPU each PCI address is.
struct NodeView {
  std::string node;
  std::vector<TrackedJob> jobs;
  std::vector<collect::jobs::NodeKernelEvent> kernel;
  std::map<std::string, std::string> gpus_by_pci;
  // A remote node whose agent has not reported lately: what it said last is
  // shown, but its running jobs' state is not known.
  bool silent = false;
  int64_t reported_ms = 0;
};

// The log events of ended jobs are final once their last lines are in: kept
// across requests.
class EndedEventsCache {
 public:
  // The log events of `t`, from the cache when it is final.
  std::vector<TimedEvent> Get(const JobRouteDeps& deps, const std::string& node,
                              const TrackedJob& t, int64_t now) {
    const bool final = t.ended && now > t.last_seen_ms + kAfterEndMs;
    const std::string key = node + "/" + t.job.id;
    if (final) {
      std::lock_guard lock(mu_);
      auto it = events_.find(key);
      if (it != events_.end()) return it->second;
    }
    std::vector<TimedEvent> events = EventsFromLogs(deps, node, t);
    if (final) {
      std::lock_guard lock(mu_);
      events_[key] = events;
    }
    return events;
  }
  // Forgets jobs no longer listed.
  void Keep(const std::vector<NodeView>& nodes) {
    std::set<std::string> keys;
    for (const NodeView& n : nodes) {
      for (const TrackedJob& t : n.jobs) keys.insert(n.node + "/" + t.job.id);
    }
    std::lock_guard lock(mu_);
    std::erase_if(events_, [&](const auto& e) { return keys.count(e.first) == 0; });
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<TimedEvent>> events_;
};

// GPU faults on the job's GPUs during its life that name none of its
// processes: Xids NVML reported, and kernel Xid lines without a pid (or with
// one the driver could not tie to a process), placed by their PCI address.
void AddGpuFaults(const JobRouteDeps& deps, const TrackedJob& t, const std::vector<JobGpu>& gpus,
                  const NodeView& node, int64_t now, std::vector<TimedEvent>* events) {
  if (gpus.empty()) return;
  std::set<std::string> ours;
  for (const JobGpu& g : gpus) ours.insert(g.gpu);
  const int64_t start = t.job.start_time_ms - 1000;
  const int64_t end = (t.ended ? t.last_seen_ms : now) + kAfterEndMs;
  for (const collect::jobs::NodeKernelEvent& k : node.kernel) {
    if (!k.job_id.empty() || k.kernel.time_ms < start || k.kernel.time_ms > end) continue;
    if (XidCode(k.kernel.event) && ours.count(GpuOf(k.kernel.event, node.gpus_by_pci))) {
      events->push_back({k.kernel.time_ms, k.kernel.event});
    }
  }
  std::vector<std::string> gpu_list(ours.begin(), ours.end());
  for (const GpuXid& x : NvmlXids(deps.db, node.node, gpu_list, start, end)) {
    bool logged = HasXidNear(
        *events, x.xid, x.time_ms, [](const TimedEvent& e) { return e.time_ms; },
        [](const TimedEvent& e) -> const training::Event& { return e.event; });
    if (!logged) events->push_back({x.time_ms, XidEvent(x)});
  }
}

void WriteJob(const JobRouteDeps& deps, const TrackedJob& t, bool with_events, int64_t now,
              const NodeView& node, EndedEventsCache* cache, JsonWriter* w) {
  const discover::DetectedJob& j = t.job;
  std::vector<int> pids;
  for (const auto& p : j.processes) pids.push_back(p.pid);
  const int64_t until = t.ended ? t.last_seen_ms : node.silent ? node.reported_ms : now;
  const std::vector<JobGpu> gpus = JobGpus(deps.db, node.node, pids, until);
  JobEvidence ev;
  ev.ended = t.ended;
  ev.end_ms = t.last_seen_ms;
  ev.run_exit = t.run_exit;
  ev.now_ms = now;
  if (with_events) ev.events = cache->Get(deps, node.node, t, now);
  // What the kernel said about its processes (OOM killer, Xid) joins them in time.
  for (const collect::jobs::KernelEvent& k : t.kernel_events) {
    ev.events.push_back({k.time_ms, k.event});
  }
  AddGpuFaults(deps, t, gpus, node, now, &ev.events);
  std::stable_sort(ev.events.begin(), ev.events.end(),
                   [](const TimedEvent& a, const TimedEvent& b) { return a.time_ms < b.time_ms; });
  Progress progress = StepProgress(deps, node.node, t, now);
  ev.last_step_change_ms = progress.last_change_ms;
  ev.step_interval_ms = progress.interval_ms;
  collect::jobs::JobVerdict v = collect::jobs::Judge(ev);
  std::string state = collect::jobs::JobStateName(v.state);
  if (node.silent && !t.ended) {
    state = "unknown";
    v.reason = "node_silent";
    v.reason_text = "running when node " + node.node + " last reported, " +
                    std::to_string((now - node.reported_ms) / 1000) +
                    " s ago; its agent is not reporting (stopped, or the network is down)";
  }

  w->BeginObject();
  w->Key("id").String(j.id).Key("name").String(j.name);
  w->Key("kind").String(discover::JobKindName(j.kind));
  w->Key("framework").String(discover::FrameworkName(j.framework));
  w->Key("launcher").String(j.launcher).Key("trainer").String(j.trainer);
  w->Key("state").String(state);
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
  w->Key("node").String(node.node).Key("container_id").String(j.container_id);
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
  w->Key("gpus").BeginArray();
  for (const JobGpu& g : gpus) {
    w->BeginObject().Key("gpu").String(g.gpu).Key("uuid").String(g.uuid).Key("memory_bytes");
    if (g.memory_bytes) {
      w->Double(*g.memory_bytes);
    } else {
      w->Null();
    }
    w->EndObject();
  }
  w->EndArray();
  w->Key("events").BeginArray();
  size_t first = ev.events.size() > kEventsShown ? ev.events.size() - kEventsShown : 0;
  for (size_t i = first; i < ev.events.size(); ++i) WriteEvent(ev.events[i], w);
  w->EndArray();
  w->Key("log_query").String(LogSelector(j.name, node.node));
  w->EndObject();
}

// Every node's jobs: this node's from the tracker, the others' from their
// agents' snapshots; only `only_node` when it is not empty.
std::vector<NodeView> ReadNodes(const JobRouteDeps& deps, int64_t now,
                                const std::string& only_node) {
  std::vector<NodeView> nodes;
  if (deps.tracker != nullptr && (only_node.empty() || only_node == deps.node)) {
    NodeView& n = nodes.emplace_back();
    n.node = deps.node;
    n.jobs = deps.tracker->Jobs();
    n.kernel = deps.tracker->NodeEvents();
    n.reported_ms = now;
  }
  if (deps.remote != nullptr) {
    for (ingest::NodeJobs& r : deps.remote->Nodes()) {
      const std::string& name = r.snapshot.node;
      if (deps.tracker != nullptr && name == deps.node) continue;  // ours, from the tracker
      if (!only_node.empty() && name != only_node) continue;
      NodeView& n = nodes.emplace_back();
      n.node = name;
      n.jobs = std::move(r.snapshot.jobs);
      n.kernel = std::move(r.snapshot.node_events);
      n.reported_ms = r.received_ms;
      n.silent = now - r.received_ms > deps.node_silent_ms;
    }
  }
  // Only kernel events name a PCI address: a node without any needs no lookup.
  for (NodeView& n : nodes) {
    if (!n.kernel.empty()) n.gpus_by_pci = GpusByPci(deps.db, n.node, now);
  }
  return nodes;
}

net::HttpResponse JsonOk(std::string body) {
  net::HttpResponse res;
  res.content_type = "application/json";
  res.body = std::move(body);
  return res;
}

// GET /api/v1/jobs[?node=]: running jobs first, then the newest, across nodes.
net::HttpResponse Jobs(const JobRouteDeps& deps, const net::HttpRequest& req, EndedEventsCache* cache) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  const int64_t now = deps.env->NowMillis();
  const std::vector<NodeView> nodes = ReadNodes(deps, now, Param(*params, "node").value_or(""));
  cache->Keep(nodes);
  std::vector<std::pair<const NodeView*, const TrackedJob*>> listed;
  for (const NodeView& n : nodes) {
    for (const TrackedJob& t : n.jobs) listed.emplace_back(&n, &t);
  }
  std::stable_sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    const TrackedJob& x = *a.second;
    const TrackedJob& y = *b.second;
    if (x.ended != y.ended) return !x.ended;
    if (x.job.start_time_ms != y.job.start_time_ms)
      return x.job.start_time_ms > y.job.start_time_ms;
    return x.job.id < y.job.id;
  });
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("jobs").BeginArray();
  for (size_t i = 0; i < listed.size(); ++i) {
    WriteJob(deps, *listed[i].second, i < deps.jobs_with_events, now, *listed[i].first, cache, &w);
  }
  w.EndArray().EndObject().EndObject();
  return JsonOk(w.Release());
}

struct NodeEvent {
  int64_t time_ms = 0;
  std::string node;
  std::string source;  // "kernel" or "nvml"
  std::string gpu;
  std::string job_id;
  training::Event event;
};

// GET /api/v1/events?start_ms=&end_ms=[&node=]: the nodes' kernel events (OOM
// kills, Xid errors) and the Xids NVML reported that the kernel did not log.
net::HttpResponse NodeEvents(const JobRouteDeps& deps, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  const int64_t now = deps.env->NowMillis();
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
  std::vector<NodeEvent> events;
  for (const NodeView& node : ReadNodes(deps, now, Param(*params, "node").value_or(""))) {
    const size_t first_of_node = events.size();
    for (const collect::jobs::NodeKernelEvent& k : node.kernel) {
      if (k.kernel.time_ms < *start || k.kernel.time_ms > *end) continue;
      events.push_back({k.kernel.time_ms, node.node, "kernel",
                        GpuOf(k.kernel.event, node.gpus_by_pci), k.job_id, k.kernel.event});
    }
    for (const GpuXid& x : NvmlXids(deps.db, node.node, {}, *start, *end)) {
      bool logged = HasXidNear(
          std::span(events).subspan(first_of_node), x.xid, x.time_ms,
          [](const NodeEvent& e) { return e.time_ms; },
          [](const NodeEvent& e) -> const training::Event& { return e.event; });
      if (!logged) events.push_back({x.time_ms, node.node, "nvml", x.gpu, "", XidEvent(x)});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const NodeEvent& a, const NodeEvent& b) { return a.time_ms < b.time_ms; });
  size_t first = events.size() > kNodeEventsShown ? events.size() - kNodeEventsShown : 0;
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("events").BeginArray();
  for (size_t i = first; i < events.size(); ++i) {
    const NodeEvent& e = events[i];
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
  auto cache = std::make_shared<EndedEventsCache>();
  router->Handle("GET", "/api/v1/jobs",
                 [deps, cache](const net::HttpRequest& req) { return Jobs(deps, req, cache.get()); });
  router->Handle("GET", "/api/v1/events",
                 [deps](const net::HttpRequest& req) { return NodeEvents(deps, req); });
}

}  // namespace vigil::api
