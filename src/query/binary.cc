// Binary operators: arithmetic, comparisons (filtering or with bool), set
// operators, with one-to-one vector matching on(...)/ignoring(...). Semantics
// of Prometheus 2.42's VectorBinop/VectorscalarBinop, evaluated per step over
// series whose match signatures are computed once.
#include <cmath>
#include <map>
#include <unordered_map>

#include "query/eval.h"

namespace vigil::query::internal {
namespace {

// Returns false when a comparison filters the sample out.
bool Apply(BinOp op, double l, double r, bool return_bool, double* out) {
  bool cmp = false;
  switch (op) {
    case BinOp::kAdd:
      *out = l + r;
      return true;
    case BinOp::kSub:
      *out = l - r;
      return true;
    case BinOp::kMul:
      *out = l * r;
      return true;
    case BinOp::kDiv:
      *out = l / r;
      return true;
    case BinOp::kMod:
      *out = std::fmod(l, r);
      return true;
    case BinOp::kPow:
      *out = std::pow(l, r);
      return true;
    case BinOp::kEq:
      cmp = l == r;
      break;
    case BinOp::kNe:
      cmp = l != r;
      break;
    case BinOp::kGt:
      cmp = l > r;
      break;
    case BinOp::kLt:
      cmp = l < r;
      break;
    case BinOp::kGe:
      cmp = l >= r;
      break;
    case BinOp::kLe:
      cmp = l <= r;
      break;
    default:
      return false;
  }
  if (return_bool) {
    *out = cmp ? 1 : 0;
    return true;
  }
  *out = l;
  return cmp;
}

bool DropsName(const Node& n) { return !IsComparison(n.op) || n.return_bool; }

Value ScalarScalar(const Node& n, const Value& l, const Value& r) {
  Value out;
  out.type = ValueType::kScalar;
  out.scalar.resize(l.scalar.size());
  for (size_t i = 0; i < l.scalar.size(); ++i) {
    Apply(n.op, l.scalar[i], r.scalar[i], n.return_bool, &out.scalar[i]);
  }
  return out;
}

Result<Value> VectorScalar(const Node& n, Value vec, const std::vector<double>& scalar,
                           bool scalar_left) {
  for (auto& s : vec.vec) {
    for (size_t i = 0; i < s.ok.size(); ++i) {
      if (!s.ok[i]) continue;
      double l = scalar_left ? scalar[i] : s.v[i];
      double r = scalar_left ? s.v[i] : scalar[i];
      double v = 0;
      bool keep = Apply(n.op, l, r, n.return_bool, &v);
      // A filtering comparison keeps the vector's value even when it is on the right.
      if (IsComparison(n.op) && !n.return_bool) v = s.v[i];
      s.ok[i] = keep;
      s.v[i] = v;
    }
  }
  if (DropsName(n)) DropMetricName(&vec.vec);
  std::erase_if(vec.vec, [](const StepSeries& s) {
    for (uint8_t o : s.ok) {
      if (o) return false;
    }
    return true;
  });
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&vec.vec));
  return vec;
}

bool Listed(const VectorMatching& m, std::string_view name) {
  for (const auto& l : m.labels) {
    if (l == name) return true;
  }
  return false;
}

// The labels two series must share to match.
std::string Signature(const VectorMatching& m, const wire::Labels& labels) {
  std::string sig;
  for (const auto& l : labels) {
    bool use = m.on ? Listed(m, l.name) : (!Listed(m, l.name) && l.name != wire::kMetricNameLabel);
    if (!use) continue;
    sig += l.name;
    sig += '\xff';
    sig += l.value;
    sig += '\xff';
  }
  return sig;
}

std::vector<std::string> Signatures(const VectorMatching& m, const std::vector<StepSeries>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& s : v) out.push_back(Signature(m, s.labels));
  return out;
}

