// Golden comparison with Prometheus' own PromQL engine. Vigil evaluates every
// expression of promql_golden_exprs.txt over a fixed set of input series; the
// answers become the expected samples of a promtool rule-test file over the
// same series, and `promtool test rules` passes only if Prometheus agrees.
// The input is written once in Prometheus' expanding notation and loaded into
// both engines from that text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/temp_dir.h"
#include "query/engine.h"
#include "store/tsdb/db.h"
#include "store/tsdb/stale.h"

namespace vigil::query {
namespace {

struct InputSeries {
  const char* series;  // promtool series notation
  const char* values;  // expanding notation
};

const InputSeries kInput[] = {
    {R"(http_requests_total{instance="a",job="api"})", "0+10x60"},
    {R"(http_requests_total{instance="b",job="api"})", "0+7x30 5+7x29"},
    {R"(http_requests_total{instance="a",job="web"})", "3+3x60"},
    {R"(gpu_util{gpu="0",host="h1"})", "10+5x12 70-3x20 10+1x27"},
    {R"(gpu_util{gpu="1",host="h1"})", "20+2x60"},
    {R"(gpu_util{gpu="0",host="h2"})", "90-1x60"},
    {R"(temp{gpu="0",host="h1"})", "40+0.5x60"},
    {R"(temp{gpu="2",host="h1"})", "50+0x60"},
    {R"(mem_used{gpu="0",host="h1"})", "1000+100x60"},
    {R"(mem_used{gpu="1",host="h1"})", "2000+50x60"},
    {R"(mem_total{gpu="0",host="h1"})", "80000+0x60"},
    {R"(mem_total{gpu="1",host="h1"})", "80000+0x60"},
    {R"(gappy{job="g"})", "1 2 _ _ _ _ _ _ 9 10 11"},
    // Series that stop: `stale` is a staleness marker, written by Vigil's
    // ingester when a series vanishes from a collection pass (a lost GPU, an
    // ended process), as by Prometheus when one vanishes from a scrape. The
    // markers sit at or just before the eval times, within the lookback.
    {R"(gpu_lost{gpu="3",host="h1"})", "98+0x6 stale"},
    {R"(stopped{job="s"})", "1+1x3 stale _x25 40+1x10 stale"},
    {R"(flappy{job="f"})", "1 2 3 4 stale 6 stale _ 9 _x20 stale 31 32 _x25 stale"},
    {R"(stopped_total{job="s"})", "0+10x30 stale _x3 0+5x25"},
    // An irregular gauge (two decimals, no trend): here Kahan summation in
    // deriv, predict_linear and stdvar_over_time changes the last bits of
    // nearly every answer, so plain sums would not agree with Prometheus.
    {R"(power{gpu="0",host="h1",region="lab"})",
     "1054.14 1045.71 1058.43 1049.27 1089.72 1028.48 1035.24 1036.33 1013.75 1017.73 1005.79 "
     "1006.86 1014.89 1096.27 1073.36 1078.61 1007.37 1054.03 1061.09 1028.54 1015.76 1052.62 "
     "1065.83 1014.43 1006.48 1062.56 1048.5 1032.13 1094.78 1024.57 1057.83 1002.21 1088.89 "
     "1051.33 1081.22 1082.51 1072.68 1007.28 1016.43 1012.03 1023.17 1099.43 1080.89 1099.35 "
     "1039.24 1068.89 1054.84 1099.54 1076.47 1035.4 1071.46 1083.46 1073.87 1067.94 1068.07 "
     "1074.58 1053.45 1083.5 1049.04 1023.57 1021.89"},
    {R"(power{gpu="1",host="h1",region="lab"})", "250.3+0.7x60"},
    // Info series, the "one" side of many-to-one matching (group_left,
    // group_right). host h2 has no region.
    {R"(device_info{driver="550",gpu="0",host="h1",model="H100"})", "1+0x60"},
    {R"(device_info{driver="550",gpu="1",host="h1",model="A100"})", "1+0x60"},
    {R"(device_info{driver="535",gpu="0",host="h2",model="H100"})", "1+0x60"},
    {R"(host_info{host="h1",rack="r1",region="eu"})", "1+0x60"},
    {R"(host_info{host="h2",rack="r2"})", "2+0x60"},
};
constexpr int64_t kIntervalMs = 60'000;
const int64_t kEvalMinutes[] = {5, 7, 33, 60};

// 'name{a="b"}' -> labels (values here have no escapes).
wire::Labels ParseSeries(std::string_view s) {
  wire::Labels labels;
  size_t brace = s.find('{');
  labels.push_back({std::string(wire::kMetricNameLabel), std::string(s.substr(0, brace))});
  std::string_view rest = s.substr(brace + 1);
  while (!rest.empty() && rest[0] != '}') {
    size_t eq = rest.find('=');
    size_t q2 = rest.find('"', eq + 2);
    labels.push_back(
        {std::string(rest.substr(0, eq)), std::string(rest.substr(eq + 2, q2 - eq - 2))});
    rest = rest.substr(q2 + 1);
    if (!rest.empty() && rest[0] == ',') rest.remove_prefix(1);
  }
  wire::NormalizeLabels(&labels);
  return labels;
}

// Expanding notation: "a+bxN" (N+1 values by repeated addition, as promtool),
// "a-bxN", "_" (no sample), "_xN", "stale" (a staleness marker), plain numbers.
std::vector<wire::Sample> ExpandValues(const std::string& text) {
  std::vector<wire::Sample> out;
  std::istringstream in(text);
  std::string tok;
  int64_t i = 0;
  while (in >> tok) {
    if (tok[0] == '_') {
      i += tok.size() > 1 ? std::stoll(tok.substr(2)) : 1;
      continue;
    }
    if (tok == "stale") {
      out.push_back({i++ * kIntervalMs, tsdb::StaleNaN()});
      continue;
    }
    size_t x = tok.find('x');
    if (x == std::string::npos) {
      out.push_back({i++ * kIntervalMs, std::stod(tok)});
      continue;
    }
    size_t op = tok.find_first_of("+-", 1);
    double k = std::stod(tok.substr(0, op));
    double step = std::stod(tok.substr(op + 1, x - op - 1)) * (tok[op] == '-' ? -1 : 1);
    int64_t times = std::stoll(tok.substr(x + 1));
    for (int64_t j = 0; j <= times; ++j) {
      out.push_back({i++ * kIntervalMs, k});
      k += step;
    }
  }
  return out;
}

std::string YamlQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string PromLabels(const wire::Labels& labels) {
  std::string name(wire::MetricName(labels));
  std::string s = name + "{";
  bool first = true;
  for (const auto& l : labels) {
    if (l.name == wire::kMetricNameLabel) continue;
    s += (first ? "" : ",") + l.name + "=\"" + l.value + "\"";
    first = false;
  }
  return s + "}";
}

std::string YamlFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::vector<std::string> LoadCorpus() {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  std::ifstream in(std::string(src != nullptr ? src : ".") +
                   "/tests/integration/promql_golden_exprs.txt");
  std::vector<std::string> exprs;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') exprs.push_back(line);
  }
  return exprs;
}

class PromqlGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = dir_ + "/db";
    o.retention_ms = 100LL * 365 * 86'400'000;  // the input lives in 1970
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    wire::MetricBatch batch;
    for (const auto& in : kInput)
      batch.series.push_back({ParseSeries(in.series), ExpandValues(in.values)});
    ASSERT_TRUE(db_->Append(batch).ok());
  }
  void TearDown() override {
    if (db_) (void)db_->Close();
  }

  TempDir tmp_;  // outlives db_ (declared first)
  std::string dir_ = tmp_.path();
  std::unique_ptr<tsdb::Db> db_;
};

