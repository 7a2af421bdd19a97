#include "alert/silence.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <nlohmann/json.hpp>

#include "alert/tracker.h"

namespace vigil::alert {
namespace {

Alert Make(const std::string& rule, wire::Labels series) {
  Alert a;
  a.rule = rule;
  a.severity = Severity::kWarning;
  a.state = AlertState::kFiring;
  a.labels = AlertLabels(rule, a.severity, std::move(series));
  a.id = Fingerprint(a.labels);
  return a;
}

Matcher M(std::string name, MatchOp op, std::string value) {
  return {std::move(name), op, std::move(value)};
}

Silence Make(std::vector<Matcher> matchers, int64_t starts, int64_t ends,
             std::string id = "0123456789abcdef") {
  Silence s;
  s.id = std::move(id);
  s.matchers = std::move(matchers);
  s.starts_at_ms = starts;
  s.ends_at_ms = ends;
  s.created_at_ms = s.updated_at_ms = starts;
  return s;
}

TEST(MatcherTest, ParsesTheFourOperators) {
  auto m = ParseMatcher("node=gpu-07");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*m, M("node", MatchOp::kEqual, "gpu-07"));
  EXPECT_EQ(*ParseMatcher("node!=gpu-07"), M("node", MatchOp::kNotEqual, "gpu-07"));
  EXPECT_EQ(*ParseMatcher("alertname=~gpu_.*"), M("alertname", MatchOp::kRegex, "gpu_.*"));
  EXPECT_EQ(*ParseMatcher("job!~test-.*"), M("job", MatchOp::kNotRegex, "test-.*"));
  // The value may hold '=' and be empty; quotes are taken off.
  EXPECT_EQ(*ParseMatcher("reason=a=b"), M("reason", MatchOp::kEqual, "a=b"));
  EXPECT_EQ(*ParseMatcher("job="), M("job", MatchOp::kEqual, ""));
  EXPECT_EQ(*ParseMatcher(R"(job="my \"big\" run")"), M("job", MatchOp::kEqual, R"(my "big" run)"));
  EXPECT_EQ(MatcherText(M("job", MatchOp::kNotRegex, R"(a"b)")), R"(job!~"a\"b")");
  EXPECT_EQ(*ParseMatcher(MatcherText(M("x", MatchOp::kRegex, R"(\d+)"))),
            M("x", MatchOp::kRegex, R"(\d+)"));

  for (const char* bad : {"node", "=x", "!x", "1node=x", "no de=x", "node!x", "node=~(", "a-b=c"}) {
    auto r = ParseMatcher(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseMatcher("node=~(").status().message().find("does not compile"), std::string::npos);
  EXPECT_NE(ParseMatcher("node").status().message().find("name=value"), std::string::npos);
}

TEST(MatcherTest, AnAbsentLabelIsEmptyAndRegexesAreAnchored) {
  auto re = [](const std::string& s) { return std::make_unique<re2::RE2>(s); };
  Matcher eq = M("job", MatchOp::kEqual, "train");
  EXPECT_TRUE(Matches(eq, nullptr, "train"));
  EXPECT_FALSE(Matches(eq, nullptr, "train2"));
  Matcher ne = M("job", MatchOp::kNotEqual, "train");
  EXPECT_TRUE(Matches(ne, nullptr, ""));  // no job label
  Matcher rx = M("node", MatchOp::kRegex, "gpu-0[0-7]");
  auto r = re(rx.value);
  EXPECT_TRUE(Matches(rx, r.get(), "gpu-07"));
  EXPECT_FALSE(Matches(rx, r.get(), "gpu-077"));  // anchored at both ends
  EXPECT_FALSE(Matches(rx, r.get(), "xgpu-07"));
  Matcher nrx = M("node", MatchOp::kNotRegex, "gpu-0[0-7]");
  EXPECT_FALSE(Matches(nrx, r.get(), "gpu-03"));
  EXPECT_TRUE(Matches(nrx, r.get(), "gpu-08"));
}

TEST(SilenceTest, ValidationBoundsAndNamesTheProblem) {
  auto msg = [](const Silence& s) { return ValidateSilence(s).message(); };
  EXPECT_TRUE(ValidateSilence(Make({M("node", MatchOp::kEqual, "n1")}, 0, 1)).ok());
  EXPECT_NE(msg(Make({}, 0, 1)).find("at least one matcher"), std::string::npos);
  std::vector<Matcher> many(33, M("node", MatchOp::kEqual, "n1"));
  EXPECT_NE(msg(Make(many, 0, 1)).find("at most 32"), std::string::npos);
  many.resize(32);
  EXPECT_TRUE(ValidateSilence(Make(many, 0, 1)).ok());
  EXPECT_NE(msg(Make({M("node", MatchOp::kEqual, std::string(1025, 'x'))}, 0, 1)).find("1024"),
            std::string::npos);
  EXPECT_TRUE(
      ValidateSilence(Make({M("node", MatchOp::kEqual, std::string(1024, 'x'))}, 0, 1)).ok());
  EXPECT_NE(msg(Make({M("node", MatchOp::kRegex, "[")}, 0, 1)).find("does not compile"),
            std::string::npos);
  EXPECT_NE(msg(Make({M("1x", MatchOp::kEqual, "a")}, 0, 1)).find("label name"), std::string::npos);
  // Nothing selective: it would mute everything.
  EXPECT_NE(msg(Make({M("job", MatchOp::kRegex, ".*")}, 0, 1)).find("empty string"),
            std::string::npos);
  EXPECT_NE(msg(Make({M("job", MatchOp::kNotEqual, "x")}, 0, 1)).find("empty string"),
            std::string::npos);
  EXPECT_TRUE(
      ValidateSilence(
          Make({M("job", MatchOp::kNotEqual, "x"), M("node", MatchOp::kRegex, "n.+")}, 0, 1))
          .ok());
  EXPECT_NE(msg(Make({M("node", MatchOp::kEqual, "n1")}, 5, 5)).find("endsAt"), std::string::npos);
  Silence long_comment = Make({M("node", MatchOp::kEqual, "n1")}, 0, 1);
  long_comment.comment = std::string(4097, 'c');
  EXPECT_NE(msg(long_comment).find("comment"), std::string::npos);
}

TEST(SilenceTest, StatesAtTheBoundaries) {
  Silence s = Make({M("node", MatchOp::kEqual, "n1")}, 1000, 2000);
  EXPECT_EQ(StateAt(s, 999), SilenceState::kPending);
  EXPECT_EQ(StateAt(s, 1000), SilenceState::kActive);
  EXPECT_EQ(StateAt(s, 1999), SilenceState::kActive);
  EXPECT_EQ(StateAt(s, 2000), SilenceState::kExpired);
  EXPECT_STREQ(SilenceStateName(SilenceState::kPending), "pending");
}

TEST(SilenceTest, DurationsAndIds) {
  EXPECT_EQ(*ParseSilenceDuration("2h"), 7'200'000);
  EXPECT_EQ(*ParseSilenceDuration("1h30m"), 5'400'000);
  EXPECT_EQ(*ParseSilenceDuration("7d"), 7 * 86'400'000LL);
  for (const char* bad : {"", "0s", "2", "2 h", "abc", "9999999999d", "36600000d"}) {
    EXPECT_FALSE(ParseSilenceDuration(bad).ok()) << bad;
  }
  std::string a = NewSilenceId(), b = NewSilenceId();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

TEST(SilenceTest, JsonShapes) {
  Silence s =
      Make({M("node", MatchOp::kEqual, "gpu-07"), M("alertname", MatchOp::kNotRegex, "x.*")},
           1'764'641'139'000, 1'764'648'339'000);
  s.created_by = "ops";
  s.comment = "maintenance";
  auto back = ParseSilenceRecord(SilenceRecordJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(ParseSilenceRecord("{}").ok());
  EXPECT_FALSE(ParseSilenceRecord("[").ok());

  JsonWriter w;
  WriteSilence(&w, s, 1'764'641'140'000);
  auto j = nlohmann::json::parse(w.str());
  EXPECT_EQ(j["id"], "0123456789abcdef");
  EXPECT_EQ(j["status"]["state"], "active");
  EXPECT_EQ(j["startsAt"], "2025-12-02T02:05:39Z");
  EXPECT_EQ(j["endsAt"], "2025-12-02T04:05:39Z");
  EXPECT_EQ(j["createdBy"], "ops");
  EXPECT_EQ(j["comment"], "maintenance");
  ASSERT_EQ(j["matchers"].size(), 2u);
  EXPECT_EQ(j["matchers"][0],
            nlohmann::json::parse(
                R"({"name": "node", "value": "gpu-07", "isRegex": false, "isEqual": true})"));
  EXPECT_EQ(j["matchers"][1]["isRegex"], true);
  EXPECT_EQ(j["matchers"][1]["isEqual"], false);
}

TEST(SilenceSetTest, OnlyActiveSilencesMuteAndExpiredOnesArePruned) {
  SilenceSet set;
  Alert hot = Make("gpu_temperature_high", {{"gpu", "0"}, {"node", "gpu-07"}});
  Alert under = Make("gpu_underutilized", {{"gpu", "0"}, {"job", "t"}, {"node", "gpu-07"}});
  Alert other = Make("gpu_underutilized", {{"gpu", "0"}, {"job", "t"}, {"node", "gpu-08"}});
  std::map<std::string, Alert> active = {{hot.id, hot}, {under.id, under}, {other.id, other}};

  // node=gpu-07 and alertname=gpu_underutilized, from 1000 to 5000.
  ASSERT_TRUE(set.Put(Make({M("node", MatchOp::kEqual, "gpu-07"),
                            M("alertname", MatchOp::kEqual, "gpu_underutilized")},
                           1000, 5000, "a"))
                  .ok());
  EXPECT_TRUE(set.Silenced(active, 999).empty());  // pending
  EXPECT_EQ(set.Silenced(active, 1000), (std::set<std::string>{under.id}));
  EXPECT_TRUE(set.Mutes(under, 4999));
  EXPECT_FALSE(set.Mutes(hot, 4999));
  EXPECT_TRUE(set.Silenced(active, 5000).empty());  // expired

  ASSERT_TRUE(set.Put(Make({M("node", MatchOp::kRegex, "gpu-0[78]")}, 2000, 3000, "b")).ok());
  EXPECT_EQ(set.Silenced(active, 2500).size(), 3u);
  EXPECT_EQ(set.CountUnexpired(2500), 2u);
  EXPECT_EQ(set.CountUnexpired(3000), 1u);
  std::vector<Silence> all = set.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "b");  // newest first
  EXPECT_EQ(set.Prune(3000), 0u);
  EXPECT_EQ(set.Prune(3001), 1u);
  EXPECT_EQ(set.Find("b"), nullptr);
  ASSERT_NE(set.Find("a"), nullptr);
  EXPECT_FALSE(set.Put(Make({M("node", MatchOp::kRegex, "(")}, 0, 1, "c")).ok());
  // Replacing by id.
  ASSERT_TRUE(set.Put(Make({M("node", MatchOp::kEqual, "gpu-08")}, 1000, 5000, "a")).ok());
  EXPECT_EQ(set.Silenced(active, 1500), (std::set<std::string>{other.id}));
}

}  // namespace
}  // namespace vigil::alert
