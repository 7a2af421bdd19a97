#include "alert/actions.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "core/log.h"
#include "core/strings.h"
#include "core/thread_name.h"
#include "store/common/sqlite.h"

namespace vigil::alert {
namespace {

using nlohmann::json;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS actions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  action TEXT NOT NULL,
  trigger_key TEXT NOT NULL,
  trigger TEXT NOT NULL,
  state TEXT NOT NULL,
  dry_run INTEGER NOT NULL,
  command TEXT NOT NULL,
  alert_id TEXT NOT NULL,
  alert_rule TEXT NOT NULL,
  labels TEXT NOT NULL,
  owner TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  run_at_ms INTEGER NOT NULL,
  timeout_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL DEFAULT 0,
  finished_ms INTEGER NOT NULL DEFAULT 0,
  cancelled_by TEXT NOT NULL DEFAULT '',
  exit_code INTEGER,
  output TEXT NOT NULL DEFAULT '',
  output_truncated INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  UNIQUE (action, trigger_key));
CREATE INDEX IF NOT EXISTS actions_due ON actions (state, run_at_ms);
)sql";

constexpr const char* kColumns =
    "id, action, trigger, state, dry_run, command, alert_id, alert_rule, labels, owner, "
    "created_ms, run_at_ms, timeout_ms, started_ms, finished_ms, cancelled_by, exit_code, "
    "output, output_truncated, error";

constexpr size_t kMaxErrorBytes = 512;
constexpr double kIdleUtil = 5;

std::string StringsJson(const std::vector<std::string>& v) { return json(v).dump(); }

std::vector<std::string> ParseStrings(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const json& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::string LabelsJson(const wire::Labels& labels) {
  json j = json::object();
  for (const wire::Label& l : labels) j[l.name] = l.value;
  return j.dump();
}

wire::Labels ParseLabels(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  wire::Labels out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out.push_back({k, v.get<std::string>()});
  }
  return out;
}

ActionEntry ReadEntry(const store::SqliteStmt& s) {
  ActionEntry e;
  e.id = s.ColumnInt64(0);
  e.action = std::string(s.ColumnText(1));
  e.trigger =
      s.ColumnText(2) == "gpus_idle" ? ActionTrigger::kGpusIdle : ActionTrigger::kJobFinished;
  e.state = ParseActionState(s.ColumnText(3)).value_or(ActionState::kFailed);
  e.dry_run = s.ColumnInt64(4) != 0;
  e.command = ParseStrings(s.ColumnText(5));
  e.alert_id = std::string(s.ColumnText(6));
  e.alert_rule = std::string(s.ColumnText(7));
  e.labels = ParseLabels(s.ColumnText(8));
  e.owner = std::string(s.ColumnText(9));
  e.created_ms = s.ColumnInt64(10);
  e.run_at_ms = s.ColumnInt64(11);
  e.timeout_ms = s.ColumnInt64(12);
  e.started_ms = s.ColumnInt64(13);
  e.finished_ms = s.ColumnInt64(14);
  e.cancelled_by = std::string(s.ColumnText(15));
  if (!s.ColumnIsNull(16)) e.exit_code = static_cast<int>(s.ColumnInt64(16));
  e.output = std::string(s.ColumnText(17));
  e.output_truncated = s.ColumnInt64(18) != 0;
  e.error = std::string(s.ColumnText(19));
  return e;
}

// "15:40 UTC"; to the second when the window is short enough for it to
// matter.
std::string ClockText(int64_t ms, bool seconds) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), seconds ? "%H:%M:%S UTC" : "%H:%M UTC", &tm);
  return buf;
}

std::string RuleOf(const ActionSpec& spec) {
  return spec.on == ActionTrigger::kJobFinished ? "job_finished" : "gpus_idle_" + spec.name;
}

bool Matches(const ActionSpec& spec, const wire::Labels& labels) {
  return std::all_of(spec.match.begin(), spec.match.end(), [&](const auto& m) {
    return ScopeMatches(m.second, wire::LabelValue(labels, m.first)) &&
           (m.second.empty() || !wire::LabelValue(labels, m.first).empty());
  });
}

