#include "api/otlp_routes.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "ingest/otlp.h"
#include "net/http_client.h"

// The OTLP decoders (ingest/otlp.h) and the route that feeds them to the
// ingester (api/otlp_routes.h).
namespace vigil::api {
namespace {

using namespace ingest::otlp;  // NOLINT: the decoder under test

using nlohmann::json;

constexpr int64_t kNow = 1'764'460'800'000;            // ms
constexpr uint64_t kT = 1'764'460'700'000'000'000ULL;  // ns

// ---------------------------------------------------------------------------
// A tiny protobuf encoder for building requests.

struct Pb {
  std::string s;
  Pb& Varint(uint32_t f, uint64_t v) {
    Key(f, 0);
    Raw(v);
    return *this;
  }
  Pb& Fixed64(uint32_t f, uint64_t v) {
    Key(f, 1);
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Pb& Double(uint32_t f, double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    return Fixed64(f, v);
  }
  Pb& Bytes(uint32_t f, std::string_view b) {
    Key(f, 2);
    Raw(b.size());
    s.append(b);
    return *this;
  }
  Pb& Msg(uint32_t f, const Pb& m) { return Bytes(f, m.s); }
  void Key(uint32_t f, uint32_t wt) { Raw((uint64_t{f} << 3) | wt); }
  void Raw(uint64_t v) {
    while (v >= 0x80) {
      s.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
  }
};

Pb StrKV(std::string_view k, std::string_view v) {
  return Pb().Bytes(1, k).Msg(2, Pb().Bytes(1, v));
}

Pb DoublePoint(double v, uint64_t t, std::vector<Pb> attrs = {}) {
  Pb p;
  for (const auto& a : attrs) p.Msg(7, a);
  p.Fixed64(2, t - 1000).Fixed64(3, t).Double(4, v);
  return p;
}

Pb IntPoint(int64_t v, uint64_t t, std::vector<Pb> attrs = {}) {
  Pb p;
  for (const auto& a : attrs) p.Msg(7, a);
  p.Fixed64(3, t).Fixed64(6, static_cast<uint64_t>(v));
  return p;
}

Pb GaugeMetric(std::string_view name, std::vector<Pb> points) {
  Pb g;
  for (const auto& p : points) g.Msg(1, p);
  return Pb().Bytes(1, name).Bytes(2, "help text").Bytes(3, "1").Msg(5, g);
}

Pb SumMetric(std::string_view name, int temporality, bool monotonic, std::vector<Pb> points) {
  Pb s;
  for (const auto& p : points) s.Msg(1, p);
  s.Varint(2, temporality).Varint(3, monotonic ? 1 : 0);
  return Pb().Bytes(1, name).Msg(7, s);
}

Pb Request(std::vector<Pb> metrics, std::vector<Pb> resource_attrs = {}) {
  Pb res;
  for (const auto& a : resource_attrs) res.Msg(1, a);
  Pb scope;
  scope.Msg(1, Pb().Bytes(1, "my.lib").Bytes(2, "1.0"));
  for (const auto& m : metrics) scope.Msg(2, m);
  Pb rm;
  rm.Msg(1, res).Msg(2, scope).Bytes(3, "https://opentelemetry.io/schemas/1.21.0");
  return Pb().Msg(1, rm);
}

DecodeOptions Opts() {
  DecodeOptions o;
  o.node = "gpu-1";
  o.now_ms = kNow;
  return o;
}

DecodeResult MustDecode(std::string_view body, Encoding e) {
  auto r = DecodeMetrics(body, e, Opts());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DecodeResult{};
}

std::string LabelsOf(const wire::Series& s) { return wire::LabelsToString(s.labels); }

const wire::Series* Find(const DecodeResult& r, std::string_view name) {
  for (const auto& s : r.batch.series) {
    if (wire::MetricName(s.labels) == name) return &s;
  }
  return nullptr;
}

std::string Gzip(std::string_view in) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// ---------------------------------------------------------------------------
// Protobuf decoding.

TEST(OtlpProtobuf, GaugeWithResourceAndAttributes) {
  Pb req = Request({GaugeMetric("gpu.temperature", {DoublePoint(71.5, kT, {StrKV("gpu", "0")}),
                                                    DoublePoint(64, kT, {StrKV("gpu", "1")})})},
                   {StrKV("service.name", "trainer"), StrKV("service.instance.id", "rank-0"),
                    StrKV("host.name", "dropped")});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 2u);
  EXPECT_EQ(r.rejected_points, 0u);
  ASSERT_EQ(r.batch.series.size(), 2u);
  EXPECT_EQ(LabelsOf(r.batch.series[0]),
            "{__name__=\"gpu_temperature\",gpu=\"0\",instance=\"rank-0\",job=\"trainer\","
            "node=\"gpu-1\"}");
  ASSERT_EQ(r.batch.series[0].samples.size(), 1u);
  EXPECT_EQ(r.batch.series[0].samples[0].t_ms, static_cast<int64_t>(kT / 1'000'000));
  EXPECT_EQ(r.batch.series[0].samples[0].value, 71.5);
  EXPECT_EQ(r.batch.series[1].samples[0].value, 64);
  ASSERT_EQ(r.batch.families.size(), 1u);
  EXPECT_EQ(r.batch.families[0].name, "gpu_temperature");
  EXPECT_EQ(r.batch.families[0].type, wire::MetricType::kGauge);
  EXPECT_EQ(r.batch.families[0].help, "help text");
  EXPECT_EQ(r.batch.source, "gpu-1");
}

TEST(OtlpProtobuf, SumsAndIntsAndTimeZero) {
  Pb req = Request({SumMetric("requests", 2, true, {IntPoint(42, kT)}),
                    SumMetric("bytes_total", 2, true, {IntPoint(-7, 0)}),
                    SumMetric("queue.depth", 2, false, {IntPoint(3, kT)})});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 3u);
  const wire::Series* req_total = Find(r, "requests_total");
  ASSERT_NE(req_total, nullptr);
  EXPECT_EQ(req_total->samples[0].value, 42);
  const wire::Series* bytes = Find(r, "bytes_total");
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->samples[0].value, -7);
  EXPECT_EQ(bytes->samples[0].t_ms, kNow);
  ASSERT_NE(Find(r, "queue_depth"), nullptr);
  // No service.name: no job label; node always.
  EXPECT_EQ(LabelsOf(*req_total), "{__name__=\"requests_total\",node=\"gpu-1\"}");
  ASSERT_EQ(r.batch.families.size(), 3u);
  EXPECT_EQ(r.batch.families[0].type, wire::MetricType::kCounter);
  EXPECT_EQ(r.batch.families[1].type, wire::MetricType::kCounter);
  EXPECT_EQ(r.batch.families[2].type, wire::MetricType::kGauge);
}

TEST(OtlpProtobuf, RejectedKindsAreCounted) {
  Pb hist =
      Pb().Bytes(1, "latency").Msg(9, Pb().Msg(1, Pb().Fixed64(3, kT)).Msg(1, Pb()).Varint(2, 2));
  Pb exph = Pb().Bytes(1, "exp").Msg(10, Pb().Msg(1, Pb()));
  Pb summary = Pb().Bytes(1, "sum").Msg(11, Pb().Msg(1, Pb()).Msg(1, Pb()).Msg(1, Pb()));
  Pb req =
      Request({hist, exph, summary, SumMetric("delta", 1, true, {IntPoint(1, kT), IntPoint(2, kT)}),
               SumMetric("unspecified", 0, true, {IntPoint(1, kT)}),
               GaugeMetric("ok", {DoublePoint(1, kT)})});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 1u);
  EXPECT_EQ(r.rejected_points, 2u + 1u + 3u + 2u + 1u);
  EXPECT_NE(r.rejected_reason.find("histogram"), std::string::npos) << r.rejected_reason;
  EXPECT_NE(r.rejected_reason.find("delta"), std::string::npos) << r.rejected_reason;
  ASSERT_EQ(r.batch.series.size(), 1u);
}

