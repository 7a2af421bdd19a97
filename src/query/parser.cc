#include "query/parser.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "query/functions.h"
#include "query/lexer.h"

namespace vigil::query {
namespace {

// Binary operator precedence, lowest first, as in Prometheus' grammar.
int Precedence(BinOp op) {
  switch (op) {
    case BinOp::kOr:
      return 1;
    case BinOp::kAnd:
    case BinOp::kUnless:
      return 2;
    case BinOp::kEq:
    case BinOp::kNe:
    case BinOp::kGt:
    case BinOp::kLt:
    case BinOp::kGe:
    case BinOp::kLe:
      return 3;
    case BinOp::kAdd:
    case BinOp::kSub:
      return 4;
    case BinOp::kMul:
    case BinOp::kDiv:
    case BinOp::kMod:
      return 5;
    case BinOp::kPow:
      return 6;
  }
  return 0;
}
constexpr int kPowPrecedence = 6;

const std::set<std::string, std::less<>> kAggregators = {
    "sum",  "avg",     "min",    "max",    "count",        "quantile",
    "topk", "bottomk", "stddev", "stdvar", "count_values", "group"};

class Parser {
 public:
  Parser(std::string_view q, std::vector<Token> toks) : q_(q), toks_(std::move(toks)) {}

  Result<NodePtr> Parse() {
    VIGIL_ASSIGN_OR_RETURN(NodePtr n, Expr(1));
    if (Peek().kind != Tok::kEnd) return Unexpected("");
    VIGIL_RETURN_IF_ERROR(CheckTopLevel(*n));
    return n;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(i_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token& Next() { return toks_[std::min(i_++, toks_.size() - 1)]; }
  bool PeekIdent(std::string_view word) const {
    return Peek().kind == Tok::kIdent && Peek().text == word;
  }

  Status Error(size_t pos, const std::string& msg) const {
    return InvalidArgument(PosString(q_, pos) + ": parse error: " + msg);
  }
  Status Unexpected(std::string_view context) const {
    const Token& t = Peek();
    std::string what = t.kind == Tok::kEnd ? "end of input" : "\"" + TokenText(t) + "\"";
    std::string msg = "unexpected " + what;
    if (!context.empty()) msg += " " + std::string(context);
    return Error(t.pos, msg);
  }
  std::string TokenText(const Token& t) const {
    size_t end = Peek(1).pos;
    if (&t == &Peek() && end > t.pos) {
      std::string_view s = q_.substr(t.pos, end - t.pos);
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
      return std::string(s);
    }
    return t.text;
  }
  Status Expect(Tok kind, std::string_view context) {
    if (Peek().kind != kind) return Unexpected(context);
    Next();
    return Status::Ok();
  }

  // Maps the current token to a binary operator, if it is one.
  bool PeekBinOp(BinOp* op) const {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kAdd:
        *op = BinOp::kAdd;
        return true;
      case Tok::kSub:
        *op = BinOp::kSub;
        return true;
      case Tok::kMul:
        *op = BinOp::kMul;
        return true;
      case Tok::kDiv:
        *op = BinOp::kDiv;
        return true;
      case Tok::kMod:
        *op = BinOp::kMod;
        return true;
      case Tok::kPow:
        *op = BinOp::kPow;
        return true;
      case Tok::kEqlEql:
        *op = BinOp::kEq;
        return true;
      case Tok::kNeq:
        *op = BinOp::kNe;
        return true;
      case Tok::kGt:
        *op = BinOp::kGt;
        return true;
      case Tok::kLt:
        *op = BinOp::kLt;
        return true;
      case Tok::kGe:
        *op = BinOp::kGe;
        return true;
      case Tok::kLe:
        *op = BinOp::kLe;
        return true;
      case Tok::kIdent:
        if (t.text == "and") {
          *op = BinOp::kAnd;
          return true;
        }
        if (t.text == "or") {
          *op = BinOp::kOr;
          return true;
        }
        if (t.text == "unless") {
          *op = BinOp::kUnless;
          return true;
        }
        if (t.text == "atan2") return false;
        return false;
      default:
        return false;
    }
  }

  Result<NodePtr> Expr(int min_prec) {
    VIGIL_ASSIGN_OR_RETURN(NodePtr lhs, Unary());
    while (true) {
      BinOp op;
      if (PeekIdent("atan2")) return Error(Peek().pos, "atan2 is not supported by Vigil yet");
      if (!PeekBinOp(&op) || Precedence(op) < min_prec) return lhs;
      const Token& opt = Next();
      auto n = std::make_unique<Node>();
      n->kind = NodeKind::kBinary;
      n->pos = opt.pos;
      n->op = op;
      VIGIL_RETURN_IF_ERROR(Modifiers(n.get()));
      int next_min = op == BinOp::kPow ? Precedence(op) : Precedence(op) + 1;  // ^ is right-assoc
      VIGIL_ASSIGN_OR_RETURN(NodePtr rhs, Expr(next_min));
      n->args.push_back(std::move(lhs));
      n->args.push_back(std::move(rhs));
      VIGIL_RETURN_IF_ERROR(CheckBinary(*n));
      lhs = std::move(n);
    }
  }

  // bool, on(...)/ignoring(...), group_left/right after a binary operator.
  Status Modifiers(Node* n) {
    if (PeekIdent("bool")) {
      if (!IsComparison(n->op))
        return Error(n->pos, "bool modifier can only be used on comparison operators");
      Next();
      n->return_bool = true;
    }
    bool matching = PeekIdent("on") || PeekIdent("ignoring");
    if (matching) {
      n->matching.on = Next().text == "on";
      VIGIL_RETURN_IF_ERROR(LabelList(&n->matching.labels));
    }
    if (!PeekIdent("group_left") && !PeekIdent("group_right")) return Status::Ok();
    // As Prometheus' grammar: group_x only after on(...)/ignoring(...), its
    // label list optional.
    if (!matching) return Error(Peek().pos, "unexpected <" + Peek().text + ">");
    n->matching.card = Next().text == "group_left" ? MatchCard::kManyToOne : MatchCard::kOneToMany;
    if (Peek().kind == Tok::kLParen) return LabelList(&n->matching.include);
    if (Peek().kind == Tok::kEnd || PeekIdent("on") || PeekIdent("ignoring") ||
        PeekIdent("group_left") || PeekIdent("group_right")) {
      std::string what = Peek().kind == Tok::kEnd ? "end of input" : "<" + Peek().text + ">";
      return Error(Peek().pos, "unexpected " + what + " in grouping opts, expected \"(\"");
    }
    return Status::Ok();
  }

  // Where an expression starts (a binary expression's node is at its
  // operator), as Prometheus positions messages about whole expressions.
  static size_t StartPos(const Node& n) {
    return n.kind == NodeKind::kBinary ? StartPos(*n.args[0]) : n.pos;
  }

  // Prometheus' checks of a binary expression, in its order (the first
  // failing one is reported).
  Status CheckBinary(const Node& n) {
    ValueType l = n.args[0]->type(), r = n.args[1]->type();
    bool scalars = l == ValueType::kScalar && r == ValueType::kScalar;
    if (IsComparison(n.op) && scalars && !n.return_bool) {
      return Error(n.pos, "comparisons between scalars must use BOOL modifier");
    }
    const VectorMatching& m = n.matching;
    for (size_t i = 0; m.on && i < m.labels.size(); ++i) {
      if (std::find(m.include.begin(), m.include.end(), m.labels[i]) != m.include.end()) {
        return Error(n.pos,
                     "label \"" + m.labels[i] + "\" must not occur in ON and GROUP clause at once");
      }
    }
    auto bad = [](ValueType t) { return t != ValueType::kScalar && t != ValueType::kVector; };
    for (const auto& arg : n.args) {
      if (bad(arg->type())) {
        return Error(StartPos(*arg),
                     "binary expression must contain only scalar and instant vector types");
      }
    }
    bool any_scalar = l == ValueType::kScalar || r == ValueType::kScalar;
    if (any_scalar && !m.labels.empty()) {
      return Error(StartPos(n), "vector matching only allowed between instant vectors");
    }
    if (!any_scalar && IsSetOp(n.op) && m.card != MatchCard::kOneToOne) {
      return Error(StartPos(n),
                   std::string("no grouping allowed for \"") + BinOpName(n.op) + "\" operation");
    }
    if (IsSetOp(n.op) && any_scalar) {
      return Error(StartPos(n), std::string("set operator \"") + BinOpName(n.op) +
                                    "\" not allowed in binary scalar expression");
    }
    return Status::Ok();
  }

  Status LabelList(std::vector<std::string>* out) {
    VIGIL_RETURN_IF_ERROR(Expect(Tok::kLParen, "in grouping opts, expected \"(\""));
    while (Peek().kind != Tok::kRParen) {
      if (Peek().kind != Tok::kIdent) return Unexpected("in grouping opts, expected label");
      out->push_back(Next().text);
      if (Peek().kind == Tok::kComma) {
        Next();
      } else if (Peek().kind != Tok::kRParen) {
        return Unexpected("in grouping opts, expected \")\" or \",\"");
      }
    }
    Next();
    return Status::Ok();
  }

  Result<NodePtr> Unary() {
    if (Peek().kind == Tok::kSub || Peek().kind == Tok::kAdd) {
      const Token& t = Next();
      bool neg = t.kind == Tok::kSub;
      // Unary minus binds like '*': -a^b is -(a^b), -a*b is (-a)*b.
      VIGIL_ASSIGN_OR_RETURN(NodePtr operand, Expr(kPowPrecedence));
      ValueType ot = operand->type();
      if (ot != ValueType::kScalar && ot != ValueType::kVector) {
        return Error(
            t.pos, "unary expression only allowed on expressions of type scalar or instant vector");
      }
      if (!neg) return operand;
      if (operand->kind == NodeKind::kNumber) {
        operand->number = -operand->number;
        operand->pos = t.pos;
        return operand;
      }
      auto n = std::make_unique<Node>();
      n->kind = NodeKind::kUnaryMinus;
      n->pos = t.pos;
      n->args.push_back(std::move(operand));
      return n;
    }
    VIGIL_ASSIGN_OR_RETURN(NodePtr p, Primary());
    return Postfix(std::move(p));
  }

  Result<NodePtr> Primary() {
    const Token& t = Peek();
    auto n = std::make_unique<Node>();
    n->pos = t.pos;
    switch (t.kind) {
      case Tok::kNumber: {
        n->kind = NodeKind::kNumber;
        VIGIL_ASSIGN_OR_RETURN(n->number, ParseNumber(Next()));
        return n;
      }
      case Tok::kString:
        n->kind = NodeKind::kString;
        n->str = Next().text;
        return n;
      case Tok::kLParen: {
        Next();
        n->kind = NodeKind::kParen;
        VIGIL_ASSIGN_OR_RETURN(NodePtr inner, Expr(1));
        VIGIL_RETURN_IF_ERROR(Expect(Tok::kRParen, "in paren expression"));
        n->args.push_back(std::move(inner));
        return n;
      }
      case Tok::kLBrace:
        n->kind = NodeKind::kVectorSelector;
        VIGIL_RETURN_IF_ERROR(Matchers(n.get()));
        return n;
      case Tok::kIdent:
        return Identifier(std::move(n));
      case Tok::kDuration:
        return Error(t.pos, "unexpected duration \"" + t.text + "\"");
      default:
        return Unexpected("");
    }
  }

  Result<double> ParseNumber(const Token& t) {
    std::string s = t.text;
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "inf") return HUGE_VAL;
    if (s == "nan") return std::nan("");
    char* end = nullptr;
    double v = s.rfind("0x", 0) == 0 ? static_cast<double>(std::strtoull(s.c_str() + 2, &end, 16))
                                     : std::strtod(s.c_str(), &end);
    if (end == nullptr || *end != '\0')
      return Error(t.pos, "bad number or duration syntax: \"" + t.text + "\"");
    return v;
  }

