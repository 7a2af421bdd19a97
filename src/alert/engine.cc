#include "alert/engine.h"

#include <algorithm>
#include <chrono>

#include "alert/run_summary.h"
#include "core/log.h"
#include "core/thread_name.h"
#include "store/common/sqlite.h"

namespace vigil::alert {
namespace {

LevelKey KeyOf(const Rule& rule, const Level& level) {
  return {rule.id, level.severity, level.for_ms, rule.keep_firing_for_ms};
}

// Utilisation of every GPU now, smoothed over a minute (scaled) so that a
// dip between two batches does not count as under-use; and each GPU's
// model, for overrides by model.
std::map<std::string, double> GpuUtilisation(QueryCache* queries, double time_scale, int64_t now_ms,
                                             std::map<std::string, std::string>* models) {
  std::map<std::string, double> out;
  auto expr = ScaleDurations("avg_over_time(DCGM_FI_DEV_GPU_UTIL[${1m}])", time_scale);
  if (!expr.ok()) return out;
  auto r = queries->Run(*expr, now_ms);
  if (!r.ok()) return out;
  models->clear();
  for (const query::ResultSeries& s : (*r)->series) {
    if (s.points.empty()) continue;
    std::string key = std::string(wire::LabelValue(s.labels, "node")) + "/" +
                      std::string(wire::LabelValue(s.labels, "gpu"));
    out[key] = s.points[0].v;
    std::string_view model = wire::LabelValue(s.labels, "modelName");
    if (!model.empty()) (*models)[key] = std::string(model);
  }
  return out;
}

// The job on each GPU, by "<node>/<gpu>", for overrides by job name, and
// whose runs and GPUs they are (Alert::owner).
void ScopeJobs(const std::vector<diagnose::JobReport>& reports, ScopeContext* scope) {
  scope->gpu_job.clear();
  scope->run_owner.clear();
  scope->gpu_owner.clear();
  for (const diagnose::JobReport& r : reports) {
    if (!r.job.user.empty()) scope->run_owner[r.node + "/" + r.job.id] = r.job.user;
    if (r.job.ended) continue;
    for (const diagnose::JobGpu& g : r.gpus) {
      const std::string key = r.node + "/" + g.gpu;
      if (!r.job.name.empty()) scope->gpu_job[key] = r.job.name;
      if (!r.job.user.empty()) scope->gpu_owner[key] = r.job.user;
    }
  }
}

// The job an alert is about: the run or job its labels name on its node,
// else the job running on its GPU; null when none is known.
const diagnose::JobReport* ReportFor(const Alert& a,
                                     const std::vector<diagnose::JobReport>& reports) {
  const std::string_view node = LabelOf(a, "node"), run = LabelOf(a, "run"),
                         job = LabelOf(a, "job"), gpu = LabelOf(a, "gpu");
  const diagnose::JobReport* on_gpu = nullptr;
  for (const diagnose::JobReport& r : reports) {
    if (r.node != node) continue;
    if (!run.empty() && r.job.id == run) return &r;
    if (run.empty() && !job.empty() && r.job.name == job) return &r;
    if (run.empty() && job.empty() && !gpu.empty() && !r.job.ended && on_gpu == nullptr) {
      for (const diagnose::JobGpu& g : r.gpus) {
        if (g.gpu == gpu) on_gpu = &r;
      }
    }
  }
  return on_gpu;
}

// Each GPU's threshold of a level (overrides and the GPU's own reference
// applied), for `vigil rules ls`.
void RecordThresholds(const Level& level, const std::vector<Sample>& samples,
                      const ScopeContext& scope, RuleStatus* rs) {
  constexpr size_t kMax = 64;
  for (const Sample& s : samples) {
    if (rs->thresholds.size() >= kMax) return;
    std::string_view gpu = wire::LabelValue(s.labels, "gpu");
    if (gpu.empty()) continue;
    std::string where =
        "node " + std::string(wire::LabelValue(s.labels, "node")) + " gpu " + std::string(gpu);
    std::string_view model = ScopeOf(s.labels, scope).gpu_model;
    if (!model.empty()) where += " (" + std::string(model) + ")";
    rs->thresholds.push_back({level.severity, std::move(where), s.threshold});
  }
}

int SeverityRank(Severity s) {
  return s == Severity::kCritical ? 2 : s == Severity::kWarning ? 1 : 0;
}

}  // namespace

Result<std::unique_ptr<AlertEngine>> AlertEngine::Create(AlertEngineSources sources,
                                                         AlertEngineOptions options) {
  if (sources.query == nullptr) return InvalidArgument("the alert engine needs a query engine");
  auto rules = EffectiveRules(options.config);
  if (!rules.ok()) return rules.status();
  for (const std::string& name : options.dispatch.channels) {
    if (options.channels.count(name) == 0) {
      return InvalidArgument("notify: channel \"" + name + "\" is not configured");
    }
  }
  for (const Route& route : options.dispatch.routes) {
    for (const std::string& c : route.channels) {
      if (options.channels.count(c) == 0) {
        return InvalidArgument("notify.routes: unknown channel \"" + c + "\"");
      }
    }
  }
  for (const auto& [name, quiet] : options.dispatch.quiet_hours) {
    if (options.channels.count(name) == 0) {
      return InvalidArgument("notify: quiet hours for unknown channel \"" + name + "\"");
    }
  }
  options.dispatch.inbox = options.inbox;
  // Each idle action has a rule of its own: its alert is the notification.
  for (const ActionSpec& a : options.actions.actions) {
    if (a.on == ActionTrigger::kGpusIdle) rules->push_back(IdleRule(a));
  }
  if (options.actions.external_url.empty()) {
    options.actions.external_url = options.dispatch.external_url;
  }
  auto store = AlertStore::Open(options.store);
  if (!store.ok()) return store.status();
  auto log = DeliveryLog::Open((*store)->db(), options.delivery);
  if (!log.ok()) return log.status().WithContext("cannot open the delivery log");
  std::unique_ptr<Inbox> inbox;
  if (options.inbox) {
    auto opened = Inbox::Open((*store)->db(), options.inbox_options, options.dispatch.recipients);
    if (!opened.ok()) return opened.status().WithContext("cannot open the inbox");
    inbox = std::move(opened).value();
  }
  std::unique_ptr<AlertEngine> engine(new AlertEngine(
      sources, std::move(options), std::move(rules).value(), std::move(store).value()));
  auto active = engine->store_->Active();
  if (!active.ok()) return active.status().WithContext("cannot read the saved alerts");
  engine->tracker_.Restore(std::move(active).value());
  auto groups = engine->store_->Groups();
  if (!groups.ok()) return groups.status().WithContext("cannot read the saved alert groups");
  engine->dispatcher_.Restore(*groups);
  engine->log_ = std::move(log).value();
  engine->inbox_ = std::move(inbox);
  auto actions =
      ActionRunner::Open(engine->store_->db(), &engine->mu_, sources.env, engine->options_.actions);
  if (!actions.ok()) return actions.status().WithContext("cannot open the actions log");
  engine->actions_ = std::move(actions).value();
  auto silences = engine->store_->Silences();
  if (!silences.ok()) return silences.status().WithContext("cannot read the saved silences");
  for (Silence& s : *silences) {
    std::string id = s.id;
    Status st = engine->silences_.Put(std::move(s));
    if (!st.ok())
      Logf(LogLevel::kWarn, "saved silence %s skipped: %s", id.c_str(), st.ToString().c_str());
  }
  return engine;
}

AlertEngine::AlertEngine(AlertEngineSources sources, AlertEngineOptions options,
                         std::vector<Rule> rules, std::unique_ptr<AlertStore> store)
    : sources_(sources),
      options_(std::move(options)),
      started_ms_(sources.env->NowMillis()),
      queries_(sources.query),
      dispatcher_(options_.dispatch),
      store_(std::move(store)) {
  for (Rule& r : rules) rules_.push_back({std::move(r)});
}

AlertEngine::~AlertEngine() { Stop(); }

void AlertEngine::Start() {
  if (eval_thread_.joinable()) return;
  eval_thread_ = std::thread([this] { EvaluationLoop(); });
  NameThread(eval_thread_, "vigil-alerts");
  delivery_thread_ = std::thread([this] { DeliveryLoop(); });
  NameThread(delivery_thread_, "vigil-deliver");
  if (!options_.actions.actions.empty()) actions_->Start();
}

void AlertEngine::Stop() {
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  stop_cv_.notify_all();
  if (eval_thread_.joinable()) eval_thread_.join();
  if (delivery_thread_.joinable()) delivery_thread_.join();
  if (actions_) actions_->Stop();
}

void AlertEngine::EvaluationLoop() {
  const int64_t interval = std::max<int64_t>(50, options_.config.eval_interval_ms);
  int64_t next_eval = 0;
  while (true) {
    int64_t now = sources_.env->NowMillis();
    std::vector<Notification> due;
    if (now >= next_eval) {
      due = Evaluate(now);
      next_eval = now + interval;
    } else {
      // A group became due between two evaluations (its group_wait ended):
      // deliver it now rather than at the next evaluation.
      std::lock_guard lock(mu_);
      due = dispatcher_.Due(now);
    }
    int64_t next_due;
    {
      std::lock_guard lock(mu_);
      LogDue(due, now);
      next_due = dispatcher_.NextDueMs();
    }
    std::unique_lock lock(queue_mu_);
    if (!due.empty()) {
      entries_added_ = true;
      queue_cv_.notify_one();
    }
    // A group due now that Due held back (quiet hours) waits for the next
    // evaluation: no spinning on it.
    const int64_t after = sources_.env->NowMillis();
    int64_t wake_at = next_due > after ? std::min(next_eval, next_due) : next_eval;
    int64_t wait_ms = std::clamp<int64_t>(wake_at - after, 1, interval);
    stop_cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                      [this] { return stopping_ || woken_; });
    if (stopping_) return;
    if (woken_) next_eval = 0;  // evaluate at once
    woken_ = false;
  }
}

