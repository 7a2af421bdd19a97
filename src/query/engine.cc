#include "query/engine.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <thread>

#include "query/eval.h"
#include "query/parser.h"

namespace vigil::query {
namespace internal {

Status EvalContext::CheckDeadline() const {
  if (opts.env->MonotonicMillis() > deadline_ms) {
    return DeadlineExceeded("query timed out in expression evaluation (limit " +
                            std::to_string(opts.timeout_ms / 1000) + " s)");
  }
  return Status::Ok();
}

namespace {

// Appends each series of `more` (later samples) to the series of `out` with
// the same labels; both are sorted by labels, as Db::Select returns them.
void AppendSlice(std::vector<wire::Series> more, std::vector<wire::Series>* out) {
  std::map<wire::Labels, size_t> index;
  for (size_t i = 0; i < out->size(); ++i) index.emplace((*out)[i].labels, i);
  bool added = false;
  for (auto& s : more) {
    auto it = index.find(s.labels);
    if (it == index.end()) {
      out->push_back(std::move(s));
      added = true;
      continue;
    }
    auto& dst = (*out)[it->second].samples;
    dst.insert(dst.end(), s.samples.begin(), s.samples.end());
  }
  if (added) {
    std::sort(out->begin(), out->end(),
              [](const wire::Series& a, const wire::Series& b) { return a.labels < b.labels; });
  }
}

// Db::Select over [mint, maxt], split into time slices read by parallel
// threads when the range is long. Slices end on chunk-window multiples (2 h)
// so that no chunk is decoded twice. Each thread writes only its own slot;
// the slots are read after join.
Result<std::vector<wire::Series>> ParallelSelect(const tsdb::Db* db,
                                                 const std::vector<tsdb::Matcher>& m, int64_t mint,
                                                 int64_t maxt, const EngineOptions& o) {
  int n = o.select_threads;
  if (n <= 1 || maxt - mint < o.parallel_select_min_ms) return db->Select(m, mint, maxt);
  constexpr int64_t kAlign = 2 * 3600 * 1000;
  std::vector<int64_t> bounds = {mint};
  for (int i = 1; i < n; ++i) {
    int64_t b = mint + (maxt - mint) / n * i;
    b = b - ((b % kAlign) + kAlign) % kAlign;  // floor to the window
    if (b > bounds.back()) bounds.push_back(b);
  }
  bounds.push_back(maxt + 1);
  size_t slices = bounds.size() - 1;
  std::vector<Result<std::vector<wire::Series>>> parts(slices,
                                                       Status(StatusCode::kInternal, "not run"));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < slices; ++i) {
    threads.emplace_back([&, i] { parts[i] = db->Select(m, bounds[i], bounds[i + 1] - 1); });
  }
  parts[0] = db->Select(m, bounds[0], bounds[1] - 1);
  for (auto& t : threads) t.join();
  for (auto& p : parts) {
    if (!p.ok()) return p.status();
  }
  std::vector<wire::Series> out = std::move(parts[0]).value();
  for (size_t i = 1; i < slices; ++i) AppendSlice(std::move(parts[i]).value(), &out);
  return out;
}

}  // namespace

Result<std::vector<wire::Series>> SelectForSteps(const Node& sel, int64_t extra_ms,
                                                 EvalContext* ctx) {
  int64_t mint = ctx->steps.front() - sel.offset_ms - extra_ms;
  int64_t maxt = ctx->steps.back() - sel.offset_ms;
  VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Series> series,
                         ParallelSelect(ctx->db, sel.matchers, mint, maxt, ctx->opts));
  if (series.size() > ctx->opts.max_series) {
    return ResourceExhausted("query selects " + std::to_string(series.size()) +
                             " series, more than the limit of " +
                             std::to_string(ctx->opts.max_series));
  }
  for (const auto& s : series) ctx->samples_loaded += s.samples.size();
  if (ctx->samples_loaded > ctx->opts.max_samples) {
    return ResourceExhausted(
        "query processing would load too many samples into memory in query execution");
  }
  VIGIL_RETURN_IF_ERROR(ctx->CheckDeadline());
  return series;
}

