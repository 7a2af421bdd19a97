#include "notify/email.h"

#include "core/crypto.h"
#include "core/strings.h"
#include "notify/mime.h"

namespace vigil::notify {
namespace {

struct ParsedMailbox {
  std::string display;
  std::string address;
};

ParsedMailbox ParseMailbox(std::string_view mailbox) {
  mailbox = TrimSpace(mailbox);
  size_t open = mailbox.rfind('<');
  if (open == std::string_view::npos || !mailbox.ends_with('>')) {
    return {"", std::string(mailbox)};
  }
  std::string display(TrimSpace(mailbox.substr(0, open)));
  if (display.size() >= 2 && display.front() == '"' && display.back() == '"') {
    display = display.substr(1, display.size() - 2);
  }
  return {display, std::string(mailbox.substr(open + 1, mailbox.size() - open - 2))};
}

std::string Clip(const std::string& s) { return std::string(CutUtf8(s, kEmailMaxField)); }

constexpr size_t kEmailMaxDetails = 12;  // lines of an entry's details

bool Zh(const EmailOptions& o) { return o.language == Language::kChinese; }

// The message with its bounds applied: at most kEmailMaxEntries alerts (a
// last line says how many more), each field at most kEmailMaxField bytes.
Message Bounded(Message m, bool zh) {
  size_t more = m.entries.size() > kEmailMaxEntries ? m.entries.size() - kEmailMaxEntries : 0;
  m.entries.resize(std::min(m.entries.size(), kEmailMaxEntries));
  for (MessageEntry& e : m.entries) {
    for (std::string* f : {&e.headline, &e.value, &e.where, &e.since}) *f = Clip(*f);
    if (e.details.size() > kEmailMaxDetails) e.details.resize(kEmailMaxDetails);
    for (std::string& d : e.details) d = Clip(d);
    for (std::string& l : e.log_lines) l = Clip(l);
  }
  if (more > 0) {
    MessageEntry e;
    e.severity = "…";
    e.headline = zh ? "另有 " + std::to_string(more) + " 条告警未列出，见链接"
                    : std::to_string(more) + " more alert(s) not listed: see the link";
    m.entries.push_back(e);
  }
  return m;
}

std::string Mark(const MessageEntry& e, bool zh) {
  return e.resolved ? (zh ? "已恢复" : "resolved") : e.severity;
}

std::string Footer(const alert::Notification& n, bool zh) {
  return zh ? "此邮件由 Vigil 的通知通道 " + n.receiver +
                  " 发送，因为本地址是其告警的收件人。如需更改或停止这些通知，请打开通知设置："
            : "Sent by Vigil's notification channel " + n.receiver +
                  " because this address receives its alerts. To change or stop these "
                  "notifications, open the notification settings:";
}

std::string PlainText(const Message& m, const alert::Notification& n, bool zh) {
  std::string out = m.title + "\n\n";
  for (const MessageEntry& e : m.entries) {
    out += "[" + Mark(e, zh) + "] " + e.headline + "\n";
    for (const std::string* f : {&e.value, &e.where}) {
      if (!f->empty()) out += "  " + *f + "\n";
    }
    for (const std::string& d : e.details) out += "  " + d + "\n";
    if (!e.log_lines.empty()) out += std::string(zh ? "  日志：\n" : "  Log:\n");
    for (const std::string& l : e.log_lines) out += "    | " + l + "\n";
    if (!e.templates.empty()) out += "  " + e.templates_heading + "\n";
    for (const TemplateLine& t : e.templates) out += "    | " + t.mark + "  " + t.text + "\n";
    for (const std::string* f : {&e.since, &e.link}) {
      if (!f->empty()) out += "  " + *f + "\n";
    }
    out += "\n";
  }
  out += (zh ? "在 Vigil 中查看：" : "Open in Vigil: ") + m.link + "\n\n";
  out += "-- \n" + Footer(n, zh) + "\n" + m.settings_link + "\n";
  return out;
}

const char* Colour(const MessageEntry& e) {
  if (e.resolved) return "#2e7d32";
  if (e.severity == "critical") return "#c62828";
  if (e.severity == "warning") return "#ef6c00";
  return "#1565c0";
}

constexpr const char* kPreStyle =
    "<pre style=\"margin:4px 0;padding:4px;background:#f5f5f5;font-size:12px;"
    "white-space:pre-wrap\">";

// Every value goes through HtmlEscape: alert text is untrusted.
std::string Html(const Message& m, const alert::Notification& n, bool zh) {
  auto esc = [](const std::string& s) { return HtmlEscape(s); };
  std::string out = "<!DOCTYPE html>\n<html lang=\"" + std::string(zh ? "zh-CN" : "en") +
                    "\">\n<head><meta charset=\"utf-8\"><title>" + esc(m.title) +
                    "</title></head>\n<body style=\"font-family:sans-serif;color:#222\">\n"
                    "<h2 style=\"font-size:18px\">" +
                    esc(m.title) + "</h2>\n";
  for (const MessageEntry& e : m.entries) {
    out += "<div style=\"margin:0 0 12px 0;padding:4px 8px;border-left:4px solid " +
           std::string(Colour(e)) + "\">\n<b>[" + esc(Mark(e, zh)) + "]</b> " + esc(e.headline);
    for (const std::string* f : {&e.value, &e.where}) {
      if (!f->empty()) out += "<br>\n" + esc(*f);
    }
    for (const std::string& d : e.details) out += "<br>\n" + esc(d);
    if (!e.log_lines.empty()) {
      out += "<br>\n" + std::string(zh ? "日志：" : "Log:") + "\n" + kPreStyle;
      for (const std::string& l : e.log_lines) out += esc(l) + "\n";
      out += "</pre>";
    }
    if (!e.templates.empty()) {
      out += "<br>\n" + esc(e.templates_heading) + "\n" + kPreStyle;
      for (const TemplateLine& t : e.templates) out += esc(t.mark) + "  " + esc(t.text) + "\n";
      out += "</pre>";
    }
    if (!e.since.empty()) out += "<br>\n" + esc(e.since);
    if (!e.link.empty()) {
      out += "<br>\n<a href=\"" + esc(e.link) + "\">" + (zh ? "详情" : "Details") + "</a>";
    }
    out += "\n</div>\n";
  }
  out += "<p><a href=\"" + esc(m.link) + "\">" + (zh ? "在 Vigil 中查看" : "Open in Vigil") +
         "</a></p>\n<hr>\n<p style=\"font-size:12px;color:#666\">" + esc(Footer(n, zh)) +
         " <a href=\"" + esc(m.settings_link) + "\">" +
         (zh ? "通知设置" : "Notification settings") + "</a></p>\n</body>\n</html>\n";
  return out;
}

std::string Part(const std::string& boundary, const char* type, const std::string& text) {
  EncodedBody body = EncodeBody(text);
  return "--" + boundary + "\r\nContent-Type: " + type +
         "; charset=UTF-8\r\nContent-Transfer-Encoding: " + body.transfer_encoding + "\r\n\r\n" +
         body.data + "\r\n";
}

}  // namespace

std::string MailboxAddress(std::string_view mailbox) { return ParseMailbox(mailbox).address; }

Status CheckMailbox(std::string_view mailbox) {
  for (char c : mailbox) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return InvalidArgument("has a control character");
    }
  }
  std::string address = ParseMailbox(mailbox).address;
  size_t at = address.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == address.size() ||
      address.find('@', at + 1) != std::string::npos) {
    return InvalidArgument("\"" + address + "\" is not an address like name@example.org");
  }
  if (address.find_first_of(" <>,;\"()[]\\") != std::string::npos) {
    return InvalidArgument("\"" + address + "\" has a character an address cannot have");
  }
  return Status::Ok();
}

