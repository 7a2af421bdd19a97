#include "cli/channels.h"

#include <cmath>

#include "alert/quiet_hours.h"
#include "core/strings.h"
#include "notify/im_bots.h"
#include "notify/webhook.h"

namespace vigil::cli {
namespace {

Status Bad(const std::string& what) { return InvalidArgument(what); }

Result<notify::Language> LanguageOf(const ChannelConfig& c, const std::string& at) {
  if (c.language.empty() || c.language == "en") return notify::Language::kEnglish;
  if (c.language == "zh") return notify::Language::kChinese;
  return Bad(at + ".language must be \"en\" or \"zh\"");
}

// "host:port", "smtp://host:port", "smtps://host[:port]" (465 by default);
// an IPv6 host in brackets. Implicit TLS for smtps:// and for port 465.
Status ParseSmtpServer(const ChannelConfig& c, const std::string& at, net::SmtpRequest* r) {
  std::string_view s = c.smtp;
  std::string form = at + R"(.smtp must be "host:port" (e.g. "smtp.example.org:587") or )"
                          R"("smtps://host:port")";
  bool smtps = s.starts_with("smtps://");
  if (smtps) s.remove_prefix(8);
  if (s.starts_with("smtp://")) s.remove_prefix(7);
  size_t colon = s.rfind(':');
  bool bracketed = s.starts_with("[");
  if (colon == std::string_view::npos || (bracketed && colon < s.find(']'))) {
    if (!smtps) return Bad(form);
    colon = s.size();  // smtps:// without a port
  }
  std::string_view host = s.substr(0, colon);
  if (bracketed) {
    if (!host.ends_with("]")) return Bad(form);
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host.find_first_of("/@ ") != std::string_view::npos) return Bad(form);
  r->host = std::string(host);
  r->port = 465;
  if (colon < s.size()) {
    auto port = ParseUint64(s.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535) return Bad(form);
    r->port = static_cast<int>(*port);
  }
  bool implicit = smtps || r->port == 465;
  if (implicit && c.starttls.value_or(false)) {
    return Bad(at + ".starttls does not apply to implicit TLS (port 465 or smtps://)");
  }
  r->tls = implicit                    ? net::SmtpTls::kImplicit
           : c.starttls.value_or(true) ? net::SmtpTls::kStartTls
                                       : net::SmtpTls::kNone;
  return Status::Ok();
}

Status CheckPhone(const std::string& number, const std::string& at) {
  size_t digits = 0;
  for (char ch : number) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      ++digits;
    } else if (ch != '+' && ch != ' ' && ch != '-' && ch != '(' && ch != ')') {
      return Bad(at + ".to: \"" + number + "\" is not a phone number");
    }
  }
  if (digits < 3 || digits > 20) return Bad(at + ".to: \"" + number + "\" is not a phone number");
  return Status::Ok();
}

int64_t Micros(double amount) { return std::llround(amount * 1e6); }

// Stands in for a channel whose options could not be built (the parser
// refuses such a config, so this is a safety net, not a path).
class BrokenChannel final : public alert::Notifier {
 public:
  explicit BrokenChannel(Status why) : why_(std::move(why)) {}
  Status Send(const alert::Notification&) override { return why_; }

 private:
  Status why_;
};

}  // namespace

Result<notify::EmailOptions> EmailOptionsOf(const ChannelConfig& c, const std::string& at) {
  notify::EmailOptions o;
  if (c.smtp.empty()) return Bad(at + R"( needs "smtp": "host:port")");
  VIGIL_RETURN_IF_ERROR(ParseSmtpServer(c, at, &o.server));
  if (c.username.empty() != c.password.empty()) {
    return Bad(at + " needs both \"username\" and \"password\" for AUTH, or neither");
  }
  if (!c.password.empty() && o.server.tls == net::SmtpTls::kNone) {
    return Bad(at +
               ": with starttls false the password would cross the network in clear text; "
               "use STARTTLS or implicit TLS (port 465)");
  }
  o.server.username = c.username;
  o.server.password = c.password;
  if (c.from.empty()) return Bad(at + R"( needs "from": "Vigil <vigil@example.org>")");
  if (Status st = notify::CheckMailbox(c.from); !st.ok()) {
    return Bad(at + ".from " + st.message());
  }
  if (c.to.empty()) return Bad(at + R"( needs "to": a list of addresses)");
  for (const std::string& to : c.to) {
    if (Status st = notify::CheckMailbox(to); !st.ok()) return Bad(at + ".to " + st.message());
  }
  o.from = c.from;
  o.to = c.to;
  VIGIL_ASSIGN_OR_RETURN(o.language, LanguageOf(c, at));
  o.tls.ca_file = c.ca_file;
  return o;
}

