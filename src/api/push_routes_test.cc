#include "api/push_routes.h"

#include <gtest/gtest.h>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::api {
namespace {

constexpr int64_t kNow = 1'764'460'800'000;

class PushRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path();
    o.env = &env_;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    PushRouteDeps deps;
    ingester_ = std::make_unique<ingest::Ingester>(db_.get());
    deps.ingester = ingester_.get();
    deps.node = "gpu-1";
    deps.env = &env_;
    AddPushRoutes(&router_, deps);
  }
  void TearDown() override { ASSERT_TRUE(db_->Close().ok()); }

  net::HttpResponse Send(const std::string& method, const std::string& target, std::string body,
                         const std::string& content_type = "text/plain; version=0.0.4") {
    net::HttpRequest req;
    req.method = method;
    req.target = target;
    req.path = target.substr(0, target.find('?'));
    req.body = std::move(body);
    req.headers.Add("Content-Type", content_type);
    auto m = router_.Find(method, req.path);
    EXPECT_NE(m.route, nullptr) << method << " " << target;
    if (m.route == nullptr) return net::HttpResponse::Text(404, "");
    return m.route->handler(req);
  }

  std::vector<wire::Series> Select(const std::string& name) {
    auto r = db_->Select({{tsdb::MatchType::kEqual, "__name__", name}}, 0, INT64_MAX);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<wire::Series>{};
  }

  TempDir tmp_;
  ManualClockEnv env_{kNow};
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<ingest::Ingester> ingester_;
  net::Router router_;
};

TEST_F(PushRoutesTest, StoresPushedSamplesWithGroupingAndNodeLabels) {
  net::HttpResponse r = Send("PUT", "/metrics/job/train/rank/0",
                             "# HELP train_loss Loss.\n# TYPE train_loss gauge\n"
                             "train_loss{phase=\"train\"} 0.25\n"
                             "# TYPE tokens_total counter\ntokens_total 1024 1764460700000\n");
  ASSERT_EQ(r.status, 200) << r.body;
  auto loss = Select("train_loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(wire::LabelsToString(loss[0].labels),
            "{__name__=\"train_loss\",job=\"train\",node=\"gpu-1\",phase=\"train\",rank=\"0\"}");
  ASSERT_EQ(loss[0].samples.size(), 1u);
  EXPECT_EQ(loss[0].samples[0].t_ms, kNow);
  EXPECT_EQ(loss[0].samples[0].value, 0.25);
  auto tokens = Select("tokens_total");
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].samples[0].t_ms, 1764460700000);  // the line's own timestamp
  bool typed = false;
  for (const auto& f : db_->Families()) {
    if (f.name == "tokens_total") typed = f.type == wire::MetricType::kCounter;
  }
  EXPECT_TRUE(typed);
}

TEST_F(PushRoutesTest, GroupingLabelsWinAndBase64ValuesAreDecoded) {
  // "/data/run 1" in base64url.
  net::HttpResponse r = Send("POST", "/metrics/job/eval/dir@base64/L2RhdGEvcnVuIDE",
                             "acc{job=\"other\",dir=\"x\"} 0.9\n");
  ASSERT_EQ(r.status, 200) << r.body;
  auto acc = Select("acc");
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(wire::LabelsToString(acc[0].labels),
            "{__name__=\"acc\",dir=\"/data/run 1\",job=\"eval\",node=\"gpu-1\"}");
  // Percent-encoded values too.
  ASSERT_EQ(Send("POST", "/metrics/job/a%20b", "x 1\n").status, 200);
  EXPECT_EQ(wire::LabelsToString(Select("x")[0].labels),
            "{__name__=\"x\",job=\"a b\",node=\"gpu-1\"}");
}

TEST_F(PushRoutesTest, BadPushesAreRefusedWithAReason) {
  EXPECT_EQ(Send("PUT", "/metrics/job/", "x 1\n").status, 400);
  EXPECT_EQ(Send("PUT", "/metrics/job/train/rank", "x 1\n").status, 400);
  EXPECT_EQ(Send("PUT", "/metrics/job/train/bad-name/1", "x 1\n").status, 400);
  EXPECT_EQ(Send("PUT", "/metrics/job/t/v@base64/!!", "x 1\n").status, 400);
  net::HttpResponse r = Send("PUT", "/metrics/job/train", "not a metric line {\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("line 1"), std::string::npos) << r.body;
  EXPECT_EQ(Send("PUT", "/metrics/job/train", "x 1\n", "application/vnd.google.protobuf").status,
            415);
  EXPECT_TRUE(Select("x").empty());
  // Deleting a group is accepted; history stays.
  ASSERT_EQ(Send("PUT", "/metrics/job/train", "y 1\n").status, 200);
  EXPECT_EQ(Send("DELETE", "/metrics/job/train", "").status, 202);
  EXPECT_EQ(Select("y").size(), 1u);
}

// A series a push replaces and does not push again, or a deleted group's,
// ends at the push: Latest (and so PromQL) stops answering it.
TEST_F(PushRoutesTest, ReplacedAndDeletedSeriesEnd) {
  auto current = [&](const std::string& name) {
    size_t n = 0;
    for (const auto& p : db_->Latest(0)) n += wire::MetricName(p.labels) == name;
    return n;
  };
  ASSERT_EQ(Send("PUT", "/metrics/job/train", "loss{rank=\"0\"} 1\nloss{rank=\"1\"} 1\n").status,
            200);
  ASSERT_EQ(Send("PUT", "/metrics/job/eval", "loss{rank=\"0\"} 1\n").status, 200);
  env_.now += 1000;
  ASSERT_EQ(Send("PUT", "/metrics/job/train", "loss{rank=\"0\"} 2\n").status, 200);
  EXPECT_EQ(current("loss"), 2u);  // train rank 0 and eval: other groups are not touched
  env_.now += 1000;
  EXPECT_EQ(Send("DELETE", "/metrics/job/train", "").status, 202);
  EXPECT_EQ(current("loss"), 1u);
  EXPECT_EQ(Select("loss").size(), 3u);  // history stays
  EXPECT_EQ(ingester_->Stats().push_staleness.markers, 2u);
}

}  // namespace
}  // namespace vigil::api
