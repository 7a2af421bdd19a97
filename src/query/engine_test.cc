// The evaluator on a small store: selectors and staleness, range queries, and
// each function and operator family (exact agreement with Prometheus on many
// more cases is tests/integration/promql_golden_test.cc).
#include "query/engine.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/temp_dir.h"
#include "store/tsdb/stale.h"

namespace vigil::query {
namespace {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = dir_;
    o.retention_ms = 100LL * 365 * 86'400'000;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok());
    db_ = std::move(db).value();
    wire::MetricBatch b;
    // c: counter +6 per minute, reset at 10m; g{i}: gauges.
    wire::Series c{{{"__name__", "c"}, {"job", "j"}}, {}};
    for (int i = 0; i <= 20; ++i)
      c.samples.push_back({i * 60'000LL, i < 10 ? 6.0 * i : 6.0 * (i - 10)});
    b.series.push_back(c);
    for (int g = 0; g < 3; ++g) {
      wire::Series s{{{"__name__", "g"}, {"i", std::to_string(g)}}, {}};
      for (int i = 0; i <= 20; ++i) s.samples.push_back({i * 60'000LL, 10.0 * g + i});
      b.series.push_back(s);
    }
    ASSERT_TRUE(db_->Append(b).ok());
    engine_ = std::make_unique<Engine>(db_.get());
  }
  void TearDown() override { (void)db_->Close(); }

  // A series with values[m] at minute m.
  void Add(wire::Labels labels, const std::vector<double>& values) {
    wire::MetricBatch b;
    wire::Series s{std::move(labels), {}};
    for (size_t m = 0; m < values.size(); ++m)
      s.samples.push_back({static_cast<int64_t>(m) * 60'000, values[m]});
    b.series.push_back(std::move(s));
    ASSERT_TRUE(db_->Append(b).ok());
  }

  // "labels=value;..." of an instant query at minute m.
  std::string At(std::string_view q, int64_t m) {
    auto r = engine_->Instant(q, m * 60'000);
    if (!r.ok()) return "ERROR " + r.status().message();
    std::string s;
    for (const auto& x : r->series)
      s += wire::LabelsToString(x.labels) + "=" + FormatValue(x.points[0].v) + ";";
    return s;
  }

  TempDir tmp_;  // outlives db_ (declared first)
  std::string dir_ = tmp_.path();
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, SelectorsAndStaleness) {
  EXPECT_EQ(At("g{i=\"1\"}", 5), "{__name__=\"g\",i=\"1\"}=15;");
  EXPECT_EQ(At("g{i=~\"1|2\"} offset 2m", 5),
            "{__name__=\"g\",i=\"1\"}=13;{__name__=\"g\",i=\"2\"}=23;");
  EXPECT_EQ(At("g{i=\"0\"}", 25), "{__name__=\"g\",i=\"0\"}=20;");  // 5 m lookback
  EXPECT_EQ(At("g{i=\"0\"}", 26), "");
}

// A series that stopped: 98 at 0..4m, a staleness marker at 5m, back at 12m.
// Before the marker it answers for the lookback as always; from the marker
// on it is absent at once, in instant selectors and everything built on
// them, while range functions skip the marker and see only the values.
TEST_F(EngineTest, StalenessMarkersEndASeries) {
  wire::MetricBatch b;
  wire::Series s{{{"__name__", "util"}, {"gpu", "0"}}, {}};
  for (int i = 0; i <= 4; ++i) s.samples.push_back({i * 60'000LL, 98});
  s.samples.push_back({5 * 60'000LL, tsdb::StaleNaN()});
  s.samples.push_back({12 * 60'000LL, 50});
  b.series.push_back(s);
  ASSERT_TRUE(db_->Append(b).ok());

  EXPECT_EQ(At("util", 4), "{__name__=\"util\",gpu=\"0\"}=98;");
  EXPECT_EQ(At("util", 5), "");  // at the marker itself
  EXPECT_EQ(At("util", 8), "");  // within what used to be the lookback
  EXPECT_EQ(At("util offset 2m", 6), "{__name__=\"util\",gpu=\"0\"}=98;");
  EXPECT_EQ(At("util", 12), "{__name__=\"util\",gpu=\"0\"}=50;");  // it came back
  EXPECT_EQ(At("timestamp(util)", 6), "");
  EXPECT_EQ(At("absent(util)", 6), "{}=1;");
  EXPECT_EQ(At("sum(util)", 6), "");
  EXPECT_EQ(At("util > 90", 6), "");
  // Range functions: the marker is not a value.
  EXPECT_EQ(At("count_over_time(util[10m])", 6), "{gpu=\"0\"}=5;");
  EXPECT_EQ(At("last_over_time(util[10m])", 6), "{__name__=\"util\",gpu=\"0\"}=98;");
  EXPECT_EQ(At("max_over_time(util[3m])", 8), "");  // only the marker in range
  EXPECT_EQ(At("count_over_time(util[10m])", 13), "{gpu=\"0\"}=3;");
  // A raw range vector returns values only.
  auto raw = engine_->Instant("util[3m]", 6 * 60'000);
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->series.size(), 1u);
  ASSERT_EQ(raw->series[0].points.size(), 2u);
  EXPECT_EQ(raw->series[0].points.back().t_ms, 4 * 60'000);
  // A range query agrees step by step.
  auto range = engine_->Range("util", 3 * 60'000, 13 * 60'000, 60'000);
  ASSERT_TRUE(range.ok());
  ASSERT_EQ(range->series.size(), 1u);
  std::vector<int64_t> minutes;
  for (const auto& p : range->series[0].points) minutes.push_back(p.t_ms / 60'000);
  EXPECT_EQ(minutes, (std::vector<int64_t>{3, 4, 12, 13}));
}

TEST_F(EngineTest, CounterFunctions) {
  EXPECT_EQ(At("increase(c[5m])", 5), "{job=\"j\"}=30;");
  EXPECT_EQ(At("increase(c[5m])", 13), "{job=\"j\"}=24;");  // 54 -> 0 counts as a reset
  EXPECT_EQ(At("rate(c[5m])", 5), "{job=\"j\"}=0.1;");
  EXPECT_EQ(At("rate((c[5m]))", 5), "{job=\"j\"}=0.1;");
  EXPECT_EQ(At("irate(c[5m])", 5), "{job=\"j\"}=0.1;");
  EXPECT_EQ(At("delta(g{i=\"0\"}[4m])", 10), "{i=\"0\"}=4;");
  EXPECT_EQ(At("deriv(g{i=\"0\"}[4m])", 10), "{i=\"0\"}=0.016666666666666666;");
}

TEST_F(EngineTest, OverTimeAndInstantFunctions) {
  EXPECT_EQ(At("max_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=10;");
  EXPECT_EQ(At("min_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=8;");
  EXPECT_EQ(At("avg_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=9;");
  EXPECT_EQ(At("sum_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=27;");
  EXPECT_EQ(At("count_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=3;");
  EXPECT_EQ(At("quantile_over_time(0.5, g{i=\"0\"}[2m])", 10), "{i=\"0\"}=9;");
  EXPECT_EQ(At("last_over_time(g{i=\"0\"}[2m])", 10), "{__name__=\"g\",i=\"0\"}=10;");
  EXPECT_EQ(At("abs(g{i=\"0\"} - 12)", 10), "{i=\"0\"}=2;");
  EXPECT_EQ(At("clamp_max(g, 15)", 10), "{i=\"0\"}=10;{i=\"1\"}=15;{i=\"2\"}=15;");
  EXPECT_EQ(At("clamp_min(g{i=\"0\"}, 15)", 10), "{i=\"0\"}=15;");
  EXPECT_EQ(At("absent(nope{job=\"x\"})", 10), "{job=\"x\"}=1;");
  EXPECT_EQ(At("absent(g)", 10), "");
}

// Minutes 0..5 of the golden test's irregular gauge: Kahan sums change the
// last digits of deriv, predict_linear and stdvar_over_time here.
const std::vector<double> kIrregular = {1054.14, 1045.71, 1058.43, 1049.27, 1089.72, 1028.48};

// deriv and predict_linear share Prometheus' regression: Kahan sums, the
// intercept of predict_linear at the evaluation time (not the window's end),
// slope 0 for a constant window. Values from Prometheus 2.42 (promtool).
TEST_F(EngineTest, LinearRegression) {
  EXPECT_EQ(At("predict_linear(g{i=\"0\"}[4m], 60)", 10), "{i=\"0\"}=11;");
  // The window is 4..8m, the line is still taken at 10m: 10 + 1, not 8 + 1.
  EXPECT_EQ(At("predict_linear(g{i=\"0\"}[4m] offset 2m, 60)", 10), "{i=\"0\"}=11;");
  EXPECT_EQ(At("predict_linear(g{i=\"0\"}[4m], -120)", 10), "{i=\"0\"}=8;");
  EXPECT_EQ(At("predict_linear(g{i=\"0\"}[30s], 60)", 10), "");  // one sample
  EXPECT_EQ(At("predict_linear(g{i=\"0\"}[4m], time() - 540)", 10), "{i=\"0\"}=11;");
  Add({{"__name__", "k"}}, {5.1, 5.1, 5.1, 5.1, 5.1, 5.1});
  Add({{"__name__", "kinf"}}, {HUGE_VAL, HUGE_VAL, HUGE_VAL});
  Add({{"__name__", "withinf"}}, {1, HUGE_VAL, 3, 4, 5, 6});
  EXPECT_EQ(At("deriv(k[5m])", 5), "{}=0;");
  EXPECT_EQ(At("predict_linear(k[5m], 1000)", 5), "{}=5.1;");
  EXPECT_EQ(At("deriv(kinf[5m])", 2), "{}=NaN;");
  EXPECT_EQ(At("predict_linear(kinf[5m], 60)", 2), "{}=NaN;");
  EXPECT_EQ(At("deriv(withinf[5m])", 5), "{}=NaN;");
  // Irregular values, where plain sums would differ in the last digits
  // (deriv -0.002585714285718351, predict_linear 1044.595238095251).
  Add({{"__name__", "p"}}, kIrregular);
  EXPECT_EQ(At("deriv(p[5m])", 5), "{}=-0.0025857142857128074;");
  EXPECT_EQ(At("predict_linear(p[5m], 3600)", 5), "{}=1044.59523809523;");
}

TEST_F(EngineTest, VarianceAndPresenceOverTime) {
  EXPECT_EQ(At("stdvar_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=0.6666666666666666;");
  EXPECT_EQ(At("stddev_over_time(g{i=\"0\"}[2m])", 10), "{i=\"0\"}=0.816496580927726;");
  EXPECT_EQ(At("stddev_over_time(g{i=\"0\"}[30s])", 10), "{i=\"0\"}=0;");
  EXPECT_EQ(At("present_over_time(g[5m])", 10), "{i=\"0\"}=1;{i=\"1\"}=1;{i=\"2\"}=1;");
  EXPECT_EQ(At("present_over_time(g[5m])", 26), "");  // the last sample is at 20m
  // Kahan sums in Welford's method (plain ones: 339.56998055555454).
  Add({{"__name__", "p"}}, kIrregular);
  EXPECT_EQ(At("stdvar_over_time(p[5m])", 5), "{}=339.56998055555624;");
  EXPECT_EQ(At("stddev_over_time(p[5m])", 5), "{}=18.427424685928205;");
  Add({{"__name__", "withinf"}}, {1, HUGE_VAL, 3});
  EXPECT_EQ(At("stdvar_over_time(withinf[5m])", 2), "{}=NaN;");
}

TEST_F(EngineTest, Clamp) {
  EXPECT_EQ(At("clamp(g, 5, 15)", 1), "{i=\"0\"}=5;{i=\"1\"}=11;{i=\"2\"}=15;");
  EXPECT_EQ(At("clamp(g, 15, 5)", 1), "");  // max < min: nothing, as Prometheus
  EXPECT_EQ(At("clamp(g{i=\"1\"}, 11, 11)", 1), "{i=\"1\"}=11;");
  EXPECT_EQ(At("clamp(g{i=\"1\"}, NaN, 20)", 1), "{i=\"1\"}=NaN;");
  // Bounds that change with the step: max < min drops only those steps.
  auto r = engine_->Range("clamp(g{i=\"0\"}, 0, time() / 60 - 3)", 0, 5 * 60'000, 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].points, (std::vector<Point>{{180'000, 0}, {240'000, 1}, {300'000, 2}}));
}

TEST_F(EngineTest, TimeVectorAndScalar) {
  EXPECT_EQ(At("time()", 5), "{}=300;");
  EXPECT_EQ(At("time() - 60", 5), "{}=240;");
  EXPECT_EQ(At("vector(1)", 5), "{}=1;");
  EXPECT_EQ(At("vector(time())", 5), "{}=300;");
  EXPECT_EQ(At("scalar(g{i=\"1\"})", 5), "{}=15;");
  EXPECT_EQ(At("scalar(g)", 5), "{}=NaN;");     // more than one element
  EXPECT_EQ(At("scalar(nope)", 5), "{}=NaN;");  // none
  EXPECT_EQ(At("g{i=\"2\"} - scalar(g{i=\"0\"})", 5), "{i=\"2\"}=20;");
  EXPECT_EQ(At("topk(scalar(vector(2)), g)", 5),
            "{__name__=\"g\",i=\"1\"}=15;{__name__=\"g\",i=\"2\"}=25;");

  auto r = engine_->Range("time()", 0, 120'000, 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].points, (std::vector<Point>{{0, 0}, {60'000, 60}, {120'000, 120}}));
  // g{i="0"} is 0 at minute 0, 1 at minute 1: scalar() per step.
  r = engine_->Range("vector(scalar(g{i=\"0\"}) * 2)", 0, 60'000, 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].points, (std::vector<Point>{{0, 0}, {60'000, 2}}));
}

// Prometheus orders sort's output by value with NaN last in both directions;
// the label order of the input is neither.
TEST_F(EngineTest, SortOrdersInstantVectors) {
  EXPECT_EQ(At("sort(-g)", 5), "{i=\"2\"}=-25;{i=\"1\"}=-15;{i=\"0\"}=-5;");
  EXPECT_EQ(At("sort_desc(g)", 5),
            "{__name__=\"g\",i=\"2\"}=25;{__name__=\"g\",i=\"1\"}=15;"
            "{__name__=\"g\",i=\"0\"}=5;");
  EXPECT_EQ(At("sort(g)", 5),
            "{__name__=\"g\",i=\"0\"}=5;{__name__=\"g\",i=\"1\"}=15;"
            "{__name__=\"g\",i=\"2\"}=25;");
  // At minute 5, g{i="0"} - 5 is 0, so 0/0 gives NaN for i="0" only.
  const char* kWithNaN = "(g - 5) / (g - 5) * g";
  EXPECT_EQ(At(std::string("sort(") + kWithNaN + ")", 5),
            "{i=\"1\"}=15;{i=\"2\"}=25;{i=\"0\"}=NaN;");
  EXPECT_EQ(At(std::string("sort_desc(") + kWithNaN + ")", 5),
            "{i=\"2\"}=25;{i=\"1\"}=15;{i=\"0\"}=NaN;");
  EXPECT_EQ(At("sort(nope)", 5), "");
  // A range query's series are ordered by labels, sorted or not.
  auto r = engine_->Range("sort_desc(g)", 0, 120'000, 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 3u);
  EXPECT_EQ(r->series[0].labels, (wire::Labels{{"__name__", "g"}, {"i", "0"}}));
  EXPECT_EQ(r->series[2].points.back(), (Point{120'000, 22}));
}

TEST_F(EngineTest, Timestamp) {
  // A plain selector reports its sample's time: the last sample is at 20m.
  EXPECT_EQ(At("timestamp(g{i=\"0\"})", 25), "{i=\"0\"}=1200;");
  EXPECT_EQ(At("timestamp(g{i=\"0\"} offset 2m)", 5), "{i=\"0\"}=180;");
  EXPECT_EQ(At("timestamp((g{i=\"0\"}))", 25), "{i=\"0\"}=1200;");
  // Anything else was evaluated at the step (Prometheus does the same).
  EXPECT_EQ(At("timestamp(-g{i=\"0\"})", 25), "{i=\"0\"}=1500;");
  EXPECT_EQ(At("timestamp(abs(g{i=\"0\"}))", 25), "{i=\"0\"}=1500;");
  EXPECT_EQ(At("timestamp(vector(1))", 3), "{}=180;");
  EXPECT_EQ(At("timestamp(g{i=\"0\"})", 26), "");
}

TEST_F(EngineTest, LabelReplace) {
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"x\", \"a$1-${1}b\", \"i\", \"(.*)\")", 5),
            "{__name__=\"g\",i=\"1\",x=\"a1-1b\"}=15;");
  // No match: unchanged. "$1x" names a group "1x" (none), "$$" is a dollar.
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"x\", \"$1x$$\", \"i\", \"(1)\")", 5),
            "{__name__=\"g\",i=\"1\",x=\"$\"}=15;");
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"x\", \"y\", \"i\", \"2\")", 5),
            "{__name__=\"g\",i=\"1\"}=15;");
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"x\", \"${n}z$\", \"i\", \"(?P<n>.)\")", 5),
            "{__name__=\"g\",i=\"1\",x=\"1z$\"}=15;");
  // An empty result removes the label; renaming the metric is allowed.
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"i\", \"\", \"i\", \".*\")", 5), "{__name__=\"g\"}=15;");
  EXPECT_EQ(At("label_replace(g{i=\"1\"}, \"__name__\", \"h$1\", \"i\", \"(.*)\")", 5),
            "{__name__=\"h1\",i=\"1\"}=15;");
  EXPECT_NE(At("label_replace(g, \"i\", \"\", \"i\", \".*\")", 5).find("same labelset"),
            std::string::npos);
  EXPECT_EQ(At("label_replace(g, \"x\", \"\", \"i\", \"(\")", 5),
            "ERROR invalid regular expression in label_replace(): (");
  EXPECT_EQ(At("label_replace(nope, \"1x\", \"\", \"i\", \".*\")", 5),
            "ERROR invalid destination label name in label_replace(): 1x");
}

TEST_F(EngineTest, Aggregations) {
  EXPECT_EQ(At("sum(g)", 1), "{}=33;");
  EXPECT_EQ(At("avg(g)", 1), "{}=11;");
  EXPECT_EQ(At("count(g)", 1), "{}=3;");
  EXPECT_EQ(At("min(g)", 1), "{}=1;");
  EXPECT_EQ(At("max by (i) (g)", 1), "{i=\"0\"}=1;{i=\"1\"}=11;{i=\"2\"}=21;");
  EXPECT_EQ(At("sum without (i) (g)", 1), "{}=33;");
  EXPECT_EQ(At("quantile(0.5, g)", 1), "{}=11;");
  EXPECT_EQ(At("topk(1, g)", 1), "{__name__=\"g\",i=\"2\"}=21;");
  EXPECT_EQ(At("bottomk(1, g)", 1), "{__name__=\"g\",i=\"0\"}=1;");
}

TEST_F(EngineTest, BinaryOperators) {
  EXPECT_EQ(At("2 ^ 3 % 5", 0), "{}=3;");
  EXPECT_EQ(At("g > 15", 1), "{__name__=\"g\",i=\"2\"}=21;");
  EXPECT_EQ(At("g{i=\"0\"} > bool 15", 1), "{i=\"0\"}=0;");
  EXPECT_EQ(At("g{i=\"1\"} - ignoring(i) g{i=\"0\"}", 1), "{}=10;");
  EXPECT_EQ(At("g and on(i) g{i=\"1\"}", 1), "{__name__=\"g\",i=\"1\"}=11;");
  EXPECT_EQ(At("g{i=\"0\"} or g{i=\"1\"}", 1),
            "{__name__=\"g\",i=\"0\"}=1;{__name__=\"g\",i=\"1\"}=11;");
  EXPECT_EQ(At("g unless g{i=\"1\"}", 1),
            "{__name__=\"g\",i=\"0\"}=1;{__name__=\"g\",i=\"2\"}=21;");
  EXPECT_NE(At("g + on() g", 1).find("many-to-many"), std::string::npos);
  EXPECT_EQ(At("-g{i=\"0\"}", 1), "{i=\"0\"}=-1;");
  // One-to-one: a series may match once per step, counting only the
  // samples that a comparison keeps; the "one" side must be unique even
  // where nothing matches it. Prometheus 2.42's answers and messages.
  EXPECT_EQ(At("g > on() vector(15)", 1), "{}=21;");
  EXPECT_EQ(At("g > bool on() vector(15)", 1),
            "ERROR multiple matches for labels: many-to-one matching must be explicit "
            "(group_left/group_right)");
  EXPECT_EQ(At("g * on() vector(1)", 1), At("g > bool on() vector(15)", 1));
  Add({{"__name__", "info"}, {"i", "0"}, {"owner", "alice"}, {"team", "ml"}}, {1, 1, 1});
  Add({{"__name__", "info"}, {"i", "1"}, {"owner", "bob"}}, {2, 2, 2});
  EXPECT_EQ(At("g * on(i) label_replace(info, \"i\", \"x\", \"\", \"\")", 1),
            "ERROR found duplicate series for the match group {i=\"x\"} on the right hand-side of "
            "the operation: [{__name__=\"info\", i=\"x\", owner=\"bob\"}, {__name__=\"info\", "
            "i=\"x\", owner=\"alice\", team=\"ml\"}];many-to-many matching not allowed: matching "
            "labels must be unique on one side");
  EXPECT_EQ(At("nonexistent * on(i) label_replace(info, \"i\", \"x\", \"\", \"\")", 1), "");
}

// group_left/group_right: the "many" side's labels, those listed copied from
// the "one" side (removed where it has none), Prometheus' values and errors
// (each checked against Prometheus 2.42).
TEST_F(EngineTest, ManyToOneMatching) {
  Add({{"__name__", "info"}, {"i", "0"}, {"owner", "alice"}, {"team", "ml"}}, {1, 1, 1});
  Add({{"__name__", "info"}, {"i", "1"}, {"owner", "bob"}}, {2, 2, 2});
  Add({{"__name__", "h"}, {"i", "0"}}, {5, 5, 5});
  EXPECT_EQ(At("g * on(i) group_left(owner, team) info", 1),
            "{i=\"0\",owner=\"alice\",team=\"ml\"}=1;{i=\"1\",owner=\"bob\"}=22;");
  EXPECT_EQ(At("g * on(i) group_left info", 1), "{i=\"0\"}=1;{i=\"1\"}=22;");
  EXPECT_EQ(At("g * on() group_left vector(2)", 1), "{i=\"0\"}=2;{i=\"1\"}=22;{i=\"2\"}=42;");
  EXPECT_EQ(At("info * on(i) group_right(owner) g", 1),
            "{i=\"0\",owner=\"alice\"}=1;{i=\"1\",owner=\"bob\"}=22;");
  EXPECT_EQ(At("info - on(i) group_right g", 1), "{i=\"0\"}=0;{i=\"1\"}=-9;");  // info - g
  // A filtering comparison keeps the left operand's value: under
  // group_right the "one" side's, with the "many" side's labels.
  EXPECT_EQ(At("g > on(i) group_left(owner) info", 1),
            "{__name__=\"g\",i=\"1\",owner=\"bob\"}=11;");
  EXPECT_EQ(At("info < on(i) group_right(owner) g", 1),
            "{__name__=\"g\",i=\"1\",owner=\"bob\"}=2;");
  EXPECT_EQ(At("g > bool on(i) group_left(owner) info", 1),
            "{i=\"0\",owner=\"alice\"}=0;{i=\"1\",owner=\"bob\"}=1;");
  EXPECT_EQ(
      At("label_replace(g, \"team\", \"infra\", \"\", \"\") * on(i) group_left(team) info", 1),
      "{i=\"0\",team=\"ml\"}=1;{i=\"1\"}=22;");
  EXPECT_EQ(At("g + on(i) group_left(__name__) info", 1),
            "{__name__=\"info\",i=\"0\"}=2;{__name__=\"info\",i=\"1\"}=13;");
  EXPECT_EQ(At("{__name__=~\"g|h\", i=\"0\"} >= on(i) group_left info", 1),
            "{__name__=\"g\",i=\"0\"}=1;{__name__=\"h\",i=\"0\"}=5;");

  EXPECT_EQ(At("g * on() group_left info", 1),
            "ERROR found duplicate series for the match group {} on the right hand-side of the "
            "operation: [{__name__=\"info\", i=\"1\", owner=\"bob\"}, {__name__=\"info\", "
            "i=\"0\", owner=\"alice\", team=\"ml\"}];many-to-many matching not allowed: matching "
            "labels must be unique on one side");
  EXPECT_EQ(At("info * on() group_right g", 1),
            "ERROR found duplicate series for the match group {} on the left hand-side of the "
            "operation: [{__name__=\"info\", i=\"1\", owner=\"bob\"}, {__name__=\"info\", "
            "i=\"0\", owner=\"alice\", team=\"ml\"}];many-to-many matching not allowed: matching "
            "labels must be unique on one side");
  const std::string kGrouping =
      "ERROR multiple matches for labels: grouping labels must ensure unique matches";
  EXPECT_EQ(At("{__name__=~\"g|h\", i=\"0\"} * on(i) group_left info", 1), kGrouping);
  EXPECT_EQ(At("g * ignoring(i) group_left(i) vector(1)", 1), kGrouping);
  EXPECT_EQ(
      At("{__name__=~\"g|h\",i=\"0\"} * on(__name__) group_left {__name__=~\"g|h\",i=\"0\"}", 1),
      "ERROR vector cannot contain metrics with the same labelset {i=\"0\"}");
  // Only at steps where both sides have samples: info ends at 2m (7m with
  // the lookback), g goes on.
  auto r = engine_->Range("g * on(i) group_left(owner) info", 0, 10 * 60'000, 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 2u);
  EXPECT_EQ(r->series[1].labels, (wire::Labels{{"i", "1"}, {"owner", "bob"}}));
  EXPECT_EQ(r->series[1].points.size(), 8u);
  EXPECT_EQ(r->series[1].points.back(), (Point{7 * 60'000, 2 * 17}));
}

TEST_F(EngineTest, RangeQuery) {
  auto r = engine_->Range("sum(rate(c[2m]))", 0, 10 * 60'000, 5 * 60'000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, ValueType::kMatrix);
  ASSERT_EQ(r->series.size(), 1u);
  // No sample pair at t=0; 0.1/s at 5m and 10m (the reset at 10m is corrected).
  ASSERT_EQ(r->series[0].points.size(), 2u);
  EXPECT_EQ(r->series[0].points[0], (Point{300'000, 0.1}));
  EXPECT_FALSE(engine_->Range("g", 0, 100'000'000, 1000).ok());  // > 11,000 points
  EXPECT_FALSE(engine_->Range("g[5m]", 0, 1000, 1000).ok());
}

TEST_F(EngineTest, ParallelSelectGivesTheSameAnswer) {
  EngineOptions o;
  o.select_threads = 3;
  o.parallel_select_min_ms = 1;  // use threads even for this short range
  Engine parallel(db_.get(), o);
  for (const char* q : {"g", "rate(c[3m])", "sum by (i) (g)"}) {
    auto a = engine_->Range(q, 0, 20 * 60'000, 60'000);
    auto b = parallel.Range(q, 0, 20 * 60'000, 60'000);
    ASSERT_TRUE(a.ok() && b.ok()) << q;
    ASSERT_EQ(a->series.size(), b->series.size()) << q;
    for (size_t i = 0; i < a->series.size(); ++i) {
      EXPECT_EQ(a->series[i].labels, b->series[i].labels) << q;
      EXPECT_EQ(a->series[i].points, b->series[i].points) << q;
    }
  }
}

TEST_F(EngineTest, LimitsHoldWithAndWithoutThreads) {
  for (int threads : {1, 3}) {
    EngineOptions o;
    o.select_threads = threads;
    o.parallel_select_min_ms = 1;
    o.max_series = 2;  // g has 3 series
    Engine few_series(db_.get(), o);
    auto r = few_series.Range("sum(g)", 0, 20 * 60'000, 60'000);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << threads;
    EXPECT_TRUE(few_series.Range("rate(c[5m])", 0, 20 * 60'000, 60'000).ok()) << threads;

    o.max_series = 100;
    o.max_samples = 62;  // g{...} in this range: 3 x 21 samples
    Engine few_samples(db_.get(), o);
    r = few_samples.Range("max_over_time(g[20m])", 20 * 60'000, 20 * 60'000, 60'000);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << threads;
    // The budget counts every selector of the query: c alone fits, c + g does not.
    EXPECT_TRUE(few_samples.Range("c", 0, 20 * 60'000, 60'000).ok()) << threads;
    r = few_samples.Range("sum(c) + sum(g)", 0, 20 * 60'000, 60'000);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  }
}

TEST(FormatTest, PrometheusFormats) {
  EXPECT_EQ(FormatValue(1e21), "1000000000000000000000");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatValue(-HUGE_VAL), "-Inf");
  EXPECT_EQ(FormatTimestamp(1'435'781'451'781), "1435781451.781");
  EXPECT_EQ(FormatTimestamp(1'435'781'460'000), "1435781460");
  EXPECT_EQ(FormatTimestamp(1'500), "1.5");
}

}  // namespace
}  // namespace vigil::query