Result<notify::SmsOptions> SmsOptionsOf(const ChannelConfig& c, const std::string& at) {
  notify::SmsOptions o;
  o.url = c.url;
  o.body = c.body;
  for (const auto& [name, value] : c.headers) o.headers.Add(name, value);
  if (c.to.empty()) return Bad(at + R"( needs "to": a list of phone numbers)");
  for (const std::string& to : c.to) VIGIL_RETURN_IF_ERROR(CheckPhone(to, at));
  o.to = c.to;
  if (c.url.empty()) return Bad(at + " needs \"url\": the gateway's URL template");
  if (Status st = notify::CheckSmsTemplates(o); !st.ok()) return Bad(at + ": " + st.message());
  if (c.max_per_day) o.max_per_day = *c.max_per_day;
  o.cost_per_message_micros = Micros(c.cost_per_message);
  o.max_cost_per_day_micros = Micros(c.max_cost_per_day);
  if (o.max_cost_per_day_micros > 0 && o.cost_per_message_micros == 0) {
    return Bad(at + ".max_cost_per_day needs cost_per_message (what one message costs)");
  }
  VIGIL_ASSIGN_OR_RETURN(o.language, LanguageOf(c, at));
  o.tls.ca_file = c.ca_file;
  auto zone = alert::TimeZone::Parse(c.timezone.empty() ? "local" : c.timezone);
  if (!zone.ok()) return Bad(at + ".timezone: " + zone.status().message());
  o.utc_offset = [zone = *zone](int64_t unix_seconds) { return zone.OffsetAt(unix_seconds); };
  return o;
}

std::unique_ptr<alert::Notifier> MakeChannel(const ChannelConfig& c) {
  if (auto kind = notify::ParseImKind(c.type)) {
    notify::ImOptions im;
    im.kind = *kind;
    im.url = c.url;
    im.secret = c.secret;
    bool zh_by_default = *kind != notify::ImKind::kSlack;  // the Chinese vendors' bots
    im.language = c.language == "zh" || (c.language.empty() && zh_by_default)
                      ? notify::Language::kChinese
                      : notify::Language::kEnglish;
    im.at_mobiles = c.at_mobiles;
    im.tls.ca_file = c.ca_file;
    return std::make_unique<notify::ImChannel>(std::move(im));
  }
  if (c.type == "email") {
    auto o = EmailOptionsOf(c, c.name);
    if (!o.ok()) return std::make_unique<BrokenChannel>(o.status());
    return std::make_unique<notify::EmailChannel>(std::move(o).value());
  }
  if (c.type == "sms") {
    auto o = SmsOptionsOf(c, c.name);
    if (!o.ok()) return std::make_unique<BrokenChannel>(o.status());
    return std::make_unique<notify::SmsChannel>(std::move(o).value());
  }
  notify::WebhookOptions w;
  w.url = c.url;
  for (const auto& [name, value] : c.headers) w.headers.Add(name, value);
  return std::make_unique<notify::WebhookChannel>(std::move(w));
}

alert::Notification TestNotification(const std::string& channel, int64_t now_ms,
                                     const std::string& external_url) {
  alert::Alert a;
  a.id = "0000000000000000";
  a.rule = "vigil_test";
  a.severity = alert::Severity::kInfo;
  a.state = alert::AlertState::kFiring;
  a.labels = {{"alertname", "vigil_test"}, {"node", "vigil"}, {"severity", "info"}};
  a.active_at_ms = a.fired_at_ms = now_ms;
  a.value = 1;
  a.summary_en = "Test notification from Vigil to channel " + channel + ": it works.";
  a.summary_zh = "Vigil 发往通道 " + channel + " 的测试通知：通道可用。";
  alert::Notification n;
  n.receiver = channel;
  n.group_key = "vigil_test";
  n.group_labels = {{"node", "vigil"}};
  n.alerts.push_back(std::move(a));
  n.external_url = external_url;
  return n;
}

Status SendTestNotification(const ChannelConfig& c, int64_t now_ms,
                            const std::string& external_url) {
  return MakeChannel(c)->Send(TestNotification(c.name, now_ms, external_url));
}

}  // namespace vigil::cli
