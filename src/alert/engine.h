// The alert engine: every `eval_interval_ms` it evaluates the rules in
// effect (rules.h) — PromQL over the embedded store, the job reports, the
// nodes' last reports — moves each alert through its states (tracker.h),
// saves what changed (alert_store.h) and hands the groups that are due to
// their channels (dispatch.h, notification.h), less what silences mute
// (silence.h). docs/alerts.md describes it for users.
//
// Delivery is durable (delivery_log.h, docs/notify.md "Delivery log"): a
// notification the dispatcher hands out is written to the delivery log in
// the same transaction as its group's record, and from then on the log, not
// the dispatcher, owns its retries; on start, the log's pending entries are
// resumed.
//
// Threads: Start() runs an evaluation thread and a delivery thread, so a
// channel that hangs delays no evaluation; the delivery thread sends the
// log's due entries one message at a time (a channel that merges groups
// gets the entries waiting for it at once as one message). EvaluateOnce() runs one evaluation and
// delivers what is due on the caller's thread (tests, with a manual clock).
//
// Thread safety: every public method may be called from any thread; `mu_`
// guards the tracker, the dispatcher, the store, the delivery log, the inbox,
// the rule status, and the channels, routes and recipients in options_
// (ReplaceChannels and ReplaceRouting change them while the engine runs); a
// channel's Send runs outside it.
#pragma once

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "alert/actions.h"
#include "alert/alert_store.h"
#include "alert/delivery_log.h"
#include "alert/dispatch.h"
#include "alert/evaluate.h"
#include "alert/inbox.h"
#include "alert/notification.h"
#include "alert/rules.h"
#include "alert/silence.h"
#include "alert/tracker.h"
#include "core/env.h"
#include "diagnose/diagnosis.h"
#include "diagnose/job_report.h"
#include "ingest/job_store.h"
#include "query/engine.h"

namespace vigil::alert {

struct AlertEngineSources {
  const query::Engine* query = nullptr;       // required
  diagnose::JobReporter* reporter = nullptr;  // job rules; none without it
  // Fills Alert::diagnosis when an alert fires; "{}" without it.
  const diagnose::Diagnoser* diagnoser = nullptr;
  const ingest::JobStore* jobs = nullptr;  // node_down; none without it
  Env* env = Env::Default();
};

struct AlertEngineOptions {
  AlertsConfig config;
  DispatchOptions dispatch;
  AlertStoreOptions store;
  DeliveryLogOptions delivery;
  // The channels by name (not owned; they outlive the engine).
  std::map<std::string, Notifier*> channels;
  // The in-app inbox (inbox.h): every alert lands there too.
  bool inbox = true;
  InboxOptions inbox_options;
  // A job that ended this long before the engine started is old news: its
  // crash does not fire now.
  int64_t ended_grace_ms = 10 * 60'000;
  // Optional actions (actions.h); none: off. external_url defaults to
  // dispatch.external_url.
  ActionsOptions actions;
};

// A level's threshold on one GPU: the preset's, or relative to the GPU's
// own slowdown temperature, or what an override for its node, job or model
// sets.
struct SeriesThreshold {
  Severity severity = Severity::kWarning;
  std::string where;  // "node n1 gpu 3 (NVIDIA H100 80GB HBM3)"
  double threshold = 0;
};

// What /api/v1/rules shows of a rule.
struct RuleStatus {
  Rule rule;
  std::string health = "unknown";  // "ok", "err", "unknown" (not yet evaluated)
  std::string last_error;
  int64_t last_eval_ms = 0;
  double eval_seconds = 0;
  std::vector<SeriesThreshold> thresholds;  // of each GPU the rule saw, at most 64
};

struct AlertEngineStats {
  uint64_t evaluations = 0;
  uint64_t rule_errors = 0;
  uint64_t notifications_sent = 0;
  uint64_t notifications_failed = 0;
};

class AlertEngine {
 public:
  // Opens the store and restores what it holds. InvalidArgument for a bad
  // configuration (an unknown rule id, a route to an unknown channel).
  static Result<std::unique_ptr<AlertEngine>> Create(AlertEngineSources sources,
                                                     AlertEngineOptions options);
  ~AlertEngine();

  void Start();
  void Stop();

