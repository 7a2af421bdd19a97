// The alerts API on an engine over a real store: Prometheus' shapes (what
// Grafana reads) and Vigil's records.
#include "api/alert_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "api/route_test_util.h"
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
    o.env = &env_;  // the store's maintenance must not see today's date
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
    req.method = "GET";
    req.path = path;
    req.query = std::move(query);
    net::HttpResponse res = m.route->handler(req);
    EXPECT_EQ(res.status, status) << res.body;
    return json::parse(res.body, nullptr, false);
  }

  using Fields = std::vector<std::pair<std::string, std::string>>;

  // A request with `fields` as its header; by default what `vigil silence`
  // sends (a Host, and Content-Type: application/json with a POST's body).
  net::HttpResponse Send(const std::string& method, const std::string& path,
                         const std::string& body = "",
                         std::optional<Fields> fields = std::nullopt) {
    if (!fields) {
      fields = Fields{{"Host", "127.0.0.1:9300"}};
      if (method == "POST") fields->push_back({"Content-Type", "application/json"});
    }
    return CallRoute(router_, method, path, body, *fields);
  }

  // POSTs a silence; returns its id ("" when refused).
  std::string Silence(const json& body) {
    net::HttpResponse res = Send("POST", "/api/v1/silences", body.dump());
    EXPECT_EQ(res.status, 200) << res.body;
    json j = json::parse(res.body, nullptr, false);
    return j.is_object() && j.contains("silenceID") ? j["silenceID"].get<std::string>() : "";
  }

  // The error message of a refused POST (400).
  std::string Refused(const std::string& body) {
    net::HttpResponse res = Send("POST", "/api/v1/silences", body);
    EXPECT_EQ(res.status, 400) << body << " -> " << res.body;
    json j = json::parse(res.body, nullptr, false);
    return j.is_object() ? j.value("error", "") : res.body;
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
    // No job reports in this test: the job rules were never evaluated.
    bool job_rule = r["query"].get<std::string>().starts_with("job report:");
    EXPECT_EQ(r["health"], job_rule ? "unknown" : "ok") << r.dump();
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

TEST_F(AlertRoutesTest, SilencesAddListMuteAndExpire) {
  for (int i = 0; i < 40; ++i) {
    env_.now += 1000;
    Memory(98);
    engine_->EvaluateOnce();
  }
  std::string id = Silence(json::parse(R"({
      "matchers": [{"name": "node", "value": "n1", "isRegex": false, "isEqual": true},
                   {"name": "alertname", "value": "gpu_memory.*", "isRegex": true}],
      "duration": "2h", "createdBy": "ops", "comment": "maintenance"})"));
  ASSERT_EQ(id.size(), 16u);
  json list = Get("/api/v1/silences");
  ASSERT_EQ(list.size(), 1u);
  const json& s = list[0];
  EXPECT_EQ(s["id"], id);
  EXPECT_EQ(s["status"]["state"], "active");
  EXPECT_EQ(s["startsAt"], "2025-12-02T02:06:19Z");
  EXPECT_EQ(s["endsAt"], "2025-12-02T04:06:19Z");
  EXPECT_EQ(s["createdAt"], s["startsAt"]);
  EXPECT_EQ(s["createdBy"], "ops");
  EXPECT_EQ(s["comment"], "maintenance");
  EXPECT_EQ(s["matchers"][1], json::parse(R"({"name": "alertname", "value": "gpu_memory.*",
                                               "isRegex": true, "isEqual": true})"));
  EXPECT_EQ(Get("/api/v1/silence/" + id)["id"], id);

  // Both alerts (firing critical, pending warning) are listed, silenced.
  json records = Get("/api/v1/alerts/records");
  ASSERT_EQ(records.size(), 2u);
  for (const json& r : records) EXPECT_EQ(r.value("silenced", false), true) << r.dump();

  // A pending silence (starting later), and an endsAt one: newest first.
  env_.now += 1000;
  std::string later = Silence({{"matchers", {{{"name", "node"}, {"value", "n2"}}}},
                               {"startsAt", "2025-12-02T10:00:00Z"},
                               {"endsAt", "2025-12-02T11:00:00Z"}});
  list = Get("/api/v1/silences");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], later);
  EXPECT_EQ(list[0]["status"]["state"], "pending");
  EXPECT_EQ(list[0]["matchers"][0]["isEqual"], true);  // Alertmanager's defaults
  EXPECT_EQ(list[0]["matchers"][0]["isRegex"], false);

  net::HttpResponse res = Send("DELETE", "/api/v1/silence/" + id);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["status"]["state"], "expired");
  EXPECT_EQ(Get("/api/v1/silence/" + id)["status"]["state"], "expired");
  records = Get("/api/v1/alerts/records");
  for (const json& r : records) EXPECT_FALSE(r.contains("silenced")) << r.dump();
  res = Send("DELETE", "/api/v1/silence/" + later);  // a pending one never starts
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["status"]["state"], "expired");
  EXPECT_EQ(Send("DELETE", "/api/v1/silence/" + id).status, 200);  // again: as it was

  res = Send("DELETE", "/api/v1/silence/0123456789abcdef");
  EXPECT_EQ(res.status, 404);
  EXPECT_NE(res.body.find("no silence has the id"), std::string::npos) << res.body;
  EXPECT_EQ(Send("GET", "/api/v1/silence/nope").status, 404);
}

