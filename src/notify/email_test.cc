// The email channel's rendering: every preset alert renders in both
// languages into a well-formed multipart/alternative mail (parsed back here:
// headers, boundaries, each part decoded), Chinese subjects as RFC 2047
// encoded-words, untrusted alert text escaped in the HTML part, the bounds,
// and the encodings against hand-checked values. Delivery over SMTP is
// checked end to end against a real SMTP server
// (tests/e2e/notify_email_sms_e2e_test.py).
#include "notify/email.h"

#include <gtest/gtest.h>

#include <map>

#include "alert/rules.h"
#include "core/strings.h"
#include "notify/mime.h"
#include "notify/test_alerts.h"

namespace vigil::notify {
namespace {

using alert::Alert;
using alert::AlertState;
using alert::Severity;

constexpr int64_t kNow = 1'764'641'139'000;  // Tue, 02 Dec 2025 02:05:39 UTC

Alert MakeAlert(const std::string& rule, const std::string& en, const std::string& zh) {
  Alert a;
  a.id = "a1b2c3d4e5f60718";
  a.rule = rule;
  a.severity = Severity::kCritical;
  a.state = AlertState::kFiring;
  a.labels = {{"alertname", rule}, {"gpu", "3"}, {"node", "gpu-07"}, {"job", "llama"}};
  a.value = 95;
  a.threshold = 90;
  a.fired_at_ms = kNow - 60'000;
  a.summary_en = en;
  a.summary_zh = zh;
  return a;
}

alert::Notification Group(std::vector<Alert> alerts) {
  alert::Notification n;
  n.receiver = "mail";
  n.group_key = "mail/node=gpu-07";
  n.group_labels = {{"node", "gpu-07"}};
  n.external_url = "http://vigil.example:9300";
  n.alerts = std::move(alerts);
  return n;
}

EmailOptions Options(Language lang) {
  EmailOptions o;
  o.from = "Vigil <vigil@lab.example>";
  o.to = {"alice@lab.example", "Bob Lee <bob@lab.example>"};
  o.language = lang;
  return o;
}

// --- a small MIME reader, independent of the writer ---------------------

int Hex(char c) { return c <= '9' ? c - '0' : c - 'A' + 10; }

std::string DecodeQp(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '=' && i + 2 < s.size() && s[i + 1] == '\r' && s[i + 2] == '\n') {
      i += 2;  // soft break
    } else if (s[i] == '=' && i + 2 < s.size()) {
      out += static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string DecodeBase64(const std::string& s) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    size_t v = kAlphabet.find(c);
    if (v == std::string::npos) continue;  // line ends, padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

struct Part {
  std::map<std::string, std::string> headers;
  std::string body;  // decoded
};

struct Mail {
  std::map<std::string, std::string> headers;  // unfolded
  std::vector<Part> parts;
};

std::map<std::string, std::string> Headers(const std::string& block) {
  std::map<std::string, std::string> out;
  std::string last;
  for (std::string_view line : Split(block, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == ' ' || line[0] == '\t') {
      out[last] += std::string(line);  // folded
      continue;
    }
    size_t colon = line.find(':');
    last = std::string(line.substr(0, colon));
    out[last] = std::string(TrimSpace(line.substr(colon + 1)));
  }
  return out;
}

Mail Parse(const std::string& raw) {
  Mail m;
  size_t split = raw.find("\r\n\r\n");
  EXPECT_NE(split, std::string::npos);
  m.headers = Headers(raw.substr(0, split));
  const std::string& type = m.headers["Content-Type"];
  size_t b = type.find("boundary=\"");
  EXPECT_NE(b, std::string::npos) << type;
  std::string boundary = type.substr(b + 10, type.find('"', b + 10) - b - 10);
  std::string body = raw.substr(split + 4);
  std::string delim = "--" + boundary;
  EXPECT_EQ(body.rfind(delim + "--\r\n"), body.size() - delim.size() - 4) << "closing delimiter";
  size_t at = body.find(delim + "\r\n");
  while (at != std::string::npos) {
    size_t start = at + delim.size() + 2;
    size_t next = body.find("\r\n" + delim, start);
    std::string chunk = body.substr(start, next - start);
    size_t hs = chunk.find("\r\n\r\n");
    Part p;
    p.headers = Headers(chunk.substr(0, hs));
    std::string data = chunk.substr(hs + 4);
    p.body =
        p.headers["Content-Transfer-Encoding"] == "base64" ? DecodeBase64(data) : DecodeQp(data);
    m.parts.push_back(p);
    at = body.find(delim + "\r\n", next + 2);
  }
  return m;
}

// "=?UTF-8?B?...?=" words (folded) back to text.
std::string DecodeWords(const std::string& v) {
  std::string out;
  size_t at = 0;
  while ((at = v.find("=?UTF-8?B?", at)) != std::string::npos) {
    size_t end = v.find("?=", at + 10);
    out += DecodeBase64(v.substr(at + 10, end - at - 10));
    at = end + 2;
  }
  return out;
}

// --- tests ---------------------------------------------------------------

TEST(EmailTest, EveryPresetRendersAsAWellFormedMultipartMail) {
  for (Language lang : {Language::kEnglish, Language::kChinese}) {
    for (const alert::Rule& rule : alert::Presets()) {
      alert::Notification n = Group({MakeAlert(rule.id, rule.summary_en, rule.summary_zh)});
      std::string raw = EmailMessage(Options(lang), n, kNow, 7);
      for (unsigned char c : raw) ASSERT_LT(c, 0x80) << rule.id << ": the mail is 7-bit";
      for (std::string_view line : Split(raw, '\n')) {
        ASSERT_LE(line.size(), 79u) << rule.id << ": " << line;  // 78 + CR
        ASSERT_TRUE(line.empty() || line.back() == '\r') << "CRLF line ends";
      }
      Mail m = Parse(raw);
      EXPECT_EQ(m.headers["Date"], "Tue, 02 Dec 2025 02:05:39 +0000");
      EXPECT_EQ(m.headers["From"], "Vigil <vigil@lab.example>");
      EXPECT_EQ(m.headers["To"], "alice@lab.example, Bob Lee <bob@lab.example>");
      EXPECT_EQ(m.headers["MIME-Version"], "1.0");
      EXPECT_TRUE(m.headers["Message-ID"].starts_with("<1764641139000."));
      EXPECT_TRUE(m.headers["Message-ID"].ends_with("@lab.example>"));
      EXPECT_EQ(m.headers["List-Unsubscribe"],
                "<http://vigil.example:9300/#settings&tab=notifications>");
      EXPECT_EQ(m.headers["Auto-Submitted"], "auto-generated");
      EXPECT_TRUE(m.headers["Content-Type"].starts_with("multipart/alternative;"));
      ASSERT_EQ(m.parts.size(), 2u) << rule.id;
      EXPECT_EQ(m.parts[0].headers["Content-Type"], "text/plain; charset=UTF-8");
      EXPECT_EQ(m.parts[1].headers["Content-Type"], "text/html; charset=UTF-8");
      std::string headline = lang == Language::kChinese ? rule.summary_zh : rule.summary_en;
      std::string first_line = std::string(Split(headline, '\n')[0]);
      EXPECT_NE(m.parts[0].body.find(first_line), std::string::npos) << rule.id;
      EXPECT_NE(m.parts[0].body.find("http://vigil.example:9300/#alerts"), std::string::npos);
      EXPECT_NE(m.parts[1].body.find("href=\"http://vigil.example:9300/#settings&amp;tab="),
                std::string::npos);
      EXPECT_NE(m.parts[1].body.find("</html>"), std::string::npos);
    }
  }
}

TEST(EmailTest, ChineseSubjectIsEncodedWordsThatDecodeBack) {
  alert::Notification n = Group({MakeAlert("gpu_temperature_high", "hot", "GPU 3 温度 95 °C")});
  Mail m = Parse(EmailMessage(Options(Language::kChinese), n, kNow, 1));
  std::string subject = m.headers["Subject"];
  EXPECT_TRUE(subject.starts_with("=?UTF-8?B?")) << subject;
  EXPECT_EQ(DecodeWords(subject), "【告警 critical】gpu-07 上 1 条告警");
  EXPECT_EQ(m.headers["Content-Language"], "zh-CN");
  EXPECT_NE(m.parts[0].body.find("GPU 3 温度 95 °C"), std::string::npos);
  EXPECT_EQ(m.parts[0].headers["Content-Transfer-Encoding"], "base64") << "mostly Chinese";
  // English stays readable: ASCII subject, quoted-printable parts.
  Mail en = Parse(EmailMessage(Options(Language::kEnglish), n, kNow, 1));
  EXPECT_EQ(en.headers["Subject"], "[FIRING critical] 1 alert on gpu-07");
  EXPECT_EQ(en.parts[0].headers["Content-Transfer-Encoding"], "quoted-printable");
}

TEST(EmailTest, AlertTextIsEscapedNeverInjected) {
  std::string evil = "<script>alert(1)</script> & \"quoted\" 'x'\r\nBcc: victim@example.org";
  alert::Notification n = Group({MakeAlert("job_crashed", evil, evil)});
  n.group_labels = {{"node", "n\r\nBcc: x@y"}};
  std::string raw = EmailMessage(Options(Language::kEnglish), n, kNow, 1);
  Mail m = Parse(raw);
  EXPECT_EQ(m.headers.count("Bcc"), 0u) << "a label never adds a header";
  const std::string& html = m.parts[1].body;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &#39;x&#39;"),
            std::string::npos)
      << html;
  EXPECT_NE(m.parts[0].body.find("<script>alert(1)</script>"), std::string::npos)
      << "the plain part carries the text as is";
}

TEST(EmailTest, LogLinesArePreformattedAndEscaped) {
  Alert a = MakeAlert("job_crashed", "job train crashed", "任务 train 崩溃");
  a.log_excerpt = {"  File \"train.py\", line 61, in main", "RuntimeError: <b>bad</b> & worse"};
  Mail m = Parse(EmailMessage(Options(Language::kEnglish), Group({a}), kNow, 1));
  EXPECT_NE(m.parts[0].body.find("  Log:\r\n    |   File \"train.py\", line 61, in main"),
            std::string::npos)
      << m.parts[0].body;
  EXPECT_NE(m.parts[0].body.find("    | RuntimeError: <b>bad</b> & worse"), std::string::npos);
  const std::string& html = m.parts[1].body;
  EXPECT_NE(html.find("RuntimeError: &lt;b&gt;bad&lt;/b&gt; &amp; worse\r\n</pre>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<b>bad</b>"), std::string::npos);
}

TEST(EmailTest, LogTemplatesAreListedErrorsFirstAndEscaped) {
  Alert a = MakeAlert("job_crashed", "job train crashed", "任务 train 崩溃");
  a.diagnosis = testing::DiagnosisWithTemplates(/*extra=*/20, /*extra_bytes=*/2000);
  Mail m = Parse(EmailMessage(Options(Language::kEnglish), Group({a}), kNow, 1));
  const std::string& plain = m.parts[0].body;
  size_t error = plain.find(
      "  Log templates (2401 lines, 14 templates):\r\n"
      "    | ×3 error  RuntimeError: CUDA error: <*>\r\n"
      "    | ×2 new  see `nvidia-smi` **now** <at id=all></at>");
  EXPECT_NE(error, std::string::npos) << plain;
  EXPECT_LT(error, plain.find("    | ×312  Epoch <*> step <*> loss <*>"));
  EXPECT_EQ(plain.find("\r\nInjected"), std::string::npos) << "a template is one line";
  size_t listed = 0;
  for (size_t at = plain.find("    | ×"); at != std::string::npos;
       at = plain.find("    | ×", at + 1)) {
    ++listed;
  }
  EXPECT_EQ(listed, 10u);  // of 24
  const std::string& html = m.parts[1].body;
  EXPECT_NE(html.find("×3 error  RuntimeError: CUDA error: &lt;*&gt;"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;at id=all&gt;&lt;/at&gt; &lt;script&gt;alert(1)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<*>"), std::string::npos);

  Mail zh = Parse(EmailMessage(Options(Language::kChinese), Group({a}), kNow, 1));
  EXPECT_NE(zh.parts[0].body.find("  日志模板（2401 行，14 种）："), std::string::npos);
}

TEST(EmailTest, AStormIsBounded) {
  std::vector<Alert> many;
  for (int i = 0; i < 500; ++i) {
    many.push_back(MakeAlert("gpu_xid", std::string(5000, 'x'), std::string(5000, 'x')));
  }
  std::string raw = EmailMessage(Options(Language::kEnglish), Group(std::move(many)), kNow, 1);
  EXPECT_LT(raw.size(), 1'000'000u);
  Mail m = Parse(raw);
  EXPECT_NE(m.parts[0].body.find("400 more alert(s) not listed"), std::string::npos);
}

TEST(EmailTest, MailboxesAreChecked) {
  EXPECT_TRUE(CheckMailbox("a@b.org").ok());
  EXPECT_TRUE(CheckMailbox("Vigil 告警 <vigil@lab.example>").ok());
  EXPECT_FALSE(CheckMailbox("no-at-sign").ok());
  EXPECT_FALSE(CheckMailbox("a@b@c").ok());
  EXPECT_FALSE(CheckMailbox("a@b.org\r\nBcc: x@y").ok());
  EXPECT_FALSE(CheckMailbox("a b@c.org").ok());
  EXPECT_EQ(MailboxAddress("\"Lee, Bob\" <bob@x.org>"), "bob@x.org");
  EXPECT_EQ(Mailbox("Lee, Bob", "bob@x.org"), "\"Lee, Bob\" <bob@x.org>");
  EXPECT_EQ(Mailbox("告警", "a@x.org"), "=?UTF-8?B?5ZGK6K2m?= <a@x.org>");
}

TEST(MimeTest, QuotedPrintableAndDates) {
  EXPECT_EQ(QuotedPrintable("a=b \nc\t"), "a=3Db=20\r\nc=09");  // trailing white space encoded
  EXPECT_EQ(QuotedPrintable("°"), "=C2=B0");
  std::string long_line(100, 'a');
  std::string qp = QuotedPrintable(long_line);
  EXPECT_EQ(qp, std::string(75, 'a') + "=\r\n" + std::string(25, 'a'));
  // A soft break never splits a triplet.
  std::string qp2 = QuotedPrintable(std::string(74, 'a') + "é");
  EXPECT_EQ(qp2, std::string(74, 'a') + "=\r\n=C3=A9");
  EXPECT_EQ(DecodeQp(QuotedPrintable("x y\nz")), "x y\r\nz");
  EXPECT_EQ(Rfc5322Date(0), "Thu, 01 Jan 1970 00:00:00 +0000");
  EXPECT_EQ(HtmlEscape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(HeaderText("plain"), "plain");
  EXPECT_EQ(HeaderText("a\r\nb"), "a  b");
  // Long Chinese text: several words, none over 39 bytes of text.
  std::string words = HeaderText(std::string(60, 'x') + "温度温度温度温度温度温度温度温度");
  EXPECT_NE(words.find("\r\n =?UTF-8?B?"), std::string::npos) << words;
  EXPECT_EQ(DecodeWords(words), std::string(60, 'x') + "温度温度温度温度温度温度温度温度");
}

}  // namespace
}  // namespace vigil::notify
