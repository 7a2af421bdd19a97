// The SMS channel: the text (every preset, the 300-character bound, Chinese
// counted in characters), template escaping in each context (URL, JSON,
// form, XML), the caps per recipient and day (messages and cost, the day's
// end in the channel's zone) with what they hold back counted and kept, and
// retries that reach only those who did not get the message — against a
// loopback gateway.
#include "notify/sms.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "alert/rules.h"
#include "core/manual_clock_env.h"
#include "net/http_server.h"
#include "notify/test_alerts.h"

namespace vigil::notify {
namespace {

using nlohmann::json;

using testing::Firing;
using testing::Group;

size_t Chars(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

TEST(SmsTest, TextIsOneLinePerAlertWithinTheBound) {
  std::string one = SmsText(Group(1), Language::kEnglish);
  EXPECT_EQ(one,
            "[FIRING critical] 1 alert on gpu-07\n"
            "[critical] GPU 0 on gpu-07 at 95 °C (alert at 90 °C)\n"
            "http://vigil.example:9300/#alerts");
  for (Language lang : {Language::kEnglish, Language::kChinese}) {
    std::string many = SmsText(Group(40), lang);
    EXPECT_LE(Chars(many), kSmsMaxChars) << many;
    EXPECT_TRUE(many.ends_with("\nhttp://vigil.example:9300/#alerts")) << many;
    EXPECT_NE(many.find(lang == Language::kChinese ? "另有 " : " more"), std::string::npos);
  }
  // One huge summary is cut, not left out.
  alert::Notification huge = Group(1);
  huge.alerts[0].summary_en = std::string(1000, 'x');
  std::string cut = SmsText(huge, Language::kEnglish);
  EXPECT_LE(Chars(cut), kSmsMaxChars);
  EXPECT_NE(cut.find("[critical] xxx"), std::string::npos);
  EXPECT_NE(cut.find("…"), std::string::npos);
  for (const alert::Rule& rule : alert::Presets()) {
    alert::Notification n = Group(1);
    n.alerts[0].rule = rule.id;
    n.alerts[0].summary_en = rule.summary_en;
    n.alerts[0].summary_zh = rule.summary_zh;
    for (Language lang : {Language::kEnglish, Language::kChinese}) {
      SmsValues v = SmsValuesOf(n, lang);
      EXPECT_LE(Chars(v.message), kSmsMaxChars) << rule.id;
      EXPECT_EQ(v.alertname, rule.id);
      EXPECT_EQ(v.severity, "critical");
    }
  }
}

TEST(SmsTest, TemplateValuesAreEscapedForTheirContext) {
  SmsValues v{"a \"quote\" & <b>\nline 2 温度", "critical", "gpu_xid", "+86 138"};
  SmsOptions o;
  o.url = "https://sms.example/send?to={{to}}&text={{ message }}";
  o.body = R"({"to": "{{to}}", "text": "{{message}}", "tag": "{{severity}}/{{alertname}}"})";
  auto r = SmsRequest(o, v);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(
      r->url,
      "https://sms.example/send?to=%2B86%20138&text=a%20%22quote%22%20%26%20%3Cb%3E%0Aline%202%20"
      "%E6%B8%A9%E5%BA%A6");
  json body = json::parse(r->body);
  EXPECT_EQ(body["text"], v.message) << "JSON-escaped, parsed back whole";
  EXPECT_EQ(body["tag"], "critical/gpu_xid");
  EXPECT_EQ(r->headers.Get("Content-Type").value_or(""), "application/json; charset=utf-8");
  // A form body.
  o.body = "To={{to}}&Body={{message}}";
  r = SmsRequest(o, v);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body,
            "To=%2B86%20138&Body=a%20%22quote%22%20%26%20%3Cb%3E%0Aline%202%20%E6%B8%A9%E5%BA%A6");
  EXPECT_EQ(r->headers.Get("Content-Type").value_or(""), "application/x-www-form-urlencoded");
  // XML, by its Content-Type.
  o.headers.Add("Content-Type", "text/xml");
  o.body = "<sms><text>{{message}}</text></sms>";
  r = SmsRequest(o, v);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->body.find("a &quot;quote&quot; &amp; &lt;b&gt;"), std::string::npos) << r->body;
  // No body: a GET.
  o.body.clear();
  EXPECT_EQ(SmsRequest(o, v)->method, "GET");
  // Mistakes are named.
  o.url = "https://x/?t={{text}}";
  EXPECT_NE(CheckSmsTemplates(o).message().find("{{text}}"), std::string::npos);
  o.url = "ftp://x/{{to}}";
  EXPECT_FALSE(CheckSmsTemplates(o).ok());
  o.url = "https://x/";
  o.headers = {};
  o.body = R"({"text": {{message}}})";  // unquoted: not JSON once filled
  EXPECT_NE(CheckSmsTemplates(o).message().find("not valid JSON"), std::string::npos);
}

// A loopback gateway that records what it gets and answers `status`.
struct Gateway {
  Gateway() {
    net::Router router;
    router.Handle("POST", "/send", [this](const net::HttpRequest& r) {
      std::lock_guard lock(mu);
      bodies.push_back(json::parse(r.body));
      int answer = bodies.back()["to"] == fail_to ? 503 : status;
      return net::HttpResponse::Json(answer, R"({"ok": true})");
    });
    net::HttpServer::Options so;
    so.listen = "127.0.0.1:0";
    server = std::make_unique<net::HttpServer>(so, std::move(router));
    EXPECT_TRUE(server->Start().ok());
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server->bound_port()) + "/send?key=APIKEY";
  }
  std::vector<std::string> to() {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (const json& b : bodies) out.push_back(b["to"]);
    return out;
  }
  std::mutex mu;
  std::vector<json> bodies;
  int status = 200;
  std::string fail_to;  // answered 503
  std::unique_ptr<net::HttpServer> server;
};