Result<Value> SetOp(const Node& n, Value l, Value r, size_t steps) {
  std::vector<std::string> lsig = Signatures(n.matching, l.vec),
                           rsig = Signatures(n.matching, r.vec);
  // For each signature and step: is a series of the other side present?
  auto presence = [steps](const std::vector<StepSeries>& v, const std::vector<std::string>& sigs) {
    std::unordered_map<std::string, std::vector<uint8_t>> p;
    for (size_t s = 0; s < v.size(); ++s) {
      auto& bits = p.try_emplace(sigs[s], steps).first->second;
      for (size_t i = 0; i < steps; ++i) bits[i] |= v[s].ok[i];
    }
    return p;
  };
  Value out;
  const auto& other = n.op == BinOp::kOr ? presence(l.vec, lsig) : presence(r.vec, rsig);
  auto filter = [&](StepSeries* s, const std::string& sig, bool keep_when_present) {
    auto it = other.find(sig);
    for (size_t i = 0; i < steps; ++i) {
      bool present = it != other.end() && it->second[i];
      if (present != keep_when_present) s->ok[i] = 0;
    }
  };
  if (n.op == BinOp::kOr) {
    out.vec = std::move(l.vec);
    for (size_t s = 0; s < r.vec.size(); ++s) {
      filter(&r.vec[s], rsig[s], false);
      out.vec.push_back(std::move(r.vec[s]));
    }
  } else {
    for (size_t s = 0; s < l.vec.size(); ++s) filter(&l.vec[s], lsig[s], n.op == BinOp::kAnd);
    out.vec = std::move(l.vec);
  }
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&out.vec));
  return out;
}

wire::Labels ResultLabels(const Node& n, const wire::Labels& lhs) {
  wire::Labels out;
  for (const auto& l : lhs) {
    if (DropsName(n) && l.name == wire::kMetricNameLabel) continue;
    if (n.matching.on ? !Listed(n.matching, l.name) : Listed(n.matching, l.name)) continue;
    out.push_back(l);
  }
  return out;
}

Result<Value> VectorVector(const Node& n, Value l, Value r, size_t steps) {
  std::vector<std::string> lsig = Signatures(n.matching, l.vec),
                           rsig = Signatures(n.matching, r.vec);
  std::unordered_map<std::string, std::vector<size_t>> rhs_by_sig;
  for (size_t s = 0; s < r.vec.size(); ++s) rhs_by_sig[rsig[s]].push_back(s);
  std::unordered_map<std::string, int64_t> lhs_step;  // last step a lhs series of a sig matched
  std::map<std::pair<size_t, size_t>, size_t> out_index;
  Value out;
  for (size_t i = 0; i < steps; ++i) {
    lhs_step.clear();
    for (size_t s = 0; s < l.vec.size(); ++s) {
      if (!l.vec[s].ok[i]) continue;
      auto it = rhs_by_sig.find(lsig[s]);
      if (it == rhs_by_sig.end()) continue;
      size_t match = SIZE_MAX;
      for (size_t rs : it->second) {
        if (!r.vec[rs].ok[i]) continue;
        if (match != SIZE_MAX) {
          return FailedPrecondition(
              "found duplicate series for the match group " +
              wire::LabelsToString(ResultLabels(n, r.vec[rs].labels)) +
              " on the right hand-side of the operation: many-to-many matching "
              "not allowed: matching labels must be unique on one side");
        }
        match = rs;
      }
      if (match == SIZE_MAX) continue;
      if (!lhs_step.emplace(lsig[s], i).second) {
        return FailedPrecondition(
            "multiple matches for labels: many-to-one matching must be explicit "
            "(group_left/group_right)");
      }
      double v = 0;
      if (!Apply(n.op, l.vec[s].v[i], r.vec[match].v[i], n.return_bool, &v)) continue;
      auto [oit, inserted] = out_index.emplace(std::make_pair(s, match), out.vec.size());
      if (inserted) {
        out.vec.push_back({ResultLabels(n, l.vec[s].labels), std::vector<double>(steps),
                           std::vector<uint8_t>(steps)});
      }
      out.vec[oit->second].v[i] = v;
      out.vec[oit->second].ok[i] = 1;
    }
  }
  VIGIL_RETURN_IF_ERROR(MergeSameLabels(&out.vec));
  return out;
}

}  // namespace

Result<Value> EvalBinary(const Node& n, EvalContext* ctx) {
  VIGIL_ASSIGN_OR_RETURN(Value l, Eval(*n.args[0], ctx));
  VIGIL_ASSIGN_OR_RETURN(Value r, Eval(*n.args[1], ctx));
  bool ls = l.type == ValueType::kScalar, rs = r.type == ValueType::kScalar;
  if (ls && rs) return ScalarScalar(n, l, r);
  if (rs) return VectorScalar(n, std::move(l), r.scalar, false);
  if (ls) return VectorScalar(n, std::move(r), l.scalar, true);
  if (IsSetOp(n.op)) return SetOp(n, std::move(l), std::move(r), ctx->n());
  return VectorVector(n, std::move(l), std::move(r), ctx->n());
}

}  // namespace vigil::query::internal