// When the alert of `s` is firing after this evaluation, the time it became
// active (the tracker's rule: `for` held since then); else nullopt.
std::optional<int64_t> FiringSince(const LevelKey& level, const std::string& id, const Sample& s,
                                   const std::map<std::string, Alert>& active, int64_t now_ms) {
  const int64_t for_ms = s.for_ms >= 0 ? s.for_ms : level.for_ms;
  auto it = active.find(id);
  if (it == active.end()) {
    if (!s.fire || for_ms > 0) return std::nullopt;
    return now_ms;
  }
  if (!s.hold) return std::nullopt;
  const Alert& a = it->second;
  if (a.state == AlertState::kFiring || now_ms - a.active_at_ms >= for_ms) return a.active_at_ms;
  return std::nullopt;
}

void AppendLine(std::string* text, const std::string& line) {
  *text += (text->empty() ? "" : "\n") + line;
}

}  // namespace

const char* ActionTriggerName(ActionTrigger t) {
  return t == ActionTrigger::kGpusIdle ? "gpus_idle" : "job_finished";
}

const char* ActionStateName(ActionState s) {
  switch (s) {
    case ActionState::kScheduled:
      return "scheduled";
    case ActionState::kRunning:
      return "running";
    case ActionState::kCancelled:
      return "cancelled";
    case ActionState::kRan:
      return "ran";
    case ActionState::kFailed:
      return "failed";
    case ActionState::kDryRun:
      return "dry_run";
    case ActionState::kMissed:
      return "missed";
  }
  return "failed";
}

std::optional<ActionState> ParseActionState(std::string_view name) {
  for (ActionState s :
       {ActionState::kScheduled, ActionState::kRunning, ActionState::kCancelled, ActionState::kRan,
        ActionState::kFailed, ActionState::kDryRun, ActionState::kMissed}) {
    if (name == ActionStateName(s)) return s;
  }
  return std::nullopt;
}

Status ValidateActions(const std::vector<ActionSpec>& actions) {
  std::set<std::string> names;
  for (size_t i = 0; i < actions.size(); ++i) {
    const ActionSpec& a = actions[i];
    const std::string at = "notify.actions[" + std::to_string(i) + "]";
    if (a.name.empty() || a.name.size() > 64 ||
        a.name.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
            std::string::npos) {
      return InvalidArgument(at + ".name must be 1 to 64 letters, digits, '_' or '-'");
    }
    if (!names.insert(a.name).second) {
      return InvalidArgument("notify.actions: two actions named \"" + a.name + "\"");
    }
    if (a.command.empty() || a.command[0].empty() || a.command[0][0] != '/') {
      return InvalidArgument(at + ".command must be a list whose first item is the program's " +
                             "absolute path (it runs without a shell)");
    }
    if (a.on == ActionTrigger::kGpusIdle && a.idle_for_ms <= 0) {
      return InvalidArgument(at + ".idle_for is required for \"on\": \"gpus_idle\" (e.g. \"2h\")");
    }
    if (a.on != ActionTrigger::kGpusIdle && a.idle_for_ms != 0) {
      return InvalidArgument(at + ".idle_for is for \"on\": \"gpus_idle\" only");
    }
    if (a.confirm_window_ms < 0)
      return InvalidArgument(at + ".confirm_window must not be negative");
    if (a.timeout_ms <= 0) return InvalidArgument(at + ".timeout must be positive");
  }
  return Status::Ok();
}

Rule IdleRule(const ActionSpec& spec) {
  Rule r;
  r.id = RuleOf(spec);
  r.source = RuleSource::kQuery;
  r.expr = "max by (node) (max_over_time(DCGM_FI_DEV_GPU_UTIL[1m]))";
  r.comparison = Comparison::kBelow;
  r.levels = {{Severity::kWarning, kIdleUtil, kIdleUtil, spec.idle_for_ms, ""}};
  r.unit = "%";
  r.summary_en = "Every GPU of {node} idle for {for} (at most {value}% utilisation)";
  r.summary_zh = "{node} 的所有 GPU 已空闲 {for}（利用率最高 {value}%）";
  return r;
}

