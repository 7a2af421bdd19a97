#include "collect/jobs/process_watch.h"

#include <unistd.h>

#include <algorithm>

#include "core/log.h"
#include "core/thread_name.h"
#include "discover/jobs.h"

namespace vigil::collect::jobs {
namespace {

// The connector's exit event comes right after the process turns zombie: a
// tick that finds a young process gone waits this many ticks for it (and
// its status) before departing it without one.
constexpr int kGoneTicksBeforeDeparting = 2;
// How many ticks a new pid whose command line was no job's is looked at
// again (poll mode), in case it was a fork not yet exec'd.
constexpr int kRecheckTicks = 2;

// A later look at the same process, merged into what was seen before: an
// exiting process has already dropped its memory (cmdline, environ, maps
// read empty) and its files; what it had stays.
void MergeInto(discover::ProcSnapshot fresh, discover::ProcSnapshot* kept) {
  auto keep = [](std::string& now, std::string& before) {
    if (!now.empty()) before = std::move(now);
  };
  keep(fresh.stat, kept->stat);
  keep(fresh.cmdline, kept->cmdline);
  keep(fresh.comm, kept->comm);
  keep(fresh.environ, kept->environ);
  keep(fresh.cgroup, kept->cgroup);
  keep(fresh.cwd, kept->cwd);
  keep(fresh.stdout_path, kept->stdout_path);
  keep(fresh.stderr_path, kept->stderr_path);
  if (fresh.maps_read) {
    kept->maps = std::move(fresh.maps);
    kept->maps_read = true;
  }
}

}  // namespace

ProcessWatcher::ProcessWatcher(ProcessWatcherOptions options)
    : options_(std::move(options)),
      env_(options_.env ? options_.env : Env::Default()),
      self_pid_(options_.self_pid ? options_.self_pid : static_cast<int>(::getpid())) {}

ProcessWatcher::~ProcessWatcher() { Stop(); }

void ProcessWatcher::SetSource(std::unique_ptr<discover::ProcEventSource> source) {
  source_ = std::move(source);
  connector_ = std::string_view(source_->mode()) == "connector";
  std::lock_guard lock(mu_);
  mode_ = source_->mode();
}

void ProcessWatcher::Start() {
  if (thread_.joinable()) return;
  if (!source_) {
    std::unique_ptr<discover::ProcEventSource> source;
    if (options_.use_connector) {
      auto c = discover::OpenProcConnector();
      if (c.ok()) {
        source = std::move(c).value();
      } else {
        Logf(LogLevel::kInfo,
             "process events: %s; polling /proc every %d ms instead (a job that lives less "
             "may be missed)",
             c.status().ToString().c_str(), options_.poll_interval_ms);
      }
    }
    if (!source) {
      source = discover::NewProcPoller(env_, options_.proc_root, options_.poll_interval_ms);
    }
    SetSource(std::move(source));
  }
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
  NameThread(thread_, "vigil-procwatch");
}

void ProcessWatcher::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ProcessWatcher::Loop() {
  while (!stop_) {
    std::vector<discover::ProcEvent> events;
    Status st = source_->Wait(NextWaitMs(), &events);
    if (!st.ok()) {
      Logf(LogLevel::kWarn, "process events: %s; polling /proc instead", st.ToString().c_str());
      SetSource(discover::NewProcPoller(env_, options_.proc_root, options_.poll_interval_ms));
      continue;
    }
    HandleEvents(events);
    Tick();
  }
}

int ProcessWatcher::NextWaitMs() {
  std::lock_guard lock(mu_);
  bool idle = pending_.empty() && recheck_.empty();
  return idle ? std::max(options_.idle_wait_ms, options_.poll_interval_ms)
              : options_.poll_interval_ms;
}

void ProcessWatcher::HandleEvents(const std::vector<discover::ProcEvent>& events) {
  for (const discover::ProcEvent& e : events) {
    if (e.pid == self_pid_) continue;
    if (e.kind == discover::ProcEvent::Kind::kExec) {
      OnExec(e.pid, /*first_look=*/true);
      continue;
    }
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      ++stats_.events;
      size_t before = stats_.departed;
      bool watched = watched_.contains(e.pid);
      OnExit(e.pid, {env_->NowMillis(), e.exit_code, e.exit_signal});
      wake = watched || stats_.departed != before;
    }
    if (wake && options_.on_exit) options_.on_exit();
  }
}

