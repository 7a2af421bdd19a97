#include "diagnose/job_report.h"

#include <algorithm>
#include <set>
#include <span>

#include "core/strings.h"
#include "diagnose/job_log_events.h"
#include "diagnose/log_excerpt.h"
#include "parse/training/wire_events.h"
#include "parse/training/xid.h"

namespace vigil::diagnose {
namespace {

namespace training = parse::training;
using training::EventKind;

constexpr int64_t kNsPerMs = 1'000'000;
// Lines a job's processes print after it was last seen alive (the launcher's
// summary of a failed rank) still belong to its end.
constexpr int64_t kAfterEndMs = 60'000;
// Progress is judged on the recent past only.
constexpr int64_t kStepWindowMs = 6 * 3600 * 1000;
constexpr size_t kStepIntervals = 20;
// The recent past a report reads first (ProgressOf).
constexpr int64_t kRecentStepsMs = 15 * 60 * 1000;
// An Xid NVML reported within this long of one the kernel logged with the
// same code is the same fault (the kernel's line has the pid and PCI address).
constexpr int64_t kSameXidMs = 60'000;

// A kernel event of a node, read back from its snapshot.
struct KernelEvent {
  int64_t time_ms = 0;
  training::Event event;
  std::string job_id;  // "" when it names no job's process
};

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

std::vector<int> PidsOf(const wire::JobRecord& job) {
  std::vector<int> pids;
  pids.reserve(job.processes.size());
  for (const wire::JobProcessRecord& p : job.processes) pids.push_back(p.pid);
  return pids;
}

}  // namespace

// One node's jobs as a request sees them: the snapshot its agent (or this
// process's own tracker) sent, with the node's kernel events and which GPU
// each PCI address is.
struct JobReporter::NodeView {
  std::string node;
  std::vector<wire::JobRecord> jobs;
  std::vector<KernelEvent> kernel;
  std::map<std::string, std::string> gpus_by_pci;
  // A node that has not reported lately: what it said last is shown, but its
  // running jobs' state is not known.
  bool silent = false;
  int64_t reported_ms = 0;
};

JobReporter::JobReporter(JobReportSources sources, JobReporterOptions options)
    : sources_(sources),
      options_(options),
      log_events_(std::make_unique<JobLogEvents>(options.event_lines)) {
  if (sources_.env == nullptr) sources_.env = Env::Default();
}

JobReporter::~JobReporter() = default;

std::string JobLogSelector(const JobReport& report) {
  auto quoted = [](const std::string& v) {
    std::string out = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    return out + "\"";
  };
  if (report.by_run) return "{run=" + quoted(report.job.id) + ", node=" + quoted(report.node) + "}";
  return "{job=" + quoted(report.job.name) + ", node=" + quoted(report.node) + "}";
}

namespace {

// A job's label matchers: its run, else its name; and its node.
template <typename Matcher, typename Type>
std::vector<Matcher> JobMatchers(Type equal, const std::string& node, const wire::JobRecord& job,
                                 bool by_run) {
  return {by_run ? Matcher{equal, "run", job.id} : Matcher{equal, "job", job.name},
          Matcher{equal, "node", node}};
}

}  // namespace

bool JobReporter::RunLabelled(const std::string& node, const wire::JobRecord& job) const {
  if (sources_.logs == nullptr || job.id.empty()) return false;
  RunLines lines;
  lines.matchers =
      JobMatchers<logstore::LabelMatcher>(logstore::MatchType::kEqual, node, job, true);
  lines.start_ns = std::max<int64_t>(0, job.start_time_ms - 1000) * kNsPerMs;
  return log_events_->HasLines(*sources_.logs, node + "/" + job.id, lines);
}

// Events in the job's newest log lines, oldest first (job_log_events.h).
std::vector<TimedEvent> JobReporter::EventsFromLogs(const std::string& node,
                                                    const wire::JobRecord& job, bool by_run,
                                                    bool final) const {
  if (sources_.logs == nullptr || job.name.empty()) return {};
  RunLines lines;
  lines.matchers =
      JobMatchers<logstore::LabelMatcher>(logstore::MatchType::kEqual, node, job, by_run);
  lines.start_ns = std::max<int64_t>(0, job.start_time_ms - 1000) * kNsPerMs;
  lines.end_ns = job.ended ? (job.last_seen_ms + kAfterEndMs) * kNsPerMs : INT64_MAX;
  lines.final = final;
  return log_events_->Get(*sources_.logs, node + "/" + job.id, lines);
}

std::vector<std::string> JobReporter::LogExcerpt(const JobReport& report, int64_t at_ms) const {
  if (sources_.logs == nullptr || report.job.name.empty()) return {};
  // Lines flushed at a crash reach the store a moment after the job's end.
  constexpr int64_t kLateLinesMs = 5000;
  constexpr size_t kScanLines = 400;
  logstore::LogQuery q;
  q.matchers = JobMatchers<logstore::LabelMatcher>(logstore::MatchType::kEqual, report.node,
                                                   report.job, report.by_run);
  q.start_ns = std::max<int64_t>(0, report.job.start_time_ms - 1000) * kNsPerMs;
  q.end_ns = (at_ms + kLateLinesMs) * kNsPerMs;
  q.limit = kScanLines;
  q.forward = false;
  auto result = sources_.logs->Query(q);
  if (!result.ok()) return {};
  std::reverse(result->entries.begin(), result->entries.end());
  return SelectExcerpt(result->entries, at_ms + kLateLinesMs);
}

namespace {

// When a run's training_step changed in a stretch of its samples: the first
// sample counts as a change (the stretch's start, not a real one).
struct StepChanges {
  std::vector<int64_t> times;
  wire::Sample last;
};

std::optional<StepChanges> StepChangesIn(const tsdb::Db& db,
                                         const std::vector<tsdb::Matcher>& matchers,
                                         int64_t from_ms, int64_t to_ms) {
  auto series = db.Select(matchers, from_ms, to_ms);
  if (!series.ok()) return std::nullopt;
  // Several streams (stdout, a log file) may report the step: merge by time.
  std::vector<wire::Sample> samples;
  for (const auto& s : *series) samples.insert(samples.end(), s.samples.begin(), s.samples.end());
  std::sort(samples.begin(), samples.end(),
            [](const wire::Sample& a, const wire::Sample& b) { return a.t_ms < b.t_ms; });
  if (samples.empty()) return std::nullopt;
  StepChanges c;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i == 0 || samples[i].value != samples[i - 1].value) c.times.push_back(samples[i].t_ms);
  }
  c.last = samples.back();
  return c;
}

}  // namespace

