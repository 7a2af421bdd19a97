// Binary operators: arithmetic, comparisons (filtering or with bool), set
// operators, with vector matching on(...)/ignoring(...), one-to-one or
// many-to-one/one-to-many (group_left/group_right). Semantics of Prometheus
// 2.42's VectorBinop/VectorscalarBinop, evaluated per step over series whose
// match signatures are computed once.
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

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

bool Listed(const std::vector<std::string>& names, std::string_view name) {
  for (const auto& l : names) {
    if (l == name) return true;
  }
  return false;
}

// Whether a label takes part in matching: listed in on(...), or not listed
// in ignoring(...) and not the metric name.
bool Matches(const VectorMatching& m, std::string_view name) {
  return m.on ? Listed(m.labels, name) : !Listed(m.labels, name) && name != wire::kMetricNameLabel;
}

// The labels two series must share to match.
std::string Signature(const VectorMatching& m, const wire::Labels& labels) {
  std::string sig;
  for (const auto& l : labels) {
    if (!Matches(m, l.name)) continue;
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

// Prometheus' resultMetric: the labels of the "many" side (the left one in
// one-to-one matching), without the metric name for arithmetic, only the
// on(...) labels or without the ignoring(...) ones in one-to-one matching,
// with group_x(...)'s labels taken from the "one" side (removed where it has
// none), and without the metric name for bool comparisons.
wire::Labels ResultLabels(const Node& n, const wire::Labels& many, const wire::Labels& one) {
  const VectorMatching& m = n.matching;
  wire::Labels out;
  for (const auto& l : many) {
    if (!IsComparison(n.op) && l.name == wire::kMetricNameLabel) continue;
    if (m.card == MatchCard::kOneToOne && m.on != Listed(m.labels, l.name)) continue;
    if (Listed(m.include, l.name)) continue;
    out.push_back(l);
  }
  for (const auto& l : one) {
    if (Listed(m.include, l.name)) out.push_back(l);
  }
  if (n.return_bool) {
    std::erase_if(out, [](const wire::Label& l) { return l.name == wire::kMetricNameLabel; });
  }
  wire::NormalizeLabels(&out);
  return out;
}

// Prometheus' labels.MatchLabels: the labels that take part in matching.
wire::Labels MatchLabels(const VectorMatching& m, const wire::Labels& labels) {
  wire::Labels out;
  for (const auto& l : labels) {
    if (Matches(m, l.name)) out.push_back(l);
  }
  return out;
}

// Two series of the "one" side in one match group at a step.
Status DuplicateSeriesError(const VectorMatching& m, bool one_is_left, const wire::Labels& dup,
                            const wire::Labels& first) {
  return FailedPrecondition(
      "found duplicate series for the match group " +
      wire::LabelsToString(MatchLabels(m, dup), ", ") + " on the " +
      (one_is_left ? "left" : "right") + " hand-side of the operation: [" +
      wire::LabelsToString(dup, ", ") + ", " + wire::LabelsToString(first, ", ") +
      "];many-to-many matching not allowed: matching labels must be unique on one side");
}

bool AnyAt(const std::vector<StepSeries>& v, size_t i) {
  for (const auto& s : v) {
    if (s.ok[i]) return true;
  }
  return false;
}

// Arithmetic and comparisons between two vectors, as Prometheus'
// VectorBinop step by step: group_right swaps the sides (the right one is
// then the "many" side) and swaps the operands back for the operation. The
// "one" side must have at most one series per match group at a step (even
// one that nothing on the other side matches); in one-to-one matching a
// group may match once per step, and in many-to-one matching each of its
// results must have its own labels. Errors are Prometheus' messages.
Result<Value> VectorVector(const Node& n, Value l, Value r, size_t steps) {
  const VectorMatching& m = n.matching;
  bool swapped = m.card == MatchCard::kOneToMany;
  const std::vector<StepSeries>& many = swapped ? r.vec : l.vec;
  const std::vector<StepSeries>& one = swapped ? l.vec : r.vec;
  constexpr size_t kNone = SIZE_MAX;
  // Match groups (by signature) of the "one" side, and each series' group.
  std::unordered_map<std::string, size_t> group_of_sig;
  std::vector<size_t> one_group(one.size());
  for (size_t s = 0; s < one.size(); ++s) {
    one_group[s] =
        group_of_sig.try_emplace(Signature(m, one[s].labels), group_of_sig.size()).first->second;
  }
  std::vector<size_t> many_group(many.size(), kNone);
  for (size_t s = 0; s < many.size(); ++s) {
    auto it = group_of_sig.find(Signature(m, many[s].labels));
    if (it != group_of_sig.end()) many_group[s] = it->second;
  }
  // Per group: its "one" series at the current step, the step that was set
  // at, and the last step a "many" series matched it (one-to-one).
  std::vector<size_t> partner(group_of_sig.size());
  std::vector<size_t> partner_step(group_of_sig.size(), kNone);
  std::vector<size_t> matched_step(group_of_sig.size(), kNone);
  // Output series by labels; per "many" series its last partner and output.
  std::map<wire::Labels, size_t> out_of_labels;
  std::vector<size_t> last_partner(many.size(), kNone), last_out(many.size());
  std::vector<size_t> written_step, written_group;  // per output series
  Value out;
  for (size_t i = 0; i < steps; ++i) {
    if (!AnyAt(many, i) || !AnyAt(one, i)) continue;  // nothing can match
    for (size_t s = 0; s < one.size(); ++s) {
      if (!one[s].ok[i]) continue;
      size_t g = one_group[s];
      if (partner_step[g] == i) {
        return DuplicateSeriesError(m, swapped, one[s].labels, one[partner[g]].labels);
      }
      partner_step[g] = i;
      partner[g] = s;
    }
    size_t same_labelset = kNone;  // an output series written twice at this step
    for (size_t s = 0; s < many.size(); ++s) {
      size_t g = many_group[s];
      if (!many[s].ok[i] || g == kNone || partner_step[g] != i) continue;
      size_t o = partner[g];
      double lv = many[s].v[i], rv = one[o].v[i];
      if (swapped) std::swap(lv, rv);
      double v = 0;
      if (!Apply(n.op, lv, rv, n.return_bool, &v)) continue;
      if (last_partner[s] != o) {
        last_partner[s] = o;
        auto [it, added] = out_of_labels.try_emplace(ResultLabels(n, many[s].labels, one[o].labels),
                                                     out.vec.size());
        if (added) {
          out.vec.push_back({it->first, std::vector<double>(steps), std::vector<uint8_t>(steps)});
          written_step.push_back(kNone);
          written_group.push_back(kNone);
        }
        last_out[s] = it->second;
      }
      size_t k = last_out[s];
      if (m.card == MatchCard::kOneToOne) {
        if (matched_step[g] == i) {
          return FailedPrecondition(
              "multiple matches for labels: many-to-one matching must be explicit "
              "(group_left/group_right)");
        }
        matched_step[g] = i;
      }
      if (written_step[k] == i) {
        if (written_group[k] == g) {
          return FailedPrecondition(
              "multiple matches for labels: grouping labels must ensure unique matches");
        }
        if (same_labelset == kNone) same_labelset = k;
      }
      written_step[k] = i;
      written_group[k] = g;
      out.vec[k].v[i] = v;
      out.vec[k].ok[i] = 1;
    }
    // Results of different match groups with the same labels: Prometheus
    // checks each step's whole vector once the operation is done.
    if (same_labelset != kNone) return SameLabelsetError(out.vec[same_labelset].labels);
  }
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
