// The notification settings on config.json: no secret ever in the view, a
// secret left out kept, the view of a channel a valid body, the parser's
// refusals, other sections kept as they were, deletes refused while a route
// names the channel; on disk: mode 0600, a refused change leaving the file
// untouched, comments kept in config.json.bak, a change applied to the
// running engine, and the test notification against a receiver on loopback.
#include "cli/notify_settings.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "alert/test_store.h"
#include "core/env.h"
#include "core/temp_dir.h"
#include "net/http_server.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

// One channel of each kind that holds a secret, and the rest of a config.
const char* const kConfig = R"({
  "logs": {"level_floor": "info", "paths": ["/data/*.log"]},
  "alerts": {"time_scale": 0.5, "rules": {"gpu_temperature_high": {"warning": 80}}},
  "notify": {
    "group_wait": "2s",
    "channels": [
      {"name": "lark", "type": "feishu", "url": "https://open.feishu.cn/open-apis/bot/v2/hook/HOOKTOKEN",
       "secret": "FEISHUSECRET", "language": "en"},
      {"name": "ding", "type": "dingtalk", "url": "https://oapi.dingtalk.com/robot/send?access_token=DINGTOKEN",
       "secret": "SECDING", "at_mobiles": ["13800000000"]},
      {"name": "mail", "type": "email", "smtp": "smtp.example.org:587", "username": "vigil@example.org",
       "password": "MAILPASSWORD", "from": "Vigil <vigil@example.org>", "to": ["a@example.org"]},
      {"name": "phone", "type": "sms", "url": "https://sms.example.com/send?key=SMSKEY&to={{to}}",
       "body": "{\"apikey\": \"BODYKEY\", \"text\": \"{{message}}\"}",
       "headers": {"Authorization": "Bearer HEADERTOKEN"}, "to": ["+8613800000000"]},
      {"name": "hook", "type": "webhook", "url": "http://127.0.0.1:8080/HOOKPATH",
       "headers": {"X-Token": "WEBHOOKTOKEN"}}
    ],
    "routes": [{"match": {"severity": "critical"}, "channels": ["ding"]}]
  }
})";

const char* const kSecrets[] = {"HOOKTOKEN",    "FEISHUSECRET", "DINGTOKEN", "SECDING",
                                "MAILPASSWORD", "SMSKEY",       "BODYKEY",   "HEADERTOKEN",
                                "HOOKPATH",     "WEBHOOKTOKEN"};

json ViewJson(std::string_view text) {
  auto view = ChannelsView(text, "/home/config.json");
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  return json::parse(view.ok() ? *view : "{}");
}

json Channel(const json& data, const std::string& name) {
  for (const json& c : data["channels"]) {
    if (c["name"] == name) return c;
  }
  ADD_FAILURE() << "no channel " << name;
  return json::object();
}

const ChannelConfig* Find(const Config& c, const std::string& name) {
  for (const ChannelConfig& ch : c.notify.channels) {
    if (ch.name == name) return &ch;
  }
  return nullptr;
}

TEST(NotifySettingsTest, TheViewHasNoSecret) {
  auto view = ChannelsView(kConfig, "/home/config.json");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  for (const char* secret : kSecrets) {
    EXPECT_EQ(view->find(secret), std::string::npos) << secret << " in " << *view;
  }
  json data = json::parse(*view);
  EXPECT_EQ(data["path"], "/home/config.json");
  EXPECT_EQ(data["routes"][0]["channels"], json::array({"ding"}));
  json lark = Channel(data, "lark");
  EXPECT_EQ(lark["url"], "https://open.feishu.cn/...");
  EXPECT_EQ(lark["secret_set"], true);
  EXPECT_EQ(lark["language"], "en");
  EXPECT_EQ(Channel(data, "ding")["at_mobiles"], json::array({"13800000000"}));
  json mail = Channel(data, "mail");
  EXPECT_EQ(mail["password_set"], true);
  EXPECT_EQ(mail["username"], "vigil@example.org");
  EXPECT_EQ(mail["smtp"], "smtp.example.org:587");
  json phone = Channel(data, "phone");
  EXPECT_EQ(phone["body_set"], true);
  EXPECT_EQ(phone["header_names"], json::array({"Authorization"}));
  EXPECT_EQ(phone["url"], "https://sms.example.com/...");
  EXPECT_EQ(Channel(data, "hook")["url"], "http://127.0.0.1:8080/...");
}