  Result<NodePtr> Identifier(NodePtr n) {
    const Token& t = Next();
    const std::string& word = t.text;
    if (kAggregators.count(word) != 0 &&
        (Peek().kind == Tok::kLParen || PeekIdent("by") || PeekIdent("without"))) {
      return Aggregate(std::move(n), word);
    }
    if (Peek().kind == Tok::kLParen) return Call(std::move(n), word);
    static const std::set<std::string, std::less<>> kKeywords = {
        "by",         "without",     "on",  "ignoring", "bool",  "offset",
        "group_left", "group_right", "and", "or",       "unless"};
    if (kKeywords.count(word) != 0) return Error(t.pos, "unexpected <" + word + ">");
    n->kind = NodeKind::kVectorSelector;
    n->str = word;
    if (Peek().kind == Tok::kLBrace) VIGIL_RETURN_IF_ERROR(Matchers(n.get()));
    n->matchers.insert(
        n->matchers.begin(),
        tsdb::Matcher{tsdb::MatchType::kEqual, std::string(wire::kMetricNameLabel), word});
    return n;
  }

  Status Matchers(Node* n) {
    VIGIL_RETURN_IF_ERROR(Expect(Tok::kLBrace, ""));
    while (Peek().kind != Tok::kRBrace) {
      if (Peek().kind != Tok::kIdent) return Unexpected("in label matching, expected label");
      tsdb::Matcher m;
      m.name = Next().text;
      switch (Peek().kind) {
        case Tok::kAssign:
          m.type = tsdb::MatchType::kEqual;
          break;
        case Tok::kNeq:
          m.type = tsdb::MatchType::kNotEqual;
          break;
        case Tok::kRegex:
          m.type = tsdb::MatchType::kRegex;
          break;
        case Tok::kNotRegex:
          m.type = tsdb::MatchType::kNotRegex;
          break;
        default:
          return Unexpected("in label matching, expected label matching operator");
      }
      Next();
      if (Peek().kind != Tok::kString) return Unexpected("in label matching, expected string");
      m.value = Next().text;
      VIGIL_RETURN_IF_ERROR(CheckRegex(m));
      n->matchers.push_back(std::move(m));
      if (Peek().kind == Tok::kComma) {
        Next();
      } else if (Peek().kind != Tok::kRBrace) {
        return Unexpected("in label matching, expected \",\" or \"}\"");
      }
    }
    Next();
    bool has_name = !n->str.empty();
    for (const auto& m : n->matchers) {
      if (m.name == wire::kMetricNameLabel && has_name) {
        return Error(
            n->pos, "metric name must not be set twice: \"" + n->str + "\" or \"" + m.value + "\"");
      }
    }
    if (!has_name && !HasNonEmptyMatcher(*n)) {
      return Error(n->pos, "vector selector must contain at least one non-empty matcher");
    }
    return Status::Ok();
  }

