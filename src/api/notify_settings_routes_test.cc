// The notification settings routes over a fake NotifySettings: paths and
// names, status codes for each kind of error, the answer of a test (its
// URLs cut to scheme and host), the body bound, and that a browser page of
// another origin, or a body that is not JSON, changes nothing and sends
// nothing; recipients and routes the same way. (What is written to config.json:
// cli/notify_settings_test.cc.)
#include "api/notify_settings_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/route_test_util.h"

namespace vigil::api {
namespace {

using nlohmann::json;
using Fields = HeaderFields;

class FakeSettings final : public NotifySettings {
 public:
  Result<std::string> View() override { return std::string(R"({"channels":[]})"); }
  Status Put(const std::string& name, std::string_view body) override {
    calls.push_back("put " + name + " " + std::string(body));
    return answer;
  }
  Status Remove(const std::string& name) override {
    calls.push_back("delete " + name);
    return answer;
  }
  Result<NotifyTestOutcome> Test(std::string_view body) override {
    calls.push_back("test " + std::string(body));
    if (!answer.ok()) return answer;
    return NotifyTestOutcome{"lark", "feishu", delivery};
  }
  Result<std::string> RecipientsView() override { return std::string(R"({"recipients":[]})"); }
  Status PutRecipient(const std::string& name, std::string_view body) override {
    calls.push_back("put recipient " + name + " " + std::string(body));
    return answer;
  }
  Status RemoveRecipient(const std::string& name) override {
    calls.push_back("delete recipient " + name);
    return answer;
  }
  Result<std::string> RoutesView() override { return std::string(R"({"routes":[]})"); }
  Status PutRoutes(std::string_view body) override {
    calls.push_back("put routes " + std::string(body));
    return answer;
  }
  std::vector<std::string> calls;
  Status answer;
  Status delivery;
};

class NotifySettingsRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override { AddNotifySettingsRoutes(&router_, &settings_); }

  net::HttpResponse Send(const std::string& method, const std::string& path,
                         const std::string& body = "", Fields fields = {}) {
    if (fields.empty()) fields = {{"Host", "127.0.0.1:9300"}, {"Content-Type", "application/json"}};
    return CallRoute(router_, method, path, body, fields);
  }
  static json Body(const net::HttpResponse& res) { return json::parse(res.body, nullptr, false); }

  net::Router router_;
  FakeSettings settings_;
};

TEST_F(NotifySettingsRoutesTest, ListsPutsAndDeletes) {
  net::HttpResponse res = Send("GET", "/api/v1/notify/channels");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(Body(res), json::parse(R"({"status":"success","data":{"channels":[]}})"));
  res = Send("PUT", "/api/v1/notify/channels/lark bot", R"({"type":"feishu"})");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"], json::parse(R"({"name":"lark bot","saved":true})"));
  // A DELETE needs no body nor Content-Type (a browser's fetch sends none).
  res = Send("DELETE", "/api/v1/notify/channels/lark bot", "", {{"Host", "127.0.0.1:9300"}});
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"]["deleted"], true);
  EXPECT_EQ(settings_.calls,
            (std::vector<std::string>{"put lark bot {\"type\":\"feishu\"}", "delete lark bot"}));
  for (const char* bad : {"/api/v1/notify/channels/", "/api/v1/notify/channels/a/b",
                          "/api/v1/notify/channels/a\x01"}) {
    res = Send("PUT", bad, "{}");
    EXPECT_EQ(res.status, 400) << bad;
  }
  res = Send("PUT", "/api/v1/notify/channels/" + std::string(129, 'x'), "{}");
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(settings_.calls.size(), 2u);
}

TEST_F(NotifySettingsRoutesTest, EachKindOfErrorHasItsStatus) {
  const std::pair<Status, int> cases[] = {
      {InvalidArgument("config.json: notify.channels[0].url must be ..."), 400},
      {NotFound("config.json has no channel \"x\""), 404},
      {FailedPrecondition("notify.routes[0] sends alerts to \"x\""), 409},
      {ResourceExhausted("a test notification is being sent"), 429},
      {IoError("cannot rename"), 500},
  };
  for (const auto& [st, status] : cases) {
    settings_.answer = st;
    for (const char* method : {"PUT", "DELETE"}) {
      net::HttpResponse res = Send(method, "/api/v1/notify/channels/x", "{}");
      EXPECT_EQ(res.status, status) << st.ToString();
      EXPECT_EQ(Body(res)["status"], "error");
      EXPECT_EQ(Body(res)["error"], st.message());
    }
    EXPECT_EQ(Send("POST", "/api/v1/notify/test", "{}").status, status);
  }
}

TEST_F(NotifySettingsRoutesTest, ATestAnswersWhetherItArrived) {
  net::HttpResponse res = Send("POST", "/api/v1/notify/test", R"({"channel":"lark"})");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"], json::parse(R"({"channel":"lark","type":"feishu",
                                               "delivered":true,"answer":"delivered"})"));
  settings_.delivery = InvalidArgument(
      "feishu https://open.feishu.cn/open-apis/bot/v2/hook/TOKEN refused: 19021 sign match fail");
  res = Send("POST", "/api/v1/notify/test", R"({"channel":"lark"})");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"]["delivered"], false);
  EXPECT_EQ(Body(res)["data"]["answer"],
            "feishu https://open.feishu.cn/... refused: 19021 sign match fail");
  EXPECT_EQ(res.body.find("TOKEN"), std::string::npos);
}

TEST_F(NotifySettingsRoutesTest, BodiesAreBounded) {
  auto m = router_.Find("PUT", "/api/v1/notify/channels/x");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->options.max_body_bytes, kMaxNotifySettingsBody);
  m = router_.Find("POST", "/api/v1/notify/test");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->options.max_body_bytes, kMaxNotifySettingsBody);
}

