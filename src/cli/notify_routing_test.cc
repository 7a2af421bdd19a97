// Recipients and routes on config.json: the view is the file's; a recipient
// added at the end or replaced in its place, its name first; the parser's
// refusals (an unknown channel, team, lead or key) are the answer; a delete
// is refused while a route, a team's lead or a team's person names it, and
// a channel's while a recipient does; the routes replaced whole, in the
// order given; every other section and key kept as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/notify_settings.h"

namespace vigil::cli {
namespace {

using Json = nlohmann::ordered_json;

const char* const kConfig = R"({
  "alerts": {"time_scale": 0.5},
  "notify": {
    "group_wait": "2s",
    "channels": [
      {"name": "room", "type": "wecom", "url": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K"},
      {"name": "alice-dm", "type": "slack", "url": "https://hooks.slack.com/services/T/B/X"},
      {"name": "hook", "type": "webhook", "url": "http://127.0.0.1:8080/"}
    ],
    "recipients": [
      {"name": "alice", "users": ["alice", "al"], "team": "vision", "channels": ["alice-dm"],
       "language": "zh", "quiet_hours": {"start": "23:00", "end": "08:00"}},
      {"name": "vision", "kind": "team", "lead": "alice", "channels": ["room"]},
      {"name": "bob", "channels": []}
    ],
    "routes": [{"match": {"severity": "critical"}, "channels": ["hook"], "recipients": ["bob"]}]
  }
})";

Json Parsed(std::string_view text) { return Json::parse(text); }

// The edited file less notify.<key>, which must equal the original's less it.
void ExpectOnlyChanged(const std::string& text, const char* key) {
  Json was = Parsed(kConfig), now = Parsed(text);
  was["notify"].erase(key);
  now["notify"].erase(key);
  EXPECT_EQ(now, was);  // ordered_json compares the keys' order too
}

TEST(NotifyRoutingTest, TheViewsAreTheFiles) {
  auto view = RecipientsView(kConfig, "/home/config.json");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  Json data = Parsed(*view);
  EXPECT_EQ(data["path"], "/home/config.json");
  EXPECT_EQ(data["recipients"], Parsed(kConfig)["notify"]["recipients"]);
  view = RoutesView(kConfig, "/home/config.json");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Parsed(*view)["routes"], Parsed(kConfig)["notify"]["routes"]);
  // A home without config.json: empty lists.
  EXPECT_EQ(Parsed(*RecipientsView("", "/h/config.json"))["recipients"], Json::array());
  EXPECT_EQ(Parsed(*RoutesView("", "/h/config.json"))["routes"], Json::array());
}

TEST(NotifyRoutingTest, ARecipientIsAddedAtTheEndOrReplacedInItsPlace) {
  auto edit = WithRecipient(kConfig, "carol", R"({"users": ["carol"], "team": "vision",
                                                  "channels": ["room", "hook"], "language": "en"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ExpectOnlyChanged(edit->text, "recipients");
  Json list = Parsed(edit->text)["notify"]["recipients"];
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[3].begin().key(), "name");  // first, as people write it
  EXPECT_EQ(list[3]["name"], "carol");
  ASSERT_EQ(edit->config.notify.dispatch.recipients.size(), 4u);
  EXPECT_EQ(edit->config.notify.dispatch.recipients[3].channels,
            (std::vector<std::string>{"room", "hook"}));

  // Replaced in its place: bob joins vision, in English.
  edit = WithRecipient(kConfig, "bob", R"({"kind": "person", "team": "vision",
                                           "channels": ["hook"], "language": "en"})");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  list = Parsed(edit->text)["notify"]["recipients"];
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[2], Parsed(R"({"name": "bob", "kind": "person", "team": "vision",
                                "channels": ["hook"], "language": "en"})"));
  EXPECT_EQ(list[0], Parsed(kConfig)["notify"]["recipients"][0]);
}

TEST(NotifyRoutingTest, TheParsersRefusalsAreTheAnswer) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"channels": ["nope"]})", "notify.recipients \"x\": unknown channel \"nope\""},
      {R"({"team": "nope"})", "notify.recipients \"x\": no team \"nope\""},
      {R"({"kind": "team", "lead": "vision"})", "the lead \"vision\" is no person"},
      {R"({"kind": "robot"})", "notify.recipients[3].kind must be person or team"},
      {R"({"language": "fr"})", "notify.recipients[3].language must be \"en\" or \"zh\""},
      {R"({"colour": "red"})", "unknown key notify.recipients[3].colour"},
      {R"({"quiet_hours": {"start": "25:00", "end": "08:00"}})", "quiet_hours"},
      {R"({"name": "y"})", "names another recipient than the path"},
      {R"(["x"])", "the body must be one recipient"},
      {"not json", "the body must be one recipient"},
  };
  for (const auto& [body, message] : cases) {
    auto edit = WithRecipient(kConfig, "x", body);
    EXPECT_EQ(edit.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_NE(edit.status().message().find(message), std::string::npos)
        << body << ": " << edit.status().message();
  }
  // A file that is broken already is not edited further.
  auto edit = WithRecipient(R"({"notify": {"nope": 1}})", "x", "{}");
  EXPECT_EQ(edit.status().code(), StatusCode::kFailedPrecondition);
}