  // One evaluation at the Env's time, then delivery of what is due, both on
  // the caller's thread.
  void EvaluateOnce();
  // Has the evaluation thread run now instead of at its next tick, job
  // rules included (a job snapshot arrived: a crash is news at once).
  void Wake();

  // Pending and firing alerts, most severe and newest first, which of them
  // others mute, and which of them a silence mutes.
  std::vector<Alert> Active(std::set<std::string>* inhibited = nullptr,
                            std::set<std::string>* silenced = nullptr) const;
  Result<std::vector<Alert>> History(size_t limit) const;
  std::vector<RuleStatus> Rules() const;
  AlertEngineStats Stats() const;
  // The delivery log's entries (newest first) and its counts per state and
  // channel (/api/v1/notifications).
  Result<std::vector<DeliveryEntry>> Deliveries(const DeliveryFilter& filter) const;
  Result<DeliverySummary> DeliveryCounts() const;
  // The in-app inbox (inbox.h); FailedPrecondition when it is off.
  Result<std::vector<InboxItem>> InboxItems(const InboxFilter& filter) const;
  Result<InboxCounts> InboxCountsFor(const std::string& recipient) const;
  Result<int64_t> MarkInbox(const std::string& recipient, const std::vector<int64_t>& ids,
                            bool read);
  // The configured people and teams (recipients.h), as ReplaceRouting last
  // set them: a copy, as they may change under mu_.
  std::vector<Recipient> Recipients() const;

  // Silences (silence.h), saved in the store at once. AddSilence fills the
  // id and the created and updated times, moves a start in the past to now,
  // and returns the id; InvalidArgument for a bad silence (ValidateSilence,
  // already ended) or when kMaxActiveSilences are active or pending.
  // They take effect at the next evaluation.
  Result<std::string> AddSilence(Silence silence);
  // Ends a silence now (a pending one never starts). NotFound for an
  // unknown id; an expired one stays as it is.
  Result<Silence> ExpireSilence(const std::string& id);
  // Every silence kept (expired ones for kSilenceRetentionMs), newest first.
  std::vector<Silence> Silences() const;
  // Live reload of the channels (the UI's notification settings, without a
  // restart): from now on the engine delivers through `channels` (by name,
  // not owned), `names` being every configured channel's (config.json's
  // order), `quiet_hours` and `classes` (each one's kind for the severity
  // policy, recipients.h) theirs; routes and recipients stay as they are.
  // InvalidArgument, and nothing changes, when a route, a name or a quiet
  // hours entry names a channel `channels` lacks. A pending delivery-log
  // entry of a channel no longer there is abandoned when it comes due, as
  // after a restart. When the set of names, any quiet hours or a class change, the
  // dispatcher starts again from the saved group records, as at a restart
  // (what each group announced is kept; a resolution still waiting for its
  // group_interval goes unsaid); otherwise only the channels are swapped.
  // Concurrency: swapped under mu_; a Send in flight on a replaced channel
  // goes on with the old object (Send runs outside mu_), so the caller keeps
  // every channel it ever passed alive until Stop() has returned.
  Status ReplaceChannels(std::map<std::string, Notifier*> channels, std::vector<std::string> names,
                         std::map<std::string, QuietHours> quiet_hours,
                         std::map<std::string, ChannelClass> classes);
  // Live reload of the routes and recipients (the UI's notification
  // settings): from now on alerts are routed by `routes` (dispatch.h) and
  // reach `recipients` (recipients.h), and the inbox files its new items for
  // them; the channels stay as they are. InvalidArgument, and nothing
  // changes, when a route or a recipient names a channel the engine lacks, a
  // route names an unknown recipient, or ValidateRecipients refuses them.
  // The same routes and recipients change nothing; otherwise the dispatcher
  // starts again from the saved group records, as ReplaceChannels does when
  // the names change. Concurrency: swapped under mu_, as ReplaceChannels.
  Status ReplaceRouting(std::vector<Route> routes, std::vector<Recipient> recipients);
  int64_t NowMillis() const { return sources_.env->NowMillis(); }
  const AlertsConfig& config() const { return options_.config; }
  // The optional actions (actions.h): their log and cancellation, for the
  // API. Never null after Create.
  ActionRunner* actions() const { return actions_.get(); }

