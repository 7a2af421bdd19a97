// Functions over range vectors (rate, deriv, predict_linear, *_over_time,
// ...), instant vectors (abs, clamp, clamp_*, absent, sort*, timestamp,
// scalar, label_replace) and scalars (time, vector). Formulas follow
// Prometheus 2.42's promql/functions.go step for step, including the order of
// floating-point operations and its Kahan sums, so results agree bit for bit
// (the golden test checks this against promtool).
#include "query/functions.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "query/eval.h"

namespace vigil::query {
namespace {

using V = ValueType;

const std::vector<FunctionInfo>& Table() {
  static const std::vector<FunctionInfo> kTable = {
      {"rate", {V::kMatrix}},
      {"irate", {V::kMatrix}},
      {"increase", {V::kMatrix}},
      {"delta", {V::kMatrix}},
      {"deriv", {V::kMatrix}},
      {"predict_linear", {V::kMatrix, V::kScalar}},
      {"avg_over_time", {V::kMatrix}},
      {"min_over_time", {V::kMatrix}},
      {"max_over_time", {V::kMatrix}},
      {"sum_over_time", {V::kMatrix}},
      {"count_over_time", {V::kMatrix}},
      {"last_over_time", {V::kMatrix}},
      {"stddev_over_time", {V::kMatrix}},
      {"stdvar_over_time", {V::kMatrix}},
      {"present_over_time", {V::kMatrix}},
      {"quantile_over_time", {V::kScalar, V::kMatrix}},
      {"abs", {V::kVector}},
      {"clamp", {V::kVector, V::kScalar, V::kScalar}},
      {"clamp_min", {V::kVector, V::kScalar}},
      {"clamp_max", {V::kVector, V::kScalar}},
      {"absent", {V::kVector}},
      {"time", {}, V::kScalar},
      {"vector", {V::kScalar}},
      {"scalar", {V::kVector}, V::kScalar},
      {"sort", {V::kVector}},
      {"sort_desc", {V::kVector}},
      {"timestamp", {V::kVector}},
      {"label_replace", {V::kVector, V::kString, V::kString, V::kString, V::kString}},
  };
  return kTable;
}

}  // namespace

const FunctionInfo* FindFunction(std::string_view name) {
  for (const auto& f : Table()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool IsKnownUnsupportedFunction(std::string_view name) {
  static const char* kNames[] = {"absent_over_time",
                                 "acos",
                                 "acosh",
                                 "asin",
                                 "asinh",
                                 "atan",
                                 "atanh",
                                 "ceil",
                                 "changes",
                                 "cos",
                                 "cosh",
                                 "day_of_month",
                                 "day_of_week",
                                 "day_of_year",
                                 "days_in_month",
                                 "deg",
                                 "exp",
                                 "floor",
                                 "histogram_count",
                                 "histogram_fraction",
                                 "histogram_quantile",
                                 "histogram_sum",
                                 "holt_winters",
                                 "hour",
                                 "idelta",
                                 "label_join",
                                 "ln",
                                 "log10",
                                 "log2",
                                 "minute",
                                 "month",
                                 "pi",
                                 "rad",
                                 "resets",
                                 "round",
                                 "sgn",
                                 "sin",
                                 "sinh",
                                 "sqrt",
                                 "tan",
                                 "tanh",
                                 "year"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

namespace internal {
namespace {

using Span = const wire::Sample*;

// Go's math.Max/Min: NaN wins, unlike std::fmax.
double GoMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return a > b ? a : b;
}
double GoMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return a < b ? a : b;
}

struct Window {
  Span b, e;
  int64_t range_start, range_end, range_ms;
  int64_t eval_ms;  // the step's evaluation time (before any offset)
  double param;     // the scalar argument at this step: quantile_over_time's
                    // phi, predict_linear's seconds ahead
  // No sample of the whole series is negative or below its predecessor, so
  // no window holds a counter reset (see ExtrapolatedRate).
  bool no_resets;
  size_t size() const { return static_cast<size_t>(e - b); }
};

// Whether a counter reset correction can never apply to `smp`: the reset loop
// of ExtrapolatedRate adds to the result only when a value is below the one
// before it (or, for a window's first sample, below 0). Comparisons with NaN
// are false in both places, so a NaN is treated alike.
bool NoResets(std::span<const wire::Sample> smp) {
  bool bad = false;
  double prev = 0;
  for (const auto& s : smp) {
    bad |= (s.value < prev) | (s.value < 0);  // no branches: one pass at memory speed
    prev = s.value;
  }
  return !bad;
}

// Prometheus' extrapolatedRate: rate, increase, delta.
bool ExtrapolatedRate(const Window& w, bool counter, bool rate, double* out) {
  if (w.size() < 2) return false;
  const wire::Sample& first = w.b[0];
  const wire::Sample& last = w.e[-1];
  double result = last.value - first.value;
  // Skipping the loop when it cannot add anything keeps the result bit for bit.
  if (counter && !w.no_resets) {
    double last_value = 0;
    for (Span p = w.b; p != w.e; ++p) {
      if (p->value < last_value) result += last_value;
      last_value = p->value;
    }
  }
  double to_start = static_cast<double>(first.t_ms - w.range_start) / 1000;
  double to_end = static_cast<double>(w.range_end - last.t_ms) / 1000;
  double sampled = static_cast<double>(last.t_ms - first.t_ms) / 1000;
  double avg_between = sampled / static_cast<double>(w.size() - 1);
  if (counter && result > 0 && first.value >= 0) {
    // A counter cannot have been below zero: do not extrapolate past that.
    double to_zero = sampled * (first.value / result);
    if (to_zero < to_start) to_start = to_zero;
  }
  double threshold = avg_between * 1.1;
  double interval = sampled;
  interval += to_start < threshold ? to_start : avg_between / 2;
  interval += to_end < threshold ? to_end : avg_between / 2;
  // One factor, divided by the range first: the same rounding as Prometheus.
  double factor = interval / sampled;
  if (rate) factor /= static_cast<double>(w.range_ms) / 1000;
  *out = result * factor;
  return true;
}

bool IRate(const Window& w, double* out) {
  if (w.size() < 2) return false;
  const wire::Sample& last = w.e[-1];
  const wire::Sample& prev = w.e[-2];
  double result = last.value < prev.value ? last.value : last.value - prev.value;
  int64_t interval = last.t_ms - prev.t_ms;
  if (interval == 0) return false;
  *out = result / (static_cast<double>(interval) / 1000);
  return true;
}

// Prometheus' kahanSumInc (Neumaier's variant of Kahan summation): adds inc
// to *sum and what the addition lost to *c.
void KahanInc(double inc, double* sum, double* c) {
  double t = *sum + inc;
  if (std::fabs(*sum) >= std::fabs(inc)) {
    *c += (*sum - t) + inc;
  } else {
    *c += (inc - t) + *sum;
  }
  *sum = t;
}

// Prometheus' linearRegression, shared by deriv and predict_linear: the
// least-squares slope (per second) and the value at intercept_ms, with x in
// seconds relative to intercept_ms and Kahan sums. A window of one constant
// value has slope 0 and that value as intercept (NaN both for +-Inf).
void LinearRegression(const Window& w, int64_t intercept_ms, double* slope, double* intercept) {
  double n = 0, sum_x = 0, c_x = 0, sum_y = 0, c_y = 0, sum_xy = 0, c_xy = 0, sum_x2 = 0, c_x2 = 0;
  double init_y = w.b[0].value;
  bool const_y = true;
  for (Span p = w.b; p != w.e; ++p) {
    const_y = const_y && p->value == init_y;
    n += 1.0;
    double x = static_cast<double>(p->t_ms - intercept_ms) / 1e3;
    KahanInc(x, &sum_x, &c_x);
    KahanInc(p->value, &sum_y, &c_y);
    KahanInc(x * p->value, &sum_xy, &c_xy);
    KahanInc(x * x, &sum_x2, &c_x2);
  }
  if (const_y) {
    bool inf = std::isinf(init_y);
    *slope = inf ? std::nan("") : 0;
    *intercept = inf ? std::nan("") : init_y;
    return;
  }
  sum_x += c_x;
  sum_y += c_y;
  sum_xy += c_xy;
  sum_x2 += c_x2;
  double cov_xy = sum_xy - sum_x * sum_y / n;
  double var_x = sum_x2 - sum_x * sum_x / n;
  *slope = cov_xy / var_x;
  *intercept = sum_y / n - *slope * sum_x / n;
}

// deriv: the slope, x relative to the first sample's time (precision).
bool Deriv(const Window& w, double* out) {
  if (w.size() < 2) return false;
  double intercept = 0;
  LinearRegression(w, w.b[0].t_ms, out, &intercept);
  return true;
}

// predict_linear: the regression line's value param seconds after the
// evaluation time (the intercept is taken there, as Prometheus does).
bool PredictLinear(const Window& w, double* out) {
  if (w.size() < 2) return false;
  double slope = 0, intercept = 0;
  LinearRegression(w, w.eval_ms, &slope, &intercept);
  *out = slope * w.param + intercept;
  return true;
}

// stdvar_over_time: Welford's running variance with Kahan sums, as Prometheus.
double Variance(const Window& w) {
  double count = 0, mean = 0, c_mean = 0, aux = 0, c_aux = 0;
  for (Span p = w.b; p != w.e; ++p) {
    count++;
    double delta = p->value - (mean + c_mean);
    KahanInc(delta / count, &mean, &c_mean);
    KahanInc(delta * (p->value - (mean + c_mean)), &aux, &c_aux);
  }
  return (aux + c_aux) / count;
}

bool OverTime(const std::string& name, const Window& w, double* out) {
  if (w.size() == 0) return false;
  if (name == "avg_over_time") {
    // A running mean whose increments are Kahan-summed, as Prometheus.
    double mean = 0, count = 0, c = 0;
    for (Span p = w.b; p != w.e; ++p) {
      count++;
      if (std::isinf(mean)) {
        if (std::isinf(p->value) && (mean > 0) == (p->value > 0)) continue;
        if (!std::isinf(p->value) && !std::isnan(p->value)) continue;
      }
      KahanInc(p->value / count - mean / count, &mean, &c);
    }
    *out = std::isinf(mean) ? mean : mean + c;
  } else if (name == "sum_over_time") {
    double sum = 0, c = 0;
    for (Span p = w.b; p != w.e; ++p) KahanInc(p->value, &sum, &c);
    *out = std::isinf(sum) ? sum : sum + c;
  } else if (name == "count_over_time") {
    *out = static_cast<double>(w.size());
  } else if (name == "last_over_time") {
    *out = w.e[-1].value;
  } else if (name == "present_over_time") {
    *out = 1;
  } else if (name == "stdvar_over_time") {
    *out = Variance(w);
  } else if (name == "stddev_over_time") {
    *out = std::sqrt(Variance(w));
  } else if (name == "max_over_time" || name == "min_over_time") {
    bool is_max = name == "max_over_time";
    double m = w.b[0].value;
    for (Span p = w.b; p != w.e; ++p) {
      if ((is_max ? p->value > m : p->value < m) || std::isnan(m)) m = p->value;
    }
    *out = m;
  } else {  // quantile_over_time
    std::vector<double> vals;
    for (Span p = w.b; p != w.e; ++p) vals.push_back(p->value);
    *out = Quantile(w.param, &vals);
  }
  return true;
}

// The function for one step's window, chosen once per call rather than by
// name at every step.
using RangeFn = bool (*)(const std::string& name, const Window& w, double* out);

RangeFn FindRangeFn(const std::string& name) {
  if (name == "rate") {
    return [](const std::string&, const Window& w, double* o) {
      return ExtrapolatedRate(w, true, true, o);
    };
  }
  if (name == "increase") {
    return [](const std::string&, const Window& w, double* o) {
      return ExtrapolatedRate(w, true, false, o);
    };
  }
  if (name == "delta") {
    return [](const std::string&, const Window& w, double* o) {
      return ExtrapolatedRate(w, false, false, o);
    };
  }
  if (name == "irate")
    return [](const std::string&, const Window& w, double* o) { return IRate(w, o); };
  if (name == "deriv")
    return [](const std::string&, const Window& w, double* o) { return Deriv(w, o); };
  if (name == "predict_linear")
    return [](const std::string&, const Window& w, double* o) { return PredictLinear(w, o); };
  return OverTime;
}

// Evaluates a function over a range selector with a moving window per series.
Result<Value> EvalRangeCall(const Node& n, const Node& sel, const std::vector<double>& param,
                            EvalContext* ctx) {
  const EvalContext& c = *ctx;
  RangeFn f = FindRangeFn(n.name);
  bool counter = n.name == "rate" || n.name == "increase";
  auto eval = [&](std::span<const wire::Sample> smp, StepSeries* ss) {
    bool no_resets = counter && NoResets(smp);
    Span base = smp.data();
    size_t lo = 0, hi = 0, count = smp.size();
    bool any = false;
    for (size_t i = 0; i < c.n(); ++i) {
      int64_t end = c.steps[i] - sel.offset_ms;
      int64_t start = end - sel.range_ms;
      while (lo < count && base[lo].t_ms < start) ++lo;
      if (hi < lo) hi = lo;
      while (hi < count && base[hi].t_ms <= end) ++hi;
      Window w{
          base + lo, base + hi, start, end, sel.range_ms, c.steps[i], param.empty() ? 0 : param[i],
          no_resets};
      if (f(n.name, w, &ss->v[i])) {
        ss->ok[i] = 1;
        any = true;
      }
    }
    return any;
  };
  Value out;
  out.type = ValueType::kVector;
  VIGIL_ASSIGN_OR_RETURN(out.vec,
                         EvalEachSeries(sel, sel.range_ms, ctx, StaleMarkers::kDrop, eval));
  if (n.name != "last_over_time") DropMetricName(&out.vec);
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&out.vec));
  return out;
}

// Labels of absent()'s output: the equality matchers of a plain selector.
wire::Labels AbsentLabels(const Node& arg) {
  wire::Labels labels;
  if (arg.kind != NodeKind::kVectorSelector) return labels;
  std::vector<std::string> seen_twice;
  for (const auto& m : arg.matchers) {
    if (m.type != tsdb::MatchType::kEqual || m.name == wire::kMetricNameLabel) continue;
    bool dup = false;
    for (const auto& l : labels) dup = dup || l.name == m.name;
    if (dup) {
      seen_twice.push_back(m.name);
      continue;
    }
    labels.push_back({m.name, m.value});
  }
  std::erase_if(labels, [&](const wire::Label& l) {
    return std::find(seen_twice.begin(), seen_twice.end(), l.name) != seen_twice.end();
  });
  wire::NormalizeLabels(&labels);
  return labels;
}

Result<Value> EvalAbsent(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value in, Eval(*n.args[0], ctx));
  StepSeries ss = ctx->NewSeries(AbsentLabels(*n.args[0]));
  bool any = false;
  for (size_t i = 0; i < ctx->n(); ++i) {
    bool present = false;
    for (const auto& s : in.vec) present = present || s.ok[i];
    if (present) continue;
    ss.v[i] = 1;
    ss.ok[i] = 1;
    any = true;
  }
  Value out;
  if (any) out.vec.push_back(std::move(ss));
  return out;
}

// rate((x[5m])) is valid PromQL: the parentheses do not change the value.
const Node& Unparen(const Node& n) { return n.kind == NodeKind::kParen ? Unparen(*n.args[0]) : n; }

// Go's Regexp.Expand: "$1", "${1}", "$name", "${name}" and "$$". A name is
// the longest run of letters, digits and '_' ("$1x" names group "1x", which
// does not exist); a group that does not exist or did not take part in the
// match expands to nothing; a malformed reference ("$", "${1") stays
// literal. Bytes of multi-byte UTF-8 characters count as letters, since Go
// takes the Unicode letters among them and label values are rarely others.
std::string ExpandTemplate(std::string_view tmpl, const RE2& re,
                           const std::vector<re2::StringPiece>& groups) {
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t dollar = tmpl.find('$', i);
    if (dollar == std::string_view::npos) break;
    out.append(tmpl.substr(i, dollar - i));
    i = dollar + 1;
    if (i < tmpl.size() && tmpl[i] == '$') {
      out += '$';
      ++i;
      continue;
    }
    bool brace = i < tmpl.size() && tmpl[i] == '{';
    size_t name_start = brace ? i + 1 : i;
    size_t name_end = name_start;
    while (name_end < tmpl.size() && is_name_char(tmpl[name_end])) ++name_end;
    if (name_end == name_start || (brace && (name_end >= tmpl.size() || tmpl[name_end] != '}'))) {
      out += '$';  // malformed: the '$' is literal text
      continue;
    }
    std::string_view name = tmpl.substr(name_start, name_end - name_start);
    i = brace ? name_end + 1 : name_end;
    int64_t num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100'000'000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name.size() > 1 && name[0] == '0') num = -1;  // Go disallows leading zeros
    if (num < 0) {
      const auto& named = re.NamedCapturingGroups();
      auto it = named.find(std::string(name));
      num = it == named.end() ? -1 : it->second;
    }
    if (num >= 0 && static_cast<size_t>(num) < groups.size() && groups[num].data() != nullptr) {
      out.append(groups[num].data(), groups[num].size());
    }
  }
  out.append(tmpl.substr(std::min(i, tmpl.size())));
  return out;
}