// The latest sample at or before each step, if within the lookback delta.
Result<Value> EvalVectorSelector(const Node& n, EvalContext* ctx, bool sample_times) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Series> series,
                         SelectForSteps(n, ctx->opts.lookback_ms, ctx));
  Value out;
  out.type = ValueType::kVector;
  out.vec.reserve(series.size());
  for (auto& s : series) {
    StepSeries ss = ctx->NewSeries(std::move(s.labels));
    const auto& smp = s.samples;
    size_t j = 0;  // first sample after the current reference time
    bool any = false;
    for (size_t i = 0; i < ctx->n(); ++i) {
      int64_t ref = ctx->steps[i] - n.offset_ms;
      while (j < smp.size() && smp[j].t_ms <= ref) ++j;
      if (j == 0 || smp[j - 1].t_ms < ref - ctx->opts.lookback_ms) continue;
      ss.v[i] = sample_times ? static_cast<double>(smp[j - 1].t_ms) / 1000 : smp[j - 1].value;
      ss.ok[i] = 1;
      any = true;
    }
    if (any) out.vec.push_back(std::move(ss));
  }
  return out;
}

namespace {

Result<Value> EvalNumber(const Node& n, EvalContext* ctx) {
  Value out;
  out.type = ValueType::kScalar;
  out.scalar.assign(ctx->n(), n.number);
  return out;
}

Result<Value> EvalUnaryMinus(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0], ctx));
  for (auto& x : v.scalar) x = -x;
  for (auto& s : v.vec) {
    for (auto& x : s.v) x = -x;
  }
  if (v.type == ValueType::kVector) {
    DropMetricName(&v.vec);
    VIGIL_RETURN_IF_ERROR(MergeSameLabels(&v.vec));
  }
  return v;
}

}  // namespace

Result<Value> Eval(const Node& n, EvalContext* ctx) {
  VIGIL_RETURN_IF_ERROR(ctx->CheckDeadline());
  switch (n.kind) {
    case NodeKind::kNumber:
      return EvalNumber(n, ctx);
    case NodeKind::kString: {
      Value v;
      v.type = ValueType::kString;
      v.str = n.str;
      return v;
    }
    case NodeKind::kVectorSelector:
      return EvalVectorSelector(n, ctx, /*sample_times=*/false);
    case NodeKind::kMatrixSelector:
      return InvalidArgument("a range vector can only be an argument of a function such as rate()");
    case NodeKind::kCall:
      return EvalCall(n, ctx);
    case NodeKind::kAggregate:
      return EvalAggregate(n, ctx);
    case NodeKind::kBinary:
      return EvalBinary(n, ctx);
    case NodeKind::kUnaryMinus:
      return EvalUnaryMinus(n, ctx);
    case NodeKind::kParen:
      return Eval(*n.args[0], ctx);
  }
  return Internal("unknown node kind");
}

void DropMetricName(std::vector<StepSeries>* vec) {
  for (auto& s : *vec) {
    std::erase_if(s.labels, [](const wire::Label& l) { return l.name == wire::kMetricNameLabel; });
  }
}

Status MergeSameLabels(std::vector<StepSeries>* vec) {
  std::map<wire::Labels, size_t> first;
  std::vector<StepSeries> out;
  for (auto& s : *vec) {
    auto [it, inserted] = first.emplace(s.labels, out.size());
    if (inserted) {
      out.push_back(std::move(s));
      continue;
    }
    StepSeries& dst = out[it->second];
    for (size_t i = 0; i < s.ok.size(); ++i) {
      if (!s.ok[i]) continue;
      if (dst.ok[i]) {
        return FailedPrecondition("vector cannot contain metrics with the same labelset " +
                                  wire::LabelsToString(s.labels));
      }
      dst.ok[i] = 1;
      dst.v[i] = s.v[i];
    }
  }
  *vec = std::move(out);
  return Status::Ok();
}

}  // namespace internal

namespace {

using internal::EvalContext;
using internal::Value;

// Raw samples of a top-level range selector in an instant query ("foo[5m]").
Result<QueryResult> InstantMatrix(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Series> series,
                         internal::SelectForSteps(n, n.range_ms, ctx));
  QueryResult r;
  r.type = ValueType::kMatrix;
  for (auto& s : series) {
    ResultSeries rs{std::move(s.labels), {}};
    for (const auto& smp : s.samples) rs.points.push_back({smp.t_ms, smp.value});
    if (!rs.points.empty()) r.series.push_back(std::move(rs));
  }
  return r;
}

