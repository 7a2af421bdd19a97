// Optional actions (docs/notify.md "Actions"; off unless config.json lists
// some under `notify.actions`): when a run finishes (its `job_finished`
// alert fires) or every GPU of a node has been idle for a while (the
// action's own `gpus_idle_<name>` rule fires), run a configured command —
// typically a rental platform's stop-instance CLI — after a confirmation
// window in which the owner can cancel it from the notification's link.
//
// How an action goes:
//   - scheduled: the trigger's alert fired; once per run (job_finished) or
//     per idle episode (the idle alert's occurrence). The alert's
//     description says when it will run and links to `#actions&id=N`, so
//     every channel carries it.
//   - cancelled: someone cancelled it within the window (who, when).
//   - at `run_at` (created + confirm_window): `running` is committed first,
//     then the command is run (fork/exec, no shell; VIGIL_* environment;
//     stdout and stderr captured, first 4 KiB kept; killed at `timeout`):
//     `ran` (exit 0) or `failed` (another status, a signal, the timeout, a
//     command that cannot start). A dry-run action only records what it
//     would have run: `dry_run`.
//   - restart: an entry left `running` (Vigil died during its command) is
//     `failed` ("interrupted"), never run again; a `scheduled` one whose time
//     passed while Vigil was down runs at start when it is late by less than
//     its confirm window (a restart, an upgrade), else it is `missed` (the
//     machine may well be running someone else's work by now); one of an
//     action no longer configured is cancelled by "vigil".
// Entries live in alerts.db (table `actions`), at most `max_entries`
// finished ones.
//
// Thread safety: the entries are on the alert store's connection, which the
// engine's mutex guards: the runner is given that mutex (`db_mu`) and takes
// it around every use of the connection, except in ObserveLocked, which the
// engine calls with it held. Commands run on the runner's own thread (Start)
// or the caller's (RunDue), never with `db_mu` held. `wake_mu_` guards
// `stopping_` and `woken_`.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "alert/rules.h"
#include "alert/tracker.h"
#include "core/env.h"
#include "core/status.h"

namespace vigil::store {
class SqliteDb;
}

namespace vigil::alert {

enum class ActionTrigger { kJobFinished, kGpusIdle };
const char* ActionTriggerName(ActionTrigger t);  // "job_finished", "gpus_idle"

// One entry of config.json's `notify.actions`.
struct ActionSpec {
  std::string name;  // [A-Za-z0-9_-], unique
  ActionTrigger on = ActionTrigger::kJobFinished;
  int64_t idle_for_ms = 0;                   // gpus_idle: how long every GPU is under 5 %
  std::map<std::string, std::string> match;  // label -> glob ('*'), all must match
  std::vector<std::string> command;          // argv; [0] an absolute path
  bool dry_run = true;
  int64_t confirm_window_ms = 10 * 60'000;
  int64_t timeout_ms = 5 * 60'000;
};

// Unique names, a command, an absolute program, positive durations, idle_for
// for gpus_idle only; InvalidArgument names the entry.
Status ValidateActions(const std::vector<ActionSpec>& actions);

struct ActionsOptions {
  std::vector<ActionSpec> actions;
  std::string external_url;  // the UI, for the notification's link
  size_t max_entries = 1000;
  size_t max_output_bytes = 4096;
};

enum class ActionState { kScheduled, kRunning, kCancelled, kRan, kFailed, kDryRun, kMissed };
const char* ActionStateName(ActionState s);
std::optional<ActionState> ParseActionState(std::string_view name);

struct ActionEntry {
  int64_t id = 0;
  std::string action;
  ActionTrigger trigger = ActionTrigger::kJobFinished;
  ActionState state = ActionState::kScheduled;
  bool dry_run = true;
  std::vector<std::string> command;
  // The alert that scheduled it.
  std::string alert_id;
  std::string alert_rule;
  wire::Labels labels;
  std::string owner;
  int64_t created_ms = 0;
  int64_t run_at_ms = 0;
  int64_t timeout_ms = 0;
  int64_t started_ms = 0;   // 0 until it runs
  int64_t finished_ms = 0;  // 0 until it is done
  std::string cancelled_by;
  std::optional<int> exit_code;  // when the command exited
  std::string output;            // stdout and stderr, the first max_output_bytes
  bool output_truncated = false;
  std::string error;  // why it failed, was missed or cancelled by Vigil
};

// What running a command gave.
struct CommandResult {
  std::optional<int> exit_code;  // exited with this status
  std::string output;
  bool output_truncated = false;
  std::string error;  // "" when it exited 0
};

// Runs `argv` (no shell) with the process's environment plus `extra_env`,
// stdout and stderr into one pipe (the first `max_output` bytes kept), in a
// process group of its own, killed (the whole group) after `timeout_ms` or
// when `*stop` becomes true.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& extra_env,
                         int64_t timeout_ms, size_t max_output, const std::atomic<bool>* stop);

