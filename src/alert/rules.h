// Alert rules: the presets that are on by default (docs/alerts.md lists each
// with its default, why and what to do) and the config.json overrides.
//
// A rule has one value per series and levels (warning, critical, or info)
// that each compare the value with a firing threshold and a separate clear
// threshold (hysteresis), for a duration (`for`). Where the value comes from:
//   - kQuery: a PromQL expression over the embedded store (one instant query
//     per rule per evaluation); its series are the alerts' label sets;
//   - kJob:   the job reports (diagnose::JobReport): a job's state, its GPUs'
//     utilisation, its events — what series alone cannot say;
//   - kNode:  how long ago each node last reported (the server's view).
// Durations inside expressions are written `${15m}` and scaled by
// `time_scale` (AlertsConfig), as every other duration of a rule is, so
// tests and demos play ten minutes in seconds.
//
// Thread safety: plain values; Presets() is pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alert/alert.h"
#include "core/status.h"

namespace vigil::alert {

// kDelivery: the delivery log's channels (notification_channel_failing).
enum class RuleSource { kQuery, kJob, kNode, kDelivery };

// The job-report checks a kJob rule applies.
enum class JobCheck {
  kCrashed,        // the verdict says crashed or killed
  kFinished,       // completed, or exited with status 0
  kStalled,        // running, no step progress for several intervals
  kUnderutilized,  // a running job's GPU under-used (value: its utilisation, %)
  // A GPU of a running job on two or more GPUs (of one node) far below the
  // job's median utilisation (value: its utilisation as % of that median).
  // The training series carry no rank label (docs/training-metrics.md: ranks
  // are never a metric), so a slow rank shows in its GPU instead.
  kStraggler,
};

// value > threshold, value < threshold, value >= threshold. The clear
// threshold is passed the same way (a firing `>=` alert holds while
// value >= clear).
enum class Comparison { kAbove, kBelow, kAtLeast };

struct Level {
  Severity severity = Severity::kWarning;
  double fire = 0;   // the alert starts past this
  double clear = 0;  // and holds until the value is back past this
  int64_t for_ms = 0;
  // kQuery: the level's own expression when it differs from the rule's (an
  // Xid's severity is its code's), else "".
  std::string expr;
};

// What config.json may change of a rule, for all its series or (in a
// ScopedOverride) for some of them.
struct LevelOverride {
  std::optional<bool> enabled;
  std::optional<int64_t> for_ms;  // every level's
  std::optional<double> warning;  // the firing threshold, absolute
  std::optional<double> critical;
};

// The series a scoped override applies to: each pattern given must match
// ('*' matches any run of characters, so "llama-*" or "*A100*"); one left
// empty matches every series. A series' node and job are its labels'; a
// GPU's job is the job holding it (from the job reports) and its model is
// the GPU's `modelName` (NVML's name, "NVIDIA H100 80GB HBM3"). A series
// without a GPU has no model: an override naming one does not apply to it.
struct Scope {
  std::string node;
  std::string job;
  std::string gpu_model;
};

struct ScopedOverride {
  Scope scope;
  LevelOverride set;
};

struct RuleOverride : LevelOverride {
  // Applied in order over the rule's own values: where several match a
  // series, a later one wins for what it sets.
  std::vector<ScopedOverride> overrides;
};

struct Rule {
  std::string id;  // stable: tests, config.json and users refer to it
  RuleSource source = RuleSource::kQuery;
  std::string expr;  // kQuery: PromQL giving the value of each series
  // kQuery: a PromQL expression giving each series' reference (a GPU's own
  // slowdown temperature), matched on `reference_on`; the levels' thresholds
  // are then offsets from it (see reference_fallback). "" for none.
  std::string reference;
  std::vector<std::string> reference_on;
  // The reference of a series the reference query has nothing for, by a
  // label's value (`reference_label`: modelName), else `reference_default`.
  std::string reference_label;
  std::map<std::string, double> reference_fallback;
  double reference_default = 0;
  JobCheck job_check = JobCheck::kCrashed;  // kJob
  Comparison comparison = Comparison::kAbove;
  std::vector<Level> levels;  // least severe first
  int64_t keep_firing_for_ms = 0;
  bool enabled = true;
  // How often the rule is evaluated, when not at every evaluation (0): the
  // trend rules read windows of 10-60 minutes and have `for`s of minutes,
  // so every 15 s (scaled by time_scale, never below eval_interval_ms)
  // changes nothing but their cost. Exported as a group of that interval.
  int64_t eval_every_ms = 0;
  std::string unit;  // "%", "°C", "" — for summaries and `vigil rules ls`
  // Summary templates: {value}, {threshold}, {reference}, {for}, and {label}
  // for any label of the series ({gpu}, {node}, {job}); {value_duration}, a
  // value in seconds as a rounded duration ("12m"); {cost}, for priced rules
  // whose value counts GPUs: value x price per GPU-hour x the level's `for`,
  // with the currency ("20 USD").
  std::string summary_en;
  std::string summary_zh;
  // What to do, for a person (every notification carries it; docs/alerts.md
  // has the same advice per preset).
  std::string steps_en;
  std::string steps_zh;
  // Whether {cost} applies: EffectiveRules then copies the configured price
  // and currency into the rule.
  bool priced = false;
  double price_per_gpu_hour = 0;
  std::string currency;
  // config.json's overrides for some nodes, jobs or GPU models, durations
  // scaled (see LevelFor).
  std::vector<ScopedOverride> overrides;
};

struct AlertsConfig {
  double time_scale = 1.0;  // multiplies every duration of the presets
  int64_t eval_interval_ms = 1000;
  double price_per_gpu_hour = 2.5;
  std::string currency = "USD";
  std::map<std::string, RuleOverride> rules;  // by rule id
};

// The presets, unscaled, in documentation order.
std::vector<Rule> Presets();

// The rules in effect: presets with `config`'s overrides, every duration
// scaled by time_scale. InvalidArgument names an unknown rule id.
Result<std::vector<Rule>> EffectiveRules(const AlertsConfig& config);

// What a series is, for matching scopes.
struct SeriesScope {
  std::string_view node, job, gpu_model;
};

// Whether `pattern` ('*' for any run of characters) matches all of `text`;
// the empty pattern matches anything.
bool ScopeMatches(std::string_view pattern, std::string_view text);

// The level as it applies to the series `scope` describes: `level` itself
// when no override matches, `scratch` filled with the overridden values when
// some do, nullptr when one disables the rule there. A threshold set by an
// override is absolute: *reference becomes 0 for a reference-relative rule.
// The clear threshold keeps its distance from the firing one.
const Level* LevelFor(const Rule& rule, const Level& level, const SeriesScope& scope,
                      double* reference, Level* scratch);

// `expr` with each `${<duration>}` replaced by the duration times `scale`,
// in milliseconds ("${5m}" at 0.01 -> "3000ms"). InvalidArgument for a bad
// duration.
Result<std::string> ScaleDurations(const std::string& expr, double scale);

// The condition a level fires on, as PromQL where the rule is a query
// ("DCGM_FI_DEV_GPU_TEMP >= on(node, gpu) (vigil_gpu_temp_slowdown_celsius
// > 0) - 5"), else what the job reports or node reports are checked for
// ("job report: crashed or killed"). For /api/v1/rules and `vigil rules ls`.
std::string LevelCondition(const Rule& rule, const Level& level);
const char* ComparisonText(Comparison comparison);  // ">", "<", ">="

// `text` with each "{name}" replaced by fill(name): the one walker of
// summary templates, which Vigil's rendering (evaluate.h) and the
// Prometheus export (prometheus_rules.h) fill differently. A "{" without
// its "}" ends the walk; the rest is copied as it is.
std::string ExpandPlaceholders(const std::string& text,
                               const std::function<std::string(const std::string&)>& fill);

// "5m", "90s", "1h30m", "250ms" -> milliseconds; nullopt when malformed.
std::optional<int64_t> ParseDuration(std::string_view text);
// Milliseconds as a Prometheus duration: 300000 -> "5m", 1500 -> "1s500ms".
std::string FormatDuration(int64_t ms);

}  // namespace vigil::alert
