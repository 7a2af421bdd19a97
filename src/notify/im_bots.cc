#include "notify/im_bots.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/crypto.h"

namespace vigil::notify {
namespace {

using nlohmann::json;

bool Zh(const ImOptions& o) { return o.language == Language::kChinese; }

// Log text (a log line, a template) as a bot shows it literally: nothing
// in it may become bold text, a link or a mention.
//  * DingTalk, WeCom: an inline code span; a backtick in it would end the
//    span, so it becomes an apostrophe.
//  * Slack: the same, and &, < and > as entities, which Slack reads in any
//    text ("<!channel>", "<@U123>" and "<url|text>" are its control
//    sequences; https://api.slack.com/reference/surfaces/formatting#escaping).
//  * Feishu: lark_md has no code span and reads <at id=all></at>, <a> and
//    <font> tags: every character its markdown uses is written as an HTML
//    character reference (`&#60;`), as Feishu's card documentation says.
constexpr const char* kFeishuMarkup = "&<>*~_[]()#:+!|$\\`'\"";
std::string QuoteLog(std::string text, ImKind kind) {
  if (kind == ImKind::kFeishu) {
    std::string out;
    for (char c : text) {
      if (std::string_view(kFeishuMarkup).find(c) != std::string_view::npos) {
        out += "&#" + std::to_string(static_cast<int>(c)) + ";";
      } else {
        out += c;
      }
    }
    return out;
  }
  std::replace(text.begin(), text.end(), '`', '\'');
  if (kind == ImKind::kSlack) {
    std::string out;
    for (char c : text) {
      out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
    }
    text = std::move(out);
  }
  return "`" + text + "`";
}

// One entry as markdown lines (DingTalk, WeCom, Feishu's lark_md and
// Slack's mrkdwn all read **bold** or *bold*; `bold` is the marker).
std::string EntryMarkdown(const MessageEntry& e, const std::string& bold, ImKind kind, bool zh) {
  std::string mark = e.resolved ? (zh ? "已恢复" : "resolved") : e.severity;
  std::string out = bold + "[" + mark + "] " + bold + e.headline + "\n";
  if (!e.value.empty()) out += "> " + e.value + "\n";
  if (!e.where.empty()) out += "> " + e.where + "\n";
  for (const std::string& d : e.details) out += "> " + d + "\n";
  if (!e.log_lines.empty()) {
    out += "> " + std::string(zh ? "日志：" : "Log:") + "\n";
    for (const std::string& l : e.log_lines) out += "> " + QuoteLog(l, kind) + "\n";
  }
  if (!e.templates.empty()) {
    out += "> " + e.templates_heading + "\n";
    for (const TemplateLine& t : e.templates) {
      out += "> " + t.mark + " " + QuoteLog(t.text, kind) + "\n";
    }
  }
  out += "> " + e.since + "\n";
  return out;
}

std::string LinkLine(const Message& m, bool zh, bool markdown_link) {
  std::string text = zh ? "在 Vigil 中查看" : "Open in Vigil";
  return markdown_link ? "[" + text + "](" + m.link + ")" : text + ": " + m.link;
}

std::string MarkdownBody(const Message& m, const std::string& bold, ImKind kind, bool zh) {
  std::string out;
  for (const MessageEntry& e : m.entries) out += EntryMarkdown(e, bold, kind, zh) + "\n";
  return out;
}

// Drops entries from the end until `render(entries)` fits in `max` bytes,
// saying how many were left out; at least the first entry stays (cut by the
// caller's line cutting where still too long).
std::string FitEntries(Message m, size_t max, bool zh,
                       const std::function<std::string(const Message&)>& render) {
  std::string body = render(m);
  size_t dropped = 0;
  while (body.size() > max && m.entries.size() > 1) {
    m.entries.pop_back();
    ++dropped;
    MessageEntry more;
    more.headline = zh ? "另有 " + std::to_string(dropped) + " 条告警未列出，见链接"
                       : std::to_string(dropped) + " more alert(s) not listed: see the link";
    more.severity = "…";
    more.since = "";
    Message shown = m;
    shown.entries.push_back(more);
    body = render(shown);
  }
  return body;
}

json SlackBody(const Message& m, bool zh) {
  json blocks = json::array();
  blocks.push_back(
      {{"type", "header"}, {"text", {{"type", "plain_text"}, {"text", m.title.substr(0, 150)}}}});
  for (const MessageEntry& e : m.entries) {
    if (blocks.size() >= 48) break;  // Slack's limit is 50 blocks
    std::string text = EntryMarkdown(e, "*", ImKind::kSlack, zh);
    if (text.size() > 2900) text = CutAtLine(text, 2900, "…");
    blocks.push_back({{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", text}}}});
  }
  std::string open = zh ? "在 Vigil 中查看" : "Open in Vigil";
  json link = {{"type", "mrkdwn"}, {"text", "<" + m.link + "|" + open + ">"}};
  blocks.push_back({{"type", "context"}, {"elements", json::array({link})}});
  std::string fallback =
      m.title + "\n" + MarkdownBody(m, "", ImKind::kSlack, zh) + LinkLine(m, zh, false);
  return {{"text", CutAtLine(fallback, 3000, "…")}, {"blocks", blocks}};
}

json FeishuCard(const Message& m, bool zh) {
  std::string color = m.severity == "critical"   ? "red"
                      : m.severity == "warning"  ? "orange"
                      : m.severity == "resolved" ? "green"
                                                 : "blue";
  json elements = json::array();
  for (const MessageEntry& e : m.entries) {
    elements.push_back(
        {{"tag", "div"},
         {"text", {{"tag", "lark_md"}, {"content", EntryMarkdown(e, "**", ImKind::kFeishu, zh)}}}});
  }
  elements.push_back(
      {{"tag", "action"},
       {"actions", json::array({{{"tag", "button"},
                                 {"text",
                                  {{"tag", "plain_text"},
                                   {"content", zh ? "在 Vigil 中查看" : "Open in Vigil"}}},
                                 {"type", "primary"},
                                 {"url", m.link}}})}});
  return {
      {"msg_type", "interactive"},
      {"card",
       {{"config", {{"wide_screen_mode", true}}},
        {"header", {{"template", color}, {"title", {{"tag", "plain_text"}, {"content", m.title}}}}},
        {"elements", elements}}}};
}

}  // namespace

std::optional<ImKind> ParseImKind(std::string_view type) {
  if (type == "slack") return ImKind::kSlack;
  if (type == "feishu") return ImKind::kFeishu;
  if (type == "dingtalk") return ImKind::kDingTalk;
  if (type == "wecom") return ImKind::kWeCom;
  return std::nullopt;
}

std::string CutAtLine(const std::string& text, size_t max, const std::string& tail) {
  if (text.size() <= max) return text;
  size_t room = max > tail.size() + 1 ? max - tail.size() - 1 : 0;
  size_t cut = text.rfind('\n', room);
  if (cut == std::string::npos || cut == 0) {
    // One long line: cut before a UTF-8 continuation byte never splits a character.
    cut = room;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  return text.substr(0, cut) + "\n" + tail;
}

net::HttpClientRequest ImRequest(const ImOptions& o, const alert::Notification& n, int64_t now_ms) {
  bool zh = Zh(o);
  // WeCom's 4,096 bytes hold fewer templates than the others' 20 KB.
  MessageLimits limits;
  if (o.kind == ImKind::kWeCom) limits = {.max_templates = 3, .max_template_bytes = 120};
  Message m = BuildMessage(n, o.language, limits);
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = o.url;
  req.timeout = o.timeout;
  req.max_response_bytes = 64 * 1024;
  req.headers.Add("Content-Type", "application/json; charset=utf-8");
  json body;
  switch (o.kind) {
    case ImKind::kSlack:
      body = SlackBody(m, zh);
      break;
    case ImKind::kFeishu: {
      std::string dumped = FitEntries(m, kFeishuMaxBody - 256, zh,
                                      [&](const Message& x) { return FeishuCard(x, zh).dump(); });
      body = json::parse(dumped);
      if (!o.secret.empty()) {
        std::string ts = std::to_string(now_ms / 1000);
        body["timestamp"] = ts;
        body["sign"] = Base64Encode(HmacSha256(ts + "\n" + o.secret, ""));
      }
      break;
    }
    case ImKind::kDingTalk: {
      std::string text = FitEntries(m, kDingTalkMaxBody - 1024, zh, [&](const Message& x) {
        return "### " + x.title + "\n\n" + MarkdownBody(x, "**", ImKind::kDingTalk, zh) +
               LinkLine(x, zh, true);
      });
      json at = {{"atMobiles", json::array()}, {"isAtAll", false}};
      if (m.severity == "critical") {
        for (const std::string& mobile : o.at_mobiles) {
          at["atMobiles"].push_back(mobile);
          text += " @" + mobile;  // DingTalk notifies only mobiles named in the text too
        }
      }
      body = {
          {"msgtype", "markdown"}, {"markdown", {{"title", m.title}, {"text", text}}}, {"at", at}};
      if (!o.secret.empty()) {
        std::string ts = std::to_string(now_ms);
        std::string sign = Base64Encode(HmacSha256(o.secret, ts + "\n" + o.secret));
        req.url += (req.url.find('?') == std::string::npos ? "?" : "&");
        req.url += "timestamp=" + ts + "&sign=" + UrlEncodeComponent(sign);
      }
      break;
    }
    case ImKind::kWeCom: {
      std::string text = "**" + m.title + "**\n" + MarkdownBody(m, "**", ImKind::kWeCom, zh);
      std::string link = LinkLine(m, zh, true);
      body = {{"msgtype", "markdown"},
              {"markdown",
               {{"content", CutAtLine(text + link, kWeComMaxContent,
                                      (zh ? "……内容过长，" : "… cut: ") + link)}}}};
      break;
    }
  }
  req.body = body.dump();
  return req;
}

Status CheckImAnswer(ImKind kind, const net::HttpResponse& r) {
  std::string answer = r.body.substr(0, 300);
  if (r.status >= 500 || r.status == 429) {
    return Unavailable("the bot answered HTTP " + std::to_string(r.status) + ": " + answer);
  }
  if (r.status < 200 || r.status >= 300) {
    return FailedPrecondition("the bot refused the message (HTTP " + std::to_string(r.status) +
                              "): " + answer);
  }
  if (kind == ImKind::kSlack) {
    if (r.body == "ok") return Status::Ok();
    return FailedPrecondition("Slack answered: " + answer);
  }
  json j = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return FailedPrecondition("the bot's answer is not JSON: " + answer);
  const char* field = kind == ImKind::kFeishu ? "code" : "errcode";
  // Feishu answers {"code":0,...} (older bots {"StatusCode":0,...}).
  const json* code = j.contains(field)          ? &j[field]
                     : j.contains("StatusCode") ? &j["StatusCode"]
                                                : nullptr;
  if (code == nullptr || !code->is_number_integer()) {
    return FailedPrecondition("the bot's answer has no " + std::string(field) + ": " + answer);
  }
  if (code->get<int64_t>() == 0) return Status::Ok();
  // Rate limits are worth retrying later: DingTalk 660026 / 130101, WeCom
  // 45009, Feishu 11232 (frequency limited).
  int64_t c = code->get<int64_t>();
  if (c == 130101 || c == 660026 || c == 45009 || c == 11232) {
    return Unavailable("the bot is rate-limited: " + answer);
  }
  return FailedPrecondition("the bot refused the message: " + answer);
}

RateLimit VendorRateLimit(ImKind kind) {
  switch (kind) {
    case ImKind::kDingTalk:
    case ImKind::kWeCom:
      return {20, 0};
    case ImKind::kFeishu:
      return {100, 5};
    case ImKind::kSlack:
      return {0, 1};
  }
  return {};
}

bool ImChannel::Admit(int64_t now_ms) {
  while (!sent_ms_.empty() && now_ms - sent_ms_.front() >= 60'000) sent_ms_.pop_front();
  if (limit_.per_minute > 0 && static_cast<int>(sent_ms_.size()) >= limit_.per_minute) {
    return false;
  }
  if (limit_.per_second > 0) {
    int last_second = 0;
    for (auto it = sent_ms_.rbegin(); it != sent_ms_.rend() && now_ms - *it < 1000; ++it) {
      ++last_second;
    }
    if (last_second >= limit_.per_second) return false;
  }
  sent_ms_.push_back(now_ms);
  return true;
}

Status ImChannel::Send(const alert::Notification& n) {
  int64_t now_ms = options_.env->NowMillis();
  if (!Admit(now_ms)) {
    return Unavailable("held back by the vendor's rate limit (" +
                       std::to_string(limit_.per_minute) + " a minute, " +
                       std::to_string(limit_.per_second) + " a second); sent again later");
  }
  net::HttpClientRequest req = ImRequest(options_, n, now_ms);
  auto r = net::HttpsFetch(req, options_.tls);
  if (!r.ok()) return r.status();
  return CheckImAnswer(options_.kind, *r);
}

}  // namespace vigil::notify
