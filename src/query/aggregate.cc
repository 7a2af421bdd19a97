// Aggregations (sum, avg, min, max, count, quantile, topk, bottomk) with
// by/without. The group of each series is computed once for the whole range;
// per-step work is then a pass over arrays in the input order, which is also
// the order Prometheus adds values in (so sums agree bit for bit).
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "query/eval.h"

namespace vigil::query::internal {
namespace {

wire::Labels GroupLabels(const Node& n, const wire::Labels& labels) {
  wire::Labels out;
  for (const auto& l : labels) {
    bool listed = std::find(n.grouping.begin(), n.grouping.end(), l.name) != n.grouping.end();
    if (n.without ? (!listed && l.name != wire::kMetricNameLabel) : listed) out.push_back(l);
  }
  return out;
}

// sum, avg, min, max, count: one accumulator per (group, step).
enum class AggOp { kSum, kCount, kMax, kMin, kAvg };

AggOp ToAggOp(const std::string& name) {
  if (name == "sum") return AggOp::kSum;
  if (name == "count") return AggOp::kCount;
  if (name == "max") return AggOp::kMax;
  if (name == "min") return AggOp::kMin;
  return AggOp::kAvg;
}

void Accumulate(AggOp op, const StepSeries& s, StepSeries* g, std::vector<double>* counts) {
  for (size_t i = 0; i < s.ok.size(); ++i) {
    if (!s.ok[i]) continue;
    double x = s.v[i];
    double& acc = g->v[i];
    if (!g->ok[i]) {
      g->ok[i] = 1;
      acc = op == AggOp::kCount ? 1 : x;
      (*counts)[i] = 1;
      continue;
    }
    double& c = (*counts)[i];
    switch (op) {
      case AggOp::kSum:
        acc += x;
        break;
      case AggOp::kCount:
        acc += 1;
        break;
      case AggOp::kMax:
        if (acc < x || std::isnan(acc)) acc = x;
        break;
      case AggOp::kMin:
        if (acc > x || std::isnan(acc)) acc = x;
        break;
      case AggOp::kAvg:  // incremental mean, as Prometheus 2.42 (no overflow on large values)
        c++;
        if (std::isinf(acc)) {
          if (std::isinf(x) && (acc > 0) == (x > 0)) break;
          if (!std::isinf(x) && !std::isnan(x)) break;
        }
        acc += x / c - acc / c;
        break;
    }
  }
}

// topk/bottomk keep input series; each step keeps the k best per group.
Result<Value> TopK(const Node& n, Value in, const std::vector<double>& param,
                   const std::vector<size_t>& group_of, size_t groups) {
  bool top = n.name == "topk";
  std::vector<std::vector<size_t>> members(groups);
  std::vector<std::vector<uint8_t>> keep(in.vec.size(), std::vector<uint8_t>(param.size()));
  std::vector<size_t> cand;
  for (size_t i = 0; i < param.size(); ++i) {
    double kf = param[i];
    if (std::isnan(kf) || kf < 1) continue;
    size_t k = kf >= 1e18 ? SIZE_MAX : static_cast<size_t>(kf);
    for (auto& m : members) m.clear();
    for (size_t s = 0; s < in.vec.size(); ++s) {
      if (in.vec[s].ok[i]) members[group_of[s]].push_back(s);
    }
    for (auto& m : members) {
      auto better = [&](size_t a, size_t b) {
        double x = in.vec[a].v[i], y = in.vec[b].v[i];
        if (std::isnan(x) != std::isnan(y)) return std::isnan(y);  // NaN sorts last
        return top ? x > y : x < y;
      };
      std::stable_sort(m.begin(), m.end(), better);
      for (size_t j = 0; j < m.size() && j < k; ++j) keep[m[j]][i] = 1;
    }
  }
  Value out;
  for (size_t s = 0; s < in.vec.size(); ++s) {
    StepSeries& ss = in.vec[s];
    bool any = false;
    for (size_t i = 0; i < ss.ok.size(); ++i) {
      ss.ok[i] = ss.ok[i] && keep[s][i];
      any = any || ss.ok[i];
    }
    if (any) out.vec.push_back(std::move(ss));
  }
  return out;
}

Value QuantileAgg(const Value& in, const std::vector<double>& param,
                  const std::vector<size_t>& group_of, std::vector<StepSeries>* groups) {
  std::vector<std::vector<double>> vals(groups->size());
  for (size_t i = 0; i < param.size(); ++i) {
    for (auto& v : vals) v.clear();
    for (size_t s = 0; s < in.vec.size(); ++s) {
      if (in.vec[s].ok[i]) vals[group_of[s]].push_back(in.vec[s].v[i]);
    }
    for (size_t g = 0; g < groups->size(); ++g) {
      if (vals[g].empty()) continue;
      (*groups)[g].v[i] = Quantile(param[i], &vals[g]);
      (*groups)[g].ok[i] = 1;
    }
  }
  Value out;
  out.vec = std::move(*groups);
  return out;
}

}  // namespace

Result<Value> EvalAggregate(const Node& n, EvalContext* ctx) {
  std::vector<double> param;
  if (n.args.size() == 2) {
    VIGIL_ASSIGN_OR_RETURN(Value p, Eval(*n.args[0], ctx));
    param = std::move(p.scalar);
  }
  VIGIL_ASSIGN_OR_RETURN(Value in, Eval(*n.args.back(), ctx));
  std::unordered_map<std::string, size_t> index;
  std::vector<size_t> group_of(in.vec.size());
  std::vector<StepSeries> groups;
  for (size_t s = 0; s < in.vec.size(); ++s) {
    wire::Labels gl = GroupLabels(n, in.vec[s].labels);
    auto [it, inserted] = index.emplace(wire::LabelsToString(gl), groups.size());
    if (inserted) groups.push_back(ctx->NewSeries(std::move(gl)));
    group_of[s] = it->second;
  }
  if (n.name == "topk" || n.name == "bottomk")
    return TopK(n, std::move(in), param, group_of, groups.size());
  if (n.name == "quantile") return QuantileAgg(in, param, group_of, &groups);
  std::vector<std::vector<double>> counts(groups.size(), std::vector<double>(ctx->n()));
  AggOp op = ToAggOp(n.name);
  for (size_t s = 0; s < in.vec.size(); ++s) {
    Accumulate(op, in.vec[s], &groups[group_of[s]], &counts[group_of[s]]);
  }
  VIGIL_RETURN_IF_ERROR(ctx->CheckDeadline());
  Value out;
  out.vec = std::move(groups);
  return out;
}

}  // namespace vigil::query::internal
