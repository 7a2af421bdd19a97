#include "collect/jobs/job_tracker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "collect/jobs/job_history.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/thread_name.h"
#include "wire/metric_batch.h"

namespace vigil::collect::jobs {
namespace {

// A `vigil run` record belongs to a job when one of the job's processes is
// the command it ran (same pid, started within a few seconds of it: pids are
// reused).
constexpr int64_t kPidStartSlackMs = 5000;

// One process seen twice: the same pid and start ticks; where ticks are not
// known (a `vigil run` record, a job read from the history), a start time
// within the slack.
bool SameProcess(const discover::JobProcess& a, const discover::JobProcess& b) {
  if (a.pid != b.pid) return false;
  if (a.start_ticks != 0 && b.start_ticks != 0) return a.start_ticks == b.start_ticks;
  return std::llabs(a.start_time_ms - b.start_time_ms) <= kPidStartSlackMs;
}

// The wall-clock start is computed from btime each pass and moves when the
// clock is stepped; what was shown first stays.
void KeepFirstStarts(const discover::DetectedJob& before, discover::DetectedJob* now) {
  if (before.start_time_ms != 0) now->start_time_ms = before.start_time_ms;
  for (discover::JobProcess& p : now->processes) {
    for (const discover::JobProcess& q : before.processes) {
      if (p.pid == q.pid && p.start_ticks == q.start_ticks) p.start_time_ms = q.start_time_ms;
    }
  }
}

bool Covers(const discover::DetectedJob& job, const discover::RunRecord& r) {
  for (const discover::JobProcess& p : job.processes) {
    if (p.pid == r.pid && std::llabs(p.start_time_ms - r.started_ms) <= kPidStartSlackMs) {
      return true;
    }
  }
  return false;
}

RunExit ExitOf(const discover::RunRecord& r) {
  RunExit x;
  x.ended_ms = r.ended_ms;
  x.exit_code = r.exit_code;
  x.signal = r.signal;
  x.signal_name = r.signal_name;
  return x;
}

// A job for a `vigil run` command that detection did not recognise. Its
// owner is its command's (`uid`, read while it runs), else the record file's.
discover::DetectedJob JobOfRecord(const discover::RunRecord& r, int64_t uid,
                                  discover::UserNames* users) {
  discover::DetectedJob j;
  j.uid = uid != discover::kUnknownUid ? uid : r.file_uid;
  j.user = users->NameOf(j.uid);
  j.id = "run-" + std::to_string(r.pid) + "-" + std::to_string(r.started_ms);
  j.name = r.name;
  j.start_time_ms = r.started_ms;
  discover::JobProcess p;
  p.pid = r.pid;
  p.start_time_ms = r.started_ms;
  p.cmdline = r.cmdline;
  j.processes.push_back(std::move(p));
  return j;
}

}  // namespace

JobTracker::JobTracker(JobTrackerOptions options)
    : options_(std::move(options)),
      env_(options_.env ? options_.env : Env::Default()),
      boot_id_(discover::ReadBootId(env_, options_.detection.proc_root)),
      users_(options_.detection.users ? options_.detection.users : discover::UserNames::Default()) {
  if (options_.detection.cache == nullptr) options_.detection.cache = &detection_cache_;
  watcher_ = options_.watcher;
  if (watcher_ == nullptr && options_.watch_processes) {
    ProcessWatcherOptions w = options_.watch;
    if (w.env == nullptr) w.env = env_;
    w.proc_root = options_.detection.proc_root;
    w.self_pid = options_.detection.self_pid;
    w.on_exit = [this] { Wake(); };
    own_watcher_ = std::make_unique<ProcessWatcher>(std::move(w));
    watcher_ = own_watcher_.get();
  }
  if (options_.history_path.empty()) return;
  auto history = LoadJobHistory(env_, options_.history_path);
  if (!history.ok()) {
    Logf(LogLevel::kWarn, "job history: %s", history.status().ToString().c_str());
    return;
  }
  // A job that ran when the history was written is confirmed or ended by
  // the first pass (Confirm), on evidence: it may well still run.
  for (TrackedJob& t : *history) {
    std::string id = t.job.id;
    jobs_.try_emplace(std::move(id), std::move(t));
  }
}

JobTracker::~JobTracker() { Stop(); }

void JobTracker::Start() {
  if (thread_.joinable()) return;
  if (own_watcher_) own_watcher_->Start();
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
  NameThread(thread_, "vigil-jobs");
  polling_ = true;
}

void JobTracker::Stop() {
  {
    std::lock_guard lock(wait_mu_);
    stop_ = true;
  }
  wait_cv_.notify_all();
  pass_cv_.notify_all();  // Refresh() waiters: no more passes
  polling_ = false;
  if (thread_.joinable()) thread_.join();
  if (own_watcher_) own_watcher_->Stop();
  SaveHistory(/*force=*/true);
}

void JobTracker::Wake() {
  {
    std::lock_guard lock(wait_mu_);
    woken_ = true;
  }
  wait_cv_.notify_all();
}

void JobTracker::Refresh(int64_t timeout_ms) {
  if (!polling_) return;
  std::unique_lock lock(wait_mu_);
  // The pass after the one running now, if any: it reads /proc after now.
  const uint64_t target = passes_ + 2;
  woken_ = true;
  wait_cv_.notify_all();
  pass_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [&] { return passes_ >= target || stop_.load(); });
}

