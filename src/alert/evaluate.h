// One evaluation of one rule level: the samples the tracker judges
// (tracker.h), from the store through the query engine (kQuery), from the
// job reports (kJob) or from the nodes' last reports (kNode).
//
// Thread safety: pure functions of their inputs (the engine and reports are
// read-only here).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "alert/delivery_log.h"
#include "alert/rules.h"
#include "alert/tracker.h"
#include "core/status.h"
#include "diagnose/job_report.h"
#include "query/engine.h"
#include "query/parser.h"

namespace vigil::alert {

// Whether `value` is past `threshold` in the rule's direction.
bool Past(Comparison comparison, double value, double threshold);

// A sample whose value is judged against the level: fire past `fire`, hold
// past `clear` (offset by `reference` for reference-relative rules). `extra`
// fills summary placeholders that are no label ({median}); {cost} comes from
// a priced rule's price.
Sample Judge(const Rule& rule, const Level& level, wire::Labels labels, double value,
             double reference, int64_t now_ms,
             const std::map<std::string, std::string>& extra = {});

// The instant queries of the rules: each expression is parsed once, for the
// cache's life, and run at most once per evaluation time (the levels of a
// rule mostly share their expression, and a reference query its rule's).
// Thread safety: none; the engine's evaluation thread owns it.
class QueryCache {
 public:
  explicit QueryCache(const query::Engine* engine) : engine_(engine) {}
  // The result of `expr` at `now_ms`; a call for a new time drops the
  // results kept for the one before. The pointer holds until then.
  Result<const query::QueryResult*> Run(const std::string& expr, int64_t now_ms);

 private:
  struct Parsed {
    Status status;
    query::NodePtr root;
  };
  const query::Engine* engine_;
  std::map<std::string, Parsed> parsed_;
  int64_t results_ms_ = 0;
  std::map<std::string, Result<query::QueryResult>> results_;
};

// What a series' scope (rules.h: overrides by node, job and GPU model) is
// read from where its labels do not say it, by "<node>/<gpu>": the job on
// each GPU (from the job reports) and each GPU's model (its modelName).
struct ScopeContext {
  std::map<std::string, std::string> gpu_job;
  std::map<std::string, std::string> gpu_model;
  // Whose alerts they are (Alert::owner): the Unix user of each job run, by
  // "<node>/<run id>", and of the running job on each GPU, by "<node>/<gpu>".
  std::map<std::string, std::string> run_owner;
  std::map<std::string, std::string> gpu_owner;
};

// The owner of a series with `labels`: its run's, else its GPU's job's; ""
// when neither is known.
std::string OwnerOf(const wire::Labels& labels, const ScopeContext& context);

// The scope of a series with `labels`: its node and job labels, its
// modelName, else what `context` knows of its GPU.
SeriesScope ScopeOf(const wire::Labels& labels, const ScopeContext& context);

// Judge with the level the series' scope gets (LevelFor): nothing where an
// override disables the rule for it.
std::optional<Sample> JudgeInScope(const Rule& rule, const Level& level, wire::Labels labels,
                                   double value, double reference, int64_t now_ms,
                                   const ScopeContext& scope,
                                   const std::map<std::string, std::string>& extra = {});

// The level's samples from an instant query at `now_ms`. Errors of the
// query (a missing function, a bad override) come back as they are.
Result<std::vector<Sample>> QuerySamples(QueryCache* queries, const Rule& rule, const Level& level,
                                         int64_t now_ms, const ScopeContext& scope = {});

// What job rules need besides the reports: the GPUs' utilisation now, by
// "<node>/<gpu>", and the time before which a job's end is old news (the
// engine's start, less a grace: a crash from yesterday must not fire today).
struct JobContext {
  std::map<std::string, double> gpu_util;
  int64_t ended_after_ms = 0;
  ScopeContext scope;
  // An ended run's description, English and Chinese (run_summary.h), for
  // job_finished and job_crashed; none when unset.
  std::function<std::pair<std::string, std::string>(const diagnose::JobReport&,
                                                    const std::string& exit_reason)>
      describe_end;
};

std::vector<Sample> JobSamples(const Rule& rule, const Level& level,
                               const std::vector<diagnose::JobReport>& reports,
                               const JobContext& context, int64_t now_ms);

// Seconds since each node last reported, by node name.
// notification_channel_failing: one sample per channel of the delivery
// log, its value the notifications waiting or failed while it is failing
// (0 otherwise), labelled `channel`, with its last answer as {answer}.
std::vector<Sample> DeliverySamples(const Rule& rule, const Level& level,
                                    const DeliverySummary& summary, int64_t now_ms,
                                    const ScopeContext& scope);

std::vector<Sample> NodeSamples(const Rule& rule, const Level& level,
                                const std::map<std::string, int64_t>& last_report_ms,
                                int64_t now_ms, const ScopeContext& scope = {});

// Fills a summary template: {value}, {threshold}, {reference}, {for},
// {value_duration}, what `extra` names ({cost}) and any label name.
std::string RenderSummary(const std::string& text, const wire::Labels& labels, double value,
                          double threshold, double reference, int64_t for_ms,
                          const std::map<std::string, std::string>& extra = {});

// A value as a person reads it: "87", "93.4", "0.00012".
std::string FormatAlertValue(double v);

// Seconds as a rounded duration: to the second under 90 s ("45s"), to the
// minute under 48 h ("12m", "1h30m"), else to the hour ("3d4h").
std::string FormatApproxDuration(double seconds);

// A priced rule's {cost}: `gpus` x its price per GPU-hour x `for_ms`, with
// the currency ("20 USD").
std::string FormatCost(const Rule& rule, double gpus, int64_t for_ms);

// The job's GPUs below this median utilisation (%) are not compared: an
// idle job (loading, evaluating) has no straggler.
inline constexpr double kStragglerMinMedian = 20;

}  // namespace vigil::alert
