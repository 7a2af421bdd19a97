// Lexer and parser: precedence, modifiers, errors with positions, and
// precise messages for PromQL that Vigil does not evaluate.
#include "query/parser.h"

#include <gtest/gtest.h>

namespace vigil::query {
namespace {

std::string P(std::string_view q) {
  auto r = ParseExpr(q);
  return r.ok() ? NodeToString(**r) : "ERROR " + r.status().message();
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(P("1 + 2 * 3"), "(1 + (2 * 3))");
  EXPECT_EQ(P("(1 + 2) * 3"), "((1 + 2) * 3)");
  EXPECT_EQ(P("2 ^ 3 ^ 2"), "(2 ^ (3 ^ 2))");  // right-associative
  EXPECT_EQ(P("1 - 2 - 3"), "((1 - 2) - 3)");
  EXPECT_EQ(P("-a ^ 2"), "-(a{} ^ 2)");
  EXPECT_EQ(P("-a * 2"), "(-a{} * 2)");
  EXPECT_EQ(P("-2"), "-2");
  EXPECT_EQ(P("a or b and c unless d"), "(a{} or ((b{} and c{}) unless d{}))");
  EXPECT_EQ(P("a > bool 1 + 2"), "(a{} > bool (1 + 2))");
  EXPECT_EQ(P("a / on(x, y) b"), "(a{} / on(x,y) b{})");
  EXPECT_EQ(P("a * ignoring(x) b"), "(a{} * ignoring(x) b{})");
}

TEST(ParserTest, SelectorsAndCalls) {
  EXPECT_EQ(P("up{job=\"a\",x!=\"b\",y=~'c.*',z!~`d`}"),
            "up{job=\"a\",x!=\"b\",y=~\"c.*\",z!~\"d\"}");
  EXPECT_EQ(P("rate(x[5m] offset 1h)"), "rate(x{}[300000ms] offset 3600000ms)");
  EXPECT_EQ(P("sum by (a) (x)"), "sum by(a)(x{})");
  EXPECT_EQ(P("sum(x) without (a)"), "sum without(a)(x{})");
  EXPECT_EQ(P("topk(3, x)"), "topk(3, x{})");
  EXPECT_EQ(P("quantile_over_time(0.9, x[1m])"), "quantile_over_time(0.9, x{}[60000ms])");
  EXPECT_EQ(P("{__name__=~\"a.*\"}"), "{__name__=~\"a.*\"}");
  EXPECT_EQ(P("0x10 + 1e2 + .5 + Inf"), "(((16 + 100) + 0.5) + inf)");
}

TEST(ParserTest, ErrorsCarryPositions) {
  EXPECT_EQ(
      P("sum(x"),
      "ERROR 1:6: parse error: unexpected end of input in argument list, expected \",\" or \")\"");
  EXPECT_EQ(P("x{a=1}"),
            "ERROR 1:5: parse error: unexpected \"1\" in label matching, expected string");
  EXPECT_EQ(P("1 > 2"),
            "ERROR 1:3: parse error: comparisons between scalars must use BOOL modifier");
  EXPECT_EQ(P("{}"),
            "ERROR 1:1: parse error: vector selector must contain at least one non-empty matcher");
  EXPECT_EQ(P("rate(x)"),
            "ERROR 1:6: parse error: expected type range vector in call to function \"rate\", got "
            "instant vector");
  EXPECT_EQ(P("x and 1"),
            "ERROR 1:1: parse error: set operator \"and\" not allowed in binary scalar expression");
  EXPECT_EQ(P("a + b[5m]"),
            "ERROR 1:5: parse error: binary expression must contain only scalar and instant vector "
            "types");
  EXPECT_EQ(P("x * bool y"),
            "ERROR 1:3: parse error: bool modifier can only be used on comparison operators");
  EXPECT_EQ(P("foo(x)"), "ERROR 1:1: parse error: unknown function with name \"foo\"");
  EXPECT_EQ(P(""), "ERROR 1:1: parse error: no expression found in input");
  EXPECT_EQ(P("x{a=~\"(\"}"), P("x{a=~\"(\"}"));
  EXPECT_NE(P("x{a=~\"(\"}").find("invalid regular expression"), std::string::npos);
  EXPECT_EQ(P("a\n + )"), "ERROR 2:4: parse error: unexpected \")\"");
}

TEST(ParserTest, ScalarAndVectorConversions) {
  EXPECT_EQ(P("time()"), "time()");
  EXPECT_EQ(P("vector(time())"), "vector(time())");
  EXPECT_EQ(P("scalar(sum(x)) * 2"), "(scalar(sum(x{})) * 2)");
  EXPECT_EQ(P("sort_desc(timestamp(x))"), "sort_desc(timestamp(x{}))");
  // time() and scalar() are scalars: comparing them needs bool, as in Prometheus.
  EXPECT_EQ(P("time() > 1"),
            "ERROR 1:8: parse error: comparisons between scalars must use BOOL modifier");
  EXPECT_EQ(P("scalar(x) > bool time()"), "(scalar(x{}) > bool time())");
  EXPECT_EQ(P("time(1)"),
            "ERROR 1:1: parse error: expected 0 argument(s) in call to \"time\", got 1");
  EXPECT_EQ(P("sort()"),
            "ERROR 1:1: parse error: expected 1 argument(s) in call to \"sort\", got 0");
  EXPECT_EQ(P("vector(x)"),
            "ERROR 1:8: parse error: expected type scalar in call to function \"vector\", got "
            "instant vector");
  EXPECT_EQ(P("scalar(1)"),
            "ERROR 1:8: parse error: expected type instant vector in call to function \"scalar\", "
            "got scalar");
  EXPECT_EQ(P("timestamp(x[5m])"),
            "ERROR 1:11: parse error: expected type instant vector in call to function "
            "\"timestamp\", got range vector");
  EXPECT_EQ(P("sort_desc(x, y)"),
            "ERROR 1:1: parse error: expected 1 argument(s) in call to \"sort_desc\", got 2");
  EXPECT_EQ(P("label_replace(x, \"a\", \"$1\", \"b\", \"(.*)\")"),
            "label_replace(x{}, \"a\", \"$1\", \"b\", \"(.*)\")");
  EXPECT_EQ(P("label_replace(x, \"a\", \"$1\", \"b\")"),
            "ERROR 1:1: parse error: expected 5 argument(s) in call to \"label_replace\", got 4");
  EXPECT_EQ(P("label_replace(x, \"a\", 1, \"b\", \"c\")"),
            "ERROR 1:23: parse error: expected type string in call to function \"label_replace\", "
            "got scalar");
  // A range query needs a scalar or an instant vector; time() is one.
  EXPECT_EQ(ParseExpr("time()").value()->type(), ValueType::kScalar);
  EXPECT_EQ(ParseExpr("vector(1)").value()->type(), ValueType::kVector);
}

TEST(ParserTest, UnsupportedIsNamed) {
  EXPECT_NE(
      P("histogram_quantile(0.9, x)").find("histogram_quantile is not supported by Vigil yet"),
      std::string::npos);
  EXPECT_NE(P("rate(x[5m:1m])").find("subqueries are not supported"), std::string::npos);
  EXPECT_NE(P("x @ 100").find("the @ modifier is not supported"), std::string::npos);
  EXPECT_NE(P("stddev(x)").find("stddev is not supported by Vigil yet"), std::string::npos);
  EXPECT_NE(
      P("label_join(x, \"a\", \",\", \"b\")").find("label_join is not supported by Vigil yet"),
      std::string::npos);
}

TEST(ParserTest, NewFunctions) {
  EXPECT_EQ(P("predict_linear(x[1h], 4 * 3600)"), "predict_linear(x{}[3600000ms], (4 * 3600))");
  EXPECT_EQ(P("clamp(x, 0, 1)"), "clamp(x{}, 0, 1)");
  EXPECT_EQ(P("stddev_over_time(x[5m]) + stdvar_over_time(x[5m]) + present_over_time(x[5m])"),
            "((stddev_over_time(x{}[300000ms]) + stdvar_over_time(x{}[300000ms])) + "
            "present_over_time(x{}[300000ms]))");
  EXPECT_EQ(P("predict_linear(a[5m])"),
            "ERROR 1:1: parse error: expected 2 argument(s) in call to \"predict_linear\", got 1");
  EXPECT_EQ(P("predict_linear(a, 5)"),
            "ERROR 1:16: parse error: expected type range vector in call to function "
            "\"predict_linear\", got instant vector");
  EXPECT_EQ(P("clamp(a, 1)"),
            "ERROR 1:1: parse error: expected 3 argument(s) in call to \"clamp\", got 2");
  EXPECT_EQ(P("clamp(a[5m], 1, 2)"),
            "ERROR 1:7: parse error: expected type instant vector in call to function \"clamp\", "
            "got range vector");
  EXPECT_EQ(P("present_over_time(a)"),
            "ERROR 1:19: parse error: expected type range vector in call to function "
            "\"present_over_time\", got instant vector");
  EXPECT_EQ(
      P("stdvar_over_time(a[5m], 1)"),
      "ERROR 1:1: parse error: expected 1 argument(s) in call to \"stdvar_over_time\", got 2");
}

// group_left/group_right after on(...)/ignoring(...), with Prometheus 2.42's
// messages and positions (checked with promtool check rules).
TEST(ParserTest, GroupModifiers) {
  EXPECT_EQ(P("a * on(x) group_left b"), "(a{} * on(x) group_left() b{})");
  EXPECT_EQ(P("a * on(x) group_left(y, z,) b"), "(a{} * on(x) group_left(y,z) b{})");
  EXPECT_EQ(P("a > bool ignoring(x) group_right(y) b"),
            "(a{} > bool ignoring(x) group_right(y) b{})");
  EXPECT_EQ(P("a * on(x) group_left (y) (b)"), "(a{} * on(x) group_left(y) b{})");
  EXPECT_EQ(P("a * on(x) group_left y"), "(a{} * on(x) group_left() y{})");
  EXPECT_EQ(P("a * ignoring(x) group_left(x) b"), "(a{} * ignoring(x) group_left(x) b{})");
  EXPECT_EQ(P("a * on() group_left 2"), "(a{} * on() group_left() 2)");  // as Prometheus
  EXPECT_EQ(P("2 * on() a"), "(2 * on() a{})");
  EXPECT_EQ(P("a * group_left b"), "ERROR 1:5: parse error: unexpected <group_left>");
  EXPECT_EQ(P("a * on(x) group_left(x) b"),
            "ERROR 1:3: parse error: label \"x\" must not occur in ON and GROUP clause at once");
  EXPECT_EQ(P("a and on(x) group_left(x) b"),
            "ERROR 1:3: parse error: label \"x\" must not occur in ON and GROUP clause at once");
  EXPECT_EQ(P("a and on(x) group_left b"),
            "ERROR 1:1: parse error: no grouping allowed for \"and\" operation");
  EXPECT_EQ(P("a + on(y) group_right(z) b or ignoring(x) group_left c"),
            "ERROR 1:1: parse error: no grouping allowed for \"or\" operation");
  EXPECT_EQ(P("a * on(x) group_left(y) 2"),
            "ERROR 1:1: parse error: vector matching only allowed between instant vectors");
  EXPECT_EQ(P("a and on(x) group_left 1"),
            "ERROR 1:1: parse error: vector matching only allowed between instant vectors");
  EXPECT_EQ(P("x * bool on(y) group_left z"),
            "ERROR 1:3: parse error: bool modifier can only be used on comparison operators");
  EXPECT_EQ(P("a * on(x) group_left"),
            "ERROR 1:21: parse error: unexpected end of input in grouping opts, expected \"(\"");
  EXPECT_EQ(P("a * on(x) group_left on(y) b"),
            "ERROR 1:22: parse error: unexpected <on> in grouping opts, expected \"(\"");
  EXPECT_EQ(P("a * on(x) group_left(y) bool b"), "ERROR 1:25: parse error: unexpected <bool>");
}

TEST(ParserTest, Durations) {
  EXPECT_EQ(*ParseDurationMs("1h30m"), 5'400'000);
  EXPECT_EQ(*ParseDurationMs("500ms"), 500);
  EXPECT_EQ(*ParseDurationMs("1d"), 86'400'000);
  EXPECT_FALSE(ParseDurationMs("30m1h").ok());
  EXPECT_FALSE(ParseDurationMs("5").ok());
}

}  // namespace
}  // namespace vigil::query