void JobTracker::SaveHistory(bool force) {
  if (options_.history_path.empty()) return;
  std::vector<TrackedJob> jobs;
  const int64_t now = env_->NowMillis();
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, t] : jobs_) jobs.push_back(t);
  }
  std::string key = JobsKey(jobs);
  bool running =
      std::any_of(jobs.begin(), jobs.end(), [](const TrackedJob& t) { return !t.ended; });
  bool stale = running && now - saved_ms_ >= options_.history_refresh_ms;
  if (!force && key == saved_key_ && !stale) return;
  Status st = SaveJobHistory(env_, options_.history_path, jobs);
  if (!st.ok()) {
    // Jobs stay listed from memory; the next change tries again.
    Logf(LogLevel::kWarn, "job history: %s", st.ToString().c_str());
    return;
  }
  saved_key_ = std::move(key);
  saved_ms_ = now;
}

void JobTracker::Loop() {
  bool warned = false;
  while (!stop_) {
    Status st = Poll();
    if (!st.ok() && !warned) {
      Logf(LogLevel::kWarn, "job detection: %s", st.ToString().c_str());
      warned = true;
    }
    SaveHistory(/*force=*/false);
    const auto passed = std::chrono::steady_clock::now();
    std::unique_lock lock(wait_mu_);
    ++passes_;
    pass_cv_.notify_all();
    wait_cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                      [this] { return stop_.load() || woken_; });
    if (woken_) {
      // Exits come in bursts (a job's ranks): a short wait gathers a burst
      // into one pass, and woken passes stay min_woken_interval_ms after
      // the last one. A lone crash after a quiet spell is looked at within
      // kBurstMs, not half a second later (its alert waits on this pass).
      const auto due =
          std::max(std::chrono::steady_clock::now() + std::chrono::milliseconds(kBurstMs),
                   passed + std::chrono::milliseconds(options_.min_woken_interval_ms));
      wait_cv_.wait_until(lock, due, [this] { return stop_.load(); });
      woken_ = false;
    }
  }
}

