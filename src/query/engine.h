// The PromQL evaluator: instant and range queries over a tsdb::Db with
// Prometheus' semantics (lookback delta, range selectors closed on both ends
// as in Prometheus 2.x, extrapolated rate/increase/delta). The supported
// subset is listed in docs/query-api.md.
//
// Evaluation is column-wise: every node produces, for each output series, a
// dense array with one slot per step. A selector reads each series once for
// the whole range and walks it with a moving window, so a 24 h range at 60 s
// step costs one selection per selector, not one per step. Series are
// decoded one at a time into a reused buffer (Db::SelectSeries), never all
// samples of a selection at once.
//
// Errors: InvalidArgument for a bad or unsupported expression (HTTP 400),
// FailedPrecondition for evaluation errors such as many-to-many matching
// (422), ResourceExhausted when a limit is hit (422), DeadlineExceeded on
// timeout (503).
//
// Thread safety: an Engine is immutable; queries may run concurrently. A
// long range query starts up to EngineOptions::select_threads short-lived
// threads of its own (joined before it returns); the Env must then be safe to
// call from them (Env::Default() is).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "query/ast.h"
#include "store/tsdb/db.h"

namespace vigil::query {

struct EngineOptions {
  // A sample is current for this long after its timestamp (Prometheus' default).
  int64_t lookback_ms = 5 * 60 * 1000;
  // Steps per range query, as Prometheus' limit of 11,000 points per series.
  int64_t max_points_per_series = 11'000;
  int64_t timeout_ms = 30'000;
  // Samples one query may load from the store (Prometheus' --query.max-samples).
  uint64_t max_samples = 50'000'000;
  // Series one selector may return.
  size_t max_series = 100'000;
  // Threads that decode and evaluate the series of one selector in parallel
  // when its selection spans at least parallel_select_min_ms (decoding
  // chunks dominates long range queries). 0: the number of CPUs, at most 4.
  // Each series is evaluated by one thread alone, so results do not depend
  // on the thread count (bit for bit).
  int select_threads = 0;
  int64_t parallel_select_min_ms = 3600 * 1000;
  Env* env = Env::Default();
};

struct Point {
  int64_t t_ms = 0;
  double v = 0;
  bool operator==(const Point&) const = default;
};

struct ResultSeries {
  wire::Labels labels;
  std::vector<Point> points;
};

struct QueryResult {
  // kVector: each series has one point. kMatrix: each series has its points.
  // kScalar, kString: one series without labels and one point.
  ValueType type = ValueType::kVector;
  std::vector<ResultSeries> series;
  std::string str;  // kString only
};

class Engine {
 public:
  explicit Engine(const tsdb::Db* db, EngineOptions options = {});

  Result<QueryResult> Instant(std::string_view query, int64_t t_ms) const;
  // The same for an expression parsed once (ParseExpr, query/parser.h) and
  // evaluated many times, as alert rules are.
  Result<QueryResult> Instant(const Node& root, int64_t t_ms) const;
  // Steps at start, start+step, ... up to end (inclusive). Result: kMatrix.
  Result<QueryResult> Range(std::string_view query, int64_t start_ms, int64_t end_ms,
                            int64_t step_ms) const;

  const EngineOptions& options() const { return options_; }

 private:
  const tsdb::Db* db_;
  EngineOptions options_;
};

// Prometheus' rendering of a sample value: shortest round-trip decimal without
// exponent ("0.1", "1000000"), "NaN", "+Inf", "-Inf".
std::string FormatValue(double v);
// Unix seconds with millisecond precision, trailing zeros dropped: "1435781451.781".
std::string FormatTimestamp(int64_t ms);

}  // namespace vigil::query