TEST_F(AlertRoutesTest, BadSilencesAreRefusedWithAClearMessage) {
  auto has = [](const std::string& msg, const char* want) {
    return msg.find(want) != std::string::npos;
  };
  const std::string ok_matcher = R"({"name": "node", "value": "n1"})";
  EXPECT_PRED2(has, Refused("not json"), "JSON object");
  EXPECT_PRED2(has, Refused(R"({"duration": "2h"})"), "at least one matcher");
  EXPECT_PRED2(has, Refused(R"({"matchers": [], "duration": "2h"})"), "at least one matcher");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + "]}"), "endsAt or duration");
  EXPECT_PRED2(has,
               Refused(R"({"matchers": [)" + ok_matcher +
                       R"(], "duration": "2h", "endsAt": "2030-01-01T00:00:00Z"})"),
               "not both");
  EXPECT_PRED2(
      has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "endsAt": "2020-01-01T00:00:00Z"})"),
      "future");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "endsAt": "tomorrow"})"),
               "RFC 3339");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "duration": "2 hours"})"),
               "duration");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "duration": "0s"})"),
               "more than 0");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "duration": "2h",
                                "endAt": "x"})"),
               "unknown key \"endAt\"");
  EXPECT_PRED2(has, Refused(R"({"matchers": [)" + ok_matcher + R"(], "duration": "2h",
                                "id": "abc"})"),
               "not supported");
  EXPECT_PRED2(has, Refused(R"({"matchers": [{"name": "node"}], "duration": "2h"})"),
               "matchers[0] needs a name and a value");
  EXPECT_PRED2(has, Refused(R"({"matchers": [{"name": "node", "value": "x", "isRegex": "yes"}],
                           "duration": "2h"})"),
               "matchers[0].isRegex must be true or false");
  EXPECT_PRED2(has, Refused(R"({"matchers": [{"name": "node", "value": "(", "isRegex": true}],
                           "duration": "2h"})"),
               "does not compile");
  EXPECT_PRED2(has, Refused(R"({"matchers": [{"name": "no-de", "value": "x"}], "duration": "2h"})"),
               "label name");
  EXPECT_PRED2(has, Refused(R"({"matchers": [{"name": "node", "value": ".*", "isRegex": true}],
                           "duration": "2h"})"),
               "empty string");
  json big = {{"matchers", {{{"name", "node"}, {"value", std::string(1025, 'x')}}}},
              {"duration", "2h"}};
  EXPECT_PRED2(has, Refused(big.dump()), "1024 bytes");
  json many = {{"matchers", json::array()}, {"duration", "2h"}};
  for (int i = 0; i < 33; ++i) many["matchers"].push_back({{"name", "node"}, {"value", "n1"}});
  EXPECT_PRED2(has, Refused(many.dump()), "at most 32");
  many["matchers"].erase(many["matchers"].begin());
  EXPECT_EQ(Silence(many).size(), 16u);
  EXPECT_EQ(Get("/api/v1/silences").size(), 1u);  // the refused ones left nothing
}

TEST_F(AlertRoutesTest, AtMostAThousandActiveSilences) {
  json body = {{"matchers", {{{"name", "node"}, {"value", "n1"}}}}, {"duration", "1h"}};
  std::string first;
  for (size_t i = 0; i < alert::kMaxActiveSilences; ++i) {
    std::string id = Silence(body);
    ASSERT_FALSE(id.empty()) << i;
    if (i == 0) first = id;
  }
  EXPECT_NE(Refused(body.dump()).find("1000 active or pending"), std::string::npos);
  // An expired one makes room.
  ASSERT_EQ(Send("DELETE", "/api/v1/silence/" + first).status, 200);
  EXPECT_FALSE(Silence(body).empty());
}