TEST(OtlpProtobuf, PointsWithoutValueOrFlaggedStale) {
  Pb no_value = Pb().Fixed64(3, kT);
  Pb stale = Pb().Fixed64(3, kT).Double(4, 1).Varint(8, 1);
  DecodeResult r =
      MustDecode(Request({GaugeMetric("g", {no_value, stale})}).s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 0u);
  EXPECT_EQ(r.rejected_points, 1u);
  EXPECT_TRUE(r.batch.series.empty());
}

TEST(OtlpProtobuf, AttributeValueKinds) {
  Pb kv_bool = Pb().Bytes(1, "ok").Msg(2, Pb().Varint(2, 1));
  Pb kv_int = Pb().Bytes(1, "rank").Msg(2, Pb().Varint(3, static_cast<uint64_t>(-3)));
  Pb kv_double = Pb().Bytes(1, "lr").Msg(2, Pb().Double(4, 0.0003));
  Pb kv_bytes = Pb().Bytes(1, "raw").Msg(2, Pb().Bytes(7, "hi!?"));
  Pb arr = Pb().Msg(1, Pb().Bytes(1, "a")).Msg(1, Pb().Varint(3, 2)).Msg(1, Pb());
  Pb kv_arr = Pb().Bytes(1, "list").Msg(2, Pb().Msg(5, arr));
  Pb kvl = Pb().Msg(1, StrKV("x", "y")).Msg(1, Pb().Bytes(1, "n").Msg(2, Pb().Double(4, 1.5)));
  Pb kv_map = Pb().Bytes(1, "map").Msg(2, Pb().Msg(6, kvl));
  Pb empty = Pb().Bytes(1, "empty");
  Pb no_key = Pb().Msg(2, Pb().Bytes(1, "dropped"));
  DecodeResult r =
      MustDecode(Request({GaugeMetric("g", {DoublePoint(1, kT,
                                                        {kv_bool, kv_int, kv_double, kv_bytes,
                                                         kv_arr, kv_map, empty, no_key})})})
                     .s,
                 Encoding::kProtobuf);
  ASSERT_EQ(r.batch.series.size(), 1u);
  EXPECT_EQ(LabelsOf(r.batch.series[0]),
            "{__name__=\"g\",list=\"[\\\"a\\\",2,null]\",lr=\"0.0003\",map=\"{\\\"x\\\":\\\"y\\\","
            "\\\"n\\\":1.5}\",node=\"gpu-1\",ok=\"true\",rank=\"-3\",raw=\"aGkhPw==\"}");
}