QueryResult ToResult(Value v, const EvalContext& ctx, bool range) {
  QueryResult r;
  if (v.type == ValueType::kString) {
    r.type = ValueType::kString;
    r.str = std::move(v.str);
    r.series.push_back({{}, {{ctx.steps[0], 0}}});
    return r;
  }
  if (v.type == ValueType::kScalar) {
    ResultSeries rs;
    for (size_t i = 0; i < ctx.n(); ++i) rs.points.push_back({ctx.steps[i], v.scalar[i]});
    r.type = range ? ValueType::kMatrix : ValueType::kScalar;
    r.series.push_back(std::move(rs));
    return r;
  }
  r.type = range ? ValueType::kMatrix : ValueType::kVector;
  for (auto& s : v.vec) {
    ResultSeries rs{std::move(s.labels), {}};
    for (size_t i = 0; i < ctx.n(); ++i) {
      if (s.ok[i]) rs.points.push_back({ctx.steps[i], s.v[i]});
    }
    if (!rs.points.empty()) r.series.push_back(std::move(rs));
  }
  if (range) {
    std::sort(r.series.begin(), r.series.end(),
              [](const ResultSeries& a, const ResultSeries& b) { return a.labels < b.labels; });
  }
  return r;
}

}  // namespace

Engine::Engine(const tsdb::Db* db, EngineOptions options) : db_(db), options_(options) {}

Result<QueryResult> Engine::Instant(std::string_view query, int64_t t_ms) const {
  VIGIL_ASSIGN_OR_RETURN(NodePtr root, ParseExpr(query));
  EvalContext ctx;
  ctx.db = db_;
  ctx.opts = options_;
  ctx.steps = {t_ms};
  ctx.deadline_ms = options_.env->MonotonicMillis() + options_.timeout_ms;
  if (root->kind == NodeKind::kMatrixSelector) return InstantMatrix(*root, &ctx);
  VIGIL_ASSIGN_OR_RETURN(Value v, internal::Eval(*root, &ctx));
  return ToResult(std::move(v), ctx, /*range=*/false);
}

Result<QueryResult> Engine::Range(std::string_view query, int64_t start_ms, int64_t end_ms,
                                  int64_t step_ms) const {
  if (step_ms <= 0) {
    return InvalidArgument(
        "zero or negative query resolution step widths are not accepted. Try a positive integer");
  }
  if (end_ms < start_ms) return InvalidArgument("end timestamp must not be before start time");
  if ((end_ms - start_ms) / step_ms > options_.max_points_per_series) {
    return InvalidArgument(
        "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query "
        "resolution (?step=XX)");
  }
  VIGIL_ASSIGN_OR_RETURN(NodePtr root, ParseExpr(query));
  ValueType t = root->type();
  if (t != ValueType::kScalar && t != ValueType::kVector) {
    return InvalidArgument(std::string("invalid expression type \"") +
                           (t == ValueType::kMatrix ? "range vector" : "string") +
                           "\" for range query, must be Scalar or instant Vector");
  }
  EvalContext ctx;
  ctx.db = db_;
  ctx.opts = options_;
  for (int64_t ts = start_ms; ts <= end_ms; ts += step_ms) ctx.steps.push_back(ts);
  ctx.deadline_ms = options_.env->MonotonicMillis() + options_.timeout_ms;
  VIGIL_ASSIGN_OR_RETURN(Value v, internal::Eval(*root, &ctx));
  return ToResult(std::move(v), ctx, /*range=*/true);
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[400];  // fixed notation of 1e308 or 1e-300 needs ~330 characters
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::string FormatTimestamp(int64_t ms) {
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  std::string s;
  if (ms < 0 && frac != 0) {
    // Floor division so that the fraction is positive: -0.5 s is "-0.5".
    s = "-";
    int64_t a = -ms;
    secs = a / 1000;
    frac = a % 1000;
  }
  s += std::to_string(secs);
  if (frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), ".%03d", static_cast<int>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    s += f;
  }
  return s;
}

}  // namespace vigil::query
