// The presets as a Prometheus rule file (`vigil rules export --format
// prometheus`, docs/alerts.md "Prometheus rules"): one alerting rule per
// level of every rule that PromQL can express, with the same thresholds,
// `for` and `keep_firing_for`, so a Prometheus fires what Vigil fires, at
// the same evaluations. Hysteresis is written the way Prometheus users do
// it: a level that is already pending or firing (its own ALERTS series from
// the previous evaluation) holds while the value is past the clear
// threshold. Job and node rules, which read job reports, are listed as
// comments.
//
// The file passes `promtool check rules`; prometheus_rules_test runs
// `promtool test rules` on it against Vigil's own evaluation.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alert/rules.h"

namespace vigil::alert {

// The PromQL of one level as an alerting rule's `expr`; "" for rules that
// PromQL cannot express (job and node rules).
std::string PrometheusExpr(const Rule& rule, const Level& level);

// A summary template in Prometheus' template language ({{ $labels.gpu }},
// {{ $value }}); {threshold} is the level's number where it is one number,
// {value_duration} humanizeDuration's, and a priced rule's {cost} a query
// that multiplies (templates have no arithmetic).
std::string PrometheusSummary(const Rule& rule, const Level& level, const std::string& text);

// The YAML rule file.
std::string PrometheusRuleFile(const std::vector<Rule>& rules, int64_t eval_interval_ms);

}  // namespace vigil::alert
