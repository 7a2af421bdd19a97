// The alerts API on an engine over a real store: Prometheus' shapes (what
// Grafana reads) and Vigil's records.
#include "api/alert_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::api {
namespace {

using nlohmann::json;

class AlertRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path() + "/tsdb";
    db_ = std::move(tsdb::Db::Open(o)).value();
    query_ = std::make_unique<query::Engine>(db_.get());
    alert::AlertEngineOptions ao;
    alert::AlertEngineSources s;
    s.query = query_.get();
    s.env = &env_;
    engine_ = std::move(alert::AlertEngine::Create(s, ao)).value();
    AddAlertRoutes(&router_, engine_.get());
  }
  void TearDown() override { (void)db_->Close(); }

  void Memory(double percent) {
    wire::MetricBatch b;
    wire::Labels gpu = {{"gpu", "0"}, {"node", "n1"}};
    auto add = [&](const char* name, double v) {
      wire::Series s{gpu, {{env_.now, v}}};
      s.labels.insert(s.labels.begin(), {"__name__", name});
      b.series.push_back(s);
    };
    add("DCGM_FI_DEV_FB_USED", percent);
    add("DCGM_FI_DEV_FB_FREE", 100 - percent);
    ASSERT_TRUE(db_->Append(b).ok());
  }

  json Get(const std::string& path, std::vector<std::pair<std::string, std::string>> query = {},
           int status = 200) {
    auto m = router_.Find("GET", path);
    EXPECT_NE(m.route, nullptr) << path;
    if (m.route == nullptr) return json();
    net::HttpRequest req;
    req.query = std::move(query);
    net::HttpResponse res = m.route->handler(req);
    EXPECT_EQ(res.status, status) << res.body;
    return json::parse(res.body, nullptr, false);
  }

  TempDir tmp_;
  ManualClockEnv env_{1'764'641'139'000};
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<query::Engine> query_;
  std::unique_ptr<alert::AlertEngine> engine_;
  net::Router router_;
};

TEST_F(AlertRoutesTest, PrometheusShapesAndVigilRecords) {
  for (int i = 0; i < 40; ++i) {  // 98% full: critical after 30 s, warning pending
    env_.now += 1000;
    Memory(98);
    engine_->EvaluateOnce();
  }
  json alerts = Get("/api/v1/alerts");
  EXPECT_EQ(alerts["status"], "success");
  ASSERT_EQ(alerts["data"]["alerts"].size(), 2u) << alerts.dump();
  const json& first = alerts["data"]["alerts"][0];
  EXPECT_EQ(first["state"], "firing");
  EXPECT_EQ(first["labels"]["alertname"], "gpu_memory_near_full");
  EXPECT_EQ(first["labels"]["severity"], "critical");
  EXPECT_EQ(first["value"], "9.8e+01");
  EXPECT_EQ(first["activeAt"], "2025-12-02T02:05:40Z");
  EXPECT_EQ(alerts["data"]["alerts"][1]["state"], "pending");

  json rules = Get("/api/v1/rules");
  const json& group = rules["data"]["groups"][0];
  EXPECT_EQ(group["interval"], 1);
  bool seen = false;
  for (const json& r : group["rules"]) {
    EXPECT_EQ(r["type"], "alerting");
    EXPECT_EQ(r["health"], "ok") << r.dump();
    if (r["name"] == "gpu_memory_near_full" && r["labels"]["severity"] == "critical") {
      seen = true;
      EXPECT_EQ(r["state"], "firing");
      EXPECT_EQ(r["duration"], 30);
      EXPECT_EQ(r["vigil"]["threshold"], 97);
      EXPECT_EQ(r["vigil"]["clear"], 94);
      EXPECT_NE(r["query"].get<std::string>().find("> 97"), std::string::npos) << r["query"];
      EXPECT_EQ(r["alerts"].size(), 1u);
    }
  }
  EXPECT_TRUE(seen);

  json records = Get("/api/v1/alerts/records");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["rule"], "gpu_memory_near_full");
  EXPECT_EQ(records[0]["severity"], "critical");
  EXPECT_EQ(records[0]["value"], 98);
  EXPECT_EQ(records[0]["threshold"], 97);
  EXPECT_EQ(records[0]["diagnosis"], json::object());
  EXPECT_EQ(records[0]["labels"]["gpu"], "0");
  EXPECT_TRUE(records[0]["resolved_at"].is_null());
  EXPECT_FALSE(records[0].contains("inhibited"));

  for (int i = 0; i < 3; ++i) {
    env_.now += 1000;
    Memory(50);
    engine_->EvaluateOnce();
  }
  EXPECT_TRUE(Get("/api/v1/alerts/records").empty());
  json all = Get("/api/v1/alerts/records", {{"all", "1"}});
  ASSERT_EQ(all.size(), 1u);  // the pending warning never fired: no history
  EXPECT_EQ(all[0]["state"], "resolved");
  EXPECT_FALSE(all[0]["resolved_at"].is_null());
  Get("/api/v1/alerts/records", {{"limit", "0"}}, 400);
}

}  // namespace
}  // namespace vigil::api