// Alerts of the run (other than its end) that became active while it ran:
// the ones still active and those in the history.
size_t AlertEngine::AlertsDuring(const diagnose::JobReport& r) const {
  auto of_run = [&](const Alert& a) {
    if (a.rule == "job_finished" || a.rule == "job_crashed") return false;
    if (a.active_at_ms < r.job.start_time_ms || a.active_at_ms > r.job.last_seen_ms) return false;
    if (!LabelOf(a, "run").empty()) return LabelOf(a, "run") == r.job.id;
    return LabelOf(a, "job") == r.job.name && LabelOf(a, "node") == r.node;
  };
  std::set<std::string> ids;
  for (const auto& [id, a] : tracker_.active()) {
    if (of_run(a)) ids.insert(id + "@" + std::to_string(a.active_at_ms));
  }
  if (auto history = store_->History(1000); history.ok()) {
    for (const Alert& a : *history) {
      if (of_run(a)) ids.insert(a.id + "@" + std::to_string(a.active_at_ms));
    }
  }
  return ids.size();
}

std::pair<std::string, std::string> AlertEngine::DescribeEnd(const diagnose::JobReport& r,
                                                             const std::string& exit_reason) {
  const std::string key = r.node + "/" + r.job.id;
  auto it = run_summaries_.find(key);
  if (it != run_summaries_.end()) return it->second;
  const int64_t now_ms = sources_.env->NowMillis();
  RunSummaryInput in;
  in.report = &r;
  in.exit_reason = exit_reason;
  in.alerts_during_run = AlertsDuring(r);
  in.price_per_gpu_hour = options_.config.price_per_gpu_hour;
  in.currency = options_.config.currency;
  in.now_ms = now_ms;
  RunSummary s = SummarizeRun(*sources_.query, in);
  auto text = std::make_pair(RenderRunSummary(s, false), RenderRunSummary(s, true));
  // Kept once its data has settled: lines flushed at exit, or read late on
  // a loaded node, still reach the alert's description until then.
  if (now_ms - r.job.last_seen_ms >= kSummarySettledMs) run_summaries_.emplace(key, text);
  return text;
}