// A page of another origin cannot change a channel nor send a test: not as
// a "simple" request (no JSON Content-Type: 415), nor naming its origin (403).
TEST_F(NotifySettingsRoutesTest, NothingChangesFromAnotherOriginOrWithoutJson) {
  const std::pair<std::string, std::string> host = {"Host", "127.0.0.1:9300"};
  const std::pair<std::string, std::string> json_type = {"Content-Type", "application/json"};
  const std::pair<std::string, std::string> evil = {"Origin", "http://evil.example"};
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded"}) {
    EXPECT_EQ(Send("PUT", "/api/v1/notify/channels/x", "{}", {host, {"Content-Type", type}}).status,
              415);
    EXPECT_EQ(Send("POST", "/api/v1/notify/test", "{}", {host, {"Content-Type", type}}).status,
              415);
  }
  EXPECT_EQ(Send("PUT", "/api/v1/notify/channels/x", "{}", {host}).status, 415);
  EXPECT_EQ(Send("PUT", "/api/v1/notify/channels/x", "{}", {host, json_type, evil}).status, 403);
  EXPECT_EQ(Send("DELETE", "/api/v1/notify/channels/x", "", {host, evil}).status, 403);
  net::HttpResponse res = Send("POST", "/api/v1/notify/test", "{}", {host, json_type, evil});
  EXPECT_EQ(res.status, 403);
  EXPECT_NE(Body(res)["error"].get<std::string>().find("may not send test notifications"),
            std::string::npos);
  EXPECT_TRUE(settings_.calls.empty());
  EXPECT_EQ(Send("PUT", "/api/v1/notify/channels/x", "{}",
                 {host, json_type, {"Origin", "http://127.0.0.1:9300"}})
                .status,
            200);
}

// Recipients by name as channels are; the routes as one list; another
// origin changes neither.
TEST_F(NotifySettingsRoutesTest, RecipientsAndRoutes) {
  EXPECT_EQ(Body(Send("GET", "/api/v1/notify/recipients"))["data"],
            json::parse(R"({"recipients":[]})"));
  EXPECT_EQ(Body(Send("GET", "/api/v1/notify/routes"))["data"], json::parse(R"({"routes":[]})"));
  net::HttpResponse res = Send("PUT", "/api/v1/notify/recipients/alice", R"({"team":"vision"})");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"], json::parse(R"({"name":"alice","saved":true})"));
  res = Send("DELETE", "/api/v1/notify/recipients/alice", "", {{"Host", "127.0.0.1:9300"}});
  EXPECT_EQ(Body(res)["data"], json::parse(R"({"name":"alice","deleted":true})"));
  res = Send("PUT", "/api/v1/notify/routes", R"({"routes":[]})");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res)["data"], json::parse(R"({"saved":true})"));
  EXPECT_EQ(Send("PUT", "/api/v1/notify/recipients/a/b", "{}").status, 400);
  EXPECT_EQ(settings_.calls,
            (std::vector<std::string>{"put recipient alice {\"team\":\"vision\"}",
                                      "delete recipient alice", "put routes {\"routes\":[]}"}));

  settings_.answer = FailedPrecondition("notify.routes[0] sends alerts to \"alice\"");
  EXPECT_EQ(Send("DELETE", "/api/v1/notify/recipients/alice").status, 409);
  settings_.calls.clear();
  const Fields evil = {{"Host", "127.0.0.1:9300"},
                       {"Content-Type", "application/json"},
                       {"Origin", "http://evil.example"}};
  EXPECT_EQ(Send("PUT", "/api/v1/notify/recipients/x", "{}", evil).status, 403);
  EXPECT_EQ(Send("DELETE", "/api/v1/notify/recipients/x", "", evil).status, 403);
  EXPECT_EQ(Send("PUT", "/api/v1/notify/routes", R"({"routes":[]})", evil).status, 403);
  EXPECT_EQ(Send("PUT", "/api/v1/notify/routes", "{}", {{"Host", "127.0.0.1:9300"}}).status, 415);
  EXPECT_TRUE(settings_.calls.empty());
  auto m = router_.Find("PUT", "/api/v1/notify/routes");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->options.max_body_bytes, kMaxNotifySettingsBody);
}

}  // namespace
}  // namespace vigil::api
