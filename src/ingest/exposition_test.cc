#include "ingest/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace vigil::ingest {
namespace {

using wire::Labels;
using wire::MetricFamily;
using wire::MetricType;

net::ExpositionPoint Point(std::string name, Labels labels, double v) {
  labels.push_back({"__name__", std::move(name)});
  wire::NormalizeLabels(&labels);
  return {std::move(labels), {1700000000000, v}};
}

TEST(FormatValueTest, MatchesGoShortestG) {
  EXPECT_EQ(net::FormatValue(0), "0");
  EXPECT_EQ(net::FormatValue(-0.0), "-0");
  EXPECT_EQ(net::FormatValue(1), "1");
  EXPECT_EQ(net::FormatValue(-1), "-1");
  EXPECT_EQ(net::FormatValue(0.25), "0.25");
  EXPECT_EQ(net::FormatValue(0.1), "0.1");
  EXPECT_EQ(net::FormatValue(123456), "123456");
  EXPECT_EQ(net::FormatValue(1e6), "1e+06");
  EXPECT_EQ(net::FormatValue(1234567), "1.234567e+06");
  EXPECT_EQ(net::FormatValue(16663435264), "1.6663435264e+10");
  EXPECT_EQ(net::FormatValue(0.0001), "0.0001");
  EXPECT_EQ(net::FormatValue(0.00001), "1e-05");
  EXPECT_EQ(net::FormatValue(-0.000123), "-0.000123");
  EXPECT_EQ(net::FormatValue(1e100), "1e+100");
  EXPECT_EQ(net::FormatValue(5e-324), "5e-324");
  EXPECT_EQ(net::FormatValue(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(net::FormatValue(100), "100");
  EXPECT_EQ(net::FormatValue(42.5), "42.5");
  EXPECT_EQ(net::FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(net::FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(net::FormatValue(std::nan("")), "NaN");
}

TEST(FormatValueTest, RoundTripsRandomDoubles) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isnan(v)) continue;
    std::string s = net::FormatValue(v);
    auto parsed = ParseExposition("m " + s + "\n");
    ASSERT_TRUE(parsed.ok()) << s << ": " << parsed.status().ToString();
    ASSERT_EQ(parsed->size(), 1u);
    EXPECT_EQ((*parsed)[0].value, v) << s;
  }
}

TEST(EscapeTest, LabelValuesAndHelp) {
  EXPECT_EQ(net::EscapeExposition("a\\b\"c\nd", false), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(net::EscapeExposition("a\\b\"c\nd", true), "a\\\\b\"c\\nd");
  EXPECT_EQ(net::EscapeExposition("GPU 0 \xE2\x80\x94 A100", false), "GPU 0 \xE2\x80\x94 A100");
  EXPECT_EQ(net::EscapeExposition("bad\xFF\xC0x", false), "bad\xEF\xBF\xBD\xEF\xBF\xBDx");
  EXPECT_EQ(net::EscapeExposition("\xED\xA0\x80", false), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(RenderTest, GroupsByFamilyWithHelpAndType) {
  std::vector<MetricFamily> families = {
      {"node_load1", MetricType::kGauge, "1m load average."},
      {"node_cpu_seconds_total", MetricType::kCounter, "Seconds the CPUs spent in each mode."},
      {"odd", MetricType::kUnknown, "Help with \\ and\nnewline."},
  };
  std::vector<net::ExpositionPoint> points = {
      Point("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "idle"}}, 100.5),
      Point("node_load1", {}, 0.25),
      Point("no_family", {{"path", "C:\\x \"y\"\nz"}}, 1),
      Point("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "user"}}, 7),
      Point("odd", {{"empty", ""}}, std::numeric_limits<double>::infinity()),
  };
  net::RenderStats stats;
  std::string text = net::RenderExposition(families, points, &stats);
  EXPECT_EQ(text,
            "no_family{path=\"C:\\\\x \\\"y\\\"\\nz\"} 1\n"
            "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
            "# TYPE node_cpu_seconds_total counter\n"
            "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100.5\n"
            "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 7\n"
            "# HELP node_load1 1m load average.\n"
            "# TYPE node_load1 gauge\n"
            "node_load1 0.25\n"
            "# HELP odd Help with \\\\ and\\nnewline.\n"
            "# TYPE odd untyped\n"
            "odd +Inf\n");
  EXPECT_EQ(stats.series, 5u);
  EXPECT_EQ(stats.skipped, 0u);
}

TEST(RenderTest, SkipsSeriesThatWouldBreakTheScrape) {
  std::vector<net::ExpositionPoint> points = {
      Point("ok", {}, 1),           Point("1bad", {}, 1),
      Point("bad-name", {}, 1),     Point("ok", {{"bad-label", "x"}}, 1),
      {{{"a", "no name"}}, {0, 1}}, {{{"__name__", "dup"}, {"a", "1"}, {"a", "2"}}, {0, 1}},
  };
  net::RenderStats stats;
  EXPECT_EQ(net::RenderExposition({}, points, &stats), "ok 1\n");
  EXPECT_EQ(stats.series, 1u);
  EXPECT_EQ(stats.skipped, 5u);
}

TEST(RenderTest, NoFamiliesNoPoints) { EXPECT_EQ(net::RenderExposition({}, {}), ""); }

TEST(ParseTest, RoundTripsRenderedText) {
  std::vector<MetricFamily> families = {
      {"DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "GPU utilization (in %)."},
      {"x_total", MetricType::kCounter, "Tricky \\ help\nline \"quoted\"."},
  };
  std::vector<net::ExpositionPoint> points = {
      Point("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"modelName", "NVIDIA A100-SXM4-80GB"}}, 97),
      Point("x_total", {{"v", "a\\b\"c\nd,}{="}, {"z", "\xE4\xB8\xAD\xE6\x96\x87"}}, -1.5e-7),
      Point("x_total", {{"v", "nan"}}, std::nan("")),
      Point("x_total", {{"v", "-inf"}}, -std::numeric_limits<double>::infinity()),
  };
  std::string text = net::RenderExposition(families, points);
  std::vector<ParsedFamily> parsed_families;
  auto parsed = ParseExposition(text, &parsed_families);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  ASSERT_EQ(parsed->size(), points.size());
  // Rendering groups by name, and DCGM_ sorts before x_: input order here.
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ((*parsed)[i].labels, points[i].labels) << i;
    if (std::isnan(points[i].sample.value)) {
      EXPECT_TRUE(std::isnan((*parsed)[i].value));
    } else {
      EXPECT_EQ((*parsed)[i].value, points[i].sample.value);
    }
    EXPECT_FALSE((*parsed)[i].timestamp_ms.has_value());
  }
  ASSERT_EQ(parsed_families.size(), 2u);
  EXPECT_EQ(parsed_families[0].name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(parsed_families[0].type, "gauge");
  EXPECT_EQ(parsed_families[1].help, families[1].help);
  EXPECT_EQ(parsed_families[1].type, "counter");
}

TEST(ParseTest, AcceptsTheFormatsLatitude) {
  auto parsed = ParseExposition(
      "# a plain comment\n"
      "\n"
      "  # HELP   m   spaced help  \n"
      "m{a=\"1\",} 1 1700000000000\r\n"
      "m { b = \"2\" }\t2\n"
      "m{} +Inf\n"
      "m{c=\"\"} -Inf\n"
      "n_total 3e+06");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 5u);
  EXPECT_EQ((*parsed)[0].timestamp_ms.value_or(0), 1700000000000);
  EXPECT_EQ((*parsed)[1].labels[0].name, "__name__");
  EXPECT_EQ((*parsed)[1].labels[1].name, "b");
  EXPECT_EQ((*parsed)[3].labels.size(), 1u);  // empty label dropped
  EXPECT_EQ((*parsed)[4].value, 3e6);
}

TEST(ParseTest, RejectsMalformedLinesWithTheLineNumber) {
  struct Case {
    const char* text;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {"m\n", "line 1: expected a value"},
           {"ok 1\nm{a=\"1\" 1\n", "line 2: expected ',' or '}'"},
           {"m{a=1} 1\n", "line 1: expected '\"'"},
           {"m{a=\"x\\q\"} 1\n", "invalid escape"},
           {"m{a=\"1\",a=\"2\"} 1\n", "duplicate label a"},
           {"m{__name__=\"x\"} 1\n", "duplicate label __name__"},
           {"m{a=\"unterminated} 1\n", "unterminated label value"},
           {"m{a=\"1\"\n", "expected ',' or '}'"},
           {"m{1a=\"1\"} 1\n", "expected a label name"},
           {"m abc\n", "invalid value"},
           {"m 1 2.5\n", "invalid timestamp"},
           {"m 1 2 3\n", "unexpected text"},
           {"1m 1\n", "expected a metric name"},
           {"# TYPE m gauge\n# TYPE m counter\n", "line 2: second TYPE for m"},
           {"# HELP m a\n# HELP m b\n", "second HELP"},
           {"# TYPE m bogus\n", "unknown metric type"},
           {"m 1\n# TYPE m gauge\n", "after its samples"},
           {"# HELP m bad \\x escape\n", "invalid escape"},
           {"# TYPE\n", "expected a metric name"},
           {"# TYPE m- gauge\n", "invalid character"},
       }) {
    auto parsed = ParseExposition(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find(c.want), std::string::npos)
        << c.text << " -> " << parsed.status().message();
  }
}

TEST(ParseTest, EnforcesLimits) {
  ExpositionLimits limits;
  limits.max_samples = 2;
  EXPECT_EQ(ParseExposition("a 1\nb 2\nc 3\n", nullptr, limits).status().code(),
            StatusCode::kResourceExhausted);
  limits = {};
  limits.max_bytes = 4;
  EXPECT_EQ(ParseExposition("a 1\nb 2\n", nullptr, limits).status().code(),
            StatusCode::kResourceExhausted);
  limits = {};
  limits.max_line_bytes = 8;
  EXPECT_EQ(ParseExposition("a{b=\"cdefgh\"} 1\n", nullptr, limits).status().code(),
            StatusCode::kResourceExhausted);
  std::string many = "m{";
  for (int i = 0; i < 100; ++i) many += "l" + std::to_string(i) + "=\"v\",";
  EXPECT_EQ(ParseExposition(many + "} 1\n").status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ParseExposition("m{a=\"" + std::string(5000, 'x') + "\"} 1\n").status().code(),
            StatusCode::kResourceExhausted);
}

TEST(ParseTest, SurvivesHostileInput) {
  // Mutations of a valid exposition plus random bytes: any result is fine as
  // long as the parser returns (ASan/UBSan builds check memory safety).
  const std::string seed =
      "# HELP m h\\n\n# TYPE m counter\nm{a=\"x\\\"y\",b=\"\\\\\"} 1.5 123\nn NaN\n";
  std::mt19937 rng(1);
  size_t ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = seed;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0:
          s.insert(pos, 1, static_cast<char>(rng()));
          break;
        case 1:
          if (pos < s.size()) s.erase(pos, 1);
          break;
        default:
          if (pos < s.size()) s[pos] = "{}\"\\=, \n#\t"[rng() % 10];
          break;
      }
    }
    if (ParseExposition(s).ok()) ++ok;
  }
  EXPECT_GT(ok, 0u);
  std::string noise(100000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  (void)ParseExposition(noise);
  (void)ParseExposition(std::string(100000, '{'));
  (void)ParseExposition(std::string(100000, '\\'));
  (void)ParseExposition("m{a=\"" + std::string(100000, '\\'));
}

}  // namespace
}  // namespace vigil::ingest
