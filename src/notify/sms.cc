#include "notify/sms.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/crypto.h"
#include "core/strings.h"
#include "notify/mime.h"

namespace vigil::notify {
namespace {

using alert::Alert;
using alert::AlertState;

enum class Context { kUrl, kJson, kForm, kXml, kRaw };

// The least room worth a template line in a text (else it is left out).
constexpr size_t kSmsMinTemplateChars = 24;

size_t Chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// `s` cut to at most `max` code points, with "…" when cut.
std::string CutChars(std::string_view s, size_t max) {
  if (Chars(s) <= max || max == 0) return Chars(s) <= max ? std::string(s) : "";
  size_t chars = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++chars == max) break;
  }
  return std::string(s.substr(0, i)) + "…";
}

std::string Escape(const std::string& value, Context c) {
  switch (c) {
    case Context::kUrl:
    case Context::kForm:
      return UrlEncodeComponent(value);
    case Context::kJson: {
      std::string q =
          nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return q.substr(1, q.size() - 2);  // the string's content, without its quotes
    }
    case Context::kXml:
      return HtmlEscape(value);
    case Context::kRaw:
      return value;
  }
  return value;
}

Result<std::string> Expand(std::string_view t, const SmsValues& v, Context c) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t open = t.find("{{", at);
    if (open == std::string_view::npos) break;
    size_t close = t.find("}}", open + 2);
    if (close == std::string_view::npos) break;  // a lone "{{" is text
    out.append(t.substr(at, open - at));
    std::string_view name = TrimSpace(t.substr(open + 2, close - open - 2));
    const std::string* value = name == "message"     ? &v.message
                               : name == "severity"  ? &v.severity
                               : name == "alertname" ? &v.alertname
                               : name == "to"        ? &v.to
                                                     : nullptr;
    if (value == nullptr) {
      return InvalidArgument("unknown placeholder {{" + std::string(name) +
                             "}} (known: {{message}}, {{severity}}, {{alertname}}, {{to}})");
    }
    out += Escape(*value, c);
    at = close + 2;
  }
  out.append(t.substr(at));
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The body's context and the Content-Type to send ("" : as configured).
std::pair<Context, std::string> BodyContext(const SmsOptions& o) {
  if (auto type = o.headers.Get("Content-Type")) {
    std::string t = Lower(*type);
    if (t.find("json") != std::string::npos) return {Context::kJson, ""};
    if (t.find("x-www-form-urlencoded") != std::string::npos) return {Context::kForm, ""};
    if (t.find("xml") != std::string::npos) return {Context::kXml, ""};
    return {Context::kRaw, ""};
  }
  std::string_view b = TrimSpace(o.body);
  if (b.starts_with("{") || b.starts_with("[")) {
    return {Context::kJson, "application/json; charset=utf-8"};
  }
  return {Context::kForm, "application/x-www-form-urlencoded"};
}

int Rank(const Alert& a) {
  if (a.state == AlertState::kResolved) return 0;
  return a.severity == alert::Severity::kCritical  ? 3
         : a.severity == alert::Severity::kWarning ? 2
                                                   : 1;
}

}  // namespace