TEST(OtlpProtobuf, LabelCollisionsAndSanitising) {
  Pb req = Request({GaugeMetric("1st.metric-name/x:y",
                                {DoublePoint(1, kT,
                                             {StrKV("node", "n"), StrKV("job", "j"),
                                              StrKV("a.b", "1"), StrKV("a_b", "2"),
                                              StrKV("9lives", "z"), StrKV("__secret", "s")})})},
                   {StrKV("service.name", "svc")});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  ASSERT_EQ(r.batch.series.size(), 1u);
  EXPECT_EQ(LabelsOf(r.batch.series[0]),
            "{__name__=\"_1st_metric_name_x:y\",a_b=\"1;2\",exported_job=\"j\",exported_node=\"n\","
            "job=\"svc\",key_9lives=\"z\",key__secret=\"s\",node=\"gpu-1\"}");
}

TEST(OtlpProtobuf, SamePointsMergeIntoOneSeriesSortedByTime) {
  Pb req = Request({GaugeMetric("g", {DoublePoint(2, kT + 2'000'000), DoublePoint(1, kT)})});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  ASSERT_EQ(r.batch.series.size(), 1u);
  ASSERT_EQ(r.batch.series[0].samples.size(), 2u);
  EXPECT_EQ(r.batch.series[0].samples[0].value, 1);
  EXPECT_EQ(r.batch.series[0].samples[1].value, 2);
}

TEST(OtlpProtobuf, UnknownFieldsAreSkipped) {
  Pb point = DoublePoint(5, kT);
  point.Varint(99, 12345).Bytes(100, "x").Msg(5, Pb().Double(3, 1));  // exemplar
  point.Key(101, 5);
  point.s.append("\1\2\3\4");
  Pb metric = GaugeMetric("g", {point});
  metric.Msg(12, StrKV("meta", "data")).Varint(50, 1);
  Pb req = Request({metric});
  req.Bytes(2, "idempotency").Fixed64(77, 1);
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 1u);
}

TEST(OtlpProtobuf, EmptyRequest) {
  DecodeResult r = MustDecode("", Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 0u);
  EXPECT_TRUE(r.batch.series.empty());
}