// The rule that fires when every GPU of a node has been idle for the
// action's idle_for: each node's highest utilisation over a minute under
// 5 %, held for idle_for (the `for` of the rule, so Vigil's own start does
// not count as idle time it never saw).
Rule IdleRule(const ActionSpec& spec);

class ActionRunner {
 public:
  // Creates the table on `db` (not owned), resolves what a restart left
  // (see above) at env->NowMillis().
  static Result<std::unique_ptr<ActionRunner>> Open(store::SqliteDb* db, std::mutex* db_mu,
                                                    Env* env, ActionsOptions options);
  ~ActionRunner();

  // The runner's thread: runs entries as they come due.
  void Start();
  void Stop();
  // Runs the entries due now on the caller's thread (tests).
  void RunDue();

  // The samples of one rule level, before the tracker applies them (`db_mu`
  // held): an action triggered by an alert that fires with them is
  // scheduled (once), and each such sample's description gets the action's
  // line (English and Chinese).
  void ObserveLocked(const LevelKey& level, const std::map<std::string, Alert>& active,
                     std::vector<Sample>* samples, int64_t now_ms);

  // Newest first; `id` > 0: that entry only.
  Result<std::vector<ActionEntry>> List(size_t limit, int64_t id = 0) const;
  // Cancels a scheduled entry. NotFound for an unknown id; FailedPrecondition
  // once it ran, runs, or was cancelled or missed.
  Result<ActionEntry> Cancel(int64_t id, const std::string& by);
  const std::vector<ActionSpec>& actions() const { return options_.actions; }
  int64_t NowMillis() const { return env_->NowMillis(); }

 private:
  ActionRunner(store::SqliteDb* db, std::mutex* db_mu, Env* env, ActionsOptions options)
      : db_(db), db_mu_(db_mu), env_(env), options_(std::move(options)) {}
  Status Recover(int64_t now_ms);
  const ActionSpec* Find(const std::string& name) const;
  // The entry of (action, key), scheduled now if there is none yet.
  Result<ActionEntry> Schedule(const ActionSpec& spec, const std::string& key, const Alert& alert,
                               int64_t now_ms);
  Result<std::optional<ActionEntry>> Get(int64_t id) const;
  // Claims the due entries: `running` (or dry_run, recorded) committed.
  Result<std::vector<ActionEntry>> TakeDue(int64_t now_ms);
  Status Finish(const ActionEntry& e, const CommandResult& r, int64_t now_ms);
  Status Trim();
  std::optional<int64_t> NextDueMs() const;
  void Loop();

  store::SqliteDb* db_;
  std::mutex* db_mu_;
  Env* env_;
  ActionsOptions options_;

  std::atomic<bool> stop_commands_{false};  // kills a running command at Stop
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool stopping_ = false;  // guarded by wake_mu_
  bool woken_ = false;     // guarded by wake_mu_
  std::thread thread_;
};

// The line an alert's description carries for an entry, English or Chinese.
std::string ActionLine(const ActionEntry& e, const std::string& external_url, bool zh);

}  // namespace vigil::alert