bool IsLabelName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
              (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (!ok) return false;
  }
  return true;
}

// label_replace(v, dst, replacement, src, regex): where the anchored regex
// matches src's value, dst becomes the expanded replacement (removed when
// that is empty); other series pass unchanged. Errors are execution errors,
// as Prometheus reports them when evaluating, even for an empty vector.
Result<Value> EvalLabelReplace(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0], ctx));
  // String arguments are literals (the only string expressions), perhaps
  // parenthesized.
  const std::string& dst = Unparen(*n.args[1]).str;
  const std::string& repl = Unparen(*n.args[2]).str;
  const std::string& src = Unparen(*n.args[3]).str;
  const std::string& regex = Unparen(*n.args[4]).str;
  RE2 re("^(?:" + regex + ")$", RE2::Quiet);
  if (!re.ok()) {
    return FailedPrecondition("invalid regular expression in label_replace(): " + regex);
  }
  if (!IsLabelName(dst)) {
    return FailedPrecondition("invalid destination label name in label_replace(): " + dst);
  }
  std::vector<re2::StringPiece> groups(static_cast<size_t>(re.NumberOfCapturingGroups()) + 1);
  for (auto& s : v.vec) {
    std::string src_value;
    for (const auto& l : s.labels) {
      if (l.name == src) src_value = l.value;
    }
    if (!re.Match(src_value, 0, src_value.size(), RE2::ANCHOR_BOTH, groups.data(),
                  static_cast<int>(groups.size()))) {
      continue;
    }
    std::string value = ExpandTemplate(repl, re, groups);
    std::erase_if(s.labels, [&](const wire::Label& l) { return l.name == dst; });
    s.labels.push_back({dst, std::move(value)});
    wire::NormalizeLabels(&s.labels);  // sorts; drops dst when the value is empty
  }
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&v.vec));
  return v;
}