void ExpectBad(std::string_view body, Encoding e, std::string_view want) {
  auto r = DecodeMetrics(body, e, Opts());
  ASSERT_FALSE(r.ok()) << "decoded: " << testing::PrintToString(std::string(body).substr(0, 60));
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
}

TEST(OtlpProtobuf, MalformedInputIsRejected) {
  std::string good = Request({GaugeMetric("g", {DoublePoint(1, kT, {StrKV("a", "b")})})}).s;
  // Every truncation of a valid message fails or decodes, never crashes; the
  // ones cutting the outer message are errors.
  for (size_t n = 1; n < good.size(); ++n) {
    auto r = DecodeMetrics(std::string_view(good).substr(0, n), Encoding::kProtobuf, Opts());
    EXPECT_FALSE(r.ok()) << n;
  }
  ExpectBad("\x0a\xff\xff\xff\xff\x0f", Encoding::kProtobuf, "exceeds");  // huge length
  ExpectBad("\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", Encoding::kProtobuf, "64 bits");
  ExpectBad("\x0a", Encoding::kProtobuf, "truncated");
  ExpectBad("\x08\x01", Encoding::kProtobuf, "wire type");  // resource_metrics as varint
  ExpectBad(std::string("\x00\x01", 2), Encoding::kProtobuf, "field number");
  ExpectBad("\x0b\x0c", Encoding::kProtobuf, "groups");  // start group
  ExpectBad("\x0f", Encoding::kProtobuf, "wire type 7");
  // A wrong wire type deep inside: time_unix_nano as a varint.
  Pb bad_point = Pb().Varint(3, 5);
  ExpectBad(Request({GaugeMetric("g", {bad_point})}).s, Encoding::kProtobuf, "time_unix_nano");
  // A name that is not length-delimited.
  ExpectBad(Pb().Msg(1, Pb().Msg(2, Pb().Msg(2, Pb().Varint(1, 3)))).s, Encoding::kProtobuf,
            "name");
}

TEST(OtlpProtobuf, DeepAttributeNestingIsBounded) {
  Pb v = Pb().Bytes(1, "leaf");
  for (int i = 0; i < 200; ++i) v = Pb().Msg(5, Pb().Msg(1, v));
  Pb kv = Pb().Bytes(1, "deep").Msg(2, v);
  ExpectBad(Request({GaugeMetric("g", {DoublePoint(1, kT, {kv})})}).s, Encoding::kProtobuf,
            "nested deeper");
  // Within the bound it decodes.
  Pb ok = Pb().Bytes(1, "leaf");
  for (int i = 0; i < 5; ++i) ok = Pb().Msg(5, Pb().Msg(1, ok));
  DecodeResult r = MustDecode(
      Request({GaugeMetric("g", {DoublePoint(1, kT, {Pb().Bytes(1, "d").Msg(2, ok)})})}).s,
      Encoding::kProtobuf);
  ASSERT_EQ(r.batch.series.size(), 1u);
  EXPECT_NE(LabelsOf(r.batch.series[0]).find("[[[[[\\\"leaf\\\"]]]]]"), std::string::npos)
      << LabelsOf(r.batch.series[0]);
}

TEST(OtlpProtobuf, OversizedLabelsAreRejectedPerPoint) {
  std::vector<Pb> many;
  for (int i = 0; i < 80; ++i) many.push_back(StrKV("k" + std::to_string(i), "v"));
  Pb req = Request({GaugeMetric(
      "g", {DoublePoint(1, kT, many), DoublePoint(1, kT, {StrKV("big", std::string(5000, 'x'))}),
            DoublePoint(1, kT)})});
  DecodeResult r = MustDecode(req.s, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 1u);
  EXPECT_EQ(r.rejected_points, 2u);
}

TEST(OtlpProtobuf, RandomBytesNeverCrash) {
  std::mt19937_64 rng(42);
  std::string good = Request({GaugeMetric("g", {DoublePoint(1, kT, {StrKV("a", "b")})}),
                              SumMetric("s", 2, true, {IntPoint(3, kT)})},
                             {StrKV("service.name", "x")})
                         .s;
  for (int i = 0; i < 20000; ++i) {
    std::string buf;
    if (i % 2 == 0) {
      buf.resize(rng() % 64);
      for (char& c : buf) c = static_cast<char>(rng());
    } else {
      buf = good;
      for (int k = 0; k < 3; ++k) buf[rng() % buf.size()] = static_cast<char>(rng());
    }
    (void)DecodeMetrics(buf, Encoding::kProtobuf, Opts());
    (void)DecodeMetrics(buf, Encoding::kJson, Opts());
    (void)Gunzip(buf, 1 << 20);
  }
}