// The kernel's OOM kills and Xid errors, given to the job whose process
// they name (as last seen alive) when they fall within its life.
void JobTracker::AttachKernelEvents() {
  if (options_.kernel_log.empty() || kernel_log_failed_) return;
  if (!kernel_log_) kernel_log_ = std::make_unique<KernelLog>(options_.kernel_log, env_);
  std::vector<KernelEvent> events;
  Status st = kernel_log_->Poll(&events);
  if (!st.ok()) {
    Logf(LogLevel::kWarn, "%s: OOM kills and Xid errors will not be tied to jobs",
         st.ToString().c_str());
    kernel_log_failed_ = true;
  }
  for (KernelEvent& k : events) {
    std::string owner;
    for (auto& [id, t] : jobs_) {
      if (k.pid <= 0) break;
      bool in_life =
          k.time_ms >= t.job.start_time_ms - 1000 && k.time_ms <= t.last_seen_ms + 60'000;
      bool ours = std::any_of(t.job.processes.begin(), t.job.processes.end(),
                              [&](const discover::JobProcess& p) { return p.pid == k.pid; });
      if (!in_life || !ours) continue;
      owner = id;
      // Read again after a restart (the kernel keeps its recent past).
      bool known =
          std::any_of(t.kernel_events.begin(), t.kernel_events.end(), [&](const KernelEvent& e) {
            // Boot time, derived from two clocks, may move by a ms.
            return std::llabs(e.time_ms - k.time_ms) <= 1000 && e.pid == k.pid &&
                   e.event.kind == k.event.kind;
          });
      if (known) break;
      if (t.kernel_events.size() >= kMaxKernelEvents)
        t.kernel_events.erase(t.kernel_events.begin());
      t.kernel_events.push_back(k);
      break;
    }
    if (node_events_.size() >= options_.max_node_events) node_events_.pop_front();
    node_events_.push_back({std::move(k), std::move(owner)});
  }
}

std::vector<NodeKernelEvent> JobTracker::NodeEvents() const {
  std::lock_guard lock(mu_);
  return {node_events_.begin(), node_events_.end()};
}

// A detected job that holds a process of a running job is that job, under
// its first id: a launcherless job whose earliest rank exits, or a `vigil
// run` command detection recognises later, stays one job.
std::string JobTracker::IdFor(const discover::DetectedJob& job) const {
  auto it = jobs_.find(job.id);
  if (it != jobs_.end()) return job.id;
  for (const auto& [id, t] : jobs_) {
    if (t.ended) continue;
    for (const discover::JobProcess& p : job.processes) {
      for (const discover::JobProcess& q : t.job.processes) {
        if (SameProcess(p, q)) return id;
      }
    }
  }
  return job.id;
}

// Whether a running job that detection did not list is still alive, on
// evidence: any of its processes alive (by pid and start ticks) is alive;
// all gone is gone; a /proc entry that cannot be read proves nothing.
discover::Liveness JobTracker::Confirm(const TrackedJob& t) const {
  if (t.run_exit) return discover::Liveness::kGone;  // `vigil run` saw it end
  const std::string& proc = options_.detection.proc_root;
  bool unknown = false, checked = false;
  auto look = [&](int pid, uint64_t ticks) {
    checked = true;
    switch (discover::ProcessLiveness(env_, proc, pid, ticks)) {
      case discover::Liveness::kAlive:
        return true;
      case discover::Liveness::kUnknown:
        unknown = true;
        break;
      case discover::Liveness::kGone:
        break;
    }
    return false;
  };
  for (const discover::JobProcess& p : t.job.processes) {
    if (p.start_ticks != 0 && !p.departed && look(p.pid, p.start_ticks)) {
      return discover::Liveness::kAlive;
    }
  }
  // A job read from the history knows its anchor by its id only.
  if (!checked) {
    if (auto parts = discover::ParseJobId(t.job.id); parts && parts->boot == boot_id_) {
      if (look(parts->pid, parts->start_ticks)) return discover::Liveness::kAlive;
    }
  }
  // Nothing to look at (a `vigil run` command's job): not listed is gone.
  return unknown ? discover::Liveness::kUnknown : discover::Liveness::kGone;
}