std::string SmsText(const alert::Notification& n, Language language) {
  bool zh = language == Language::kChinese;
  Message m = BuildMessage(n, language, {.max_templates = 1, .max_template_bytes = 200});
  std::string out = CutChars(m.title, 100);
  auto tail = [&](size_t left) {
    std::string more = left == 0 ? ""
                       : zh      ? "\n另有 " + std::to_string(left) + " 条"
                                 : "\n+" + std::to_string(left) + " more";
    return more + "\n" + m.link;
  };
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const MessageEntry& e = m.entries[i];
    std::string mark = e.resolved ? (zh ? "已恢复" : "resolved") : e.severity;
    std::string line = "\n[" + mark + "] " + e.headline;
    size_t left = m.entries.size() - i - 1;
    size_t used = Chars(out) + Chars(tail(left));
    size_t room = used < kSmsMaxChars ? kSmsMaxChars - used : 0;
    if (Chars(line) <= room) {
      out += line;
      // A lone alert's top error template, when room is left: what failed.
      if (m.entries.size() == 1 && !e.templates.empty() && e.templates[0].error) {
        size_t left_room = room - Chars(line);
        std::string t = "\n" + e.templates[0].mark.substr(0, e.templates[0].mark.find(' ')) + " " +
                        e.templates[0].text;
        if (left_room >= kSmsMinTemplateChars)
          out += CutChars(t, std::min<size_t>(left_room, 80) - 1);
      }
      continue;
    }
    // The first alert is cut to fit rather than left out: it is the news.
    if (i == 0 && room > 1) return out + CutChars(line, room - 1) + tail(left);
    return out + tail(left + 1);
  }
  return CutChars(out + tail(0), kSmsMaxChars);
}

SmsValues SmsValuesOf(const alert::Notification& n, Language language) {
  SmsValues v;
  v.message = SmsText(n, language);
  const Alert* top = nullptr;
  for (const Alert& a : n.alerts) {
    if (top == nullptr || Rank(a) > Rank(*top)) top = &a;
  }
  v.severity = top == nullptr || Rank(*top) == 0 ? "resolved" : alert::SeverityName(top->severity);
  v.alertname = top == nullptr ? "" : top->rule;
  return v;
}

Result<net::HttpClientRequest> SmsRequest(const SmsOptions& o, const SmsValues& v) {
  net::HttpClientRequest req;
  VIGIL_ASSIGN_OR_RETURN(req.url, Expand(o.url, v, Context::kUrl));
  req.headers = o.headers;
  req.timeout = o.timeout;
  req.max_response_bytes = 64 * 1024;
  req.method = o.body.empty() ? "GET" : "POST";
  if (o.body.empty()) return req;
  auto [context, type] = BodyContext(o);
  VIGIL_ASSIGN_OR_RETURN(req.body, Expand(o.body, v, context));
  if (!type.empty()) req.headers.Set("Content-Type", type);
  if (context == Context::kJson &&
      nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false).is_discarded()) {
    return InvalidArgument("the body template is not valid JSON once filled in: " +
                           req.body.substr(0, 200));
  }
  return req;
}

Status CheckSmsTemplates(const SmsOptions& o) {
  SmsValues sample{"[FIRING critical] \"1\" alert\n[critical] GPU 0 at 95 °C & more", "critical",
                   "gpu_temperature_high", "+8613800000000"};
  auto req = SmsRequest(o, sample);
  if (!req.ok()) return req.status();
  if (!req->url.starts_with("https://") && !req->url.starts_with("http://")) {
    return InvalidArgument("the url must be the gateway's https:// (or http://) URL");
  }
  return Status::Ok();
}

bool IsCapped(const Status& s) {
  return s.code() == StatusCode::kResourceExhausted && s.message().starts_with("capped: ");
}

int64_t SmsChannel::DayOf(int64_t now_ms) const {
  int64_t s = now_ms / 1000;
  int offset = 0;
  if (options_.utc_offset) {
    offset = options_.utc_offset(s);
  } else {
    std::time_t t = static_cast<std::time_t>(s);
    std::tm tm{};
    localtime_r(&t, &tm);
    offset = static_cast<int>(tm.tm_gmtoff);
  }
  int64_t local = s + offset;
  return local >= 0 ? local / 86400 : (local - 86399) / 86400;
}