// Reads what a short-lived job needs at once: by its exit, its memory and
// files are gone.
void ProcessWatcher::OnExec(int pid, bool first_look) {
  auto cmdline = env_->ReadFile(options_.proc_root + "/" + std::to_string(pid) + "/cmdline",
                                discover::kMaxCmdlineBytes);
  {
    std::lock_guard lock(mu_);
    ++stats_.events;
  }
  if (!cmdline.ok()) return;
  if (discover::NeverAJobProgram(*cmdline)) {
    // The poll may see a fork's child before its exec (a shell's, say):
    // look once more, at the next ticks. The connector sends the exec itself.
    std::lock_guard lock(mu_);
    if (first_look && !connector_ && recheck_.size() < options_.max_pending) {
      recheck_[pid] = kRecheckTicks;
    }
    return;
  }
  auto snap = discover::CaptureProcess(env_, options_.proc_root, pid);
  if (!snap.ok()) return;  // gone already, or a zombie: nothing to go on
  std::lock_guard lock(mu_);
  ++stats_.snapshots;
  const int64_t now = env_->MonotonicMillis();
  const int64_t gap = options_.poll_interval_ms;
  pending_[pid] = Pending{std::move(snap).value(), now, now + gap, gap, 0};
  while (pending_.size() > options_.max_pending) {
    auto oldest =
        std::min_element(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
          return a.second.captured_mono_ms < b.second.captured_mono_ms;
        });
    pending_.erase(oldest);
    ++stats_.pending_dropped;
  }
}

void ProcessWatcher::OnExit(int pid, ProcessExit exit) {
  if (watched_.contains(pid) || pending_.contains(pid)) {
    if (!exits_.contains(pid)) exit_order_.push_back(pid);
    exits_[pid] = exit;
    while (exits_.size() > options_.max_exits && !exit_order_.empty()) {
      exits_.erase(exit_order_.front());
      exit_order_.pop_front();
    }
  }
  auto it = pending_.find(pid);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  Depart(std::move(p), exit);
}

void ProcessWatcher::Depart(Pending pending, ProcessExit exit) {
  if (!discover::HasJobEvidence(pending.snapshot)) return;  // `ls`, `git`, a web app
  departed_.push_back({std::move(pending.snapshot), exit});
  ++stats_.departed;
  while (departed_.size() > options_.max_departed) {
    departed_.pop_front();
    ++stats_.departed_dropped;
  }
}

void ProcessWatcher::Tick() {
  std::vector<std::pair<int, uint64_t>> young;
  const int64_t now = env_->MonotonicMillis();
  std::vector<int> again;
  {
    std::lock_guard lock(mu_);
    for (auto it = recheck_.begin(); it != recheck_.end();) {
      again.push_back(it->first);
      it = --it->second <= 0 ? recheck_.erase(it) : std::next(it);
    }
  }
  for (int pid : again) {
    bool known = false;
    {
      std::lock_guard lock(mu_);
      known = pending_.contains(pid);
    }
    if (!known) OnExec(pid, /*first_look=*/false);
  }
  {
    std::lock_guard lock(mu_);
    std::erase_if(pending_, [&](const auto& kv) {
      return now - kv.second.captured_mono_ms > options_.pending_max_age_ms;
    });
    for (auto& [pid, p] : pending_) {
      // One that was found gone is looked at every tick until it departs.
      if (p.gone_ticks == 0 && now < p.next_look_mono_ms) continue;
      p.look_gap_ms *= 2;
      p.next_look_mono_ms = now + p.look_gap_ms;
      young.emplace_back(pid, p.snapshot.start_ticks);
    }
  }
  // Outside the lock: reading /proc is the slow part.
  std::vector<std::pair<int, Result<discover::ProcSnapshot>>> looks;
  for (auto [pid, ticks] : young) {
    looks.emplace_back(pid, discover::CaptureProcess(env_, options_.proc_root, pid));
  }
  bool wake = false;
  std::unique_lock lock(mu_);
  for (auto& [pid, look] : looks) {
    auto it = pending_.find(pid);
    if (it == pending_.end()) continue;
    Pending& p = it->second;
    if (look.ok() && look->start_ticks == p.snapshot.start_ticks) {
      MergeInto(std::move(look).value(), &p.snapshot);
      continue;
    }
    // Gone, a zombie, or its pid reused. The connector's exit event (with
    // the status) is due; without a connector, none will come.
    if (connector_ && ++p.gone_ticks < kGoneTicksBeforeDeparting) continue;
    Pending gone = std::move(p);
    pending_.erase(it);
    size_t before = stats_.departed;
    Depart(std::move(gone), {env_->NowMillis(), std::nullopt, std::nullopt});
    wake = wake || stats_.departed != before;
  }
  lock.unlock();
  if (wake && options_.on_exit) options_.on_exit();
}

std::vector<DepartedProcess> ProcessWatcher::TakeDeparted() {
  std::lock_guard lock(mu_);
  std::vector<DepartedProcess> out(std::make_move_iterator(departed_.begin()),
                                   std::make_move_iterator(departed_.end()));
  departed_.clear();
  return out;
}

void ProcessWatcher::SetWatched(std::set<int> pids) {
  std::lock_guard lock(mu_);
  watched_ = std::move(pids);
}

std::optional<ProcessExit> ProcessWatcher::ExitOf(int pid) const {
  std::lock_guard lock(mu_);
  auto it = exits_.find(pid);
  if (it == exits_.end()) return std::nullopt;
  return it->second;
}

ProcessWatcherStats ProcessWatcher::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string ProcessWatcher::mode() const {
  std::lock_guard lock(mu_);
  return mode_;
}

}  // namespace vigil::collect::jobs