void JobTracker::EndUnseen(const std::set<std::string>& seen_ids, int64_t now) {
  std::vector<const discover::JobProcess*> listed;
  for (const std::string& id : seen_ids) {
    for (const discover::JobProcess& p : jobs_[id].job.processes) listed.push_back(&p);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    TrackedJob& t = it->second;
    if (t.ended || seen_ids.contains(it->first)) {
      ++it;
      continue;
    }
    // Its processes are all listed in other jobs now: merged, not ended.
    bool merged = !t.job.processes.empty() &&
                  std::all_of(t.job.processes.begin(), t.job.processes.end(), [&](const auto& p) {
                    return std::any_of(listed.begin(), listed.end(),
                                       [&](const auto* q) { return SameProcess(p, *q); });
                  });
    if (merged) {
      it = jobs_.erase(it);
      continue;
    }
    switch (Confirm(t)) {
      case discover::Liveness::kAlive:
        t.last_seen_ms = now;
        break;
      case discover::Liveness::kUnknown:
        break;  // no proof either way: still running, as last seen
      case discover::Liveness::kGone:
        t.ended = true;
        AttachExit(&t);
        break;
    }
    ++it;
  }
}

// The anchor's exit status (the id's pid, else the first process), as the
// kernel's connector reported it: the same record a `vigil run` wrapper
// writes, so the verdict reads it alike. A `vigil run` record wins.
void JobTracker::AttachExit(TrackedJob* t) {
  if (t->run_exit || t->job.processes.empty()) return;
  int pid = t->job.processes.front().pid;
  if (auto parts = discover::ParseJobId(t->job.id)) pid = parts->pid;
  std::optional<ProcessExit> x;
  if (auto it = exits_.find(pid); it != exits_.end()) x = it->second;
  if (!x && watcher_ != nullptr) x = watcher_->ExitOf(pid);
  // An exit from before the job started is an earlier process's on that pid.
  if (!x || x->time_ms + kPidStartSlackMs < t->job.start_time_ms) return;
  // It was alive until the kernel said it exited.
  t->last_seen_ms = std::max(t->last_seen_ms, x->time_ms);
  if (!x->exit_code && !x->signal) return;  // the poll: no status
  RunExit r;
  r.ended_ms = x->time_ms;
  r.exit_code = x->exit_code;
  if (x->signal) {
    r.signal = *x->signal;
    const char* abbrev = ::sigabbrev_np(*x->signal);
    r.signal_name = abbrev != nullptr ? abbrev : std::to_string(*x->signal);
  }
  t->run_exit = std::move(r);
}

// A job seen after its end has no live process for the log agent to find
// its files through; its snapshots name them.
void JobTracker::KeepLogSources(const discover::DetectedJob& job,
                                const std::map<int, const discover::ProcSnapshot*>& snaps,
                                int64_t now) {
  for (const discover::JobProcess& p : job.processes) {
    auto it = snaps.find(p.pid);
    if (!p.departed || it == snaps.end()) continue;
    const discover::ProcSnapshot& s = *it->second;
    for (const auto& [path, stream] :
         {std::pair{s.stdout_path, "stdout"}, {s.stderr_path, "stderr"}}) {
      if (path.empty()) continue;
      // `> x.log 2>&1`: one file, both streams, no stream label.
      bool both = s.stdout_path == s.stderr_path;
      discover::LogSource src;
      src.path = path;
      src.origin = "process";
      src.labels.push_back({"job", job.name});
      src.labels.push_back({"run", job.id});
      src.labels.push_back({"source", path});
      if (!both) src.labels.push_back({"stream", stream});
      std::erase_if(short_lived_sources_,
                    [&](const KeptSource& k) { return k.source.path == path; });
      short_lived_sources_.push_back({std::move(src), now + options_.short_lived_source_ms});
      while (short_lived_sources_.size() > options_.max_short_lived_sources) {
        short_lived_sources_.pop_front();
      }
    }
  }
}

std::string JobTracker::RunIdOf(int pid) const {
  // A run that ended lately still names its files: a short job's stderr, a
  // `vigil run` file found after its command exited.
  constexpr int64_t kEndedRunMs = 5 * 60'000;
  const int64_t now = env_->NowMillis();
  std::lock_guard lock(mu_);
  // Running jobs first: a pid an ended job had may be a new process's now.
  for (bool ended : {false, true}) {
    for (const auto& [id, t] : jobs_) {
      if (t.ended != ended || (ended && t.last_seen_ms + kEndedRunMs < now)) continue;
      for (const discover::JobProcess& p : t.job.processes) {
        if (p.pid == pid) return id;
      }
    }
  }
  return "";
}