  Status CheckRegex(const tsdb::Matcher& m) {
    if (m.type != tsdb::MatchType::kRegex && m.type != tsdb::MatchType::kNotRegex)
      return Status::Ok();
    RE2 re("^(?:" + m.value + ")$", RE2::Quiet);
    if (!re.ok())
      return Error(Peek().pos, "invalid regular expression \"" + m.value + "\": " + re.error());
    return Status::Ok();
  }

  // Whether some matcher rejects the empty string (Prometheus' rule that a
  // selector must not match every series).
  static bool HasNonEmptyMatcher(const Node& n) {
    for (const auto& m : n.matchers) {
      switch (m.type) {
        case tsdb::MatchType::kEqual:
          if (!m.value.empty()) return true;
          break;
        case tsdb::MatchType::kNotEqual:
          if (m.value.empty()) return true;
          break;
        case tsdb::MatchType::kRegex:
          if (!RE2::FullMatch("", m.value)) return true;
          break;
        case tsdb::MatchType::kNotRegex:
          if (RE2::FullMatch("", m.value)) return true;
          break;
      }
    }
    return false;
  }

  // A selector, optionally with [range], offset; subqueries and @ are rejected.
  Result<NodePtr> Postfix(NodePtr n) {
    while (true) {
      if (Peek().kind == Tok::kLBracket) {
        size_t pos = Next().pos;
        if (n->kind != NodeKind::kVectorSelector || n->range_ms != 0) {
          // foo[5m][1m] or (expr)[5m:1m]: only subqueries take a range here.
          return Error(pos, "subqueries are not supported by Vigil yet");
        }
        if (Peek().kind != Tok::kDuration)
          return Unexpected("in range selector, expected duration");
        VIGIL_ASSIGN_OR_RETURN(int64_t r, ParseDurationMs(Next().text));
        if (Peek().kind == Tok::kColon || (Peek().kind == Tok::kIdent && Peek().text[0] == ':')) {
          return Error(pos, "subqueries are not supported by Vigil yet");
        }
        VIGIL_RETURN_IF_ERROR(Expect(Tok::kRBracket, "in range selector, expected \"]\""));
        if (r <= 0) return Error(pos, "range must be positive");
        n->kind = NodeKind::kMatrixSelector;
        n->range_ms = r;
      } else if (PeekIdent("offset")) {
        size_t pos = Next().pos;
        if (n->kind != NodeKind::kVectorSelector && n->kind != NodeKind::kMatrixSelector) {
          return Error(pos,
                       "offset modifier must be preceded by an instant vector selector or range "
                       "vector selector");
        }
        bool neg = false;
        if (Peek().kind == Tok::kSub) {
          Next();
          neg = true;
        }
        if (Peek().kind != Tok::kDuration) return Unexpected("in offset, expected duration");
        VIGIL_ASSIGN_OR_RETURN(int64_t off, ParseDurationMs(Next().text));
        n->offset_ms = neg ? -off : off;
      } else if (Peek().kind == Tok::kAt) {
        return Error(Peek().pos, "the @ modifier is not supported by Vigil yet");
      } else {
        return n;
      }
    }
  }