int64_t AlertEngine::JobsEvalMs() const {
  const int64_t scaled = static_cast<int64_t>(5000 * options_.config.time_scale);
  return std::clamp<int64_t>(scaled, 0, 5000);
}

void AlertEngine::Wake() {
  jobs_forced_ = true;
  {
    std::lock_guard lock(queue_mu_);
    woken_ = true;
  }
  stop_cv_.notify_all();
}

void AlertEngine::DeliveryLoop() {
  while (true) {
    DeliverDue();  // what a restart left pending goes first
    int64_t next = INT64_MAX;
    {
      std::lock_guard lock(mu_);
      next = log_->NextAttemptMs().value_or(INT64_MAX);
    }
    const int64_t wait_ms = std::clamp<int64_t>(
        next == INT64_MAX ? 60'000 : next - sources_.env->NowMillis(), 1, 60'000);
    std::unique_lock lock(queue_mu_);
    queue_cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                       [this] { return stopping_ || entries_added_; });
    if (stopping_) return;
    entries_added_ = false;
  }
}

void AlertEngine::EvaluateOnce() {
  const int64_t now = sources_.env->NowMillis();
  std::vector<Notification> due = Evaluate(now);
  {
    std::lock_guard lock(mu_);
    LogDue(due, now);
  }
  DeliverDue();
}

void AlertEngine::LogDue(const std::vector<Notification>& due, int64_t now_ms) {
  for (const Notification& n : due) {
    // The entry and the group's record commit together: after a crash
    // either both say it was handed out, or neither does and the
    // dispatcher hands it out again.
    store::SqliteTxn txn(store_->db());
    Status st = txn.Begin();
    Result<int64_t> id = st.ok() ? Record(n, now_ms) : Result<int64_t>(st);
    if (!id.ok()) {
      Logf(LogLevel::kWarn, "notification to %s not written: %s", n.receiver.c_str(),
           id.status().ToString().c_str());
      (void)dispatcher_.Sent(n, /*delivered=*/false, now_ms);  // the dispatcher retries it
      continue;
    }
    std::optional<GroupRecord> record = dispatcher_.Sent(n, /*delivered=*/true, now_ms);
    if (record) st = store_->SaveGroup(*record);
    if (st.ok()) st = txn.Commit();
    if (!st.ok()) Logf(LogLevel::kWarn, "alert group not saved: %s", st.ToString().c_str());
  }
}