// sort and sort_desc: ascending or descending by value with NaN last, as
// Prometheus orders them (ties keep their input order; Prometheus leaves it
// unspecified). Only an instant query's order is visible: a range query's
// series are ordered by labels, so Prometheus' sort has no effect there.
Result<Value> EvalSort(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0], ctx));
  if (ctx->n() != 1) return v;
  bool desc = n.name == "sort_desc";
  std::stable_sort(v.vec.begin(), v.vec.end(), [desc](const StepSeries& a, const StepSeries& b) {
    // A series without a value at the step is dropped from the result;
    // it goes last only to keep the comparison a strict weak order.
    if (!a.ok[0] || !b.ok[0]) return a.ok[0] && !b.ok[0];
    double x = a.v[0], y = b.v[0];
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return desc ? x > y : x < y;
  });
  return v;
}

// timestamp(): Prometheus reports the sample's own time only when the
// argument is a selector (parentheses aside); any other argument has been
// evaluated at the step, so its timestamp is the step's.
Result<Value> EvalTimestamp(const Node& n, EvalContext* ctx) {
  Value v;
  const Node& arg = Unparen(*n.args[0]);
  if (arg.kind == NodeKind::kVectorSelector) {
    VIGIL_ASSIGN_OR_RETURN(v, EvalVectorSelector(arg, ctx, /*sample_times=*/true));
  } else {
    VIGIL_ASSIGN_OR_RETURN(v, Eval(*n.args[0], ctx));
    for (auto& s : v.vec) {
      for (size_t i = 0; i < s.v.size(); ++i) s.v[i] = static_cast<double>(ctx->steps[i]) / 1000;
    }
  }
  DropMetricName(&v.vec);
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&v.vec));
  return v;
}

