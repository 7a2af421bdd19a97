#include "collect/jobs/job_history.h"

#include <algorithm>

#include "parse/training/wire_events.h"

namespace vigil::collect::jobs {
namespace {

// Enum <-> name, through the names the API prints (one spelling everywhere).
template <typename E, typename NameFn>
E FromName(std::string_view name, E last, NameFn name_of, E fallback) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name == name_of(static_cast<E>(i))) return static_cast<E>(i);
  }
  return fallback;
}

wire::KernelEventRecord KernelToWire(const KernelEvent& k) {
  return {k.time_ms, k.pid, parse::training::ToWireEvent(k.event)};
}

wire::JobProcessRecord ProcessToWire(const discover::JobProcess& p) {
  return {p.pid,           p.ppid,   discover::JobProcessRoleName(p.role), p.rank, p.local_rank,
          p.start_time_ms, p.cmdline};
}

discover::JobProcess ProcessFromWire(const wire::JobProcessRecord& p) {
  discover::JobProcess out;
  out.pid = p.pid;
  out.ppid = p.ppid;
  out.role = FromName(p.role, discover::JobProcessRole::kHelper, discover::JobProcessRoleName,
                      discover::JobProcessRole::kRank);
  out.rank = p.rank;
  out.local_rank = p.local_rank;
  out.start_time_ms = p.start_time_ms;
  out.cmdline = p.cmdline;
  return out;
}

}  // namespace

wire::JobRecord ToWire(const TrackedJob& t) {
  const discover::DetectedJob& j = t.job;
  wire::JobRecord r;
  r.id = j.id;
  r.name = j.name;
  r.kind = discover::JobKindName(j.kind);
  r.framework = discover::FrameworkName(j.framework);
  r.launcher = j.launcher;
  r.trainer = j.trainer;
  r.world_size = j.world_size;
  r.container_id = j.container_id;
  r.user = j.user;
  r.uid = j.uid;
  r.master_addr = j.master_addr;
  r.master_port = j.master_port;
  r.start_time_ms = j.start_time_ms;
  r.first_seen_ms = t.first_seen_ms;
  r.last_seen_ms = t.last_seen_ms;
  r.ended = t.ended;
  for (const discover::JobProcess& p : j.processes) r.processes.push_back(ProcessToWire(p));
  r.run_exit = t.run_exit;
  for (const KernelEvent& k : t.kernel_events) r.kernel_events.push_back(KernelToWire(k));
  return r;
}

TrackedJob FromWire(const wire::JobRecord& r) {
  TrackedJob t;
  discover::DetectedJob& j = t.job;
  j.id = r.id;
  j.name = r.name;
  j.kind = FromName(r.kind, discover::JobKind::kUnknown, discover::JobKindName,
                    discover::JobKind::kUnknown);
  j.framework = FromName(r.framework, discover::Framework::kMindSpore, discover::FrameworkName,
                         discover::Framework::kUnknown);
  j.launcher = r.launcher;
  j.trainer = r.trainer;
  j.world_size = r.world_size;
  j.container_id = r.container_id;
  j.user = r.user;
  j.uid = r.uid;
  j.master_addr = r.master_addr;
  j.master_port = r.master_port;
  j.start_time_ms = r.start_time_ms;
  t.first_seen_ms = r.first_seen_ms;
  t.last_seen_ms = r.last_seen_ms;
  t.ended = r.ended;
  for (const wire::JobProcessRecord& p : r.processes) j.processes.push_back(ProcessFromWire(p));
  t.run_exit = r.run_exit;
  for (const wire::KernelEventRecord& k : r.kernel_events) {
    if (t.kernel_events.size() >= kMaxKernelEvents) break;
    if (auto ev = parse::training::FromWireEvent(k.event)) {
      t.kernel_events.push_back({k.time_ms, k.pid, std::move(*ev)});
    }
  }
  return t;
}

wire::NodeKernelEventRecord ToWire(const NodeKernelEvent& e) {
  return {KernelToWire(e.kernel), e.job_id};
}

wire::JobsSnapshot SnapshotOf(std::string node, int64_t time_ms,
                              const std::vector<TrackedJob>& jobs,
                              const std::vector<NodeKernelEvent>& node_events) {
  wire::JobsSnapshot s;
  s.node = std::move(node);
  s.time_ms = time_ms;
  s.jobs.reserve(jobs.size());
  for (const TrackedJob& t : jobs) s.jobs.push_back(ToWire(t));
  s.node_events.reserve(node_events.size());
  for (const NodeKernelEvent& e : node_events) s.node_events.push_back(ToWire(e));
  return s;
}

std::string EncodeWithinBound(wire::JobsSnapshot snapshot) {
  std::string out = wire::EncodeJobsSnapshot(snapshot);
  while (out.size() > wire::kMaxJobsSnapshotBytes && !snapshot.jobs.empty() &&
         snapshot.jobs.back().ended) {
    // Drop about the share of ended jobs that is over, at least one.
    const size_t over = out.size() - wire::kMaxJobsSnapshotBytes;
    size_t drop = std::max<size_t>(1, snapshot.jobs.size() * over / out.size());
    while (drop-- > 0 && !snapshot.jobs.empty() && snapshot.jobs.back().ended) {
      snapshot.jobs.pop_back();
    }
    out = wire::EncodeJobsSnapshot(snapshot);
  }
  return out;
}

std::string JobsKey(const std::vector<TrackedJob>& jobs) {
  std::vector<wire::JobRecord> records;
  records.reserve(jobs.size());
  for (const TrackedJob& t : jobs) records.push_back(ToWire(t));
  return wire::JobsKey(records);
}

std::string EncodeJobs(const std::vector<TrackedJob>& jobs) {
  return EncodeWithinBound(SnapshotOf("", 0, jobs, {}));
}

Result<std::vector<TrackedJob>> DecodeJobs(std::string_view text) {
  auto snapshot = wire::DecodeJobsSnapshot(text);
  if (!snapshot.ok()) return snapshot.status();
  std::vector<TrackedJob> out;
  out.reserve(snapshot->jobs.size());
  for (const wire::JobRecord& r : snapshot->jobs) out.push_back(FromWire(r));
  return out;
}

Result<std::vector<TrackedJob>> LoadJobHistory(Env* env, const std::string& path) {
  if (!env->FileExists(path)) return std::vector<TrackedJob>{};
  auto text = env->ReadFile(path, kMaxJobHistoryBytes);
  Status error = text.ok() ? Status::Ok() : text.status();
  if (text.ok()) {
    auto jobs = DecodeJobs(*text);
    if (jobs.ok()) return jobs;
    error = jobs.status();
  }
  std::string aside = path + ".bad-" + std::to_string(env->NowMillis());
  Status moved = env->RenameFile(path, aside);
  return InvalidArgument(path + ": " + error.message() +
                         (moved.ok() ? "; kept as " + aside : "; " + moved.message()));
}

Status SaveJobHistory(Env* env, const std::string& path, const std::vector<TrackedJob>& jobs) {
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    VIGIL_RETURN_IF_ERROR(env->CreateDirs(path.substr(0, slash)));
  }
  return env->WriteFileAtomic(path, EncodeJobs(jobs));
}

}  // namespace vigil::collect::jobs
