// The one directory that holds all of an instance's state ($VIGIL_HOME), its
// layout, and the run-state files through which `vigil status` and `vigil down`
// find a running instance.
//
//   $VIGIL_HOME/data/tsdb/   metrics store (docs/tsdb.md)
//   $VIGIL_HOME/data/logs/   log store (docs/logstore.md)
//   $VIGIL_HOME/data/agent/  the log agent's checkpoints (docs/tailer.md)
//   $VIGIL_HOME/spool/run/   output recorded by `vigil run` (docs/discovery.md)
//   $VIGIL_HOME/logs/vigil.log   Vigil's own log when running in the background
//   $VIGIL_HOME/run/vigil.lock   flock()ed by the running instance for its lifetime
//   $VIGIL_HOME/run/state        pid, URL and start time of the running instance
//
// Uninstalling is removing this directory and the binary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"

namespace vigil::cli {

// --home if given, else $VIGIL_HOME, else /var/lib/vigil for root and
// $XDG_DATA_HOME/vigil (~/.local/share/vigil) for everyone else.
std::string ResolveHome(const std::string& flag_value);

struct HomePaths {
  std::string home;
  std::string data_dir() const { return home + "/data"; }
  std::string tsdb_dir() const { return home + "/data/tsdb"; }
  std::string log_store_dir() const { return home + "/data/logs"; }
  std::string agent_dir() const { return home + "/data/agent"; }
  std::string job_history_file() const { return home + "/data/jobs.json"; }
  std::string nodes_dir() const { return home + "/data/nodes"; }  // every node's jobs (JobStore)
  // The agent's outboxes (ship/outbox.h): metrics and jobs, and logs.
  std::string outbox_dir() const { return home + "/data/agent/outbox"; }
  std::string log_outbox_dir() const { return home + "/data/agent/outbox-logs"; }
  std::string run_spool_dir() const { return home + "/spool/run"; }
  std::string logs_dir() const { return home + "/logs"; }
  std::string log_file() const { return home + "/logs/vigil.log"; }
  std::string run_dir() const { return home + "/run"; }
  std::string lock_file() const { return home + "/run/vigil.lock"; }
  std::string state_file() const { return home + "/run/state"; }
};

// What a running instance records about itself.
struct RunState {
  int pid = 0;
  std::string url;     // http://127.0.0.1:9300
  std::string listen;  // 127.0.0.1:9300
  int64_t started_ms = 0;
  std::string version;
};

std::string FormatRunState(const RunState& s);
Result<RunState> ParseRunState(const std::string& text);

// Holds the instance lock for as long as it lives. Only one instance may run
// per home: a second gets FailedPrecondition naming the running pid.
class InstanceLock {
 public:
  static Result<std::unique_ptr<InstanceLock>> Acquire(const HomePaths& paths);
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

 private:
  explicit InstanceLock(int fd) : fd_(fd) {}
  int fd_;
};

// The running instance of this home, or nullopt if none runs (a stale state
// file left by a crash does not count: the lock is the truth).
std::optional<RunState> FindRunningInstance(const HomePaths& paths);

// The URL a client subcommand talks to: --server, else $VIGIL_URL, else the
// running instance of --home/$VIGIL_HOME. NotFound (with what to do) when
// none runs. No trailing slash.
Result<std::string> ResolveServerUrl(const std::string& server_flag, const std::string& home_flag);

}  // namespace vigil::cli