// ---------------------------------------------------------------------------
// JSON decoding.

// As in the OTLP spec's examples/metrics.json.
constexpr std::string_view kSpecExample = R"({
  "resourceMetrics": [
    {
      "resource": {
        "attributes": [
          { "key": "service.name", "value": { "stringValue": "my.service" } }
        ]
      },
      "scopeMetrics": [
        {
          "scope": {
            "name": "my.library",
            "version": "1.0.0",
            "attributes": [
              { "key": "my.scope.attribute", "value": { "stringValue": "some scope attribute" } }
            ]
          },
          "metrics": [
            {
              "name": "my.counter",
              "unit": "1",
              "description": "I am a Counter",
              "sum": {
                "aggregationTemporality": 2,
                "isMonotonic": true,
                "dataPoints": [
                  {
                    "asDouble": 5,
                    "startTimeUnixNano": "1544712660300000000",
                    "timeUnixNano": "1544712660300000000",
                    "attributes": [
                      { "key": "my.counter.attr", "value": { "stringValue": "some value" } }
                    ]
                  }
                ]
              }
            },
            {
              "name": "my.gauge",
              "unit": "1",
              "description": "I am a Gauge",
              "gauge": {
                "dataPoints": [
                  {
                    "asDouble": 10,
                    "timeUnixNano": "1544712660300000000",
                    "attributes": [
                      { "key": "my.gauge.attr", "value": { "stringValue": "some value" } }
                    ]
                  }
                ]
              }
            },
            {
              "name": "my.histogram",
              "unit": "1",
              "description": "I am a Histogram",
              "histogram": {
                "aggregationTemporality": 1,
                "dataPoints": [
                  {
                    "startTimeUnixNano": "1544712660300000000",
                    "timeUnixNano": "1544712660300000000",
                    "count": 2,
                    "sum": 2,
                    "bucketCounts": [1, 1],
                    "explicitBounds": [1],
                    "min": 0,
                    "max": 2
                  }
                ]
              }
            }
          ]
        }
      ]
    }
  ]
})";

TEST(OtlpJson, SpecExample) {
  DecodeResult r = MustDecode(kSpecExample, Encoding::kJson);
  EXPECT_EQ(r.accepted_points, 2u);
  EXPECT_EQ(r.rejected_points, 1u);
  ASSERT_EQ(r.batch.series.size(), 2u);
  EXPECT_EQ(LabelsOf(r.batch.series[0]),
            "{__name__=\"my_counter_total\",job=\"my.service\",my_counter_attr=\"some value\","
            "node=\"gpu-1\"}");
  EXPECT_EQ(r.batch.series[0].samples[0].t_ms, 1544712660300);
  EXPECT_EQ(r.batch.series[0].samples[0].value, 5);
  EXPECT_EQ(
      LabelsOf(r.batch.series[1]),
      "{__name__=\"my_gauge\",job=\"my.service\",my_gauge_attr=\"some value\",node=\"gpu-1\"}");
  EXPECT_EQ(r.batch.families[0].type, wire::MetricType::kCounter);
  EXPECT_EQ(r.batch.families[0].help, "I am a Counter");
}

