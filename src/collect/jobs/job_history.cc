#include "collect/jobs/job_history.h"

#include <nlohmann/json.hpp>

#include "core/json_writer.h"

namespace vigil::collect::jobs {
namespace {

using nlohmann::json;

// Enum <-> name, through the names the API prints (one spelling everywhere).
template <typename E, typename NameFn>
E FromName(std::string_view name, E last, NameFn name_of, E fallback) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name == name_of(static_cast<E>(i))) return static_cast<E>(i);
  }
  return fallback;
}

void WriteKernelEvent(const KernelEvent& k, JsonWriter* w);

void WriteEvent(const parse::training::Event& e, JsonWriter* w) {
  w->Key("event").String(parse::training::EventKindName(e.kind));
  w->Key("line").Int(e.line);
  w->Key("details").BeginArray();
  for (const parse::training::EventDetail& d : e.details) {
    w->BeginObject().Key("key").String(d.key).Key("value").String(d.value);
    w->Key("number").Bool(d.number).EndObject();
  }
  w->EndArray();
}

void WriteJob(const TrackedJob& t, JsonWriter* w) {
  const discover::DetectedJob& j = t.job;
  w->BeginObject();
  w->Key("id").String(j.id).Key("name").String(j.name);
  w->Key("kind").String(discover::JobKindName(j.kind));
  w->Key("framework").String(discover::FrameworkName(j.framework));
  w->Key("launcher").String(j.launcher).Key("trainer").String(j.trainer);
  w->Key("world_size").Int(j.world_size);
  w->Key("container_id").String(j.container_id);
  w->Key("master_addr").String(j.master_addr).Key("master_port").Int(j.master_port);
  w->Key("start_time_ms").Int(j.start_time_ms);
  w->Key("first_seen_ms").Int(t.first_seen_ms).Key("last_seen_ms").Int(t.last_seen_ms);
  w->Key("ended").Bool(t.ended);
  w->Key("processes").BeginArray();
  for (const discover::JobProcess& p : j.processes) {
    w->BeginObject().Key("pid").Int(p.pid).Key("ppid").Int(p.ppid);
    w->Key("role").String(discover::JobProcessRoleName(p.role));
    w->Key("rank").Int(p.rank).Key("local_rank").Int(p.local_rank);
    w->Key("start_time_ms").Int(p.start_time_ms).Key("cmdline").String(p.cmdline);
    w->EndObject();
  }
  w->EndArray();
  w->Key("run_exit");
  if (t.run_exit) {
    w->BeginObject().Key("ended_ms").Int(t.run_exit->ended_ms).Key("exit_code");
    if (t.run_exit->exit_code) {
      w->Int(*t.run_exit->exit_code);
    } else {
      w->Null();
    }
    w->Key("signal").Int(t.run_exit->signal).Key("signal_name").String(t.run_exit->signal_name);
    w->EndObject();
  } else {
    w->Null();
  }
  w->Key("kernel_events").BeginArray();
  for (const KernelEvent& k : t.kernel_events) {
    w->BeginObject();
    WriteKernelEvent(k, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteKernelEvent(const KernelEvent& k, JsonWriter* w) {
  w->Key("time_ms").Int(k.time_ms).Key("pid").Int(k.pid);
  WriteEvent(k.event, w);
}

// Typed reads that fall back instead of throwing: a field of the wrong type
// in a hand-edited or damaged file costs that field, not the history.
std::string Str(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const json& o, const char* key, int64_t fallback = 0) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

std::optional<parse::training::Event> ReadEvent(const json& o) {
  auto kind = parse::training::EventKindFromName(Str(o, "event"));
  if (!kind) return std::nullopt;
  parse::training::Event e;
  e.kind = *kind;
  e.line = Int(o, "line");
  auto details = o.find("details");
  if (details != o.end() && details->is_array()) {
    for (const json& d : *details) {
      if (!d.is_object()) continue;
      auto number = d.find("number");
      e.details.push_back({Str(d, "key"), Str(d, "value"),
                           number != d.end() && number->is_boolean() && number->get<bool>()});
    }
  }
  return e;
}

std::optional<KernelEvent> ReadKernelEvent(const json& k) {
  if (!k.is_object()) return std::nullopt;
  auto ev = ReadEvent(k);
  if (!ev) return std::nullopt;
  return KernelEvent{Int(k, "time_ms"), static_cast<int>(Int(k, "pid")), std::move(*ev)};
}

std::optional<TrackedJob> ReadJob(const json& o) {
  if (!o.is_object()) return std::nullopt;
  TrackedJob t;
  discover::DetectedJob& j = t.job;
  j.id = Str(o, "id");
  if (j.id.empty()) return std::nullopt;
  j.name = Str(o, "name");
  j.kind = FromName(Str(o, "kind"), discover::JobKind::kUnknown, discover::JobKindName,
                    discover::JobKind::kUnknown);
  j.framework = FromName(Str(o, "framework"), discover::Framework::kMindSpore,
                         discover::FrameworkName, discover::Framework::kUnknown);
  j.launcher = Str(o, "launcher");
  j.trainer = Str(o, "trainer");
  j.world_size = static_cast<int>(Int(o, "world_size"));
  j.container_id = Str(o, "container_id");
  j.master_addr = Str(o, "master_addr");
  j.master_port = static_cast<int>(Int(o, "master_port"));
  j.start_time_ms = Int(o, "start_time_ms");
  t.first_seen_ms = Int(o, "first_seen_ms");
  t.last_seen_ms = Int(o, "last_seen_ms");
  auto ended = o.find("ended");
  t.ended = ended != o.end() && ended->is_boolean() && ended->get<bool>();
  auto procs = o.find("processes");
  if (procs != o.end() && procs->is_array()) {
    for (const json& p : *procs) {
      if (!p.is_object()) continue;
      discover::JobProcess jp;
      jp.pid = static_cast<int>(Int(p, "pid"));
      jp.ppid = static_cast<int>(Int(p, "ppid"));
      jp.role = FromName(Str(p, "role"), discover::JobProcessRole::kHelper,
                         discover::JobProcessRoleName, discover::JobProcessRole::kRank);
      jp.rank = static_cast<int>(Int(p, "rank", -1));
      jp.local_rank = static_cast<int>(Int(p, "local_rank", -1));
      jp.start_time_ms = Int(p, "start_time_ms");
      jp.cmdline = Str(p, "cmdline");
      j.processes.push_back(std::move(jp));
    }
  }
  auto run = o.find("run_exit");
  if (run != o.end() && run->is_object()) {
    RunExit x;
    x.ended_ms = Int(*run, "ended_ms");
    auto code = run->find("exit_code");
    if (code != run->end() && code->is_number_integer()) x.exit_code = code->get<int>();
    x.signal = static_cast<int>(Int(*run, "signal"));
    x.signal_name = Str(*run, "signal_name");
    t.run_exit = std::move(x);
  }
  auto kernel = o.find("kernel_events");
  if (kernel != o.end() && kernel->is_array()) {
    for (const json& k : *kernel) {
      if (t.kernel_events.size() >= kMaxKernelEvents) break;
      if (auto ev = ReadKernelEvent(k)) t.kernel_events.push_back(std::move(*ev));
    }
  }
  return t;
}

}  // namespace

std::string EncodeSnapshot(const JobsSnapshot& snapshot) {
  JsonWriter w;
  w.BeginObject().Key("version").Int(kJobHistoryVersion);
  w.Key("node").String(snapshot.node).Key("time_ms").Int(snapshot.time_ms);
  w.Key("jobs").BeginArray();
  for (const TrackedJob& t : snapshot.jobs) WriteJob(t, &w);
  w.EndArray();
  w.Key("node_events").BeginArray();
  for (const NodeKernelEvent& e : snapshot.node_events) {
    w.BeginObject();
    WriteKernelEvent(e.kernel, &w);
    w.Key("job_id").String(e.job_id).EndObject();
  }
  w.EndArray().EndObject();
  return w.Release();
}

Result<JobsSnapshot> DecodeSnapshot(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument("not a jobs document (not a JSON object)");
  }
  if (Int(doc, "version") != kJobHistoryVersion) {
    return InvalidArgument("jobs document version " + std::to_string(Int(doc, "version")) +
                           ", this Vigil reads " + std::to_string(kJobHistoryVersion));
  }
  JobsSnapshot out;
  out.node = Str(doc, "node");
  out.time_ms = Int(doc, "time_ms");
  auto jobs = doc.find("jobs");
  if (jobs != doc.end() && jobs->is_array()) {
    for (const json& o : *jobs) {
      if (auto t = ReadJob(o)) out.jobs.push_back(std::move(*t));
    }
  }
  auto events = doc.find("node_events");
  if (events != doc.end() && events->is_array()) {
    for (const json& o : *events) {
      if (auto k = ReadKernelEvent(o)) out.node_events.push_back({std::move(*k), Str(o, "job_id")});
    }
  }
  return out;
}

std::string JobsKey(const std::vector<TrackedJob>& jobs) {
  std::string key;
  for (const TrackedJob& t : jobs) {
    key += t.job.id;
    key += t.ended ? ":e" + std::to_string(t.last_seen_ms) : ":r";
    key += t.run_exit ? ":x" + std::to_string(t.run_exit->ended_ms) : "";
    key += ":k" + std::to_string(t.kernel_events.size()) + ";";
  }
  return key;
}

std::string EncodeJobs(const std::vector<TrackedJob>& jobs) {
  JobsSnapshot snapshot;
  snapshot.jobs = jobs;
  return EncodeSnapshot(snapshot);
}

Result<std::vector<TrackedJob>> DecodeJobs(std::string_view text) {
  auto snapshot = DecodeSnapshot(text);
  if (!snapshot.ok()) return snapshot.status();
  return std::move(snapshot->jobs);
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
