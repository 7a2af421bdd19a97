// One evaluation of one rule level: the samples the tracker judges
// (tracker.h), from the store through the query engine (kQuery), from the
// job reports (kJob) or from the nodes' last reports (kNode).
//
// Thread safety: pure functions of their inputs (the engine and reports are
// read-only here).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alert/rules.h"
#include "alert/tracker.h"
#include "core/status.h"
#include "diagnose/job_report.h"
#include "query/engine.h"

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

// The level's samples from an instant query at `now_ms`. Errors of the
// query (a missing function, a bad override) come back as they are.
Result<std::vector<Sample>> QuerySamples(const query::Engine& engine, const Rule& rule,
                                         const Level& level, int64_t now_ms);

// What job rules need besides the reports: the GPUs' utilisation now, by
// "<node>/<gpu>", and the time before which a job's end is old news (the
// engine's start, less a grace: a crash from yesterday must not fire today).
struct JobContext {
  std::map<std::string, double> gpu_util;
  int64_t ended_after_ms = 0;
};

std::vector<Sample> JobSamples(const Rule& rule, const Level& level,
                               const std::vector<diagnose::JobReport>& reports,
                               const JobContext& context, int64_t now_ms);

// Seconds since each node last reported, by node name.
std::vector<Sample> NodeSamples(const Rule& rule, const Level& level,
                                const std::map<std::string, int64_t>& last_report_ms,
                                int64_t now_ms);

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