TEST(OtlpJson, NumbersStringsEnumsAndSnakeCase) {
  std::string body = R"({"resource_metrics":[{"scope_metrics":[{"metrics":[
    {"name":"a","sum":{"aggregation_temporality":"AGGREGATION_TEMPORALITY_CUMULATIVE",
      "is_monotonic":true,"data_points":[{"as_int":"9007199254740993","time_unix_nano":1544712660300000000}]}},
    {"name":"b","gauge":{"dataPoints":[{"asInt":-4,"timeUnixNano":"0"},
      {"asDouble":"NaN","timeUnixNano":"1544712660300000000","attributes":[
        {"key":"n","value":{"intValue":"12"}},{"key":"d","value":{"doubleValue":2.5}},
        {"key":"t","value":{"boolValue":false}},{"key":"by","value":{"bytesValue":"aGk="}},
        {"key":"l","value":{"arrayValue":{"values":[{"stringValue":"x"},{"intValue":1}]}}},
        {"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}},
        {"key":"e","value":{}}]}]}},
    {"name":"c","sum":{"aggregationTemporality":1,"dataPoints":[{"asInt":1}]}},
    {"name":"d","summary":{"dataPoints":[{},{}]}},
    {"name":"e","exponentialHistogram":{"dataPoints":[{}]}},
    {"name":"f"}
  ]}]}]})";
  DecodeResult r = MustDecode(body, Encoding::kJson);
  EXPECT_EQ(r.accepted_points, 3u);
  EXPECT_EQ(r.rejected_points, 4u);
  const wire::Series* a = Find(r, "a_total");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->samples[0].value, 9007199254740992.0);  // int64 -> double
  ASSERT_EQ(r.batch.series.size(), 3u);
  EXPECT_EQ(r.batch.series[1].samples[0].t_ms, kNow);
  EXPECT_EQ(r.batch.series[1].samples[0].value, -4);
  EXPECT_TRUE(std::isnan(r.batch.series[2].samples[0].value));
  EXPECT_EQ(LabelsOf(r.batch.series[2]),
            "{__name__=\"b\",by=\"aGk=\",d=\"2.5\",l=\"[\\\"x\\\",1]\",m=\"{\\\"k\\\":\\\"v\\\"}\","
            "n=\"12\",node=\"gpu-1\",t=\"false\"}");
}

TEST(OtlpJson, MalformedInputIsRejected) {
  ExpectBad("", Encoding::kJson, "JSON");
  ExpectBad("{", Encoding::kJson, "JSON");
  ExpectBad("[]", Encoding::kJson, "object");
  ExpectBad(R"({"resourceMetrics":{}})", Encoding::kJson, "array");
  ExpectBad(R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":5}]}]}]})", Encoding::kJson,
            "name must be a string");
  ExpectBad(
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":[{"asInt":"1x"}]}}]}]}]})",
      Encoding::kJson, "asInt");
  ExpectBad(
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":[{"asInt":1,"timeUnixNano":-5}]}}]}]}]})",
      Encoding::kJson, "negative");
  ExpectBad(
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":[{"asDouble":true}]}}]}]}]})",
      Encoding::kJson, "asDouble");
  ExpectBad(std::string(100000, '['), Encoding::kJson, "nested deeper");
  ExpectBad("{\"a\":\"\xff\"}", Encoding::kJson, "JSON");
  // Deep AnyValue nesting within the JSON depth limit is still bounded.
  std::string v = R"({"stringValue":"x"})";
  for (int i = 0; i < 20; ++i) v = R"({"arrayValue":{"values":[)" + v + "]}}";
  ExpectBad(
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":[{"asInt":1,"attributes":[{"key":"k","value":)" +
          v + "}]}]}}]}]}]}",
      Encoding::kJson, "nested deeper");
}

// ---------------------------------------------------------------------------
// gzip, responses, names.

TEST(OtlpGzip, RoundTripAndErrors) {
  std::string body = Request({GaugeMetric("g", {DoublePoint(1, kT)})}).s;
  auto r = Gunzip(Gzip(body), kMaxBodyBytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, body);
  // Two members concatenated.
  auto two = Gunzip(Gzip("ab") + Gzip("cd"), 100);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, "abcd");
  std::string gz = Gzip(body);
  EXPECT_EQ(Gunzip(gz.substr(0, gz.size() - 5), kMaxBodyBytes).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip("not gzip at all", kMaxBodyBytes).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip("", kMaxBodyBytes).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip(gz + "junk", kMaxBodyBytes).status().code(), StatusCode::kInvalidArgument);
  // A bomb: 64 MiB of zeros in a small body.
  std::string bomb = Gzip(std::string(64 << 20, '\0'));
  EXPECT_LT(bomb.size(), 1u << 20);
  EXPECT_EQ(Gunzip(bomb, kMaxBodyBytes).status().code(), StatusCode::kResourceExhausted);
}