// CSRF: a page on another origin can make a browser POST a text/plain or
// form body (or none) without asking first; only JSON makes the browser ask
// (a CORS preflight, never granted). Browsers name the page in Origin.
TEST_F(AlertRoutesTest, SilencesChangeOnlyAsJsonAndNotFromAnotherOrigin) {
  const std::string body =
      R"({"matchers": [{"name": "node", "value": "n1"}], "duration": "1h", "comment": "csrf"})";
  auto post = [&](Fields fields) { return Send("POST", "/api/v1/silences", body, fields); };
  auto error = [](const net::HttpResponse& res) {
    json j = json::parse(res.body, nullptr, false);
    return j.is_object() ? j.value("error", "") : res.body;
  };
  const std::pair<std::string, std::string> host = {"Host", "127.0.0.1:9300"};
  const std::pair<std::string, std::string> json_type = {"Content-Type", "application/json"};

  // Not JSON: 415, whatever the origin.
  for (const char* type :
       {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonx", ""}) {
    net::HttpResponse res = post({host, {"Content-Type", type}});
    EXPECT_EQ(res.status, 415) << type << " -> " << res.body;
    EXPECT_NE(error(res).find("Content-Type: application/json"), std::string::npos) << res.body;
  }
  net::HttpResponse res = post({host});
  EXPECT_EQ(res.status, 415) << res.body;
  EXPECT_NE(error(res).find("has no Content-Type"), std::string::npos) << res.body;
  EXPECT_EQ(post({host, {"Content-Type", "text/plain"}, {"Origin", "http://evil.example"}}).status,
            403);

  // Another origin: 403, JSON or not.
  for (const char* origin :
       {"http://evil.example", "null", "http://127.0.0.1:9301", "http://127.0.0.1",
        "http://127.0.0.1:9300.evil.example", "http://evil.example/127.0.0.1:9300",
        "http://127.0.0.1:9300/", "ftp://127.0.0.1:9300", ""}) {
    res = post({host, json_type, {"Origin", origin}});
    EXPECT_EQ(res.status, 403) << origin << " -> " << res.body;
    EXPECT_NE(error(res).find("another origin"), std::string::npos) << res.body;
  }
  EXPECT_EQ(post({json_type, {"Origin", "http://127.0.0.1:9300"}}).status, 403);  // no Host
  EXPECT_EQ(Get("/api/v1/silences").size(), 0u) << "nothing refused was added";

  // This server's own pages, and the CLI (no Origin): accepted.
  EXPECT_EQ(post({host, json_type}).status, 200);
  EXPECT_EQ(post({host, {"Content-Type", "Application/JSON; charset=utf-8"}}).status, 200);
  EXPECT_EQ(post({host, json_type, {"Origin", "http://127.0.0.1:9300"}}).status, 200);
  EXPECT_EQ(
      post({{"Host", "Vigil.Example:80"}, json_type, {"Origin", "http://vigil.example"}}).status,
      200);
  EXPECT_EQ(post({{"Host", "[::1]:9300"}, json_type, {"Origin", "http://[::1]:9300"}}).status, 200);
  // Behind a proxy that sets X-Forwarded-Host (a header no foreign page
  // can send without a preflight).
  EXPECT_EQ(post({host,
                  json_type,
                  {"X-Forwarded-Host", "vigil.example.com, proxy"},
                  {"Origin", "https://vigil.example.com"}})
                .status,
            200);
  json list = Get("/api/v1/silences");
  ASSERT_EQ(list.size(), 6u);
  std::string id = list[0]["id"];

  // DELETE: no Origin but our own; no body, or JSON.
  const std::string path = "/api/v1/silence/" + id;
  res = Send("DELETE", path, "", Fields{host, {"Origin", "http://evil.example"}});
  EXPECT_EQ(res.status, 403) << res.body;
  res = Send("DELETE", path, "", Fields{host, {"Content-Type", "text/plain"}});
  EXPECT_EQ(res.status, 415) << res.body;
  EXPECT_EQ(Get(path)["status"]["state"], "active");
  res = Send("DELETE", path, "", Fields{host, json_type, {"Origin", "http://127.0.0.1:9300"}});
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Send("DELETE", "/api/v1/silence/" + list[1]["id"].get<std::string>()).status, 200);
  // Reading is not a change: a foreign page's browser keeps the answer from it (no CORS).
  EXPECT_EQ(Send("GET", path, "", Fields{host, {"Origin", "http://evil.example"}}).status, 200);
}

class Refusing final : public alert::Notifier {
 public:
  Status Send(const alert::Notification&) override {
    return Unavailable("http://127.0.0.1:1 answered HTTP 500: down");
  }
};