std::string ActionLine(const ActionEntry& e, const std::string& external_url, bool zh) {
  const std::string link = external_url + "/#actions&id=" + std::to_string(e.id);
  const bool seconds = e.run_at_ms - e.created_ms < 120'000;
  const std::string at = ClockText(e.run_at_ms, seconds);
  const std::string& n = e.action;
  switch (e.state) {
    case ActionState::kScheduled:
    case ActionState::kRunning:
      if (e.dry_run) {
        return zh ? "操作 " + n + "（演练，不会真正执行）将于 " + at + " 记录，可在此之前取消：" +
                        link
                  : "Action " + n + " (dry run: nothing will run) will be recorded at " + at +
                        " unless cancelled: " + link;
      }
      return zh ? "操作 " + n + " 将于 " + at + " 执行，可在此之前取消：" + link
                : "Action " + n + " will run at " + at + " unless cancelled: " + link;
    case ActionState::kCancelled:
      return zh ? "操作 " + n + " 已被 " + e.cancelled_by + " 取消：" + link
                : "Action " + n + " was cancelled by " + e.cancelled_by + ": " + link;
    case ActionState::kDryRun:
      return zh ? "操作 " + n + "（演练）已记录，未执行：" + link
                : "Action " + n + " (dry run) was recorded, nothing ran: " + link;
    case ActionState::kRan:
      return zh ? "操作 " + n + " 已于 " + at + " 执行：" + link
                : "Action " + n + " ran at " + at + ": " + link;
    case ActionState::kFailed:
    case ActionState::kMissed:
      return zh ? "操作 " + n + " 未成功（" + std::string(ActionStateName(e.state)) + "）：" + link
                : "Action " + n + " did not succeed (" + ActionStateName(e.state) + "): " + link;
  }
  return link;
}

Result<std::unique_ptr<ActionRunner>> ActionRunner::Open(store::SqliteDb* db, std::mutex* db_mu,
                                                         Env* env, ActionsOptions options) {
  VIGIL_RETURN_IF_ERROR(ValidateActions(options.actions));
  std::unique_ptr<ActionRunner> r(new ActionRunner(db, db_mu, env, std::move(options)));
  std::lock_guard lock(*db_mu);
  VIGIL_RETURN_IF_ERROR(db->Exec(kSchema));
  VIGIL_RETURN_IF_ERROR(r->Recover(env->NowMillis()));
  return r;
}

ActionRunner::~ActionRunner() { Stop(); }

