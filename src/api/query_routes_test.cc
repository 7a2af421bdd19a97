// The query API's handlers: JSON shapes, parameters and errors, called
// through the net::Router (no sockets).
#include "api/query_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/temp_dir.h"

namespace vigil::api {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1'700'000'000'000;  // ms

class QueryRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = dir_;
    o.retention_ms = 100LL * 365 * 86'400'000;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    wire::MetricBatch b;
    for (int gpu = 0; gpu < 2; ++gpu) {
      wire::Series s{{{"__name__", "gpu_util"}, {"gpu", std::to_string(gpu)}}, {}};
      for (int i = 0; i <= 10; ++i) s.samples.push_back({kT0 + i * 15'000, 10.0 * gpu + i});
      b.series.push_back(s);
    }
    ASSERT_TRUE(db_->Append(b).ok());
    AddQueryRoutes(&router_, db_.get());
  }
  void TearDown() override { (void)db_->Close(); }

  net::HttpResponse Get(const std::string& path, std::vector<std::pair<std::string, std::string>> q,
                        const std::string& method = "GET") {
    net::HttpRequest r;
    r.method = method;
    r.path = path;
    r.query = std::move(q);
    auto m = router_.Find(method, path);
    EXPECT_NE(m.route, nullptr) << path;
    return m.route->handler(r);
  }

  TempDir tmp_;  // outlives db_ (declared first)
  std::string dir_ = tmp_.path();
  std::unique_ptr<tsdb::Db> db_;
  net::Router router_;
};

std::string Secs(int64_t ms) { return query::FormatTimestamp(ms); }

TEST_F(QueryRoutesTest, InstantVectorShape) {
  net::HttpResponse r =
      Get("/api/v1/query", {{"query", "gpu_util"}, {"time", Secs(kT0 + 150'000)}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["status"], "success");
  EXPECT_EQ(j["data"]["resultType"], "vector");
  ASSERT_EQ(j["data"]["result"].size(), 2u);
  EXPECT_EQ(j["data"]["result"][0]["metric"], json({{"__name__", "gpu_util"}, {"gpu", "0"}}));
  EXPECT_EQ(j["data"]["result"][0]["value"][0], 1'700'000'150.0);
  EXPECT_EQ(j["data"]["result"][0]["value"][1], "10");
  EXPECT_EQ(j["data"]["result"][1]["value"][1], "20");
}

TEST_F(QueryRoutesTest, ScalarAndSpecialValues) {
  net::HttpResponse r = Get("/api/v1/query", {{"query", "1/0"}, {"time", "1700000000.5"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(
      r.body,
      R"({"status":"success","data":{"resultType":"scalar","result":[1700000000.5,"+Inf"]}})");
  r = Get("/api/v1/query", {{"query", "-1/0"}, {"time", "1700000000"}});
  EXPECT_NE(r.body.find("\"-Inf\""), std::string::npos);
  r = Get("/api/v1/query", {{"query", "0/0"}, {"time", "1700000000"}});
  EXPECT_NE(r.body.find("\"NaN\""), std::string::npos);
  r = Get("/api/v1/query", {{"query", "\"hi\""}, {"time", "1700000000"}});
  EXPECT_EQ(r.body,
            R"({"status":"success","data":{"resultType":"string","result":[1700000000,"hi"]}})");
}

TEST_F(QueryRoutesTest, RangeMatrixShapeWithRfc3339AndDurationStep) {
  // kT0 is 2023-11-14T22:13:20Z.
  net::HttpResponse r = Get("/api/v1/query_range", {{"query", "max(gpu_util)"},
                                                    {"start", "2023-11-14T22:13:20Z"},
                                                    {"end", "2023-11-14T22:15:20.000Z"},
                                                    {"step", "1m"}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["data"]["resultType"], "matrix");
  ASSERT_EQ(j["data"]["result"].size(), 1u);
  EXPECT_EQ(j["data"]["result"][0]["metric"], json::object());
  EXPECT_EQ(j["data"]["result"][0]["values"],
            json::parse(R"([[1700000000,"10"],[1700000060,"14"],[1700000120,"18"]])"));
}

TEST_F(QueryRoutesTest, PostForm) {
  net::HttpRequest r;
  r.method = "POST";
  r.path = "/api/v1/query";
  r.headers.Add("Content-Type", "application/x-www-form-urlencoded");
  r.body = "query=sum%28gpu_util%29&time=" + Secs(kT0 + 150'000);
  net::HttpResponse resp = router_.Find("POST", r.path).route->handler(r);
  ASSERT_EQ(resp.status, 200) << resp.body;
  EXPECT_EQ(json::parse(resp.body)["data"]["result"][0]["value"][1], "30");
}

TEST_F(QueryRoutesTest, Errors) {
  net::HttpResponse r = Get("/api/v1/query", {{"query", "sum(gpu_util"}});
  EXPECT_EQ(r.status, 400);
  json j = json::parse(r.body);
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["errorType"], "bad_data");
  EXPECT_NE(j["error"].get<std::string>().find("1:13: parse error"), std::string::npos) << r.body;

  r = Get("/api/v1/query", {{"query", "histogram_quantile(0.9, x)"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("histogram_quantile is not supported by Vigil yet"), std::string::npos);

  r = Get("/api/v1/query_range",
          {{"query", "gpu_util"}, {"start", "10"}, {"end", "5"}, {"step", "1"}});
  EXPECT_EQ(r.status, 400);
  r = Get("/api/v1/query_range",
          {{"query", "gpu_util"}, {"start", "0"}, {"end", "100000"}, {"step", "1"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("11,000 points"), std::string::npos);
  r = Get("/api/v1/query_range",
          {{"query", "gpu_util"}, {"start", "x"}, {"end", "5"}, {"step", "1"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("invalid parameter \\\"start\\\""), std::string::npos) << r.body;

  // Many-to-many matching is an execution error.
  r = Get("/api/v1/query", {{"query", "gpu_util + on() gpu_util"}, {"time", Secs(kT0 + 150'000)}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["errorType"], "execution");

  r = Get("/api/v1/series", {});
  EXPECT_EQ(r.status, 400);
}

TEST_F(QueryRoutesTest, SeriesLabelsAndValues) {
  net::HttpResponse r = Get("/api/v1/series", {{"match[]", "gpu_util{gpu=\"1\"}"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"status":"success","data":[{"__name__":"gpu_util","gpu":"1"}]})");
  r = Get("/api/v1/labels", {});
  EXPECT_EQ(r.body, R"({"status":"success","data":["__name__","gpu"]})");
  r = Get("/api/v1/label/gpu/values", {});
  EXPECT_EQ(r.body, R"({"status":"success","data":["0","1"]})");
  r = Get("/api/v1/label/__name__/values", {{"start", Secs(kT0)}, {"end", Secs(kT0 + 1000)}});
  EXPECT_EQ(r.body, R"({"status":"success","data":["gpu_util"]})");
}

}  // namespace
}  // namespace vigil::api