// The delivery log through the API: the entry a refusing channel left
// pending, with its attempts and answer, the counts, and the channel failing.
TEST_F(AlertRoutesTest, NotificationsShowTheDeliveryLogAndAFailingChannel) {
  Refusing hook;
  alert::AlertEngineOptions ao;
  ao.dispatch.channels = {"hook"};
  ao.channels = {{"hook", &hook}};
  alert::AlertEngineSources s;
  s.query = query_.get();
  s.env = &env_;
  engine_ = std::move(alert::AlertEngine::Create(s, ao)).value();
  AddAlertRoutes(&router_, engine_.get());
  for (int i = 0; i < 40; ++i) {
    env_.now += 1000;
    Memory(98);
    engine_->EvaluateOnce();
  }
  json j = Get("/api/v1/notifications");
  ASSERT_TRUE(j.is_object()) << j;
  const json& d = j["data"];
  EXPECT_EQ(d["counts"]["pending"], 1) << d;
  ASSERT_EQ(d["channels"].size(), 1u);
  EXPECT_EQ(d["channels"][0]["name"], "hook");
  EXPECT_EQ(d["channels"][0]["failing"], true);
  EXPECT_NE(d["channels"][0]["last_error"].get<std::string>().find("HTTP 500"), std::string::npos);
  ASSERT_EQ(d["entries"].size(), 1u);
  const json& e = d["entries"][0];
  EXPECT_EQ(e["state"], "pending");
  EXPECT_GE(e["attempts"].get<int>(), 2);
  EXPECT_TRUE(e["next_attempt_at"].is_string());
  EXPECT_EQ(e["alerts"][0]["rule"], "gpu_memory_near_full");
  EXPECT_EQ(Get("/api/v1/notifications", {{"state", "delivered"}})["data"]["entries"].size(), 0u);
  EXPECT_EQ(Get("/api/v1/notifications", {{"receiver", "other"}})["data"]["entries"].size(), 0u);
  Get("/api/v1/notifications", {{"state", "lost"}}, 400);
  Get("/api/v1/notifications", {{"limit", "5000"}}, 400);
}

// The inbox through the API: the firing alert's item, the view's counts,
// marking it read (only as JSON from this origin), filters, bad parameters.
TEST_F(AlertRoutesTest, TheInboxListsCountsAndMarksItems) {
  for (int i = 0; i < 40; ++i) {
    env_.now += 1000;
    Memory(98);
    engine_->EvaluateOnce();
  }
  json j = Get("/api/v1/inbox");
  ASSERT_TRUE(j.is_object()) << j;
  const json& items = j["data"]["items"];
  ASSERT_GE(items.size(), 1u) << j;
  EXPECT_EQ(items[0]["kind"], "firing");
  EXPECT_EQ(items[0]["read"], false);
  EXPECT_EQ(items[0]["alert"]["rule"], "gpu_memory_near_full");
  EXPECT_TRUE(items[0]["recipients"].empty());  // no recipients: everyone's
  const int64_t unread = j["data"]["counts"]["unread"];
  EXPECT_EQ(unread, static_cast<int64_t>(items.size()));
  EXPECT_TRUE(j["data"]["recipients"].is_array());

  const std::string mark = R"({"ids": [)" + std::to_string(items[0]["id"].get<int64_t>()) + "]}";
  EXPECT_EQ(Send("POST", "/api/v1/inbox/read", mark,
                 Fields{{"Host", "127.0.0.1:9300"},
                        {"Content-Type", "application/json"},
                        {"Origin", "http://evil.example"}})
                .status,
            403);
  EXPECT_EQ(Send("POST", "/api/v1/inbox/read", mark,
                 Fields{{"Host", "127.0.0.1:9300"}, {"Content-Type", "text/plain"}})
                .status,
            415);
  EXPECT_EQ(Get("/api/v1/inbox")["data"]["counts"]["unread"], unread) << "nothing refused changed";
  net::HttpResponse res = Send("POST", "/api/v1/inbox/read", mark);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["data"]["changed"], 1);
  j = Get("/api/v1/inbox");
  EXPECT_EQ(j["data"]["items"][0]["read"], true);
  EXPECT_EQ(j["data"]["counts"]["unread"], unread - 1);
  EXPECT_EQ(Get("/api/v1/inbox", {{"unread", "1"}})["data"]["items"].size(),
            static_cast<size_t>(unread - 1));
  EXPECT_EQ(Get("/api/v1/inbox", {{"severity", "info"}})["data"]["items"].size(), 0u);
  Get("/api/v1/inbox", {{"severity", "loud"}}, 400);
  Get("/api/v1/inbox", {{"limit", "501"}}, 400);
  Get("/api/v1/inbox", {{"before", "-1"}}, 400);
  for (const char* bad : {"[]", R"({"ids": []})", R"({"ids": [0]})", R"({"ids": ["1"]})",
                          R"({"read": "yes"})", R"({"who": 1})", "not json"}) {
    EXPECT_EQ(Send("POST", "/api/v1/inbox/read", bad).status, 400) << bad;
  }
  // Without ids: the whole view.
  res = Send("POST", "/api/v1/inbox/read", R"({"read": true})");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Get("/api/v1/inbox")["data"]["counts"]["unread"], 0);
}

}  // namespace
}  // namespace vigil::api