const ActionSpec* ActionRunner::Find(const std::string& name) const {
  for (const ActionSpec& a : options_.actions) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

Status ActionRunner::Recover(int64_t now_ms) {
  // Interrupted mid-command: it may have done its work; never again.
  auto interrupted = db_->Prepare(
      "UPDATE actions SET state = 'failed', finished_ms = ?1, error = 'interrupted: Vigil "
      "stopped while it ran' WHERE state = 'running'");
  if (!interrupted.ok()) return interrupted.status();
  interrupted->BindInt64(1, now_ms);
  VIGIL_RETURN_IF_ERROR(interrupted->Run());
  auto scheduled =
      db_->Prepare(std::string("SELECT ") + kColumns + " FROM actions WHERE state = 'scheduled'");
  if (!scheduled.ok()) return scheduled.status();
  std::vector<std::pair<int64_t, std::string>> outcome;  // (id, state|error)
  Status st;
  while (scheduled->Step(&st)) {
    ActionEntry e = ReadEntry(*scheduled);
    const ActionSpec* spec = Find(e.action);
    if (spec == nullptr) {
      outcome.push_back({e.id, "cancelled"});
    } else if (now_ms - e.run_at_ms > spec->confirm_window_ms) {
      outcome.push_back({e.id, "missed"});
    }
  }
  VIGIL_RETURN_IF_ERROR(st);
  for (const auto& [id, state] : outcome) {
    auto up = db_->Prepare(
        "UPDATE actions SET state = ?2, finished_ms = ?3, cancelled_by = ?4, error = ?5 WHERE id "
        "= ?1");
    if (!up.ok()) return up.status();
    const bool cancelled = state == "cancelled";
    up->BindInt64(1, id);
    up->BindText(2, state);
    up->BindInt64(3, now_ms);
    up->BindText(4, cancelled ? "vigil" : "");
    up->BindText(5, cancelled ? "the action is no longer configured"
                              : "its time passed while Vigil was down, longer ago than its "
                                "confirm window");
    VIGIL_RETURN_IF_ERROR(up->Run());
  }
  return Status::Ok();
}

void ActionRunner::ObserveLocked(const LevelKey& level, const std::map<std::string, Alert>& active,
                                 std::vector<Sample>* samples, int64_t now_ms) {
  for (const ActionSpec& spec : options_.actions) {
    if (RuleOf(spec) != level.rule) continue;
    for (Sample& s : *samples) {
      Alert a;
      a.rule = level.rule;
      a.labels = AlertLabels(level.rule, level.severity, s.labels);
      a.id = Fingerprint(a.labels);
      a.owner = s.owner;
      std::optional<int64_t> since = FiringSince(level, a.id, s, active, now_ms);
      if (!since || !Matches(spec, a.labels)) continue;
      // Once per run; per idle episode (an occurrence of the idle alert).
      const std::string key =
          spec.on == ActionTrigger::kJobFinished
              ? "run:" + std::string(LabelOf(a, "node")) + "/" + std::string(LabelOf(a, "run"))
              : a.id + "@" + std::to_string(*since);
      auto e = Schedule(spec, key, a, now_ms);
      if (!e.ok()) {
        Logf(LogLevel::kWarn, "action %s not scheduled: %s", spec.name.c_str(),
             e.status().ToString().c_str());
        continue;
      }
      AppendLine(&s.description_en, ActionLine(*e, options_.external_url, false));
      AppendLine(&s.description_zh, ActionLine(*e, options_.external_url, true));
    }
  }
}

Result<ActionEntry> ActionRunner::Schedule(const ActionSpec& spec, const std::string& key,
                                           const Alert& alert, int64_t now_ms) {
  auto find = db_->Prepare(std::string("SELECT ") + kColumns +
                           " FROM actions WHERE action = ?1 AND trigger_key = ?2");
  if (!find.ok()) return find.status();
  find->BindText(1, spec.name);
  find->BindText(2, key);
  Status st;
  if (find->Step(&st)) return ReadEntry(*find);
  VIGIL_RETURN_IF_ERROR(st);
  auto insert = db_->Prepare(
      "INSERT INTO actions (action, trigger_key, trigger, state, dry_run, command, alert_id, "
      "alert_rule, labels, owner, created_ms, run_at_ms, timeout_ms) VALUES (?1, ?2, ?3, "
      "'scheduled', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!insert.ok()) return insert.status();
  const std::string command = StringsJson(spec.command), labels = LabelsJson(alert.labels);
  insert->BindText(1, spec.name);
  insert->BindText(2, key);
  insert->BindText(3, ActionTriggerName(spec.on));
  insert->BindInt64(4, spec.dry_run ? 1 : 0);
  insert->BindText(5, command);
  insert->BindText(6, alert.id);
  insert->BindText(7, alert.rule);
  insert->BindText(8, labels);
  insert->BindText(9, alert.owner);
  insert->BindInt64(10, now_ms);
  insert->BindInt64(11, now_ms + spec.confirm_window_ms);
  insert->BindInt64(12, spec.timeout_ms);
  VIGIL_RETURN_IF_ERROR(insert->Run());
  VIGIL_RETURN_IF_ERROR(Trim());
  Logf(LogLevel::kInfo, "action %s scheduled for %s (%s)", spec.name.c_str(),
       FormatRfc3339(now_ms + spec.confirm_window_ms).c_str(), key.c_str());
  {
    std::lock_guard lock(wake_mu_);
    woken_ = true;
  }
  wake_cv_.notify_all();
  return Schedule(spec, key, alert, now_ms);  // read back: the id and the defaults
}

Status ActionRunner::Trim() {
  auto stmt = db_->Prepare(
      "DELETE FROM actions WHERE state NOT IN ('scheduled', 'running') AND id NOT IN (SELECT id "
      "FROM actions ORDER BY id DESC LIMIT ?1)");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, static_cast<int64_t>(options_.max_entries));
  return stmt->Run();
}

Result<std::optional<ActionEntry>> ActionRunner::Get(int64_t id) const {
  auto stmt = db_->Prepare(std::string("SELECT ") + kColumns + " FROM actions WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, id);
  Status st;
  if (stmt->Step(&st)) return std::optional<ActionEntry>(ReadEntry(*stmt));
  VIGIL_RETURN_IF_ERROR(st);
  return std::optional<ActionEntry>();
}

Result<std::vector<ActionEntry>> ActionRunner::List(size_t limit, int64_t id) const {
  std::lock_guard lock(*db_mu_);
  auto stmt = db_->Prepare(std::string("SELECT ") + kColumns +
                           " FROM actions WHERE (?1 = 0 OR id = ?1) ORDER BY id DESC LIMIT ?2");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, id);
  stmt->BindInt64(2, static_cast<int64_t>(std::min(limit, options_.max_entries)));
  std::vector<ActionEntry> out;
  Status st;
  while (stmt->Step(&st)) out.push_back(ReadEntry(*stmt));
  VIGIL_RETURN_IF_ERROR(st);
  return out;
}

Result<ActionEntry> ActionRunner::Cancel(int64_t id, const std::string& by) {
  std::lock_guard lock(*db_mu_);
  VIGIL_ASSIGN_OR_RETURN(std::optional<ActionEntry> e, Get(id));
  if (!e) return NotFound("no action has the id " + std::to_string(id));
  if (e->state != ActionState::kScheduled) {
    return FailedPrecondition("action " + std::to_string(id) + " cannot be cancelled: it is " +
                              ActionStateName(e->state) +
                              (e->cancelled_by.empty() ? "" : " (by " + e->cancelled_by + ")"));
  }
  auto stmt = db_->Prepare(
      "UPDATE actions SET state = 'cancelled', cancelled_by = ?2, finished_ms = ?3 WHERE id = ?1 "
      "AND state = 'scheduled'");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, id);
  stmt->BindText(2, by);
  stmt->BindInt64(3, env_->NowMillis());
  VIGIL_RETURN_IF_ERROR(stmt->Run());
  Logf(LogLevel::kInfo, "action %s (%lld) cancelled by %s", e->action.c_str(),
       static_cast<long long>(id), by.c_str());
  VIGIL_ASSIGN_OR_RETURN(e, Get(id));
  return std::move(*e);
}