  Result<NodePtr> Aggregate(NodePtr n, const std::string& name) {
    n->kind = NodeKind::kAggregate;
    n->name = name;
    if (name == "stddev" || name == "stdvar" || name == "count_values" || name == "group") {
      return Error(n->pos, name + " is not supported by Vigil yet");
    }
    auto grouping = [&]() -> Status {
      if (PeekIdent("by") || PeekIdent("without")) {
        n->without = Next().text == "without";
        return LabelList(&n->grouping);
      }
      return Status::Ok();
    };
    VIGIL_RETURN_IF_ERROR(grouping());
    VIGIL_RETURN_IF_ERROR(Expect(Tok::kLParen, "in aggregation, expected \"(\""));
    VIGIL_RETURN_IF_ERROR(Args(n.get()));
    if (n->grouping.empty() && !n->without) VIGIL_RETURN_IF_ERROR(grouping());
    bool has_param = name == "quantile" || name == "topk" || name == "bottomk";
    size_t want = has_param ? 2 : 1;
    if (n->args.size() != want) {
      return Error(n->pos,
                   "wrong number of arguments for aggregate expression provided, expected " +
                       std::to_string(want) + ", got " + std::to_string(n->args.size()));
    }
    if (has_param && n->args[0]->type() != ValueType::kScalar) {
      return Error(n->args[0]->pos, "expected type scalar in aggregation parameter, got " +
                                        std::string(ValueTypeName(n->args[0]->type())));
    }
    if (n->args.back()->type() != ValueType::kVector) {
      return Error(n->args.back()->pos,
                   "expected type instant vector in aggregation expression, got " +
                       std::string(ValueTypeName(n->args.back()->type())));
    }
    return n;
  }