std::string JobTracker::RunIdOf(const discover::LogSource& source) const {
  if (source.writer_pid > 0) {
    std::string run = RunIdOf(source.writer_pid);
    if (!run.empty()) return run;
  }
  // Docker's short id (12 hex digits) is enough to be unambiguous on a node.
  std::string_view container = wire::LabelValue(source.labels, "container_id");
  if (container.size() < 12) return "";
  std::lock_guard lock(mu_);
  std::string found;
  for (const auto& [id, t] : jobs_) {
    if (t.ended || !StartsWith(t.job.container_id, container)) continue;
    if (!found.empty()) return "";  // several jobs write one container log
    found = id;
  }
  return found;
}

std::vector<discover::LogSource> JobTracker::ShortLivedLogSources() const {
  const int64_t now = env_->NowMillis();
  std::lock_guard lock(mu_);
  std::vector<discover::LogSource> out;
  for (const KeptSource& k : short_lived_sources_) {
    if (k.until_ms > now) out.push_back(k.source);
  }
  return out;
}

// The departed processes the watcher handed over, as detection's input.
void JobTracker::TakeDeparted() {
  options_.detection.departed.clear();
  exits_.clear();
  if (watcher_ == nullptr) return;
  for (DepartedProcess& d : watcher_->TakeDeparted()) {
    exits_[d.snapshot.pid] = d.exit;
    options_.detection.departed.push_back(std::move(d.snapshot));
  }
}

// A job listed by this pass (detected, or a `vigil run` command's): running,
// or, when only snapshots of its processes were seen, ended at their exit.
// Null for a job that has ended before: an end is final (one process, one
// job_finished).
TrackedJob* JobTracker::Seen(discover::DetectedJob job, int64_t now, PassState* pass) {
  std::string id = IdFor(job);
  auto [it, fresh] = jobs_.try_emplace(id);
  TrackedJob& t = it->second;
  if (!fresh && t.ended) return nullptr;
  job.id = id;
  if (fresh) {
    t.first_seen_ms = now;
  } else {
    KeepFirstStarts(t.job, &job);
  }
  t.job = std::move(job);
  t.last_seen_ms = now;
  t.ended = false;
  pass->seen_ids.insert(id);
  const auto& ps = t.job.processes;
  auto departed = [](const discover::JobProcess& p) { return p.departed; };
  if (std::any_of(ps.begin(), ps.end(), departed)) KeepLogSources(t.job, pass->snapshots, now);
  if (ps.empty() || !std::all_of(ps.begin(), ps.end(), departed)) return &t;
  int64_t ended_ms = 0;
  for (const auto& p : ps) {
    if (auto x = exits_.find(p.pid); x != exits_.end()) {
      ended_ms = std::max(ended_ms, x->second.time_ms);
    }
  }
  if (ended_ms > 0) t.last_seen_ms = ended_ms;
  // Seen first at its exec (the snapshot), not at this pass.
  if (fresh && t.job.start_time_ms > 0) {
    t.first_seen_ms = std::min(t.first_seen_ms, t.job.start_time_ms);
  }
  t.ended = true;
  AttachExit(&t);
  return &t;
}