Result<Value> EvalTime(EvalContext* ctx) {
  Value out;
  out.type = ValueType::kScalar;
  for (int64_t t : ctx->steps) out.scalar.push_back(static_cast<double>(t) / 1000);
  return out;
}

// vector(s): one series without labels holding s at every step.
Result<Value> EvalVectorOfScalar(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value s, Eval(*n.args[0], ctx));
  StepSeries ss = ctx->NewSeries({});
  ss.v = std::move(s.scalar);
  std::fill(ss.ok.begin(), ss.ok.end(), 1);
  Value out;
  out.type = ValueType::kVector;
  out.vec.push_back(std::move(ss));
  return out;
}

// scalar(v): the value of v's only element, NaN unless it has exactly one.
Result<Value> EvalScalarOfVector(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0], ctx));
  Value out;
  out.type = ValueType::kScalar;
  out.scalar.assign(ctx->n(), std::nan(""));
  for (size_t i = 0; i < ctx->n(); ++i) {
    int count = 0;
    for (const auto& s : v.vec) {
      if (!s.ok[i]) continue;
      if (++count == 1) out.scalar[i] = s.v[i];
    }
    if (count != 1) out.scalar[i] = std::nan("");
  }
  return out;
}

}  // namespace

Result<Value> EvalCall(const Node& n, EvalContext* ctx) {
  if (n.name == "absent") return EvalAbsent(n, ctx);
  if (n.name == "time") return EvalTime(ctx);
  if (n.name == "vector") return EvalVectorOfScalar(n, ctx);
  if (n.name == "scalar") return EvalScalarOfVector(n, ctx);
  if (n.name == "sort" || n.name == "sort_desc") return EvalSort(n, ctx);
  if (n.name == "timestamp") return EvalTimestamp(n, ctx);
  if (n.name == "label_replace") return EvalLabelReplace(n, ctx);
  // A range function: one range selector, perhaps with a scalar parameter
  // (quantile_over_time's first argument, predict_linear's second).
  for (size_t a = 0; a < n.args.size(); ++a) {
    if (Unparen(*n.args[a]).kind != NodeKind::kMatrixSelector) continue;
    std::vector<double> param;
    if (n.args.size() == 2) {
      VIGIL_ASSIGN_OR_RETURN(Value p, Eval(*n.args[1 - a], ctx));
      param = std::move(p.scalar);
    }
    return EvalRangeCall(n, Unparen(*n.args[a]), param, ctx);
  }
  VIGIL_ASSIGN_OR_RETURN(Value v, Eval(*n.args[0], ctx));
  std::vector<std::vector<double>> bounds;  // the scalar arguments after the vector
  for (size_t a = 1; a < n.args.size(); ++a) {
    VIGIL_ASSIGN_OR_RETURN(Value b, Eval(*n.args[a], ctx));
    bounds.push_back(std::move(b.scalar));
  }
  for (auto& s : v.vec) {
    for (size_t i = 0; i < s.v.size(); ++i) {
      if (n.name == "abs") s.v[i] = std::fabs(s.v[i]);
      if (n.name == "clamp_min") s.v[i] = GoMax(bounds[0][i], s.v[i]);
      if (n.name == "clamp_max") s.v[i] = GoMin(bounds[0][i], s.v[i]);
      if (n.name == "clamp") {
        // clamp(v, min, max): nothing at a step where max < min, as Prometheus.
        if (bounds[1][i] < bounds[0][i]) s.ok[i] = 0;
        s.v[i] = GoMax(bounds[0][i], GoMin(bounds[1][i], s.v[i]));
      }
    }
  }
  DropMetricName(&v.vec);
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&v.vec));
  return v;
}

double Quantile(double q, std::vector<double>* values) {
  if (values->empty() || std::isnan(q)) return std::nan("");
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  std::sort(values->begin(), values->end());
  double n = static_cast<double>(values->size());
  double rank = q * (n - 1);
  double lower = std::max(0.0, std::floor(rank));
  double upper = std::min(n - 1, lower + 1);
  double weight = rank - std::floor(rank);
  return (*values)[static_cast<size_t>(lower)] * (1 - weight) +
         (*values)[static_cast<size_t>(upper)] * weight;
}

}  // namespace internal
}  // namespace vigil::query
