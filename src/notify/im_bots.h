// The IM bot channels: Slack incoming webhooks, Feishu/Lark custom bots,
// DingTalk custom robots and WeCom group bots (docs/notify.md). Each renders
// the one message model (message.h) in its vendor's format, signs it the
// vendor's way when a secret is set, keeps within the vendor's size limit
// and posts it over HTTPS (net/https_client.h):
//   slack     Block Kit (header, one section per alert, a context line) with
//             `text` as the plain fallback; no signature (the URL is secret).
//   feishu    an interactive card (header coloured by severity, lark_md
//             elements); signed: HMAC-SHA256 keyed by timestamp + "\n" +
//             secret over an empty message, base64, `timestamp` (s) and
//             `sign` in the body. Body at most 20 KB.
//   dingtalk  markdown; signed: HMAC-SHA256 of timestamp + "\n" + secret
//             keyed by the secret, base64 then URL-encoded, `timestamp` (ms)
//             and `sign` as query parameters; critical alerts @ the
//             configured mobiles. Body at most 20 KB.
//   wecom     markdown, content at most 4,096 bytes: longer content is cut
//             at a line boundary and ends with a link to the full page.
// Log text (the excerpt's lines, the diagnosis' log templates) is quoted so
// that nothing in it becomes markup: a code span for Slack, DingTalk and
// WeCom (Slack's &, <, > as entities too), HTML character references for
// Feishu's lark_md, which has no code span. WeCom quotes 3 templates, the
// others 5.
//
// Each channel keeps within its vendor's rate limit (DingTalk and WeCom 20
// messages a minute per bot, Feishu 100 a minute and 5 a second, Slack about
// 1 a second): a message past it is not sent but refused as Unavailable, so
// the engine sends its group again at a later dispatch, and the bot is never
// pushed into the vendor's throttle (DingTalk's lasts 10 minutes).
//
// Each vendor answers HTTP 200 with its own error field (Feishu `code`,
// DingTalk and WeCom `errcode`, Slack a body other than "ok"): a non-zero
// one is a failed delivery with the vendor's message.
//
// Thread safety: ImRequest is pure; a channel's Send is called by one thread
// at a time (the engine's delivery thread).
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "alert/notification.h"
#include "core/env.h"
#include "core/status.h"
#include "net/http_client.h"
#include "net/https_client.h"
#include "notify/message.h"

namespace vigil::notify {

enum class ImKind { kSlack, kFeishu, kDingTalk, kWeCom };

// "slack", "feishu", "dingtalk", "wecom" <-> ImKind; nullopt for another.
std::optional<ImKind> ParseImKind(std::string_view type);

struct ImOptions {
  ImKind kind = ImKind::kSlack;
  std::string url;     // the bot's webhook URL, as the vendor gives it
  std::string secret;  // Feishu / DingTalk signing secret; "" for none
  Language language = Language::kEnglish;
  std::vector<std::string> at_mobiles;  // DingTalk: @ these on critical alerts
  std::chrono::milliseconds timeout{10'000};
  net::TlsOptions tls;
  Env* env = Env::Default();  // the signature's timestamp, the rate limit's clock
};

// A vendor's rate limit: at most `per_minute` messages in any 60 s and
// `per_second` in any 1 s (0: no such limit).
struct RateLimit {
  int per_minute = 0;
  int per_second = 0;
};
RateLimit VendorRateLimit(ImKind kind);

// The vendors' body limits, in bytes.
inline constexpr size_t kFeishuMaxBody = 20 * 1024;
inline constexpr size_t kDingTalkMaxBody = 20 * 1024;
inline constexpr size_t kWeComMaxContent = 4096;

// The request `n` becomes at `now_ms` (the signature's time).
net::HttpClientRequest ImRequest(const ImOptions& options, const alert::Notification& n,
                                 int64_t now_ms);

// `text` cut at the last line boundary that leaves room for `tail` within
// `max` bytes, then `tail` appended; `text` unchanged when it fits.
std::string CutAtLine(const std::string& text, size_t max, const std::string& tail);

// Whether the vendor's answer means delivered; FailedPrecondition with the
// vendor's message when not.
Status CheckImAnswer(ImKind kind, const net::HttpResponse& response);

class ImChannel final : public alert::Notifier {
 public:
  explicit ImChannel(ImOptions options)
      : options_(std::move(options)), limit_(VendorRateLimit(options_.kind)) {}
  // Unavailable when no answer came, the vendor answered 5xx / 429 or a
  // rate-limit code, or the vendor's rate limit holds the message back (all
  // worth retrying); FailedPrecondition for a refusal.
  Status Send(const alert::Notification& n) override;
  bool MergesGroups() const override { return true; }

 private:
  // Whether a message may go now (and counts it when it may).
  bool Admit(int64_t now_ms);

  ImOptions options_;
  RateLimit limit_;
  std::deque<int64_t> sent_ms_;  // send times within the last minute
};

}  // namespace vigil::notify