Result<int64_t> AlertEngine::Record(const Notification& n, int64_t now_ms) {
  // The inbox is local: its items are the delivery, in this transaction.
  if (inbox_ != nullptr && n.receiver == kInboxReceiver) {
    auto added = inbox_->Add(n, now_ms);
    if (!added.ok()) return added.status();
    return int64_t{*added};
  }
  return log_->Add(n, now_ms, in_flight_ids_);
}

void AlertEngine::DeliverDue() {
  while (true) {
    std::vector<std::vector<DeliveryEntry>> messages;
    {
      std::lock_guard lock(mu_);
      auto r = log_->Due(sources_.env->NowMillis(), 16);
      if (!r.ok()) {
        Logf(LogLevel::kWarn, "delivery log unreadable: %s", r.status().ToString().c_str());
        return;
      }
      messages = MessagesOf(std::move(r).value());
    }
    if (messages.empty()) return;
    for (const std::vector<DeliveryEntry>& entries : messages) {
      {
        std::lock_guard lock(queue_mu_);
        if (stopping_) return;  // the rest stays pending for the next start
      }
      if (!DeliverMessage(entries)) return;  // the log is failing: try again later
    }
  }
}

std::vector<std::vector<DeliveryEntry>> AlertEngine::MessagesOf(std::vector<DeliveryEntry> due) {
  std::vector<std::vector<DeliveryEntry>> out;
  std::set<std::string> merged;  // receivers whose waiting entries are in `out`
  for (DeliveryEntry& e : due) {
    auto channel = options_.channels.find(e.receiver);
    if (channel == options_.channels.end() || !channel->second->MergesGroups()) {
      out.push_back({std::move(e)});
      continue;
    }
    if (!merged.insert(e.receiver).second) continue;
    // Every group waiting for this channel goes with the due one: what a
    // rate limit or an outage held back leaves as one message, not one per
    // group as each one's backoff ends.
    auto waiting = log_->Waiting(e.receiver, kMaxMergedGroups);
    if (!waiting.ok() || waiting->empty()) {
      out.push_back({std::move(e)});
      continue;
    }
    out.push_back(std::move(waiting).value());
  }
  return out;
}

bool AlertEngine::DeliverMessage(const std::vector<DeliveryEntry>& entries) {
  const std::string& receiver = entries.front().receiver;
  Notifier* channel = nullptr;  // looked up under mu_: ReplaceChannels swaps the map
  std::vector<DeliveryEntry> claimed;
  {
    std::lock_guard lock(mu_);
    if (auto found = options_.channels.find(receiver); found != options_.channels.end()) {
      channel = found->second;
    }
    const int64_t now = sources_.env->NowMillis();
    for (const DeliveryEntry& e : entries) {
      if (channel == nullptr || e.notification.alerts.empty()) {
        // A channel removed from config.json since, or a payload this
        // version cannot read: nothing to send it with.
        Status st = log_->Abandon(e.id,
                                  channel == nullptr
                                      ? "the channel \"" + receiver + "\" is no longer configured"
                                      : "the entry cannot be read by this version",
                                  now);
        if (!st.ok()) {
          Logf(LogLevel::kWarn, "delivery log: %s", st.ToString().c_str());
          return false;
        }
        continue;
      }
      // Committed before the send: a crash during it re-sends this entry
      // once. NotFound: superseded since it was read, nothing to send.
      Status st = log_->Claim(e.id, now);
      if (st.code() == StatusCode::kNotFound) continue;
      if (!st.ok()) {
        Logf(LogLevel::kWarn, "delivery log: %s", st.ToString().c_str());
        return false;
      }
      claimed.push_back(e);
      in_flight_ids_.insert(e.id);
    }
  }
  if (claimed.empty()) return true;
  Status st = channel->Send(claimed.size() == 1 ? claimed.front().notification
                                                : MergeNotifications(claimed));
  if (!st.ok()) {
    Logf(LogLevel::kWarn, "alert notification to %s failed (attempt %lld): %s", receiver.c_str(),
         static_cast<long long>(claimed.front().attempts + 1), st.ToString().c_str());
  }
  std::lock_guard lock(mu_);
  for (const DeliveryEntry& e : claimed) in_flight_ids_.erase(e.id);
  ++(st.ok() ? stats_.notifications_sent : stats_.notifications_failed);
  const int64_t now = sources_.env->NowMillis();
  store::SqliteTxn txn(store_->db());
  Status recorded = txn.Begin();
  for (const DeliveryEntry& e : claimed) {
    if (recorded.ok()) recorded = log_->Finish(e.id, st, now);
    // What a cap held back (an SMS past its daily cap) goes to the inbox,
    // with the reason, in the same transaction as the entry's `capped`.
    if (recorded.ok() && st.code() == StatusCode::kResourceExhausted && inbox_ != nullptr) {
      recorded = inbox_->AddHeldBack(e.notification, st.message(), now);
    }
  }
  if (recorded.ok()) recorded = txn.Commit();
  if (!recorded.ok()) Logf(LogLevel::kWarn, "delivery log: %s", recorded.ToString().c_str());
  return recorded.ok();
}

