// The syntax tree of Vigil's PromQL subset (docs/query-api.md lists what is
// supported). One node type with a kind tag keeps the parser and evaluator
// small; only the fields of a node's kind are meaningful.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/tsdb/db.h"

namespace vigil::query {

enum class ValueType { kScalar, kVector, kMatrix, kString };
const char* ValueTypeName(ValueType t);  // "scalar", "vector", "matrix", "string"

enum class BinOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kEq,
  kNe,
  kGt,
  kLt,
  kGe,
  kLe,
  kAnd,
  kOr,
  kUnless,
};
const char* BinOpName(BinOp op);
bool IsComparison(BinOp op);
bool IsSetOp(BinOp op);

enum class NodeKind {
  kNumber,          // number
  kString,          // str
  kVectorSelector,  // matchers, offset_ms
  kMatrixSelector,  // matchers, offset_ms, range_ms
  kCall,            // name, args
  kAggregate,       // name, grouping/without, args = [param,] expr
  kBinary,          // op, return_bool, matching, args = lhs, rhs
  kUnaryMinus,      // args = operand
  kParen,           // args = inner
};

// Which side of a vector/vector operation may have several series per match
// group: neither (one-to-one), the left (group_left) or the right
// (group_right); the other side is the "one" side.
enum class MatchCard { kOneToOne, kManyToOne, kOneToMany };

// on(...)/ignoring(...) and group_left(...)/group_right(...) of a binary
// operation between two vectors.
struct VectorMatching {
  bool on = false;  // false: ignoring(labels) (the default, with no labels)
  std::vector<std::string> labels;
  MatchCard card = MatchCard::kOneToOne;
  // group_left(...)/group_right(...): labels copied from the "one" side.
  std::vector<std::string> include;
};

struct Node {
  NodeKind kind = NodeKind::kNumber;
  size_t pos = 0;  // byte offset in the query, for messages

  double number = 0;
  std::string str;   // string literal; metric name of a selector
  std::string name;  // function or aggregation name
  std::vector<tsdb::Matcher> matchers;
  int64_t offset_ms = 0;
  int64_t range_ms = 0;

  BinOp op = BinOp::kAdd;
  bool return_bool = false;
  VectorMatching matching;

  std::vector<std::string> grouping;
  bool without = false;

  std::vector<std::unique_ptr<Node>> args;

  ValueType type() const;
};

using NodePtr = std::unique_ptr<Node>;

// Debug rendering (tests check precedence with it): binary nodes are fully
// parenthesized, e.g. "(a + (b * c))".
std::string NodeToString(const Node& n);

}  // namespace vigil::query