std::string SmsChannel::Charge(const std::string& to, int64_t now_ms) {
  std::lock_guard lock(mu_);
  SmsUsage& u = usage_[to];
  int64_t day = DayOf(now_ms);
  if (u.day != day) u = SmsUsage{day, 0, 0, 0, u.capped_total};
  if (options_.max_per_day > 0 && u.sent >= options_.max_per_day) {
    return std::to_string(u.sent) + " messages today, the cap is " +
           std::to_string(options_.max_per_day) + " a day";
  }
  if (options_.max_cost_per_day_micros > 0 &&
      u.cost_micros + options_.cost_per_message_micros > options_.max_cost_per_day_micros) {
    auto money = [](int64_t micros) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(micros) / 1e6);
      return std::string(buf);
    };
    return money(u.cost_micros) + " spent today, one more would pass the cap of " +
           money(options_.max_cost_per_day_micros) + " a day";
  }
  ++u.sent;
  u.cost_micros += options_.cost_per_message_micros;
  return "";
}

void SmsChannel::Refund(const std::string& to) {
  std::lock_guard lock(mu_);
  SmsUsage& u = usage_[to];
  u.sent = std::max<int64_t>(0, u.sent - 1);
  u.cost_micros = std::max<int64_t>(0, u.cost_micros - options_.cost_per_message_micros);
}

void SmsChannel::RecordCapped(CappedSms c) {
  std::lock_guard lock(mu_);
  ++capped_count_;
  SmsUsage& u = usage_[c.to];
  ++u.capped;
  ++u.capped_total;
  if (capped_.size() >= kSmsMaxCappedKept) capped_.erase(capped_.begin());
  capped_.push_back(std::move(c));
}

Status SmsChannel::SendOne(const SmsValues& values) {
  auto req = SmsRequest(options_, values);
  if (!req.ok()) return req.status();
  auto r = net::HttpsFetch(*req, options_.tls);
  if (!r.ok()) return r.status();
  if (r->status >= 200 && r->status < 300) return Status::Ok();
  std::string what =
      "the SMS gateway answered HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300);
  if (r->status >= 500 || r->status == 429) return Unavailable(what);
  return FailedPrecondition(what);
}

Status SmsChannel::Send(const alert::Notification& n) {
  SmsValues values = SmsValuesOf(n, options_.language);
  if (pending_.size() >= 256 && pending_.count(n.group_key) == 0) {
    pending_.erase(pending_.begin());  // bounded: an old group's retry may repeat
  }
  Pending& p = pending_[n.group_key];
  if (p.text != values.message) p = Pending{values.message, {}, {}};
  int64_t now_ms = options_.env->NowMillis();
  Status failed = Status::Ok();
  size_t delivered = 0;
  for (const std::string& to : options_.to) {
    if (p.done.count(to) > 0) continue;  // a retry: it got this message (or was capped)
    std::string capped = Charge(to, now_ms);
    if (!capped.empty()) {
      p.done.insert(to);
      p.capped_reasons.push_back(to + ": " + capped);
      RecordCapped({to, n.group_key, values.message, capped, now_ms});
      continue;
    }
    values.to = to;
    Status st = SendOne(values);
    if (!st.ok()) {
      Refund(to);
      if (failed.ok()) failed = st.WithContext("SMS to " + to);
      continue;
    }
    p.done.insert(to);
    ++delivered;
  }
  if (!failed.ok()) return failed;
  if (!p.capped_reasons.empty()) {
    std::string why;
    for (const std::string& r : p.capped_reasons) why += (why.empty() ? "" : "; ") + r;
    return ResourceExhausted("capped: held back from " + std::to_string(p.capped_reasons.size()) +
                             " of " + std::to_string(options_.to.size()) + " recipients (" + why +
                             ")");
  }
  pending_.erase(n.group_key);
  return Status::Ok();
}

int64_t SmsChannel::CappedCount() const {
  std::lock_guard lock(mu_);
  return capped_count_;
}

std::map<std::string, SmsUsage> SmsChannel::Usage() const {
  std::lock_guard lock(mu_);
  return usage_;
}

std::vector<CappedSms> SmsChannel::TakeCapped() {
  std::lock_guard lock(mu_);
  return std::exchange(capped_, {});
}

}  // namespace vigil::notify
