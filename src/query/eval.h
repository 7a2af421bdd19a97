// Internal to the evaluator: the column-wise value representation shared by
// engine.cc (selectors, dispatch), functions.cc, aggregate.cc and binary.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "query/ast.h"
#include "query/engine.h"

namespace vigil::query::internal {

// One output series: slot i holds the value at step i when ok[i] is set.
struct StepSeries {
  wire::Labels labels;
  std::vector<double> v;
  std::vector<uint8_t> ok;
};

struct Value {
  ValueType type = ValueType::kVector;
  std::vector<double> scalar;   // kScalar: one per step
  std::vector<StepSeries> vec;  // kVector
  std::string str;              // kString
};

struct EvalContext {
  const tsdb::Db* db = nullptr;
  EngineOptions opts;
  std::vector<int64_t> steps;  // evaluation timestamps
  int64_t deadline_ms = 0;     // on opts.env's monotonic clock
  uint64_t samples_loaded = 0;

  size_t n() const { return steps.size(); }
  Status CheckDeadline() const;
  StepSeries NewSeries(wire::Labels labels) const {
    return {std::move(labels), std::vector<double>(n()), std::vector<uint8_t>(n())};
  }
};

Result<Value> Eval(const Node& node, EvalContext* ctx);
// Series matching the selector with samples in [first step - offset - extra,
// last step - offset], counted against the sample budget. Materializes every
// sample: only for raw range-vector output (instant query "foo[5m]"); values
// only (Db::Select leaves staleness markers out).
Result<std::vector<wire::Series>> SelectForSteps(const Node& sel, int64_t extra_ms,
                                                 EvalContext* ctx);

// Computes one output series from one selected series' samples (by time);
// returns whether any step got a value. Called concurrently from several
// threads (each call with its own series), so it must only read shared state.
using SeriesEvalFn = std::function<bool(std::span<const wire::Sample>, StepSeries*)>;

// What a selector's samples do with staleness markers (store/tsdb/stale.h):
// an instant selector needs them (a marker ends the lookback: the series is
// absent from there until a fresh sample), a range selector drops them (they
// are not values), as Prometheus does.
enum class StaleMarkers { kKeep, kDrop };

// The selector's series over [first step - offset - extra, last step -
// offset], decoded one at a time into a reused buffer and handed to `fn`
// (never every sample in memory at once), spread over
// EngineOptions::select_threads threads for long ranges. Returns the series
// for which fn returned true, sorted by labels. Enforces max_series,
// max_samples and the deadline like SelectForSteps. With newest_only, fn
// may be handed only each series' newest sample in range (Db::SelectLast):
// for readers of that sample alone.
Result<std::vector<StepSeries>> EvalEachSeries(const Node& sel, int64_t extra_ms, EvalContext* ctx,
                                               StaleMarkers markers, const SeriesEvalFn& fn,
                                               bool newest_only = false);

// A vector selector's value at each step: the latest sample within the
// lookback delta unless that sample is a staleness marker, or with
// sample_times that sample's timestamp in seconds (what timestamp() of a
// plain selector reports).
Result<Value> EvalVectorSelector(const Node& n, EvalContext* ctx, bool sample_times);

Result<Value> EvalCall(const Node& node, EvalContext* ctx);
Result<Value> EvalAggregate(const Node& node, EvalContext* ctx);
Result<Value> EvalBinary(const Node& node, EvalContext* ctx);

// Drops __name__ from every series.
void DropMetricName(std::vector<StepSeries>* vec);
// Joins series whose labels became equal (after a name was dropped); an error
// when two of them have a value at the same step, as Prometheus reports.
Status MergeSameLabels(std::vector<StepSeries>* vec);
// That error: two series with these labels at one step.
Status SameLabelsetError(const wire::Labels& labels);

// The q-quantile of `values` with Prometheus' interpolation (quantile and
// quantile_over_time share it); sorts `values`. NaN for no values or q NaN,
// -Inf for q < 0, +Inf for q > 1.
double Quantile(double q, std::vector<double>* values);

}  // namespace vigil::query::internal
