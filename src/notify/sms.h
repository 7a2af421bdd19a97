// The SMS channel: any provider's HTTP API, through a URL template and a
// body template (docs/notify.md "SMS"), one request per recipient number.
// Placeholders {{message}}, {{severity}}, {{alertname}} and {{to}} are
// replaced by values escaped for where they stand: percent-encoded in the
// URL; in the body JSON-escaped when it is JSON (Content-Type or a body that
// starts with "{" or "["), percent-encoded when it is a form, XML-escaped
// when it is XML, as is for text/plain. A body means POST, none GET.
//
// The text is SMS-sized: the group's title, one line per alert ("[critical]
// summary"), for a lone alert its top log template when it is an error and
// there is room ("×3 RuntimeError: CUDA error: <*>"), the link, at most
// kSmsMaxChars characters (code points, not bytes); alerts that do not fit
// become "+N more".
//
// Caps, per recipient and per day (midnight to midnight in the channel's
// time zone): at most `max_per_day` messages and at most `max_cost_per_day`
// spent at `cost_per_message` each. What a cap holds back is never dropped
// silently: Send returns ResourceExhausted "capped: ..." (IsCapped), the
// channel counts it (CappedCount, Usage) and keeps it for the caller to
// take (TakeCapped: the inbox and the delivery log). A retry of the same
// message (the engine sends a group again when Send failed) goes only to
// the recipients that did not get it yet, and a capped recipient is counted
// once per message, not once per retry.
//
// Thread safety: Send is called by one thread at a time (the engine's
// delivery thread); CappedCount, Usage and TakeCapped may be called from any
// thread (mu_ guards the usage, the counters and the capped list).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "alert/notification.h"
#include "core/env.h"
#include "core/status.h"
#include "net/http_client.h"
#include "net/https_client.h"
#include "notify/message.h"

namespace vigil::notify {

inline constexpr size_t kSmsMaxChars = 300;
// Capped messages kept for TakeCapped; older ones are dropped (still counted).
inline constexpr size_t kSmsMaxCappedKept = 1000;

struct SmsOptions {
  std::string url;   // template: https://gateway/send?to={{to}}&text={{message}}
  std::string body;  // template; empty: a GET without a body
  std::vector<std::string> to;
  net::HttpHeaders headers;  // as given (an API key); never printed
  int64_t max_per_day = 20;  // per recipient; 0: no message cap
  int64_t cost_per_message_micros = 0;
  int64_t max_cost_per_day_micros = 0;  // per recipient; 0: no cost cap
  Language language = Language::kEnglish;
  net::TlsOptions tls;
  std::chrono::milliseconds timeout{10'000};
  // Seconds east of UTC at a Unix time, where the caps' days begin; null:
  // the server's local time.
  std::function<int(int64_t unix_seconds)> utc_offset;
  Env* env = Env::Default();
};

// What the placeholders stand for in one request.
struct SmsValues {
  std::string message;    // SmsText
  std::string severity;   // the group's: critical, warning, info or resolved
  std::string alertname;  // its most severe alert's rule
  std::string to;         // the recipient's number
};

// The SMS text of `n` (see the header comment).
std::string SmsText(const alert::Notification& n, Language language);
SmsValues SmsValuesOf(const alert::Notification& n, Language language);

// The request for one recipient. InvalidArgument for a template with an
// unknown placeholder or a body that is not valid JSON once filled.
Result<net::HttpClientRequest> SmsRequest(const SmsOptions& options, const SmsValues& values);
// Config check: both templates expand (with sample values) and the URL is
// http:// or https://.
Status CheckSmsTemplates(const SmsOptions& options);

// Whether `s` is the status of a message a cap held back.
bool IsCapped(const Status& s);

struct CappedSms {
  std::string to;
  std::string group_key;
  std::string text;
  std::string reason;  // "3 messages today, the cap is 3 a day"
  int64_t at_ms = 0;
};

struct SmsUsage {
  int64_t day = 0;  // days since the epoch in the channel's time zone
  int64_t sent = 0;
  int64_t cost_micros = 0;
  int64_t capped = 0;  // held back today
  int64_t capped_total = 0;
};

class SmsChannel final : public alert::Notifier {
 public:
  explicit SmsChannel(SmsOptions options) : options_(std::move(options)) {}
  // OK when every recipient got the message. ResourceExhausted "capped: ..."
  // when a cap held it back from one or more (the others got it);
  // Unavailable / FailedPrecondition as the gateway answered (5xx, 429 or no
  // answer: worth retrying) when a recipient's request failed.
  Status Send(const alert::Notification& n) override;
  bool MergesGroups() const override { return true; }

  int64_t CappedCount() const;
  std::map<std::string, SmsUsage> Usage() const;
  // The capped messages since the last call, oldest first.
  std::vector<CappedSms> TakeCapped();

 private:
  // A message not yet delivered to every recipient: whom it reached (or a
  // cap held it from), so a retry skips them.
  struct Pending {
    std::string text;
    std::set<std::string> done;
    std::vector<std::string> capped_reasons;
  };

  int64_t DayOf(int64_t now_ms) const;
  // Empty when `to` may get one more message today (and counts it then);
  // else why not.
  std::string Charge(const std::string& to, int64_t now_ms);
  void Refund(const std::string& to);
  void RecordCapped(CappedSms c);
  Status SendOne(const SmsValues& values);

  SmsOptions options_;
  std::map<std::string, Pending> pending_;  // by group key; Send's thread only
  mutable std::mutex mu_;
  std::map<std::string, SmsUsage> usage_;  // by recipient
  int64_t capped_count_ = 0;
  std::vector<CappedSms> capped_;
};

}  // namespace vigil::notify