TEST_F(PromqlGoldenTest, PrometheusAgreesWithVigil) {
  std::vector<std::string> exprs = LoadCorpus();
  ASSERT_GT(exprs.size(), 50u);
  Engine engine(db_.get());
  std::ostringstream y;
  y << "evaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n";
  for (const auto& in : kInput) {
    y << "      - series: " << YamlQuote(in.series) << "\n        values: " << YamlQuote(in.values)
      << "\n";
  }
  y << "    promql_expr_test:\n";
  int cases = 0;
  for (const auto& e : exprs) {
    for (int64_t m : kEvalMinutes) {
      auto r = engine.Instant(e, m * 60'000);
      ASSERT_TRUE(r.ok()) << e << ": " << r.status().ToString();
      y << "      - expr: " << YamlQuote(e) << "\n        eval_time: " << m << "m\n";
      if (r->series.empty()) {
        y << "        exp_samples: []\n";
      } else {
        y << "        exp_samples:\n";
        for (const auto& s : r->series) {
          y << "          - labels: " << YamlQuote(PromLabels(s.labels))
            << "\n            value: " << YamlFloat(s.points[0].v) << "\n";
        }
      }
      ++cases;
    }
  }
  std::string file = dir_ + "/golden_test.yml";
  std::ofstream(file) << y.str();
  // Keep a copy for people reading a failure.
  if (const char* b = std::getenv("VIGIL_BUILD_DIR"))
    std::ofstream(std::string(b) + "/promql_golden_test.yml") << y.str();

  const char* promtool = std::getenv("VIGIL_PROMTOOL");
  if (promtool == nullptr || ::access(promtool, X_OK) != 0) {
    GTEST_SKIP() << "promtool not found (Debian package `prometheus`); Vigil's answers were "
                    "computed but not compared";
  }
  std::string cmd = std::string(promtool) + " test rules " + file + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, n);
  int rc = ::pclose(p);
  EXPECT_EQ(rc, 0) << "Prometheus disagrees with Vigil:\n" << output;
  std::printf("golden: %zu expressions x %zu eval times = %d cases checked by promtool\n",
              exprs.size(), std::size(kEvalMinutes), cases);
}

