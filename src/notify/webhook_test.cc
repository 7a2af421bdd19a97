// The webhook's body field by field (Alertmanager 0.25's, docs/notify.md),
// and delivery to a real HTTP server on loopback.
#include "notify/webhook.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>

#include "alert/tracker.h"
#include "net/http_server.h"

namespace vigil::notify {
namespace {

alert::Notification Sample() {
  alert::Alert a;
  a.rule = "gpu_temperature_high";
  a.severity = alert::Severity::kCritical;
  a.state = alert::AlertState::kFiring;
  a.labels = alert::AlertLabels(a.rule, a.severity, {{"gpu", "0"}, {"node", "n1"}});
  a.id = alert::Fingerprint(a.labels);
  a.active_at_ms = 1764641109000;
  a.fired_at_ms = 1764641139000;
  a.value = 91;
  a.threshold = 90;
  a.summary_en = "GPU 0 on n1 at 91 °C";
  a.summary_zh = "n1 上的 GPU 0 温度 91 °C";
  a.log_excerpt = {"step 90 loss 2.1", "step 91 loss 2.0"};
  alert::Alert r = a;
  r.labels = alert::AlertLabels(a.rule, a.severity, {{"gpu", "1"}, {"node", "n1"}});
  r.id = alert::Fingerprint(r.labels);
  r.state = alert::AlertState::kResolved;
  r.resolved_at_ms = 1764641150500;
  alert::Notification n;
  n.receiver = "hook";
  n.group_key = "hook:{node=\"n1\"}";
  n.group_labels = {{"node", "n1"}};
  n.alerts = {a, r};
  n.external_url = "http://127.0.0.1:9300";
  return n;
}

TEST(WebhookPayloadTest, AlertmanagerVersion4) {
  std::string body = WebhookPayload(Sample());
  ASSERT_EQ(body.back(), '\n');
  auto j = nlohmann::json::parse(body);
  EXPECT_EQ(j["version"], "4");
  EXPECT_EQ(j["status"], "firing");
  EXPECT_EQ(j["receiver"], "hook");
  EXPECT_EQ(j["groupKey"], "hook:{node=\"n1\"}");
  EXPECT_EQ(j["truncatedAlerts"], 0);
  EXPECT_EQ(j["groupLabels"], (nlohmann::json{{"node", "n1"}}));
  EXPECT_EQ(j["commonLabels"],
            (nlohmann::json{
                {"alertname", "gpu_temperature_high"}, {"node", "n1"}, {"severity", "critical"}}));
  EXPECT_EQ(j["externalURL"], "http://127.0.0.1:9300");
  ASSERT_EQ(j["alerts"].size(), 2u);
  const auto& firing = j["alerts"][0];
  EXPECT_EQ(firing["status"], "firing");
  EXPECT_EQ(firing["startsAt"], "2025-12-02T02:05:39Z");
  EXPECT_EQ(firing["endsAt"], "0001-01-01T00:00:00Z");
  EXPECT_EQ(firing["labels"]["gpu"], "0");
  EXPECT_EQ(firing["annotations"]["summary_zh"], "n1 上的 GPU 0 温度 91 °C");
  EXPECT_EQ(firing["annotations"]["value"], "91");
  EXPECT_EQ(firing["annotations"]["threshold"], "90");
  EXPECT_EQ(firing["annotations"]["log_excerpt"], "step 90 loss 2.1\nstep 91 loss 2.0");
  EXPECT_FALSE(j["alerts"][1]["annotations"].contains("log_excerpt")) << "not on a resolution";
  EXPECT_EQ(firing["fingerprint"], alert::Fingerprint({{"alertname", "gpu_temperature_high"},
                                                       {"gpu", "0"},
                                                       {"node", "n1"},
                                                       {"severity", "critical"}}));
  EXPECT_EQ(j["alerts"][1]["status"], "resolved");
  EXPECT_EQ(j["alerts"][1]["endsAt"], "2025-12-02T02:05:50.5Z");
  for (const char* key :
       {"receiver", "status", "alerts", "groupLabels", "commonLabels", "commonAnnotations",
        "externalURL", "version", "groupKey", "truncatedAlerts"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

TEST(WebhookChannelTest, PostsToAReceiverAndReportsItsFailures) {
  std::mutex mu;
  std::vector<std::string> bodies;
  std::atomic<int> status{200};
  net::Router router;
  router.Handle("POST", "/hook", [&](const net::HttpRequest& req) {
    std::lock_guard lock(mu);
    bodies.push_back(req.body);
    net::HttpResponse r;
    r.status = status.load();
    return r;
  });
  net::HttpServer::Options so;
  so.listen = "127.0.0.1:0";
  net::HttpServer server(so, std::move(router));
  ASSERT_TRUE(server.Start().ok());
  std::string base = "http://127.0.0.1:" + std::to_string(server.bound_port());
  WebhookChannel hook({base + "/hook"});
  EXPECT_TRUE(hook.Send(Sample()).ok());
  status = 503;
  EXPECT_EQ(hook.Send(Sample()).code(), StatusCode::kUnavailable);
  status = 400;
  EXPECT_EQ(hook.Send(Sample()).code(), StatusCode::kFailedPrecondition);
  WebhookChannel nobody({"http://127.0.0.1:1/hook"});
  EXPECT_EQ(nobody.Send(Sample()).code(), StatusCode::kUnavailable);
  std::lock_guard lock(mu);
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(bodies[0])["alerts"].size(), 2u);
}

}  // namespace
}  // namespace vigil::notify