TEST(OtlpResponse, Encodings) {
  EXPECT_EQ(EncodeResponse(Encoding::kProtobuf, 0, ""), "");
  EXPECT_EQ(EncodeResponse(Encoding::kJson, 0, ""), "{}");
  EXPECT_EQ(EncodeResponse(Encoding::kProtobuf, 3, "no"),
            std::string("\x0a\x06\x08\x03\x12\x02no", 8));
  json j = json::parse(EncodeResponse(Encoding::kJson, 3, "no"));
  EXPECT_EQ(j["partialSuccess"]["rejectedDataPoints"], "3");
  EXPECT_EQ(j["partialSuccess"]["errorMessage"], "no");
  EXPECT_EQ(EncodeStatus(Encoding::kProtobuf, 3, "bad"), std::string("\x08\x03\x12\x03"
                                                                     "bad",
                                                                     7));
  json s = json::parse(EncodeStatus(Encoding::kJson, 3, "bad"));
  EXPECT_EQ(s["code"], 3);
  EXPECT_EQ(s["message"], "bad");
}

TEST(OtlpNames, Sanitising) {
  EXPECT_EQ(SanitizeMetricName("http.server.duration"), "http_server_duration");
  EXPECT_EQ(SanitizeMetricName("a:b"), "a:b");
  EXPECT_EQ(SanitizeMetricName("2xx"), "_2xx");
  EXPECT_EQ(SanitizeMetricName("é"), "__");
  EXPECT_EQ(SanitizeLabelName("a:b"), "a_b");
  EXPECT_EQ(SanitizeLabelName("2xx"), "key_2xx");
  EXPECT_EQ(SanitizeLabelName("__name__"), "key__name__");
  EXPECT_EQ(SanitizeLabelName("_x"), "_x");
}

// The fuzz target's seeds (fuzz/corpus/otlp_fuzz) are real requests.
TEST(OtlpCorpus, SeedsDecode) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  if (src == nullptr) GTEST_SKIP() << "VIGIL_SOURCE_DIR is not set";
  auto read = [&](const std::string& name) {
    std::ifstream f(std::string(src) + "/fuzz/corpus/otlp_fuzz/" + name, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  std::string pb = read("request.pb");
  DecodeResult r = MustDecode(pb, Encoding::kProtobuf);
  EXPECT_EQ(r.accepted_points, 3u);
  EXPECT_EQ(r.rejected_points, 2u);
  ASSERT_NE(Find(r, "train_steps_total"), nullptr);
  EXPECT_EQ(LabelsOf(*Find(r, "train_steps_total")),
            "{__name__=\"train_steps_total\",instance=\"rank-0\",job=\"trainer\",node=\"gpu-1\","
            "rank=\"3\"}");
  auto gz = Gunzip(read("request.pb.gz"), kMaxBodyBytes);
  ASSERT_TRUE(gz.ok());
  EXPECT_EQ(*gz, pb);
  DecodeResult j = MustDecode(read("request.json"), Encoding::kJson);
  EXPECT_EQ(j.accepted_points, 2u);
  EXPECT_EQ(j.rejected_points, 1u);
}

// ---------------------------------------------------------------------------
// The route, through the net::Router with a real metrics store.

class OtlpRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path() + "/tsdb";
    o.env = &env_;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ingester_ = std::make_unique<ingest::Ingester>(db_.get());
    AddOtlpRoutes(&router_, {ingester_.get(), "gpu-1", &env_});
  }
  void TearDown() override { ASSERT_TRUE(db_->Close().ok()); }

  net::HttpResponse Post(std::string body, std::string content_type, std::string encoding = "") {
    auto m = router_.Find("POST", "/v1/metrics");
    EXPECT_NE(m.route, nullptr);
    if (m.route == nullptr) return {};
    EXPECT_EQ(m.route->options.max_body_bytes, kMaxBodyBytes);
    net::HttpRequest req;
    req.method = "POST";
    req.target = req.path = "/v1/metrics";
    if (!content_type.empty()) req.headers.Add("Content-Type", content_type);
    if (!encoding.empty()) req.headers.Add("Content-Encoding", encoding);
    req.body = std::move(body);
    return m.route->handler(req);
  }

  std::vector<wire::Series> Stored(const std::string& name) {
    auto r = db_->Select({{tsdb::MatchType::kEqual, "__name__", name}}, 0, INT64_MAX / 2);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<wire::Series>{};
  }

  TempDir tmp_;
  ManualClockEnv env_{kNow};
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<ingest::Ingester> ingester_;
  net::Router router_;
};