// A range query must equal the instant queries at each of its steps (the
// evaluator works on whole columns of steps; promtool checks single instants).
TEST_F(PromqlGoldenTest, RangeQueriesMatchInstantQueries) {
  Engine engine(db_.get());
  constexpr int64_t kStep = 90'000;  // not a multiple of the input interval
  int checked = 0;
  for (const auto& e : LoadCorpus()) {
    auto range = engine.Range(e, 0, 62 * 60'000, kStep);
    ASSERT_TRUE(range.ok()) << e << ": " << range.status().ToString();
    std::map<wire::Labels, std::map<int64_t, double>> from_range;
    for (const auto& s : range->series) {
      for (const auto& p : s.points) from_range[s.labels][p.t_ms] = p.v;
    }
    std::map<wire::Labels, std::map<int64_t, double>> from_instants;
    for (int64_t t = 0; t <= 62 * 60'000; t += kStep) {
      auto r = engine.Instant(e, t);
      ASSERT_TRUE(r.ok()) << e << " @" << t << ": " << r.status().ToString();
      for (const auto& s : r->series) from_instants[s.labels][t] = s.points[0].v;
    }
    ASSERT_EQ(from_range.size(), from_instants.size()) << e;
    for (const auto& [labels, points] : from_instants) {
      auto it = from_range.find(labels);
      ASSERT_NE(it, from_range.end()) << e << " " << wire::LabelsToString(labels);
      ASSERT_EQ(it->second.size(), points.size()) << e << " " << wire::LabelsToString(labels);
      for (const auto& [t, v] : points) {
        double rv = it->second.at(t);
        EXPECT_TRUE(rv == v || (std::isnan(rv) && std::isnan(v)))
            << e << " @" << t << ": " << rv << " vs " << v;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace vigil::query