StepProgress JobReporter::ProgressOf(const std::string& node, const wire::JobRecord& job,
                                     bool by_run, int64_t now) const {
  StepProgress p;
  if (sources_.db == nullptr || job.name.empty()) return p;
  auto matchers = JobMatchers<tsdb::Matcher>(tsdb::MatchType::kEqual, node, job, by_run);
  matchers.insert(matchers.begin(), {tsdb::MatchType::kEqual, "__name__", "training_step"});
  const int64_t from = std::max(job.start_time_ms, now - kStepWindowMs);
  // Reports come every few seconds for every running job, and most runs step
  // every few seconds: their recent past holds the last kStepIntervals real
  // changes (its first sample is not one, hence + 2), which is all the
  // judgement uses, so the answer is that of the whole window at a sliver of
  // the reading. A run that steps less often reads the whole window.
  std::optional<StepChanges> c;
  if (now - kRecentStepsMs > from) {
    c = StepChangesIn(*sources_.db, matchers, now - kRecentStepsMs, now);
    if (c && c->times.size() < kStepIntervals + 2) c.reset();
  }
  if (!c) c = StepChangesIn(*sources_.db, matchers, from, now);
  if (!c) return p;
  const std::vector<int64_t>& changes = c->times;
  p.last_step = c->last.value;
  p.last_step_ms = c->last.t_ms;
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

// GPU faults on the job's GPUs during its life that name none of its
// processes: Xids NVML reported, and kernel Xid lines without a pid (or with
// one the driver could not tie to a process), placed by their PCI address.
void JobReporter::AddGpuFaults(const wire::JobRecord& job, const std::vector<JobGpu>& gpus,
                               const NodeView& node, int64_t now,
                               std::vector<TimedEvent>* events) const {
  if (gpus.empty()) return;
  std::set<std::string> ours;
  for (const JobGpu& g : gpus) ours.insert(g.gpu);
  const int64_t start = job.start_time_ms - 1000;
  const int64_t end = (job.ended ? job.last_seen_ms : now) + kAfterEndMs;
  for (const KernelEvent& k : node.kernel) {
    if (!k.job_id.empty() || k.time_ms < start || k.time_ms > end) continue;
    if (XidCode(k.event) && ours.count(GpuOf(k.event, node.gpus_by_pci))) {
      events->push_back({k.time_ms, k.event});
    }
  }
  std::vector<std::string> gpu_list(ours.begin(), ours.end());
  for (const GpuXid& x : NvmlXids(sources_.db, node.node, gpu_list, start, end)) {
    bool logged = HasXidNear(
        *events, x.xid, x.time_ms, [](const TimedEvent& e) { return e.time_ms; },
        [](const TimedEvent& e) -> const training::Event& { return e.event; });
    if (!logged) events->push_back({x.time_ms, XidEvent(x)});
  }
}

JobReport JobReporter::Report(const wire::JobRecord& job, bool with_events, int64_t now,
                              const NodeView& node) {
  JobReport r;
  r.node = node.node;
  r.job = job;
  const int64_t until = job.ended ? job.last_seen_ms : node.silent ? node.reported_ms : now;
  r.gpus = JobGpus(sources_.db, node.node, PidsOf(job), until);
  r.by_run = RunLabelled(node.node, job);
  JobEvidence ev;
  ev.ended = job.ended;
  ev.end_ms = job.last_seen_ms;
  ev.run_exit = job.run_exit;
  ev.now_ms = now;
  if (with_events) {
    const bool final = job.ended && now > job.last_seen_ms + kAfterEndMs;
    ev.events = EventsFromLogs(node.node, job, r.by_run, final);
  }
  // What the kernel said about its processes (OOM killer, Xid) joins them in time.
  for (const wire::KernelEventRecord& k : job.kernel_events) {
    if (auto e = training::FromWireEvent(k.event)) ev.events.push_back({k.time_ms, std::move(*e)});
  }
  AddGpuFaults(job, r.gpus, node, now, &ev.events);
  std::stable_sort(ev.events.begin(), ev.events.end(),
                   [](const TimedEvent& a, const TimedEvent& b) { return a.time_ms < b.time_ms; });
  r.progress = ProgressOf(node.node, job, r.by_run, now);
  ev.last_step_change_ms = r.progress.last_change_ms;
  ev.step_interval_ms = r.progress.interval_ms;
  r.verdict = Judge(ev);
  r.state = JobStateName(r.verdict.state);
  if (node.silent && !job.ended) {
    r.state = "unknown";
    r.verdict.reason = "node_silent";
    r.verdict.reason_text = "running when node " + node.node + " last reported, " +
                            std::to_string((now - node.reported_ms) / 1000) +
                            " s ago; its agent is not reporting (stopped, or the network is down)";
  }
  r.events = std::move(ev.events);
  return r;
}

std::vector<JobReporter::NodeView> JobReporter::ReadNodes(int64_t now,
                                                          const std::string& only_node) const {
  std::vector<NodeView> nodes;
  for (ingest::NodeJobs& r : sources_.jobs->Nodes()) {
    if (!only_node.empty() && r.snapshot.node != only_node) continue;
    NodeView& n = nodes.emplace_back();
    n.node = r.snapshot.node;
    n.jobs = std::move(r.snapshot.jobs);
    for (const wire::NodeKernelEventRecord& k : r.snapshot.node_events) {
      if (auto e = training::FromWireEvent(k.kernel.event)) {
        n.kernel.push_back({k.kernel.time_ms, std::move(*e), k.job_id});
      }
    }
    n.reported_ms = r.received_ms;
    n.silent = now - r.received_ms > options_.node_silent_ms;
  }
  // Only kernel events name a PCI address: a node without any needs no lookup.
  for (NodeView& n : nodes) {
    if (!n.kernel.empty()) n.gpus_by_pci = GpusByPci(sources_.db, n.node, now);
  }
  return nodes;
}

std::vector<JobReport> JobReporter::Reports(const std::string& only_node) {
  const int64_t now = sources_.env->NowMillis();
  const std::vector<NodeView> nodes = ReadNodes(now, only_node);
  std::vector<std::pair<const NodeView*, const wire::JobRecord*>> listed;
  std::set<std::string> keys;
  for (const NodeView& n : nodes) {
    for (const wire::JobRecord& j : n.jobs) {
      listed.emplace_back(&n, &j);
      keys.insert(n.node + "/" + j.id);
    }
  }
  if (only_node.empty()) log_events_->Keep(keys);
  std::stable_sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    const wire::JobRecord& x = *a.second;
    const wire::JobRecord& y = *b.second;
    if (x.ended != y.ended) return !x.ended;
    if (x.start_time_ms != y.start_time_ms) return x.start_time_ms > y.start_time_ms;
    return x.id < y.id;
  });
  std::vector<JobReport> out;
  out.reserve(listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    out.push_back(Report(*listed[i].second, i < options_.jobs_with_events, now, *listed[i].first));
  }
  return out;
}

std::vector<NodeEvent> JobReporter::NodeEvents(int64_t start_ms, int64_t end_ms,
                                               const std::string& only_node) {
  std::vector<NodeEvent> events;
  for (const NodeView& node : ReadNodes(sources_.env->NowMillis(), only_node)) {
    const size_t first_of_node = events.size();
    for (const KernelEvent& k : node.kernel) {
      if (k.time_ms < start_ms || k.time_ms > end_ms) continue;
      events.push_back(
          {k.time_ms, node.node, "kernel", GpuOf(k.event, node.gpus_by_pci), k.job_id, k.event});
    }
    for (const GpuXid& x : NvmlXids(sources_.db, node.node, {}, start_ms, end_ms)) {
      bool logged = HasXidNear(
          std::span(events).subspan(first_of_node), x.xid, x.time_ms,
          [](const NodeEvent& e) { return e.time_ms; },
          [](const NodeEvent& e) -> const training::Event& { return e.event; });
      if (!logged) events.push_back({x.time_ms, node.node, "nvml", x.gpu, "", XidEvent(x)});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const NodeEvent& a, const NodeEvent& b) { return a.time_ms < b.time_ms; });
  return events;
}

}  // namespace vigil::diagnose