TEST_F(OtlpRoutesTest, ProtobufIsStored) {
  std::string body = Request({SumMetric("train.steps", 2, true, {IntPoint(100, kT)})},
                             {StrKV("service.name", "trainer")})
                         .s;
  net::HttpResponse res = Post(body, "application/x-protobuf");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.content_type, "application/x-protobuf");
  EXPECT_EQ(res.body, "");
  auto series = Stored("train_steps_total");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(wire::LabelsToString(series[0].labels),
            "{__name__=\"train_steps_total\",job=\"trainer\",node=\"gpu-1\"}");
  ASSERT_EQ(series[0].samples.size(), 1u);
  EXPECT_EQ(series[0].samples[0].value, 100);
  bool found = false;
  for (const auto& f : db_->Families()) {
    if (f.name == "train_steps_total") found = f.type == wire::MetricType::kCounter;
  }
  EXPECT_TRUE(found);
}

TEST_F(OtlpRoutesTest, JsonGzipAndPartialSuccess) {
  net::HttpResponse res = Post(Gzip(kSpecExample), "application/json; charset=utf-8", "gzip");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.content_type, "application/json");
  json j = json::parse(res.body);
  EXPECT_EQ(j["partialSuccess"]["rejectedDataPoints"], "1");
  EXPECT_NE(j["partialSuccess"]["errorMessage"].get<std::string>().find("histogram"),
            std::string::npos);
  EXPECT_EQ(Stored("my_gauge").size(), 1u);
  EXPECT_EQ(Stored("my_counter_total").size(), 1u);

  net::HttpResponse full = Post(R"({"resourceMetrics":[]})", "application/json");
  EXPECT_EQ(full.status, 200);
  EXPECT_EQ(full.body, "{}");
}

TEST_F(OtlpRoutesTest, Errors) {
  net::HttpResponse r = Post("x", "text/plain");
  EXPECT_EQ(r.status, 415);
  EXPECT_NE(r.body.find("Content-Type"), std::string::npos);
  EXPECT_EQ(Post("x", "").status, 415);
  EXPECT_EQ(Post("x", "application/json", "br").status, 415);

  net::HttpResponse bad = Post("\x0a\xff\xff\xff\x0f", "application/x-protobuf");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.content_type, "application/x-protobuf");
  EXPECT_EQ(bad.body.substr(0, 2), "\x08\x03");  // google.rpc.Status{code: 3, ...}
  EXPECT_NE(bad.body.find("exceeds"), std::string::npos);

  net::HttpResponse bad_json = Post("{nope", "application/json");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(json::parse(bad_json.body)["code"], 3);

  EXPECT_EQ(Post("garbage", "application/json", "gzip").status, 400);
  EXPECT_EQ(Post(Gzip(std::string(kMaxBodyBytes + 1, ' ')), "application/json", "gzip").status,
            413);
}

// Over HTTP, as an SDK exporter sends it; a body over the limit gets the
// server's 413 before the handler runs.
TEST_F(OtlpRoutesTest, OverHttp) {
  net::HttpServer::Options ho;
  ho.listen = "127.0.0.1:0";
  net::HttpServer server(ho, std::move(router_));
  ASSERT_TRUE(server.Start().ok());
  std::string url = "http://127.0.0.1:" + std::to_string(server.bound_port()) + "/v1/metrics";
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = url;
  req.headers.Add("Content-Type", "application/x-protobuf");
  req.headers.Add("Content-Encoding", "gzip");
  req.body = Gzip(Request({GaugeMetric("gpu.util", {DoublePoint(97, kT)})}).s);
  auto res = net::HttpFetch(req);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, "");
  EXPECT_EQ(Stored("gpu_util").size(), 1u);

  // Only the head of an oversized request: the server answers from the
  // Content-Length alone.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.bound_port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string head =
      "POST /v1/metrics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(kMaxBodyBytes + 1) + "\r\n\r\n";
  ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
  char buf[256] = {};
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  ASSERT_GT(n, 12);
  EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 413");
  server.Stop();
}

}  // namespace
}  // namespace vigil::api