  Status Args(Node* n) {
    while (Peek().kind != Tok::kRParen) {
      VIGIL_ASSIGN_OR_RETURN(NodePtr a, Expr(1));
      n->args.push_back(std::move(a));
      if (Peek().kind == Tok::kComma) {
        Next();
      } else if (Peek().kind != Tok::kRParen) {
        return Unexpected("in argument list, expected \",\" or \")\"");
      }
    }
    Next();
    return Status::Ok();
  }

  Result<NodePtr> Call(NodePtr n, const std::string& name) {
    n->kind = NodeKind::kCall;
    n->name = name;
    const FunctionInfo* f = FindFunction(name);
    if (f == nullptr) {
      if (IsKnownUnsupportedFunction(name))
        return Error(n->pos, name + " is not supported by Vigil yet");
      return Error(n->pos, "unknown function with name \"" + name + "\"");
    }
    Next();  // (
    VIGIL_RETURN_IF_ERROR(Args(n.get()));
    if (n->args.size() != f->arg_types.size()) {
      return Error(n->pos, "expected " + std::to_string(f->arg_types.size()) +
                               " argument(s) in call to \"" + name + "\", got " +
                               std::to_string(n->args.size()));
    }
    for (size_t i = 0; i < n->args.size(); ++i) {
      ValueType got = n->args[i]->type();
      if (got != f->arg_types[i]) {
        return Error(n->args[i]->pos,
                     "expected type " + std::string(TypeLongName(f->arg_types[i])) +
                         " in call to function \"" + name + "\", got " + TypeLongName(got));
      }
    }
    return n;
  }