std::string EmailMessage(const EmailOptions& o, const alert::Notification& n, int64_t now_ms,
                         uint64_t sequence) {
  bool zh = Zh(o);
  Message m =
      Bounded(BuildMessage(n, o.language, {.max_templates = 10, .max_template_bytes = 300}), zh);
  ParsedMailbox from = ParseMailbox(o.from);
  std::string domain = from.address.substr(from.address.find('@') + 1);
  std::string unique = HexEncode(Sha256(n.group_key + "\n" + std::to_string(now_ms) + "\n" +
                                        std::to_string(sequence)))
                           .substr(0, 20);
  std::string boundary = "=_vigil_" + unique;  // "=_" never occurs in QP or base64
  std::string to;
  for (const std::string& r : o.to) {
    ParsedMailbox p = ParseMailbox(r);
    to += (to.empty() ? "" : ",\r\n ") + Mailbox(p.display, p.address);
  }
  std::string out;
  out += "Date: " + Rfc5322Date(now_ms) + "\r\n";
  out += "From: " + Mailbox(from.display, from.address) + "\r\n";
  out += "To: " + to + "\r\n";
  out += "Subject: " + HeaderText(CutUtf8(m.title, 200)) + "\r\n";
  out += "Message-ID: <" + std::to_string(now_ms) + "." + unique + "@" + domain + ">\r\n";
  out += "MIME-Version: 1.0\r\n";
  out += "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n";
  out += "List-Unsubscribe: <" + m.settings_link + ">\r\n";
  out += "Auto-Submitted: auto-generated\r\n";
  out += std::string("Content-Language: ") + (zh ? "zh-CN" : "en") + "\r\n";
  out += "\r\n";
  out += Part(boundary, "text/plain", PlainText(m, n, zh));
  out += Part(boundary, "text/html", Html(m, n, zh));
  out += "--" + boundary + "--\r\n";
  return out;
}

Status EmailChannel::Send(const alert::Notification& n) {
  net::SmtpRequest r = options_.server;
  r.mail_from = MailboxAddress(options_.from);
  r.to.clear();
  for (const std::string& to : options_.to) r.to.push_back(MailboxAddress(to));
  r.message = EmailMessage(options_, n, options_.env->NowMillis(), sequence_++);
  return net::SmtpSend(r, options_.tls);
}

}  // namespace vigil::notify