std::vector<Notification> AlertEngine::Evaluate(int64_t now_ms) {
  // Inputs first, outside the lock: the reports read the stores.
  std::vector<diagnose::JobReport> reports;
  bool any_job_rule = false, any_node_rule = false;
  for (const RuleStatus& rs : rules_) {  // rules_' rules never change after Create
    any_job_rule |= rs.rule.enabled && rs.rule.source == RuleSource::kJob;
    any_node_rule |= rs.rule.enabled && rs.rule.source == RuleSource::kNode;
  }
  // Job reports read each running job's newest log lines: the job rules
  // run every few seconds (their `for`s are minutes), and at once when a
  // job snapshot arrives (Wake: a crash or an end is news now).
  const bool jobs_due =
      any_job_rule && sources_.reporter != nullptr &&
      (jobs_forced_.exchange(false) || now_ms - last_jobs_eval_ms_ >= JobsEvalMs() ||
       now_ms < follow_ended_until_ms_);
  if (jobs_due) {
    reports = sources_.reporter->Reports();
    last_jobs_eval_ms_ = now_ms;
    // A run that just ended: its last lines (often flushed at exit) reach
    // the store a moment after its end is known; job rules run at every
    // evaluation for a few seconds, so the end's notification, sent after
    // group_wait, carries the summary with them.
    for (const diagnose::JobReport& r : reports) {
      if (r.job.ended && now_ms - r.job.last_seen_ms < kFollowEndedMs) {
        follow_ended_until_ms_ =
            std::max(follow_ended_until_ms_, r.job.last_seen_ms + kFollowEndedMs);
      }
    }
  }
  JobContext context;
  context.ended_after_ms = started_ms_ - options_.ended_grace_ms;
  if (jobs_due) {
    context.gpu_util =
        GpuUtilisation(&queries_, options_.config.time_scale, now_ms, &scope_.gpu_model);
    ScopeJobs(reports, &scope_);
    context.scope = scope_;
    context.describe_end = [this](const diagnose::JobReport& r, const std::string& reason) {
      return DescribeEnd(r, reason);
    };
    std::set<std::string> listed;
    for (const diagnose::JobReport& r : reports) listed.insert(r.node + "/" + r.job.id);
    std::erase_if(run_summaries_, [&](const auto& e) { return !listed.count(e.first); });
  }
  std::map<std::string, int64_t> last_report;
  if (any_node_rule && sources_.jobs != nullptr) last_report = sources_.jobs->LastReports();

  std::lock_guard lock(mu_);
  std::vector<Alert> changed;
  for (RuleStatus& rs : rules_) {
    const Rule& rule = rs.rule;
    if (!rule.enabled) continue;
    // A job rule not due keeps its alerts as they are (no samples would
    // resolve them) and its status as last evaluated; so does a trend rule
    // not yet due (Rule::eval_every_ms).
    if (rule.source == RuleSource::kJob && !jobs_due) continue;
    if (rule.eval_every_ms > 0 && rs.last_eval_ms != 0 &&
        now_ms - rs.last_eval_ms < rule.eval_every_ms) {
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    rs.health = "ok";
    rs.last_error.clear();
    rs.thresholds.clear();
    for (const Level& level : rule.levels) {
      std::vector<Sample> samples;
      switch (rule.source) {
        case RuleSource::kQuery: {
          auto r = QuerySamples(&queries_, rule, level, now_ms, scope_);
          if (!r.ok()) {
            // A rule that cannot be evaluated keeps its alerts as they are
            // (Prometheus does the same): no resolution on an error.
            rs.health = "err";
            rs.last_error = r.status().ToString();
            ++stats_.rule_errors;
            continue;
          }
          samples = std::move(r).value();
          break;
        }
        case RuleSource::kJob:
          samples = JobSamples(rule, level, reports, context, now_ms);
          break;
        case RuleSource::kNode:
          if (sources_.jobs == nullptr) continue;
          samples = NodeSamples(rule, level, last_report, now_ms, scope_);
          break;
        case RuleSource::kDelivery: {
          auto summary = log_->Summary();
          if (!summary.ok()) {
            rs.health = "err";
            rs.last_error = summary.status().ToString();
            ++stats_.rule_errors;
            continue;
          }
          samples = DeliverySamples(rule, level, *summary, now_ms, scope_);
          break;
        }
      }
      // Actions this level's alerts trigger, and their lines in the descriptions.
      actions_->ObserveLocked(KeyOf(rule, level), tracker_.active(), &samples, now_ms);
      RecordThresholds(level, samples, scope_, &rs);
      for (Alert& a : tracker_.Apply(KeyOf(rule, level), samples, now_ms)) {
        changed.push_back(std::move(a));
      }
    }
    rs.last_eval_ms = now_ms;
    rs.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  ++stats_.evaluations;
  if (jobs_due) last_reports_ = std::move(reports);
  AttachLogExcerpts(&changed, now_ms, jobs_due);
  // Firing and resolved changes are saved at once (a restart must not fire
  // them again); pending ones are saved too, so `for` survives a restart.
  Status st = store_->Save(changed, now_ms);
  if (!st.ok()) Logf(LogLevel::kWarn, "alert state not saved: %s", st.ToString().c_str());
  std::vector<Alert> resolved;
  for (Alert& a : changed) {
    if (a.state == AlertState::kResolved) resolved.push_back(std::move(a));
  }
  // Expired silences are kept a while for the list, then go.
  if (now_ms - silences_pruned_ms_ >= 60'000) {
    silences_pruned_ms_ = now_ms;
    if (silences_.Prune(now_ms - options_.store.silence_retention_ms) > 0) {
      Status pruned = store_->PruneSilences(now_ms);
      if (!pruned.ok()) {
        Logf(LogLevel::kWarn, "expired silences not pruned: %s", pruned.ToString().c_str());
      }
    }
  }
  dispatcher_.Update(tracker_.active(), resolved, now_ms,
                     silences_.Silenced(tracker_.active(), now_ms));
  for (const std::string& key : dispatcher_.TakeDroppedGroups()) (void)store_->DeleteGroup(key);
  for (const GroupRecord& g : dispatcher_.TakeChangedGroups()) {
    Status saved = store_->SaveGroup(g);
    if (!saved.ok()) Logf(LogLevel::kWarn, "alert group not saved: %s", saved.ToString().c_str());
  }
  return dispatcher_.Due(now_ms);
}

void AlertEngine::AttachLogExcerpts(std::vector<Alert>* changed, int64_t now_ms,
                                    bool reports_fresh) {
  std::map<const diagnose::JobReport*, std::vector<std::string>> by_job;
  auto excerpt = [&](const diagnose::JobReport& r) -> const std::vector<std::string>& {
    auto it = by_job.find(&r);
    if (it == by_job.end()) it = by_job.emplace(&r, sources_.reporter->LogExcerpt(r, now_ms)).first;
    return it->second;
  };
  for (Alert& a : *changed) {
    if (a.state != AlertState::kFiring || a.fired_at_ms != now_ms) continue;
    const diagnose::JobReport* r = ReportFor(a, last_reports_);  // none without a reporter
    if (r != nullptr && sources_.reporter != nullptr) {
      a.log_excerpt = excerpt(*r);
      tracker_.SetLogExcerpt(a.id, a.log_excerpt);
    }
    a.diagnosis = DiagnosisOf(a, r);
    tracker_.SetDiagnosis(a.id, a.diagnosis);
  }
  // A run that just ended: its last lines (a crash's traceback, held by
  // the multiline stage, from a file discovered late) may reach the store
  // seconds after its end is known, so the alerts about it take its excerpt
  // again at each reading of the reports until its summary settles, as the
  // summary does; group_wait (30 s by default) sends them after that.
  if (!reports_fresh || sources_.reporter == nullptr) return;
  std::vector<std::pair<std::string, std::vector<std::string>>> refreshed;
  for (const auto& [id, a] : tracker_.active()) {
    if (a.state != AlertState::kFiring || a.fired_at_ms == now_ms) continue;
    const diagnose::JobReport* r = ReportFor(a, last_reports_);
    if (r == nullptr || !r->job.ended || now_ms - r->job.last_seen_ms >= kSummarySettledMs) {
      continue;
    }
    if (const auto& lines = excerpt(*r); lines != a.log_excerpt) refreshed.push_back({id, lines});
  }
  for (auto& [id, lines] : refreshed) {
    tracker_.SetLogExcerpt(id, std::move(lines));
    // The lines that arrived late change the evidence too.
    const Alert& now = tracker_.active().at(id);
    tracker_.SetDiagnosis(id, DiagnosisOf(now, ReportFor(now, last_reports_)));
    changed->push_back(tracker_.active().at(id));  // saved with the others
  }
}

std::string AlertEngine::DiagnosisOf(const Alert& a, const diagnose::JobReport* report) const {
  if (sources_.diagnoser == nullptr) return "{}";
  diagnose::AlertFacts facts{a.rule, a.labels, a.value, a.fired_at_ms};
  return diagnose::DiagnosisJson(sources_.diagnoser->Diagnose(facts, report));
}

std::vector<Alert> AlertEngine::Active(std::set<std::string>* inhibited,
                                       std::set<std::string>* silenced) const {
  std::lock_guard lock(mu_);
  std::vector<Alert> out;
  for (const auto& [id, a] : tracker_.active()) out.push_back(a);
  if (inhibited != nullptr) *inhibited = Inhibited(tracker_.active());
  if (silenced != nullptr) *silenced = silences_.Silenced(tracker_.active(), NowMillis());
  std::sort(out.begin(), out.end(), [](const Alert& a, const Alert& b) {
    if (a.state != b.state) return a.state == AlertState::kFiring;
    if (a.severity != b.severity) return SeverityRank(a.severity) > SeverityRank(b.severity);
    if (a.active_at_ms != b.active_at_ms) return a.active_at_ms > b.active_at_ms;
    return a.id < b.id;
  });
  return out;
}

Result<std::vector<Alert>> AlertEngine::History(size_t limit) const {
  std::lock_guard lock(mu_);
  return store_->History(limit);
}

std::vector<RuleStatus> AlertEngine::Rules() const {
  std::lock_guard lock(mu_);
  return rules_;
}

AlertEngineStats AlertEngine::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

Result<std::vector<DeliveryEntry>> AlertEngine::Deliveries(const DeliveryFilter& filter) const {
  std::lock_guard lock(mu_);
  return log_->List(filter);
}

Result<DeliverySummary> AlertEngine::DeliveryCounts() const {
  std::lock_guard lock(mu_);
  return log_->Summary();
}

Result<std::vector<InboxItem>> AlertEngine::InboxItems(const InboxFilter& filter) const {
  std::lock_guard lock(mu_);
  if (inbox_ == nullptr) return FailedPrecondition("the inbox is off");
  return inbox_->List(filter);
}

Result<InboxCounts> AlertEngine::InboxCountsFor(const std::string& recipient) const {
  std::lock_guard lock(mu_);
  if (inbox_ == nullptr) return FailedPrecondition("the inbox is off");
  return inbox_->Counts(recipient);
}

Result<int64_t> AlertEngine::MarkInbox(const std::string& recipient,
                                       const std::vector<int64_t>& ids, bool read) {
  std::lock_guard lock(mu_);
  if (inbox_ == nullptr) return FailedPrecondition("the inbox is off");
  return inbox_->Mark(recipient, ids, read);
}

Result<std::string> AlertEngine::AddSilence(Silence silence) {
  int64_t now = NowMillis();
  silence.id = NewSilenceId();
  silence.created_at_ms = silence.updated_at_ms = now;
  silence.starts_at_ms = std::max(silence.starts_at_ms, now);
  if (silence.ends_at_ms <= now) return InvalidArgument("endsAt must be in the future");
  VIGIL_RETURN_IF_ERROR(ValidateSilence(silence));
  std::lock_guard lock(mu_);
  if (silences_.CountUnexpired(now) >= kMaxActiveSilences) {
    return InvalidArgument("there are already " + std::to_string(kMaxActiveSilences) +
                           " active or pending silences: expire some first");
  }
  while (silences_.Find(silence.id) != nullptr) silence.id = NewSilenceId();
  VIGIL_RETURN_IF_ERROR(store_->SaveSilence(silence));
  std::string id = silence.id;
  VIGIL_RETURN_IF_ERROR(silences_.Put(std::move(silence)));
  return id;
}

Result<Silence> AlertEngine::ExpireSilence(const std::string& id) {
  int64_t now = NowMillis();
  std::lock_guard lock(mu_);
  const Silence* found = silences_.Find(id);
  if (found == nullptr) return NotFound("no silence has the id \"" + id + "\"");
  Silence s = *found;
  if (StateAt(s, now) == SilenceState::kExpired) return s;
  // As Alertmanager: a pending silence ends before it starts.
  if (StateAt(s, now) == SilenceState::kPending) s.starts_at_ms = now;
  s.ends_at_ms = now;
  s.updated_at_ms = now;
  VIGIL_RETURN_IF_ERROR(store_->SaveSilence(s));
  VIGIL_RETURN_IF_ERROR(silences_.Put(s));
  return s;
}

std::vector<Silence> AlertEngine::Silences() const {
  std::lock_guard lock(mu_);
  return silences_.All();
}

Status AlertEngine::ReplaceChannels(std::map<std::string, Notifier*> channels,
                                    std::vector<std::string> names,
                                    std::map<std::string, QuietHours> quiet_hours,
                                    std::map<std::string, ChannelClass> classes) {
  // The checks Create makes, so a bad set never replaces a good one.
  for (const std::string& name : names) {
    if (channels.count(name) == 0) {
      return InvalidArgument("notify: channel \"" + name + "\" is not configured");
    }
  }
  for (const auto& [name, quiet] : quiet_hours) {
    if (channels.count(name) == 0) {
      return InvalidArgument("notify: quiet hours for unknown channel \"" + name + "\"");
    }
  }
  std::lock_guard lock(mu_);
  for (const Route& route : options_.dispatch.routes) {
    for (const std::string& c : route.channels) {
      if (channels.count(c) == 0) {
        return InvalidArgument("notify.routes: a route names the channel \"" + c +
                               "\", which would be gone");
      }
    }
  }
  // Recipients may name only channels that stay.
  for (const Recipient& r : options_.dispatch.recipients) {
    for (const std::string& c : r.channels) {
      if (channels.count(c) == 0) {
        return InvalidArgument("notify.recipients: \"" + r.name + "\" names the channel \"" + c +
                               "\", which would be gone");
      }
    }
  }
  const bool same_groups = names == options_.dispatch.channels && quiet_hours.empty() &&
                           options_.dispatch.quiet_hours.empty() &&
                           classes == options_.dispatch.channel_classes;
  if (same_groups) {
    options_.channels = std::move(channels);
    return Status::Ok();
  }
  auto groups = FlushGroupsLocked();
  if (!groups.ok()) return groups.status();
  options_.channels = std::move(channels);
  options_.dispatch.channels = std::move(names);
  options_.dispatch.quiet_hours = std::move(quiet_hours);
  options_.dispatch.channel_classes = std::move(classes);
  dispatcher_ = Dispatcher(options_.dispatch);
  dispatcher_.Restore(*groups);
  return Status::Ok();
}

Result<std::vector<GroupRecord>> AlertEngine::FlushGroupsLocked() {
  // What the dispatcher has not saved yet goes to the store first, so the
  // new one starts from every group's latest record.
  for (const std::string& key : dispatcher_.TakeDroppedGroups()) (void)store_->DeleteGroup(key);
  for (const GroupRecord& g : dispatcher_.TakeChangedGroups()) {
    Status saved = store_->SaveGroup(g);
    if (!saved.ok()) Logf(LogLevel::kWarn, "alert group not saved: %s", saved.ToString().c_str());
  }
  auto groups = store_->Groups();
  if (!groups.ok()) return groups.status().WithContext("cannot read the saved alert groups");
  return groups;
}

namespace {

// The checks config.json's parser makes of routes and recipients, against
// the engine's channels, so a bad set never replaces a good one.
Status CheckRouting(const std::vector<Route>& routes, const std::vector<Recipient>& recipients,
                    const std::vector<std::string>& channels) {
  VIGIL_RETURN_IF_ERROR(ValidateRecipients(recipients, channels));
  for (size_t i = 0; i < routes.size(); ++i) {
    const std::string at = "notify.routes[" + std::to_string(i) + "]: ";
    for (const std::string& c : routes[i].channels) {
      if (std::find(channels.begin(), channels.end(), c) == channels.end()) {
        return InvalidArgument(at + "unknown channel \"" + c + "\"");
      }
    }
    for (const std::string& name : routes[i].recipients) {
      if (std::none_of(recipients.begin(), recipients.end(),
                       [&](const Recipient& r) { return r.name == name; })) {
        return InvalidArgument(at + "unknown recipient \"" + name + "\"");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status AlertEngine::ReplaceRouting(std::vector<Route> routes, std::vector<Recipient> recipients) {
  std::lock_guard lock(mu_);
  VIGIL_RETURN_IF_ERROR(CheckRouting(routes, recipients, options_.dispatch.channels));
  if (routes == options_.dispatch.routes && recipients == options_.dispatch.recipients) {
    return Status::Ok();  // a channel's edit: what each group waits for stays
  }
  auto groups = FlushGroupsLocked();
  if (!groups.ok()) return groups.status();
  options_.dispatch.routes = std::move(routes);
  options_.dispatch.recipients = std::move(recipients);
  if (inbox_ != nullptr) inbox_->SetRecipients(options_.dispatch.recipients);
  dispatcher_ = Dispatcher(options_.dispatch);
  dispatcher_.Restore(*groups);
  return Status::Ok();
}

std::vector<Recipient> AlertEngine::Recipients() const {
  std::lock_guard lock(mu_);
  return options_.dispatch.recipients;
}

}  // namespace vigil::alert
