#include "query/engine.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <span>
#include <thread>

#include "query/eval.h"
#include "query/parser.h"
#include "store/tsdb/stale.h"

namespace vigil::query {
namespace internal {

Status EvalContext::CheckDeadline() const {
  if (opts.env->MonotonicMillis() > deadline_ms) {
    return DeadlineExceeded("query timed out in expression evaluation (limit " +
                            std::to_string(opts.timeout_ms / 1000) + " s)");
  }
  return Status::Ok();
}

Result<std::vector<wire::Series>> SelectForSteps(const Node& sel, int64_t extra_ms,
                                                 EvalContext* ctx) {
  int64_t mint = ctx->steps.front() - sel.offset_ms - extra_ms;
  int64_t maxt = ctx->steps.back() - sel.offset_ms;
  VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Series> series,
                         ctx->db->Select(sel.matchers, mint, maxt));
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

namespace {

// Work shared by the threads of one EvalEachSeries. Each series index is
// taken by exactly one thread (next), which alone writes its slot; the
// counters are atomic and the first error is kept under mu.
struct EachState {
  const tsdb::SeriesSelection* sel = nullptr;
  const EvalContext* ctx = nullptr;
  const SeriesEvalFn* fn = nullptr;
  StaleMarkers markers = StaleMarkers::kKeep;
  std::vector<StepSeries> slots;
  std::vector<uint8_t> keep;
  std::atomic<size_t> next{0};
  std::atomic<size_t> nonempty{0};
  std::atomic<uint64_t> samples{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status error;

  void Fail(Status st) {
    std::lock_guard lock(mu);
    if (!failed.exchange(true)) error = std::move(st);
  }

  Status One(size_t i, std::vector<wire::Sample>* buf) {
    VIGIL_RETURN_IF_ERROR(sel->Samples(i, buf));
    if (markers == StaleMarkers::kDrop) {
      std::erase_if(*buf, [](const wire::Sample& s) { return tsdb::IsStaleNaN(s.value); });
    }
    if (buf->empty()) return Status::Ok();
    if (nonempty.fetch_add(1) + 1 > ctx->opts.max_series) {
      return ResourceExhausted("query selects more than the limit of " +
                               std::to_string(ctx->opts.max_series) + " series");
    }
    uint64_t total = samples.fetch_add(buf->size()) + buf->size();
    if (ctx->samples_loaded + total > ctx->opts.max_samples) {
      return ResourceExhausted(
          "query processing would load too many samples into memory in query execution");
    }
    VIGIL_RETURN_IF_ERROR(ctx->CheckDeadline());
    slots[i] = ctx->NewSeries(sel->labels(i));
    keep[i] = (*fn)(*buf, &slots[i]) ? 1 : 0;
    return Status::Ok();
  }

  void Work() {
    std::vector<wire::Sample> buf;  // reused: one series decoded at a time
    for (size_t i = next++; i < slots.size() && !failed.load(); i = next++) {
      Status st = One(i, &buf);
      if (!st.ok()) Fail(std::move(st));
    }
  }
};

}  // namespace

Result<std::vector<StepSeries>> EvalEachSeries(const Node& sel, int64_t extra_ms, EvalContext* ctx,
                                               StaleMarkers markers, const SeriesEvalFn& fn,
                                               bool newest_only) {
  int64_t mint = ctx->steps.front() - sel.offset_ms - extra_ms;
  int64_t maxt = ctx->steps.back() - sel.offset_ms;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<tsdb::SeriesSelection> selection,
                         newest_only ? ctx->db->SelectLast(sel.matchers, mint, maxt)
                                     : ctx->db->SelectSeries(sel.matchers, mint, maxt));
  EachState st;
  st.sel = selection.get();
  st.ctx = ctx;
  st.fn = &fn;
  st.markers = markers;
  st.slots.resize(selection->size());
  st.keep.resize(selection->size());
  size_t threads = 1;
  if (maxt - mint >= ctx->opts.parallel_select_min_ms) {
    int want = ctx->opts.select_threads;
    if (want <= 0) want = static_cast<int>(std::min(4u, std::thread::hardware_concurrency()));
    threads = std::min(static_cast<size_t>(std::max(want, 1)), selection->size());
  }
  std::vector<std::thread> workers;
  for (size_t k = 1; k < threads; ++k) workers.emplace_back([&st] { st.Work(); });
  st.Work();
  for (auto& w : workers) w.join();
  if (st.failed.load()) return st.error;
  ctx->samples_loaded += st.samples.load();
  std::vector<StepSeries> out;
  for (size_t i = 0; i < st.slots.size(); ++i) {
    if (st.keep[i]) out.push_back(std::move(st.slots[i]));
  }
  return out;
}

// The latest sample at or before each step, if within the lookback delta
// and not a staleness marker.
Result<Value> EvalVectorSelector(const Node& n, EvalContext* ctx, bool sample_times) {
  const EvalContext& c = *ctx;
  auto eval = [&](std::span<const wire::Sample> smp, StepSeries* ss) {
    size_t j = 0;  // first sample after the current reference time
    bool any = false;
    for (size_t i = 0; i < c.n(); ++i) {
      int64_t ref = c.steps[i] - n.offset_ms;
      while (j < smp.size() && smp[j].t_ms <= ref) ++j;
      if (j == 0 || smp[j - 1].t_ms < ref - c.opts.lookback_ms) continue;
      if (tsdb::IsStaleNaN(smp[j - 1].value)) continue;  // the series ended there
      ss->v[i] = sample_times ? static_cast<double>(smp[j - 1].t_ms) / 1000 : smp[j - 1].value;
      ss->ok[i] = 1;
      any = true;
    }
    return any;
  };
  Value out;
  out.type = ValueType::kVector;
  // One step (an instant query, an alert rule) reads only the newest sample.
  VIGIL_ASSIGN_OR_RETURN(out.vec, EvalEachSeries(n, ctx->opts.lookback_ms, ctx, StaleMarkers::kKeep,
                                                 eval, /*newest_only=*/c.n() == 1));
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

Status SameLabelsetError(const wire::Labels& labels) {
  return FailedPrecondition("vector cannot contain metrics with the same labelset " +
                            wire::LabelsToString(labels));
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
      if (dst.ok[i]) return SameLabelsetError(s.labels);
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

// Raw samples of a top-level range selector in an instant query ("foo[5m]"):
// values only, as SelectForSteps reads through Db::Select, which leaves
// staleness markers out.
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
  return Instant(*root, t_ms);
}

Result<QueryResult> Engine::Instant(const Node& root, int64_t t_ms) const {
  EvalContext ctx;
  ctx.db = db_;
  ctx.opts = options_;
  ctx.steps = {t_ms};
  ctx.deadline_ms = options_.env->MonotonicMillis() + options_.timeout_ms;
  if (root.kind == NodeKind::kMatrixSelector) return InstantMatrix(root, &ctx);
  VIGIL_ASSIGN_OR_RETURN(Value v, internal::Eval(root, &ctx));
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