 private:
  AlertEngine(AlertEngineSources sources, AlertEngineOptions options, std::vector<Rule> rules,
              std::unique_ptr<AlertStore> store);
  // Evaluates every rule at `now` and returns the notifications due.
  std::vector<Notification> Evaluate(int64_t now_ms);
  // Gives each alert in `changed` that fires from now on the excerpt of
  // the log of the job it is about (its run, its job, or the job on its
  // GPU), in `changed` and in the tracker; with `reports_fresh`, alerts
  // about a run that ended within kSummarySettledMs take it again (added to
  // `changed` when it changed). mu_ held; one log query per job.
  void AttachLogExcerpts(std::vector<Alert>* changed, int64_t now_ms, bool reports_fresh);
  std::string DiagnosisOf(const Alert& a, const diagnose::JobReport* report) const;
  // The job reports of the newest evaluation that read them (evaluation
  // thread only, under mu_): which job an alert is about between them.
  std::vector<diagnose::JobReport> last_reports_;
  // Writes what the dispatcher handed out to the delivery log, and what it
  // handed to the inbox into the inbox (mu_ held).
  void LogDue(const std::vector<Notification>& due, int64_t now_ms);
  // Writes one notification where it goes: the inbox's into the inbox, the
  // others into the delivery log (inside LogDue's transaction).
  Result<int64_t> Record(const Notification& n, int64_t now_ms);
  // Sends the log's entries due now, one message at a time, until none is
  // due.
  void DeliverDue();
  // The due entries as messages: one per entry, except that a channel that
  // merges groups (Notifier::MergesGroups) gets every entry waiting for it
  // (due or not, at most kMaxMergedGroups groups) as one (mu_ held).
  std::vector<std::vector<DeliveryEntry>> MessagesOf(std::vector<DeliveryEntry> due);
  static constexpr size_t kMaxMergedGroups = 32;
  // Sends one message (its entries as one) and records the outcome of each
  // entry; false when the log could not record it (the round stops rather
  // than spin on it).
  bool DeliverMessage(const std::vector<DeliveryEntry>& entries);
  // Saves what the dispatcher has not saved yet and returns every group's
  // record, for a new dispatcher to start from (mu_ held).
  Result<std::vector<GroupRecord>> FlushGroupsLocked();
  void EvaluationLoop();
  void DeliveryLoop();

  AlertEngineSources sources_;
  AlertEngineOptions options_;
  const int64_t started_ms_;
  // Job rules run at most every JobsEvalMs() (5 s, scaled by time_scale),
  // and at the next evaluation after a Wake. Evaluation thread only, but
  // jobs_forced_ is set from any thread.
  int64_t JobsEvalMs() const;
  int64_t last_jobs_eval_ms_ = INT64_MIN / 2;
  std::atomic<bool> jobs_forced_{false};
  QueryCache queries_;  // evaluation thread only
  // Each GPU's job and model, refreshed with the job rules (evaluation
  // thread only).
  ScopeContext scope_;
  // Ended runs' descriptions (run_summary.h) by node/run id, computed once
  // per run and dropped with its report (evaluation thread only, under mu_).
  std::pair<std::string, std::string> DescribeEnd(const diagnose::JobReport& r,
                                                  const std::string& exit_reason);
  size_t AlertsDuring(const diagnose::JobReport& r) const;
  std::map<std::string, std::pair<std::string, std::string>> run_summaries_;
  static constexpr int64_t kFollowEndedMs = 3000;
  static constexpr int64_t kSummarySettledMs = 60'000;
  int64_t follow_ended_until_ms_ = 0;  // evaluation thread only

  mutable std::mutex mu_;
  std::vector<RuleStatus> rules_;
  AlertTracker tracker_;
  Dispatcher dispatcher_;
  std::unique_ptr<AlertStore> store_;
  std::unique_ptr<DeliveryLog> log_;
  std::unique_ptr<Inbox> inbox_;  // null when the inbox is off
  // Takes mu_ itself around the store's connection (actions.h).
  std::unique_ptr<ActionRunner> actions_;
  std::set<int64_t> in_flight_ids_;  // the entries being sent, never superseded
  SilenceSet silences_;
  int64_t silences_pruned_ms_ = 0;
  AlertEngineStats stats_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;       // guarded by queue_mu_
  bool woken_ = false;          // guarded by queue_mu_
  bool entries_added_ = false;  // guarded by queue_mu_: the delivery thread looks now
  std::thread eval_thread_;
  std::thread delivery_thread_;
};

}  // namespace vigil::alert
