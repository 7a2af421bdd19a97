// The IM bot channels: each vendor's body shape, signature (the expected
// values computed with Python's hmac/base64, an implementation independent
// of Vigil's), size limits with a storm of alerts, the vendors' answers, and
// one delivery to a loopback receiver.
#include "notify/im_bots.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/manual_clock_env.h"
#include "net/http_server.h"
#include "notify/test_alerts.h"

namespace vigil::notify {
namespace {

using alert::Alert;
using alert::AlertState;
using alert::Severity;
using nlohmann::json;

using testing::Firing;
using testing::Group;

constexpr int64_t kNow = 1'764'641'139'000;

TEST(ImBotsTest, FeishuCardIsSignedTheVendorsWay) {
  ImOptions o;
  o.kind = ImKind::kFeishu;
  o.url = "https://open.feishu.cn/open-apis/bot/v2/hook/xyz";
  o.secret = "SEC-feishu";
  o.language = Language::kChinese;
  net::HttpClientRequest req = ImRequest(o, Group(2), kNow);
  EXPECT_EQ(req.url, o.url);
  json body = json::parse(req.body);
  EXPECT_EQ(body["msg_type"], "interactive");
  EXPECT_EQ(body["timestamp"], "1764641139");
  EXPECT_EQ(body["sign"], "TsDrYz+g0W+9cQCP8LP+hyyZmt2e5xFhYZ1mpXZuPQI=");
  EXPECT_EQ(body["card"]["header"]["template"], "red");
  EXPECT_EQ(body["card"]["header"]["title"]["content"], "【告警 critical】gpu-07 上 2 条告警");
  std::string first = body["card"]["elements"][0]["text"]["content"];
  EXPECT_NE(first.find("gpu-07 上的 GPU 0 温度 95 °C"), std::string::npos) << first;
  EXPECT_NE(first.find("GPU 0 (NVIDIA H100 80GB HBM3) GPU-1"), std::string::npos) << first;
  EXPECT_EQ(body["card"]["elements"].back()["actions"][0]["url"],
            "http://vigil.example:9300/#alerts");
  // No secret, no signature fields.
  o.secret.clear();
  EXPECT_FALSE(json::parse(ImRequest(o, Group(1), kNow).body).contains("sign"));
}

// Every message says what to do while an alert fires (in the channel's
// language), and the diagnosis once there is one; a resolution does not
// repeat the advice.
TEST(ImBotsTest, AMessageSaysWhatToDoAndTheDiagnosis) {
  alert::Notification n = Group(1);
  n.alerts[0].steps_en = "Check the fan, airflow and slot.";
  n.alerts[0].steps_zh = "检查风扇、风道和插槽。";
  n.alerts[0].diagnosis =
      R"({"summary": "fan 3 stopped", "summary_zh": "3 号风扇停转", "suggestions": [{"text": "Halve the batch", "text_zh": "减半", "parameter": "batch_size", "current": "16", "suggested": "8"}]})";
  ImOptions o;
  o.kind = ImKind::kWeCom;
  o.url = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k";
  o.language = Language::kEnglish;
  std::string en = json::parse(ImRequest(o, n, kNow).body)["markdown"]["content"];
  EXPECT_NE(en.find("> What to do: Check the fan, airflow and slot."), std::string::npos) << en;
  EXPECT_NE(en.find("> Diagnosis: fan 3 stopped"), std::string::npos) << en;
  EXPECT_NE(en.find("> Suggestion: Halve the batch (batch_size: 16 → 8)"), std::string::npos) << en;
  o.language = Language::kChinese;
  std::string zh = json::parse(ImRequest(o, n, kNow).body)["markdown"]["content"];
  EXPECT_NE(zh.find("> 建议：检查风扇、风道和插槽。"), std::string::npos) << zh;
  EXPECT_NE(zh.find("> 诊断：3 号风扇停转"), std::string::npos) << zh;
  EXPECT_NE(zh.find("> 修改建议：减半 (batch_size: 16 → 8)"), std::string::npos) << zh;
  n.alerts[0].state = alert::AlertState::kResolved;
  n.alerts[0].resolved_at_ms = n.alerts[0].fired_at_ms + 60'000;
  n.alerts[0].diagnosis = "{}";
  std::string resolved = json::parse(ImRequest(o, n, kNow).body)["markdown"]["content"];
  EXPECT_EQ(resolved.find("建议"), std::string::npos) << resolved;
  EXPECT_EQ(resolved.find("诊断"), std::string::npos) << resolved;
}

// The job's log lines that tell what happened go in every bot's message as
// code spans: a log line never becomes markup (a backtick cannot end the
// span); a resolution does not quote them again.
TEST(ImBotsTest, AMessageQuotesTheLogLinesAsCode) {
  alert::Notification n = Group(1);
  n.alerts[0].log_excerpt = {
      "    loss.backward()",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
      "see `nvidia-smi` **now** <at user_id=\"all\">"};
  for (ImKind kind : {ImKind::kWeCom, ImKind::kDingTalk, ImKind::kFeishu, ImKind::kSlack}) {
    ImOptions o;
    o.kind = kind;
    o.url = "https://bot.example/hook?key=k";
    o.language = Language::kEnglish;
    std::string body = ImRequest(o, n, kNow).body;
    SCOPED_TRACE(body);
    EXPECT_NE(body.find("> Log:"), std::string::npos);
    EXPECT_NE(body.find(kind == ImKind::kFeishu
                            ? "> torch.OutOfMemoryError&#58; CUDA out of memory. Tried to "
                              "allocate 2.00 GiB\\n"
                            : "> `torch.OutOfMemoryError: CUDA out of memory. Tried to "
                              "allocate 2.00 GiB`"),
              std::string::npos);
    if (kind == ImKind::kFeishu) {
      // lark_md has no code span: its markup characters as references.
      EXPECT_NE(body.find("> see &#96;nvidia-smi&#96; &#42;&#42;now&#42;&#42; &#60;at "
                          "user&#95;id=&#34;all&#34;&#62;\\n"),
                std::string::npos);
    } else if (kind == ImKind::kSlack) {
      EXPECT_NE(body.find("> `see 'nvidia-smi' **now** &lt;at user_id=\\\"all\\\"&gt;`"),
                std::string::npos);
    } else {
      EXPECT_NE(body.find("> `see 'nvidia-smi' **now** <at user_id=\\\"all\\\">`"),
                std::string::npos);
    }
  }
  ImOptions o;
  o.kind = ImKind::kWeCom;
  o.url = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k";
  o.language = Language::kChinese;
  EXPECT_NE(ImRequest(o, n, kNow).body.find("> 日志："), std::string::npos);
  n.alerts[0].state = AlertState::kResolved;
  n.alerts[0].resolved_at_ms = n.alerts[0].fired_at_ms + 60'000;
  EXPECT_EQ(ImRequest(o, n, kNow).body.find("OutOfMemoryError"), std::string::npos);
}

TEST(ImBotsTest, DingTalkSignsInTheQueryAndMentionsOnCritical) {
  ImOptions o;
  o.kind = ImKind::kDingTalk;
  o.url = "https://oapi.dingtalk.com/robot/send?access_token=abc";
  o.secret = "SECdingtalk123";
  o.at_mobiles = {"13800000000"};
  net::HttpClientRequest req = ImRequest(o, Group(1), kNow);
  EXPECT_EQ(req.url,
            "https://oapi.dingtalk.com/robot/send?access_token=abc&timestamp=1764641139000"
            "&sign=YN%2BCcenO1FnMu0DzZ4FxRC37Vggs2%2FdvQZ9M6OE2n8I%3D");
  json body = json::parse(req.body);
  EXPECT_EQ(body["msgtype"], "markdown");
  EXPECT_EQ(body["markdown"]["title"], "[FIRING critical] 1 alert on gpu-07");
  EXPECT_EQ(body["at"]["atMobiles"], json::array({"13800000000"}));
  EXPECT_NE(std::string(body["markdown"]["text"]).find("@13800000000"), std::string::npos);
  // A warning mentions nobody.
  alert::Notification w = Group(0);
  w.alerts.push_back(Firing("3", Severity::kWarning));
  EXPECT_TRUE(json::parse(ImRequest(o, w, kNow).body)["at"]["atMobiles"].empty());
}

TEST(ImBotsTest, AStormStaysWithinEachVendorsLimits) {
  alert::Notification storm = Group(200);
  for (Language lang : {Language::kEnglish, Language::kChinese}) {
    ImOptions o;
    o.language = lang;
    o.url = "https://x/y";
    o.kind = ImKind::kWeCom;
    std::string content = json::parse(ImRequest(o, storm, kNow).body)["markdown"]["content"];
    EXPECT_LE(content.size(), kWeComMaxContent);
    EXPECT_NE(content.find("(http://vigil.example:9300/#alerts)"), std::string::npos);
    EXPECT_NO_THROW((void)json(content).dump());  // still valid UTF-8 after the cut
    o.kind = ImKind::kFeishu;
    o.secret = "s";
    net::HttpClientRequest f = ImRequest(o, storm, kNow);
    EXPECT_LE(f.body.size(), kFeishuMaxBody);
    EXPECT_NE(f.body.find(lang == Language::kChinese ? "未列出" : "not listed"), std::string::npos);
    o.kind = ImKind::kDingTalk;
    EXPECT_LE(ImRequest(o, storm, kNow).body.size(), kDingTalkMaxBody);
    o.kind = ImKind::kSlack;
    json slack = json::parse(ImRequest(o, storm, kNow).body);
    EXPECT_LE(slack["blocks"].size(), 50u);
    EXPECT_LE(std::string(slack["text"]).size(), 3000u);
  }
}

TEST(ImBotsTest, CutAtLineKeepsWholeLinesAndCharacters) {
  EXPECT_EQ(CutAtLine("short", 100, "…"), "short");
  EXPECT_EQ(CutAtLine("line one\nline two\nline three", 20, "…"), "line one\n…");
  std::string zh = "温度温度温度温度";  // one line of 3-byte characters
  std::string cut = CutAtLine(zh, 10, "…");
  EXPECT_EQ(cut, "温度\n…");
}

TEST(ImBotsTest, VendorAnswers) {
  auto answer = [](ImKind k, int status, const std::string& body) {
    net::HttpResponse r;
    r.status = status;
    r.body = body;
    return CheckImAnswer(k, r).code();
  };
  EXPECT_EQ(answer(ImKind::kSlack, 200, "ok"), StatusCode::kOk);
  EXPECT_EQ(answer(ImKind::kSlack, 404, "no_service"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(answer(ImKind::kSlack, 429, ""), StatusCode::kUnavailable);
  EXPECT_EQ(answer(ImKind::kFeishu, 200, R"({"code":0,"msg":"success"})"), StatusCode::kOk);
  EXPECT_EQ(answer(ImKind::kFeishu, 200, R"({"StatusCode":0})"), StatusCode::kOk);
  EXPECT_EQ(answer(ImKind::kFeishu, 200, R"({"code":19021,"msg":"sign match fail"})"),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(answer(ImKind::kDingTalk, 200, R"({"errcode":0,"errmsg":"ok"})"), StatusCode::kOk);
  EXPECT_EQ(answer(ImKind::kDingTalk, 200, R"({"errcode":660026,"errmsg":"send too fast"})"),
            StatusCode::kUnavailable);
  EXPECT_EQ(answer(ImKind::kWeCom, 200, R"({"errcode":45009,"errmsg":"api freq out of limit"})"),
            StatusCode::kUnavailable);
  EXPECT_EQ(answer(ImKind::kWeCom, 200, "<html>"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(answer(ImKind::kWeCom, 502, ""), StatusCode::kUnavailable);
}

// DingTalk's 20 a minute: the 21st message within a minute never reaches
// the bot; a minute later they go again. Slack: one a second.
TEST(ImBotsTest, NeverPushesABotIntoItsVendorsThrottle) {
  int received = 0;
  net::Router router;
  router.Handle("POST", "/b", [&](const net::HttpRequest&) {
    ++received;
    return net::HttpResponse::Json(200, R"({"errcode":0,"errmsg":"ok"})");
  });
  net::HttpServer::Options so;
  so.listen = "127.0.0.1:0";
  net::HttpServer server(so, std::move(router));
  ASSERT_TRUE(server.Start().ok());
  ManualClockEnv env(kNow);
  ImOptions o;
  o.kind = ImKind::kDingTalk;
  o.url = "http://127.0.0.1:" + std::to_string(server.bound_port()) + "/b";
  o.env = &env;
  ImChannel ding(o);
  for (int i = 0; i < 20; ++i) {
    env.now += 1000;
    ASSERT_TRUE(ding.Send(Group(1)).ok()) << i;
  }
  env.now += 1000;
  Status held = ding.Send(Group(1));
  EXPECT_EQ(held.code(), StatusCode::kUnavailable);
  EXPECT_NE(held.message().find("rate limit"), std::string::npos);
  EXPECT_EQ(received, 20);
  env.now += 40'000;  // the first message is a minute old now
  EXPECT_TRUE(ding.Send(Group(1)).ok());
  EXPECT_EQ(received, 21);

  o.kind = ImKind::kSlack;
  o.url = "http://127.0.0.1:" + std::to_string(server.bound_port()) + "/slack-not-there";
  ImChannel slack(o);
  EXPECT_EQ(slack.Send(Group(1)).code(), StatusCode::kFailedPrecondition);  // 404, but sent
  EXPECT_EQ(slack.Send(Group(1)).code(), StatusCode::kUnavailable);         // same second
  env.now += 1000;
  EXPECT_EQ(slack.Send(Group(1)).code(), StatusCode::kFailedPrecondition);
}

TEST(ImBotsTest, DeliversToAReceiverAndKeepsTheSecretOutOfErrors) {
  std::string got;
  net::Router router;
  router.Handle("POST", "/robot/send", [&](const net::HttpRequest& r) {
    got = r.target;
    return net::HttpResponse::Json(200, R"({"errcode":0,"errmsg":"ok"})");
  });
  net::HttpServer::Options so;
  so.listen = "127.0.0.1:0";
  net::HttpServer server(so, std::move(router));
  ASSERT_TRUE(server.Start().ok());
  ImOptions o;
  o.kind = ImKind::kDingTalk;
  o.url = "http://127.0.0.1:" + std::to_string(server.bound_port()) +
          "/robot/send?access_token=TOPSECRET";
  o.secret = "SECx";
  ImChannel channel(o);
  Status st = channel.Send(Group(1));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(got.find("access_token=TOPSECRET&timestamp="), std::string::npos) << got;
  server.Stop();
  st = channel.Send(Group(1));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.ToString().find("TOPSECRET"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace vigil::notify