Result<std::vector<ActionEntry>> ActionRunner::TakeDue(int64_t now_ms) {
  auto stmt = db_->Prepare(std::string("SELECT ") + kColumns +
                           " FROM actions WHERE state = 'scheduled' AND run_at_ms <= ?1 ORDER BY "
                           "run_at_ms, id");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, now_ms);
  std::vector<ActionEntry> due;
  Status st;
  while (stmt->Step(&st)) due.push_back(ReadEntry(*stmt));
  VIGIL_RETURN_IF_ERROR(st);
  std::vector<ActionEntry> to_run;
  for (ActionEntry& e : due) {
    // Committed before the command starts: a crash during it never runs it
    // again (Recover marks it failed).
    auto up = db_->Prepare(
        "UPDATE actions SET state = ?2, started_ms = ?3, finished_ms = ?4, output = ?5 WHERE id = "
        "?1");
    if (!up.ok()) return up.status();
    std::string what;
    for (const std::string& a : e.command) what += (what.empty() ? "" : " ") + a;
    // Bound as is (SQLite does not copy): a variable, not a temporary.
    const std::string note = e.dry_run ? "dry run: would have run " + what : "";
    up->BindInt64(1, e.id);
    up->BindText(2, e.dry_run ? "dry_run" : "running");
    up->BindInt64(3, now_ms);
    up->BindInt64(4, e.dry_run ? now_ms : 0);
    up->BindText(5, note);
    VIGIL_RETURN_IF_ERROR(up->Run());
    if (e.dry_run) {
      Logf(LogLevel::kInfo, "action %s (%lld): %s", e.action.c_str(), static_cast<long long>(e.id),
           note.c_str());
      continue;
    }
    e.state = ActionState::kRunning;
    e.started_ms = now_ms;
    to_run.push_back(std::move(e));
  }
  return to_run;
}