TEST(NotifySettingsTest, ASecretLeftOutIsKept) {
  auto edit = WithChannel(kConfig, "lark", R"({"type": "feishu", "language": "zh"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  const ChannelConfig* lark = Find(edit->config, "lark");
  ASSERT_NE(lark, nullptr);
  EXPECT_EQ(lark->secret, "FEISHUSECRET");
  EXPECT_EQ(lark->url, "https://open.feishu.cn/open-apis/bot/v2/hook/HOOKTOKEN");
  EXPECT_EQ(lark->language, "zh");
  // A new secret and URL replace the stored ones; "" removes the secret.
  edit = WithChannel(kConfig, "lark",
                     R"({"type": "feishu", "url": "https://open.feishu.cn/new", "secret": "NEW"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(Find(edit->config, "lark")->secret, "NEW");
  EXPECT_EQ(Find(edit->config, "lark")->url, "https://open.feishu.cn/new");
  EXPECT_TRUE(Find(edit->config, "lark")->language.empty());  // what the body leaves out goes
  edit = WithChannel(kConfig, "lark", R"({"type": "feishu", "secret": ""})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_TRUE(Find(edit->config, "lark")->secret.empty());
  EXPECT_FALSE(json::parse(edit->text)["notify"]["channels"][0].contains("secret"));
  // Another type takes nothing from the stored channel.
  edit =
      WithChannel(kConfig, "lark", R"({"type": "dingtalk", "url": "https://oapi.dingtalk.com/x"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_TRUE(Find(edit->config, "lark")->secret.empty());
}

TEST(NotifySettingsTest, TheViewOfAChannelIsABodyThatChangesNothing) {
  json data = ViewJson(kConfig);
  auto before = ParseConfig(kConfig);
  ASSERT_TRUE(before.ok());
  for (const json& c : data["channels"]) {
    const std::string name = c["name"];
    auto edit = WithChannel(kConfig, name, c.dump());
    ASSERT_TRUE(edit.ok()) << name << ": " << edit.status().ToString();
    const ChannelConfig* now = Find(edit->config, name);
    ASSERT_NE(now, nullptr);
    const ChannelConfig* was = Find(*before, name);
    EXPECT_EQ(json::parse(now->source), json::parse(was->source)) << name;
  }
}

TEST(NotifySettingsTest, TheParsersRefusalsAreTheAnswer) {
  auto edit = WithChannel(kConfig, "x", "not json");
  EXPECT_EQ(edit.status().code(), StatusCode::kInvalidArgument);
  edit = WithChannel(kConfig, "x", R"(["a"])");
  EXPECT_EQ(edit.status().code(), StatusCode::kInvalidArgument);
  edit = WithChannel(kConfig, "x", R"({"type": "feishu", "url": "ftp://x"})");
  EXPECT_EQ(edit.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(edit.status().message(),
            "config.json: notify.channels[5].url must be the bot's https:// webhook URL");
  edit = WithChannel(kConfig, "x", R"({"type": "slack", "url": "https://h", "secret": "s"})");
  EXPECT_NE(edit.status().message().find("secret is for Feishu and DingTalk"), std::string::npos);
  edit = WithChannel(kConfig, "x", R"({"type": "webhook", "url": "http://h/", "colour": "red"})");
  EXPECT_NE(edit.status().message().find("unknown key notify.channels[5].colour"),
            std::string::npos);
  edit = WithChannel(kConfig, "x", R"({"name": "y", "type": "webhook", "url": "http://h/"})");
  EXPECT_NE(edit.status().message().find("names another channel"), std::string::npos);
  // A file that is broken already is not edited further.
  edit = WithChannel(R"({"logs": {"nope": 1}})", "x", R"({"type": "webhook", "url": "http://h/"})");
  EXPECT_EQ(edit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(edit.status().message().find("unknown key logs.nope"), std::string::npos);
}

// Every other section and key as it was, in its order; the channel added
// at the end of the list.
TEST(NotifySettingsTest, OtherSectionsAreKeptAsTheyWere) {
  auto edit =
      WithChannel(kConfig, "new", R"({"type": "wecom", "url": "https://qyapi.weixin.qq.com/k"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  auto was = nlohmann::ordered_json::parse(kConfig);
  auto now = nlohmann::ordered_json::parse(edit->text);
  ASSERT_EQ(now["notify"]["channels"].size(), 6u);
  EXPECT_EQ(now["notify"]["channels"][5]["name"], "new");
  now["notify"]["channels"].erase(5);
  EXPECT_EQ(now, was);  // ordered_json compares the keys' order too
  EXPECT_NE(edit->text.find("\n  \"logs\": {\n    \"level_floor\""), std::string::npos)
      << edit->text;  // 2-space indent
  // A home without config.json gets one with the channel alone.
  edit = WithChannel("", "hook", R"({"type": "webhook", "url": "http://127.0.0.1:1/"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(json::parse(edit->text),
            json::parse(R"({"notify": {"channels": [{"name": "hook", "type": "webhook",
                                                     "url": "http://127.0.0.1:1/"}]}})"));
}

TEST(NotifySettingsTest, AChannelARouteNamesIsNotDeleted) {
  auto edit = WithoutChannel(kConfig, "ding");
  EXPECT_EQ(edit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(edit.status().message().find("notify.routes[0] sends alerts to \"ding\""),
            std::string::npos);
  EXPECT_EQ(WithoutChannel(kConfig, "nope").status().code(), StatusCode::kNotFound);
  edit = WithoutChannel(kConfig, "lark");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(Find(edit->config, "lark"), nullptr);
  EXPECT_EQ(edit->config.notify.channels.size(), 4u);
}

TEST(NotifySettingsTest, ATestUsesTheStoredSecretsOfItsName) {
  auto c = ChannelToTest(kConfig, R"({"channel": "lark"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->secret, "FEISHUSECRET");
  c = ChannelToTest(kConfig, R"({"channel_config": {"name": "lark", "type": "feishu",
                                 "url": "https://open.feishu.cn/..."}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->secret, "FEISHUSECRET");
  EXPECT_EQ(c->url, "https://open.feishu.cn/open-apis/bot/v2/hook/HOOKTOKEN");
  c = ChannelToTest(kConfig, R"({"channel_config": {"name": "unsaved", "type": "webhook",
                                 "url": "http://127.0.0.1:1/"}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "unsaved");
  EXPECT_EQ(ChannelToTest(kConfig, R"({"channel": "nope"})").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ChannelToTest(kConfig, R"({"channel_config": {"type": "webhook"}})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ChannelToTest(kConfig, R"({})").status().code(), StatusCode::kInvalidArgument);
}

// The file itself, through a running alert engine.
class NotifySettingsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.Open(tmp_.path(), Env::Default());
    alert::AlertEngineOptions o;
    o.store.path = tmp_.Join("alerts.db");
    alert::AlertEngineSources s;
    s.query = store_.query.get();
    auto engine = alert::AlertEngine::Create(s, o);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    live_.Attach(engine_.get());
    settings_ = std::make_unique<NotifySettingsFile>(tmp_.path(), "http://127.0.0.1:9300", &live_);
  }
  void TearDown() override {
    engine_.reset();
    store_.Close();
  }
  void Write(const std::string& text) {
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(tmp_.Join("config.json"), text).ok());
  }
  std::string Read() {
    auto text = Env::Default()->ReadFile(tmp_.Join("config.json"), 1 << 20);
    return text.ok() ? *text : "";
  }

  TempDir tmp_;
  alert::TestStore store_;
  std::unique_ptr<alert::AlertEngine> engine_;
  LiveChannels live_;
  std::unique_ptr<NotifySettingsFile> settings_;
};

TEST_F(NotifySettingsFileTest, WritesTheFilePrivateAndLeavesItWhenRefused) {
  Write(R"({"alerts": {"time_scale": 0.5}})");
  ASSERT_TRUE(settings_->Put("hook", R"({"type": "webhook", "url": "http://127.0.0.1:1/x"})").ok());
  struct stat st {};
  ASSERT_EQ(::stat(tmp_.Join("config.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(Env::Default()->FileExists(tmp_.Join("config.json.tmp")));
  EXPECT_FALSE(Env::Default()->FileExists(tmp_.Join("config.json.bak")));  // no comments
  const std::string saved = Read();
  EXPECT_EQ(json::parse(saved)["alerts"], json::parse(R"({"time_scale": 0.5})"));
  Status bad = settings_->Put("hook", R"({"type": "webhook", "url": "ftp://x"})");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Read(), saved);
  EXPECT_EQ(settings_->Remove("nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(Read(), saved);
  ASSERT_TRUE(settings_->Remove("hook").ok());
  EXPECT_EQ(json::parse(Read())["notify"]["channels"], json::array());
}

TEST_F(NotifySettingsFileTest, AFileWithCommentsIsKeptAsBak) {
  const std::string commented = "{\n  // why the scale\n  \"alerts\": {\"time_scale\": 0.5}\n}\n";
  Write(commented);
  ASSERT_TRUE(settings_->Put("hook", R"({"type": "webhook", "url": "http://127.0.0.1:1/"})").ok());
  auto bak = Env::Default()->ReadFile(tmp_.Join("config.json.bak"), 1 << 20);
  ASSERT_TRUE(bak.ok());
  EXPECT_EQ(*bak, commented);
  EXPECT_EQ(Read().find("why the scale"), std::string::npos);
}

TEST_F(NotifySettingsFileTest, TheTestSaysWhetherTheReceiverTookIt) {
  std::atomic<int> got{0};
  net::Router router;
  router.Handle("POST", "/ok", [&](const net::HttpRequest& req) {
    if (req.body.find("Test notification from Vigil to channel hook") != std::string::npos) ++got;
    return net::HttpResponse::Text(200, "ok");
  });
  router.Handle("POST", "/down",
                [](const net::HttpRequest&) { return net::HttpResponse::Text(503, "busy"); });
  net::HttpServer::Options so;
  so.listen = "127.0.0.1:0";
  net::HttpServer server(so, std::move(router));
  ASSERT_TRUE(server.Start().ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.bound_port());
  ASSERT_TRUE(settings_->Put("hook", R"({"type": "webhook", "url": ")" + base + R"(/ok"})").ok());
  auto outcome = settings_->Test(R"({"channel": "hook"})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->delivery.ok()) << outcome->delivery.ToString();
  EXPECT_EQ(outcome->type, "webhook");
  EXPECT_EQ(got.load(), 1);
  outcome = settings_->Test(R"({"channel_config": {"name": "hook", "type": "webhook", "url": ")" +
                            base + R"(/down"}})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->delivery.ok());
  EXPECT_NE(outcome->delivery.message().find("503"), std::string::npos);
  EXPECT_EQ(settings_->Test(R"({"channel": "nope"})").status().code(), StatusCode::kNotFound);
  server.Stop();
}

// Recipients and routes saved from the UI reach the running engine (and
// its inbox's list of recipients) at once; a refused one changes nothing.
TEST_F(NotifySettingsFileTest, RecipientsAndRoutesApplyAtOnce) {
  Write(R"({"alerts": {"time_scale": 0.5}})");
  ASSERT_TRUE(settings_->Put("hook", R"({"type": "webhook", "url": "http://127.0.0.1:1/x"})").ok());
  ASSERT_TRUE(settings_->PutRecipient("ops", R"({"kind": "team", "channels": ["hook"]})").ok());
  ASSERT_EQ(engine_->Recipients().size(), 1u);
  EXPECT_EQ(engine_->Recipients()[0].channels, std::vector<std::string>{"hook"});
  ASSERT_TRUE(settings_
                  ->PutRoutes(R"({"routes": [{"match": {"severity": "critical"},
                                                   "recipients": ["ops"]}]})")
                  .ok());
  const std::string saved = Read();
  EXPECT_EQ(json::parse(saved)["notify"]["routes"][0]["recipients"], json::array({"ops"}));
  struct stat st {};
  ASSERT_EQ(::stat(tmp_.Join("config.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(settings_->RemoveRecipient("ops").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(settings_->PutRecipient("ops", R"({"channels": ["nope"]})").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(settings_->Remove("hook").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Read(), saved);
  EXPECT_EQ(engine_->Recipients().size(), 1u);
  ASSERT_TRUE(settings_->PutRoutes(R"({"routes": []})").ok());
  ASSERT_TRUE(settings_->RemoveRecipient("ops").ok());
  EXPECT_TRUE(engine_->Recipients().empty());
  auto view = settings_->RecipientsView();
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(json::parse(*view)["recipients"], json::array());
}

TEST(LiveChannelsTest, AnUnchangedChannelKeepsItsObject) {
  auto a = ParseConfig(R"({"notify": {"channels": [
      {"name": "a", "type": "webhook", "url": "http://127.0.0.1:1/"},
      {"name": "b", "type": "webhook", "url": "http://127.0.0.1:2/"}]}})");
  ASSERT_TRUE(a.ok());
  LiveChannels live;
  auto first = live.Build(a->notify);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(live.Apply(a->notify).code(), StatusCode::kFailedPrecondition);  // no engine yet
  auto b = ParseConfig(R"({"notify": {"channels": [
      {"name": "a", "type": "webhook", "url": "http://127.0.0.1:1/"},
      {"name": "b", "type": "webhook", "url": "http://127.0.0.1:3/"}]}})");
  ASSERT_TRUE(b.ok());
  auto second = live.Build(b->notify);
  EXPECT_EQ(second["a"], first["a"]);
  EXPECT_NE(second["b"], first["b"]);
}

}  // namespace
}  // namespace vigil::cli
