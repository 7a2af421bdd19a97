// The diagnosis' log templates in every channel's message: present while an
// alert fires, errors first with their counts, bounded per channel, and the
// untrusted template text quoted for each format (markdown cards, JSON,
// SMS). The email's HTML part is checked in email_test.cc.
#include "notify/message.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "notify/im_bots.h"
#include "notify/sms.h"
#include "notify/test_alerts.h"
#include "notify/webhook.h"

namespace vigil::notify {
namespace {

using nlohmann::json;
using testing::DiagnosisWithTemplates;
using testing::Group;

constexpr int64_t kNow = 1'764'641'139'000;

alert::Notification WithTemplates(int extra = 0, size_t extra_bytes = 0) {
  alert::Notification n = Group(1);
  n.alerts[0].diagnosis = DiagnosisWithTemplates(extra, extra_bytes);
  return n;
}

// The body `kind`'s bot is sent for `n`.
std::string BotBody(ImKind kind, const alert::Notification& n, Language language) {
  ImOptions o;
  o.kind = kind;
  o.url = "https://bot.example/hook?key=k";
  o.language = language;
  return ImRequest(o, n, kNow).body;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(MessageTemplatesTest, ErrorsFirstThenNewThenByCountWithTheirMarks) {
  Message m = BuildMessage(WithTemplates(), Language::kEnglish);
  ASSERT_EQ(m.entries.size(), 1u);
  const MessageEntry& e = m.entries[0];
  EXPECT_EQ(e.templates_heading, "Log templates (2401 lines, 14 templates):");
  ASSERT_EQ(e.templates.size(), 4u);
  EXPECT_EQ(e.templates[0].mark, "×3 error");
  EXPECT_EQ(e.templates[0].text, "RuntimeError: CUDA error: <*>");
  EXPECT_TRUE(e.templates[0].error);
  EXPECT_EQ(e.templates[1].mark, "×2 new");
  EXPECT_EQ(e.templates[2].mark, "×312");
  EXPECT_EQ(e.templates[2].text, "Epoch <*> step <*> loss <*>");
  EXPECT_EQ(e.templates[3].mark, "×7 warn");
  EXPECT_FALSE(e.templates[3].error);
  // One line each: a newline in a template becomes a space.
  EXPECT_EQ(e.templates[1].text.find('\n'), std::string::npos);
  EXPECT_NE(e.templates[1].text.find("</script> Injected: yes"), std::string::npos);

  Message zh = BuildMessage(WithTemplates(), Language::kChinese);
  EXPECT_EQ(zh.entries[0].templates_heading, "日志模板（2401 行，14 种）：");
  EXPECT_EQ(zh.entries[0].templates[0].mark, "×3 错误");
  EXPECT_EQ(zh.entries[0].templates[1].mark, "×2 新出现");
}

TEST(MessageTemplatesTest, OnlyWhileItFiresAndNeverFromABadDiagnosis) {
  alert::Notification n = WithTemplates();
  n.alerts[0].state = alert::AlertState::kResolved;
  n.alerts[0].resolved_at_ms = n.alerts[0].fired_at_ms + 60'000;
  EXPECT_TRUE(BuildMessage(n, Language::kEnglish).entries[0].templates.empty());
  EXPECT_EQ(WebhookPayload(n).find("log_templates"), std::string::npos);

  for (const char* bad :
       {"{}", "not json", R"({"log_templates": "x"})", R"({"log_templates": [1, "x", {}]})",
        R"({"log_templates": [{"template": 5, "count": "many"}]})"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(DiagnosisTemplates(bad, Language::kEnglish, 5, 200).empty());
  }
  // A count that is not a number is shown as 0, not dropped with its text.
  auto lines = DiagnosisTemplates(R"({"log_templates": [{"template": "a <*>", "count": -1}]})",
                                  Language::kEnglish, 5, 200);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].mark, "×0");
}

TEST(MessageTemplatesTest, BoundedPerChannel) {
  // 30 more templates of 5,000 bytes each.
  alert::Notification n = WithTemplates(30, 5000);
  Message m = BuildMessage(n, Language::kEnglish);
  ASSERT_EQ(m.entries[0].templates.size(), 5u);  // the default: an IM bot's
  for (const TemplateLine& t : m.entries[0].templates) EXPECT_LE(t.text.size(), 200u);
  Message filler = BuildMessage(n, Language::kEnglish, {.max_templates = 40});
  EXPECT_EQ(filler.entries[0].templates.back().text.size(), 200u);
  EXPECT_TRUE(filler.entries[0].templates.back().text.ends_with("…"));

  for (ImKind kind : {ImKind::kSlack, ImKind::kFeishu, ImKind::kDingTalk, ImKind::kWeCom}) {
    std::string body = BotBody(kind, n, Language::kEnglish);
    SCOPED_TRACE(body);
    // (Slack's message has each line twice: its blocks and its fallback text.)
    size_t shown = kind == ImKind::kWeCom ? 3 : 5;
    EXPECT_EQ(Count(body, "> ×"), kind == ImKind::kSlack ? 2 * shown : shown);
    // The fillers rank last: the first of them fills the fifth line.
    EXPECT_EQ(body.find("filler 0") != std::string::npos, kind != ImKind::kWeCom);
    EXPECT_EQ(body.find("filler 1"), std::string::npos);
  }

  json payload = json::parse(WebhookPayload(n));
  std::string lines = payload["alerts"][0]["annotations"]["log_templates"];
  EXPECT_EQ(Count(lines, "\n"), 9u);  // 10 lines
  for (size_t start = 0; start < lines.size();) {
    size_t nl = std::min(lines.find('\n', start), lines.size());
    EXPECT_LE(nl - start, 240u + 20u);  // the text's 240 bytes and its mark
    start = nl + 1;
  }

  std::string sms = SmsText(n, Language::kEnglish);
  size_t chars = 0;
  for (char c : sms) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  EXPECT_LE(chars, kSmsMaxChars);
}

TEST(MessageTemplatesTest, EveryBotShowsThemQuotedForItsMarkdown) {
  for (ImKind kind : {ImKind::kSlack, ImKind::kFeishu, ImKind::kDingTalk, ImKind::kWeCom}) {
    std::string body = BotBody(kind, WithTemplates(), Language::kEnglish);
    SCOPED_TRACE(body);
    size_t heading = body.find("> Log templates (2401 lines, 14 templates):");
    ASSERT_NE(heading, std::string::npos);
    size_t error = body.find("> ×3 error ");
    size_t fresh = body.find("> ×2 new ");
    size_t most = body.find("> ×312 ");
    ASSERT_NE(error, std::string::npos);
    EXPECT_LT(heading, error);
    EXPECT_LT(error, fresh);
    EXPECT_LT(fresh, most);
    // Nothing of the template reaches the card as markup (in DingTalk's and
    // WeCom's code spans a tag is text).
    if (kind == ImKind::kSlack || kind == ImKind::kFeishu) {
      EXPECT_EQ(body.find("<at id=all>"), std::string::npos);
    }
    switch (kind) {
      case ImKind::kFeishu:
        EXPECT_NE(body.find("> ×3 error RuntimeError&#58; CUDA error&#58; &#60;&#42;&#62;\\n"),
                  std::string::npos);
        EXPECT_NE(body.find("&#42;&#42;now&#42;&#42; &#60;at id=all&#62;&#60;/at&#62;"),
                  std::string::npos);
        break;
      case ImKind::kSlack:
        EXPECT_NE(body.find("> ×3 error `RuntimeError: CUDA error: &lt;*&gt;`"), std::string::npos);
        EXPECT_NE(body.find("`see 'nvidia-smi' **now** &lt;at id=all&gt;&lt;/at&gt;"),
                  std::string::npos);
        break;
      default:
        EXPECT_NE(body.find("> ×3 error `RuntimeError: CUDA error: <*>`"), std::string::npos);
        EXPECT_NE(body.find("> ×2 new `see 'nvidia-smi' **now** <at id=all></at>"),
                  std::string::npos);
    }
  }
  std::string body = BotBody(ImKind::kDingTalk, WithTemplates(), Language::kChinese);
  EXPECT_NE(body.find("> 日志模板（2401 行，14 种）："), std::string::npos) << body;
  EXPECT_NE(body.find("> ×3 错误 `RuntimeError: CUDA error: <*>`"), std::string::npos) << body;
}

TEST(MessageTemplatesTest, WebhookCarriesThemAsAnAnnotationOfJson) {
  json payload = json::parse(WebhookPayload(WithTemplates()));
  std::string lines = payload["alerts"][0]["annotations"]["log_templates"];
  EXPECT_EQ(lines,
            "×3 error  RuntimeError: CUDA error: <*>\n"
            "×2 new  see `nvidia-smi` **now** <at id=all></at> <script>alert(1)</script> "
            "Injected: yes\n"
            "×312  Epoch <*> step <*> loss <*>\n"
            "×7 warn  NCCL WARN Call to ibv_reg_mr failed <*>");
}

TEST(MessageTemplatesTest, AnSmsNamesALoneAlertsErrorTemplateWhenThereIsRoom) {
  std::string sms = SmsText(WithTemplates(), Language::kEnglish);
  EXPECT_NE(sms.find("\n×3 RuntimeError: CUDA error: <*>\n"), std::string::npos) << sms;
  EXPECT_EQ(sms.find("Epoch"), std::string::npos) << "info templates are not news";

  // Only info templates: none.
  alert::Notification n = Group(1);
  n.alerts[0].diagnosis =
      R"({"log_templates": [{"template": "Epoch <*>", "count": 9, "severity": "info"}]})";
  EXPECT_EQ(SmsText(n, Language::kEnglish).find("Epoch"), std::string::npos);

  // Two alerts: their headlines have the room.
  alert::Notification two = Group(2);
  for (alert::Alert& a : two.alerts) a.diagnosis = DiagnosisWithTemplates();
  EXPECT_EQ(SmsText(two, Language::kEnglish).find("RuntimeError"), std::string::npos);
}

}  // namespace
}  // namespace vigil::notify