SmsOptions GatewayOptions(const Gateway& g, ManualClockEnv* env) {
  SmsOptions o;
  o.url = g.url();
  o.body = R"({"to": "{{to}}", "text": "{{message}}"})";
  o.to = {"+8613800000001", "+8613800000002"};
  o.env = env;
  o.utc_offset = [](int64_t) { return 8 * 3600; };  // UTC+8
  return o;
}

TEST(SmsTest, MessageCapHoldsBackTheNextAndCountsIt) {
  Gateway g;
  ManualClockEnv env(1'764'640'800'000);  // 2025-12-02 10:00 at UTC+8
  SmsOptions o = GatewayOptions(g, &env);
  o.max_per_day = 2;
  SmsChannel sms(o);
  EXPECT_TRUE(sms.Send(Group(1, "a")).ok());
  EXPECT_TRUE(sms.Send(Group(2, "a")).ok());
  EXPECT_EQ(g.to().size(), 4u);
  Status st = sms.Send(Group(3, "a"));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsCapped(st)) << st.ToString();
  EXPECT_NE(st.message().find("2 messages today, the cap is 2 a day"), std::string::npos);
  EXPECT_EQ(g.to().size(), 4u) << "nothing sent past the cap";
  EXPECT_EQ(sms.CappedCount(), 2);
  EXPECT_EQ(sms.Usage()["+8613800000001"].capped, 1);
  // A retry of the same message is not counted again.
  EXPECT_TRUE(IsCapped(sms.Send(Group(3, "a"))));
  EXPECT_EQ(sms.CappedCount(), 2);
  std::vector<CappedSms> held = sms.TakeCapped();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].to, "+8613800000001");
  EXPECT_EQ(held[0].group_key, "a");
  EXPECT_NE(held[0].text.find("3 alerts on gpu-07"), std::string::npos);
  EXPECT_TRUE(sms.TakeCapped().empty());
  // The next day begins at midnight UTC+8 (16:00 UTC): sent again.
  env.now = 1'764'691'200'000;  // 2025-12-03 00:00 at UTC+8
  EXPECT_TRUE(sms.Send(Group(4, "a")).ok());
  EXPECT_EQ(g.to().size(), 6u);
  EXPECT_EQ(sms.Usage()["+8613800000001"].sent, 1);
  EXPECT_EQ(sms.Usage()["+8613800000001"].capped_total, 1);
}

TEST(SmsTest, CostCapIsPerRecipient) {
  Gateway g;
  ManualClockEnv env(1'764'640'800'000);
  SmsOptions o = GatewayOptions(g, &env);
  o.max_per_day = 0;
  o.cost_per_message_micros = 50'000;   // 0.05
  o.max_cost_per_day_micros = 120'000;  // 0.12: two messages fit, not three
  SmsChannel sms(o);
  EXPECT_TRUE(sms.Send(Group(1, "a")).ok());
  EXPECT_TRUE(sms.Send(Group(2, "a")).ok());
  Status st = sms.Send(Group(3, "a"));
  EXPECT_TRUE(IsCapped(st)) << st.ToString();
  EXPECT_NE(st.message().find("0.1 spent today"), std::string::npos) << st.message();
  EXPECT_EQ(sms.Usage()["+8613800000001"].cost_micros, 100'000);
  EXPECT_EQ(sms.CappedCount(), 2);
}

TEST(SmsTest, ARetryReachesOnlyThoseWhoDidNotGetIt) {
  Gateway g;
  ManualClockEnv env(1'764'640'800'000);
  SmsChannel sms(GatewayOptions(g, &env));
  g.fail_to = "+8613800000002";
  Status st = sms.Send(Group(1));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("+8613800000002"), std::string::npos) << st.message();
  EXPECT_EQ(st.ToString().find("APIKEY"), std::string::npos) << "the URL's query is not shown";
  EXPECT_EQ(sms.Usage()["+8613800000002"].sent, 0) << "a failed request is not charged";
  g.fail_to.clear();
  EXPECT_TRUE(sms.Send(Group(1)).ok()) << "the engine's retry of the same message";
  EXPECT_EQ(g.to(),
            (std::vector<std::string>{"+8613800000001", "+8613800000002", "+8613800000002"}));
  // A new message goes to both again; a refusal is FailedPrecondition.
  g.status = 400;
  EXPECT_EQ(sms.Send(Group(2)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.to().size(), 5u);
}

}  // namespace
}  // namespace vigil::notify
