#include "query/ast.h"

#include <charconv>

#include "query/functions.h"

namespace vigil::query {

const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kVector:
      return "vector";
    case ValueType::kMatrix:
      return "matrix";
    case ValueType::kString:
      return "string";
  }
  return "?";
}

const char* BinOpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "+";
    case BinOp::kSub:
      return "-";
    case BinOp::kMul:
      return "*";
    case BinOp::kDiv:
      return "/";
    case BinOp::kMod:
      return "%";
    case BinOp::kPow:
      return "^";
    case BinOp::kEq:
      return "==";
    case BinOp::kNe:
      return "!=";
    case BinOp::kGt:
      return ">";
    case BinOp::kLt:
      return "<";
    case BinOp::kGe:
      return ">=";
    case BinOp::kLe:
      return "<=";
    case BinOp::kAnd:
      return "and";
    case BinOp::kOr:
      return "or";
    case BinOp::kUnless:
      return "unless";
  }
  return "?";
}

bool IsComparison(BinOp op) { return op >= BinOp::kEq && op <= BinOp::kLe; }
bool IsSetOp(BinOp op) { return op >= BinOp::kAnd; }

ValueType Node::type() const {
  switch (kind) {
    case NodeKind::kNumber:
      return ValueType::kScalar;
    case NodeKind::kString:
      return ValueType::kString;
    case NodeKind::kVectorSelector:
      return ValueType::kVector;
    case NodeKind::kMatrixSelector:
      return ValueType::kMatrix;
    case NodeKind::kCall: {
      const FunctionInfo* f = FindFunction(name);
      return f != nullptr ? f->return_type : ValueType::kVector;
    }
    case NodeKind::kAggregate:
      return ValueType::kVector;
    case NodeKind::kBinary:
      return args[0]->type() == ValueType::kScalar && args[1]->type() == ValueType::kScalar
                 ? ValueType::kScalar
                 : ValueType::kVector;
    case NodeKind::kUnaryMinus:
    case NodeKind::kParen:
      return args[0]->type();
  }
  return ValueType::kScalar;
}

namespace {

std::string Number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string Selector(const Node& n) {
  std::string s = n.str + "{";
  bool first = true;
  for (const auto& m : n.matchers) {
    if (m.name == wire::kMetricNameLabel && !n.str.empty()) continue;
    if (!first) s += ",";
    first = false;
    static const char* kOps[] = {"=", "!=", "=~", "!~"};
    s += m.name + kOps[static_cast<int>(m.type)] + "\"" + m.value + "\"";
  }
  s += "}";
  if (n.range_ms != 0) s += "[" + std::to_string(n.range_ms) + "ms]";
  if (n.offset_ms != 0) s += " offset " + std::to_string(n.offset_ms) + "ms";
  return s;
}

std::string List(const std::vector<std::string>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s + ")";
}

}  // namespace

std::string NodeToString(const Node& n) {
  switch (n.kind) {
    case NodeKind::kNumber:
      return Number(n.number);
    case NodeKind::kString:
      return "\"" + n.str + "\"";
    case NodeKind::kVectorSelector:
    case NodeKind::kMatrixSelector:
      return Selector(n);
    case NodeKind::kCall:
    case NodeKind::kAggregate: {
      std::string s = n.name;
      if (n.kind == NodeKind::kAggregate && (n.without || !n.grouping.empty())) {
        s += std::string(n.without ? " without" : " by") + List(n.grouping);
      }
      s += "(";
      for (size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + NodeToString(*n.args[i]);
      return s + ")";
    }
    case NodeKind::kBinary: {
      std::string s = "(" + NodeToString(*n.args[0]) + " " + BinOpName(n.op);
      if (n.return_bool) s += " bool";
      if (n.matching.on || !n.matching.labels.empty()) {
        s += std::string(n.matching.on ? " on" : " ignoring") + List(n.matching.labels);
      }
      if (n.matching.card != MatchCard::kOneToOne) {
        bool left = n.matching.card == MatchCard::kManyToOne;
        s += std::string(left ? " group_left" : " group_right") + List(n.matching.include);
      }
      return s + " " + NodeToString(*n.args[1]) + ")";
    }
    case NodeKind::kUnaryMinus:
      return "-" + NodeToString(*n.args[0]);
    case NodeKind::kParen:
      return NodeToString(*n.args[0]);
  }
  return "?";
}

}  // namespace vigil::query
