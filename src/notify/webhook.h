// The generic webhook channel: POSTs the Alertmanager webhook payload
// (version 4) so every existing Alertmanager receiver works unchanged
// (docs/notify.md). Field by field as Alertmanager 0.25 sends it: a firing
// alert's endsAt is Go's zero time, `fingerprint` the label set's FNV-1a
// (alert::Fingerprint), `status` "firing" when any alert of the group fires.
//
// Vigil adds nothing to the standard fields except annotations: `summary`
// and `summary_zh` (the alert in English and Simplified Chinese),
// `threshold`, `value`, `rule`, and when there are: `description(_zh)`,
// `steps(_zh)`, `log_excerpt` and `log_templates` (the diagnosis' log
// templates, at most 10 lines "×3 error  <template>").
//
// Thread safety: Send is called by one thread at a time (the engine's
// delivery thread); WebhookPayload is pure.
#pragma once

#include <chrono>
#include <string>

#include "alert/notification.h"
#include "net/http_server.h"

namespace vigil::notify {

struct WebhookOptions {
  std::string url;  // http://host[:port]/path
  std::chrono::milliseconds timeout{5000};
  net::HttpHeaders headers;  // extra headers (an Authorization token)
};

// The JSON body for `n`.
std::string WebhookPayload(const alert::Notification& n);

class WebhookChannel final : public alert::Notifier {
 public:
  explicit WebhookChannel(WebhookOptions options) : options_(std::move(options)) {}
  // Unavailable on no answer or a 5xx (worth retrying), FailedPrecondition
  // on another non-2xx status.
  Status Send(const alert::Notification& n) override;

 private:
  WebhookOptions options_;
};

}  // namespace vigil::notify