  static const char* TypeLongName(ValueType t) {
    switch (t) {
      case ValueType::kScalar:
        return "scalar";
      case ValueType::kVector:
        return "instant vector";
      case ValueType::kMatrix:
        return "range vector";
      case ValueType::kString:
        return "string";
    }
    return "?";
  }

  Status CheckTopLevel(const Node& n) {
    (void)n;
    return Status::Ok();
  }

  std::string_view q_;
  std::vector<Token> toks_;
  size_t i_ = 0;
};

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view s) {
  if (s.empty()) return InvalidArgument("empty duration string");
  int64_t total = 0;
  size_t i = 0;
  int last_rank = 100;
  while (i < s.size()) {
    size_t d = i;
    int64_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (n > (INT64_MAX - 9) / 10)
        return InvalidArgument("duration out of range: \"" + std::string(s) + "\"");
      n = n * 10 + (s[i++] - '0');
    }
    if (i == d) return InvalidArgument("not a valid duration string: \"" + std::string(s) + "\"");
    int64_t unit = 0;
    int rank = 0;
    if (s.substr(i, 2) == "ms") {
      unit = 1, rank = 0, i += 2;
    } else if (i < s.size()) {
      switch (s[i]) {
        case 's':
          unit = 1000, rank = 1;
          break;
        case 'm':
          unit = 60'000, rank = 2;
          break;
        case 'h':
          unit = 3'600'000, rank = 3;
          break;
        case 'd':
          unit = 86'400'000, rank = 4;
          break;
        case 'w':
          unit = 7 * 86'400'000LL, rank = 5;
          break;
        case 'y':
          unit = 365 * 86'400'000LL, rank = 6;
          break;
        default:
          break;
      }
      if (unit != 0) ++i;
    }
    // Units must appear once each, largest first ("1h30m", not "30m1h").
    if (unit == 0 || rank >= last_rank) {
      return InvalidArgument("not a valid duration string: \"" + std::string(s) + "\"");
    }
    last_rank = rank;
    if (n > INT64_MAX / unit || total > INT64_MAX - n * unit) {
      return InvalidArgument("duration out of range: \"" + std::string(s) + "\"");
    }
    total += n * unit;
  }
  return total;
}

Result<NodePtr> ParseExpr(std::string_view query) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<Token> toks, Lex(query));
  if (toks.size() == 1) return InvalidArgument("1:1: parse error: no expression found in input");
  Parser p(query, std::move(toks));
  return p.Parse();
}

std::string PromQLString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace vigil::query