// `vigil run` records: a job for a command detection does not recognise,
// alive while its command runs; the exit status of the job that ran it.
void JobTracker::ApplyRunRecords(const std::vector<discover::RunRecord>& records, int64_t now,
                                 PassState* pass) {
  const std::string& proc = options_.detection.proc_root;
  for (const discover::RunRecord& r : records) {
    TrackedJob* owner = nullptr;
    const std::string* owner_id = nullptr;
    for (auto& [id, t] : jobs_) {
      if (Covers(t.job, r)) {
        owner = &t;
        owner_id = &id;
      }
    }
    const bool running = !r.ended && env_->FileExists(proc + "/" + std::to_string(r.pid));
    if (owner == nullptr && running) {
      // Unrecognised: a job because the user says so.
      owner = Seen(JobOfRecord(r, discover::ReadRealUid(env_, proc, r.pid), users_), now, pass);
    } else if (owner != nullptr && running && !owner->ended &&
               !pass->seen_ids.contains(*owner_id)) {
      // Its record's command still runs: alive, though detection did not list it.
      owner->last_seen_ms = now;
      pass->seen_ids.insert(*owner_id);
    }
    if (owner == nullptr && r.ended) {
      // Ended, perhaps before this instance started: history from the record.
      discover::DetectedJob job = JobOfRecord(r, discover::kUnknownUid, users_);
      auto [it, fresh] = jobs_.try_emplace(job.id);
      if (fresh) {
        it->second.job = std::move(job);
        it->second.first_seen_ms = r.started_ms;
        it->second.last_seen_ms = r.ended_ms;
        it->second.ended = true;
      }
      owner = &it->second;
    }
    // The name the user gave `vigil run --name` wins over the one detection
    // read from the command line (a training script it recognised on its own).
    if (owner != nullptr && !r.name.empty()) owner->job.name = r.name;
    if (owner != nullptr && r.ended) owner->run_exit = ExitOf(r);
  }
}

// The watcher keeps the exit statuses of the running jobs' processes.
void JobTracker::WatchRunning() {
  if (watcher_ == nullptr) return;
  std::set<int> pids;
  for (const auto& [id, t] : jobs_) {
    if (t.ended) continue;
    for (const discover::JobProcess& p : t.job.processes) pids.insert(p.pid);
  }
  watcher_->SetWatched(std::move(pids));
}

Status JobTracker::Poll() {
  if (options_.gpu_pids) options_.detection.gpu_pids = options_.gpu_pids();
  TakeDeparted();
  PassState pass;
  for (const discover::ProcSnapshot& s : options_.detection.departed) pass.snapshots[s.pid] = &s;
  auto detected = options_.detect_override ? options_.detect_override()
                                           : discover::DetectJobs(options_.detection);
  if (!detected.ok()) return detected.status();
  const int64_t now = env_->NowMillis();
  std::vector<discover::RunRecord> records;
  if (!options_.run_spool_dir.empty()) records = discover::ReadRunRecords(options_.run_spool_dir);

  std::unique_lock lock(mu_);
  // What a pass changed in substance: the jobs and which have ended.
  auto states = [this] {
    std::vector<std::pair<std::string, bool>> out;
    for (const auto& [id, t] : jobs_) out.emplace_back(id, t.ended);
    return out;
  };
  const auto before = states();
  for (discover::DetectedJob& job : *detected) Seen(std::move(job), now, &pass);
  ApplyRunRecords(records, now, &pass);
  EndUnseen(pass.seen_ids, now);
  AttachKernelEvents();
  WatchRunning();
  std::erase_if(short_lived_sources_, [&](const KeptSource& k) { return k.until_ms <= now; });

  // Keep the newest max_ended ended jobs.
  std::vector<std::pair<int64_t, std::string>> ended;
  for (const auto& [id, t] : jobs_) {
    if (t.ended) ended.emplace_back(t.last_seen_ms, id);
  }
  if (ended.size() > options_.max_ended) {
    std::sort(ended.begin(), ended.end());
    for (size_t i = 0; i + options_.max_ended < ended.size(); ++i) jobs_.erase(ended[i].second);
  }
  const bool changed = states() != before;
  lock.unlock();
  if (changed && options_.on_change) options_.on_change();
  return Status::Ok();
}

std::vector<TrackedJob> JobTracker::Jobs() const {
  std::vector<TrackedJob> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, t] : jobs_) out.push_back(t);
  }
  std::sort(out.begin(), out.end(), [](const TrackedJob& a, const TrackedJob& b) {
    if (a.ended != b.ended) return !a.ended;
    if (a.job.start_time_ms != b.job.start_time_ms)
      return a.job.start_time_ms > b.job.start_time_ms;
    return a.job.id < b.job.id;
  });
  return out;
}

}  // namespace vigil::collect::jobs