TEST(NotifyRoutingTest, ARecipientOthersNeedIsNotDeleted) {
  const std::pair<const char*, const char*> refused[] = {
      {"bob", "notify.routes[0] sends alerts to \"bob\": change or remove that route first"},
      {"alice", "notify.recipients \"vision\" has \"alice\" as its lead"},
      {"vision", "notify.recipients \"alice\" is in the team \"vision\""},
  };
  for (const auto& [name, message] : refused) {
    auto edit = WithoutRecipient(kConfig, name);
    EXPECT_EQ(edit.status().code(), StatusCode::kFailedPrecondition) << name;
    EXPECT_NE(edit.status().message().find(message), std::string::npos) << edit.status().message();
  }
  EXPECT_EQ(WithoutRecipient(kConfig, "nope").status().code(), StatusCode::kNotFound);

  // Once nothing names bob, he goes, and the rest stays as it was.
  auto routes = WithRoutes(kConfig, R"({"routes": []})");
  ASSERT_TRUE(routes.ok()) << routes.status().ToString();
  auto edit = WithoutRecipient(routes->text, "bob");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  Json list = Parsed(edit->text)["notify"]["recipients"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["name"], "vision");
  EXPECT_EQ(Parsed(edit->text)["alerts"], Parsed(kConfig)["alerts"]);
}

TEST(NotifyRoutingTest, AChannelARecipientNamesIsNotDeleted) {
  auto edit = WithoutChannel(kConfig, "alice-dm");
  EXPECT_EQ(edit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(edit.status().message().find(
                "notify.recipients \"alice\" receives alerts on \"alice-dm\": take the channel"),
            std::string::npos)
      << edit.status().message();
}

TEST(NotifyRoutingTest, TheRoutesAreReplacedWholeInTheirOrder) {
  const char* body = R"({"routes": [
      {"match": {"severity": "warning", "job": "train"}, "recipients": ["alice"]},
      {"match": {"modelName": "NVIDIA H100 80GB HBM3", "node": "gpu-7"}, "channels": ["room"]},
      {"match": {"team": "vision"}, "channels": ["hook"], "recipients": ["vision", "bob"]}]})";
  auto edit = WithRoutes(kConfig, body);
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ExpectOnlyChanged(edit->text, "routes");
  EXPECT_EQ(Parsed(edit->text)["notify"]["routes"], Parsed(body)["routes"]);
  const auto& routes = edit->config.notify.dispatch.routes;
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].recipients, std::vector<std::string>{"alice"});
  EXPECT_EQ(routes[1].match.at("node"), "gpu-7");
  EXPECT_EQ(routes[2].channels, std::vector<std::string>{"hook"});
  // Moved: the same routes in another order are saved in that order.
  Json reversed = Parsed(body);
  std::reverse(reversed["routes"].begin(), reversed["routes"].end());
  edit = WithRoutes(kConfig, reversed.dump());
  ASSERT_TRUE(edit.ok());
  EXPECT_EQ(edit->config.notify.dispatch.routes[0].channels, std::vector<std::string>{"hook"});
}

TEST(NotifyRoutingTest, BadRoutesAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"routes": [{"channels": ["hook"]}, {"channels": ["nope"]}]})",
       "notify.routes[1]: unknown channel \"nope\""},
      {R"({"routes": [{"recipients": ["carol"]}]})",
       "notify.routes[0]: unknown recipient \"carol\""},
      {R"({"routes": [{"match": {"severity": 2}}]})", "notify.routes[0].match must be an object"},
      {R"({"routes": [{"to": ["hook"]}]})", "unknown key notify.routes[0].to"},
      {R"({"routes": {}})", "the body must be {\"routes\": [...]}"},
      {R"({"routes": [], "extra": 1})", "the body must be {\"routes\": [...]}"},
      {R"([])", "the body must be {\"routes\": [...]}"},
  };
  for (const auto& [body, message] : cases) {
    auto edit = WithRoutes(kConfig, body);
    EXPECT_EQ(edit.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_NE(edit.status().message().find(message), std::string::npos)
        << body << ": " << edit.status().message();
  }
}

}  // namespace
}  // namespace vigil::cli