Status ActionRunner::Finish(const ActionEntry& e, const CommandResult& r, int64_t now_ms) {
  auto up = db_->Prepare(
      "UPDATE actions SET state = ?2, finished_ms = ?3, exit_code = ?4, output = ?5, "
      "output_truncated = ?6, error = ?7 WHERE id = ?1");
  if (!up.ok()) return up.status();
  const bool ok = r.exit_code == 0 && r.error.empty();
  const std::string output(CutUtf8(r.output, options_.max_output_bytes));
  const std::string error(CutUtf8(r.error, kMaxErrorBytes));
  up->BindInt64(1, e.id);
  up->BindText(2, ok ? "ran" : "failed");
  up->BindInt64(3, now_ms);
  if (r.exit_code) up->BindInt64(4, *r.exit_code);
  up->BindText(5, output);
  up->BindInt64(6, r.output_truncated ? 1 : 0);
  up->BindText(7, error);
  Logf(ok ? LogLevel::kInfo : LogLevel::kWarn, "action %s (%lld) %s%s", e.action.c_str(),
       static_cast<long long>(e.id), ok ? "ran" : "failed: ", error.c_str());
  return up->Run();
}

void ActionRunner::RunDue() {
  std::vector<ActionEntry> due;
  {
    std::lock_guard lock(*db_mu_);
    auto taken = TakeDue(env_->NowMillis());
    if (!taken.ok()) {
      Logf(LogLevel::kWarn, "actions: %s", taken.status().ToString().c_str());
      return;
    }
    due = std::move(taken).value();
  }
  for (const ActionEntry& e : due) {
    std::vector<std::pair<std::string, std::string>> env = {
        {"VIGIL_ACTION", e.action},
        {"VIGIL_ACTION_ID", std::to_string(e.id)},
        {"VIGIL_ALERT", e.alert_rule},
        {"VIGIL_JOB", std::string(wire::LabelValue(e.labels, "job"))},
        {"VIGIL_NODE", std::string(wire::LabelValue(e.labels, "node"))},
        {"VIGIL_RUN", std::string(wire::LabelValue(e.labels, "run"))},
        {"VIGIL_OWNER", e.owner}};
    CommandResult r =
        RunCommand(e.command, env, e.timeout_ms, options_.max_output_bytes, &stop_commands_);
    std::lock_guard lock(*db_mu_);
    Status st = Finish(e, r, env_->NowMillis());
    if (!st.ok()) Logf(LogLevel::kWarn, "actions: %s", st.ToString().c_str());
  }
}

std::optional<int64_t> ActionRunner::NextDueMs() const {
  std::lock_guard lock(*db_mu_);
  auto stmt = db_->Prepare("SELECT MIN(run_at_ms) FROM actions WHERE state = 'scheduled'");
  if (!stmt.ok()) return std::nullopt;
  Status st;
  if (!stmt->Step(&st) || stmt->ColumnIsNull(0)) return std::nullopt;
  return stmt->ColumnInt64(0);
}

void ActionRunner::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
  NameThread(thread_, "vigil-actions");
}

void ActionRunner::Stop() {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  stop_commands_ = true;
  wake_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ActionRunner::Loop() {
  while (true) {
    RunDue();
    const std::optional<int64_t> next = NextDueMs();
    // At most a second: the clock may move faster than real time (tests).
    const int64_t wait_ms = std::clamp<int64_t>(next ? *next - env_->NowMillis() : 1000, 1, 1000);
    std::unique_lock lock(wake_mu_);
    wake_cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                      [this] { return stopping_ || woken_; });
    if (stopping_) return;
    woken_ = false;
  }
}

}  // namespace vigil::alert
