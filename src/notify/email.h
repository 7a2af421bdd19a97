// The email channel: one mail per notification to every configured
// recipient, over SMTP (net/smtp_client.h: STARTTLS or implicit TLS, AUTH).
// The mail renders the one message model (message.h) as
// multipart/alternative with a text/plain and a text/html part, both UTF-8
// (quoted-printable, or base64 for mostly non-Latin text), and the headers a
// mail provider expects of a legitimate automated sender and nothing else:
// Date, From, To, Subject (RFC 2047 encoded-words when not ASCII), a unique
// Message-ID at the sender's domain, MIME-Version, List-Unsubscribe
// pointing at the UI's notification settings (also the footer's link) and
// Auto-Submitted (RFC 3834, so auto-responders stay quiet).
//
// Alert text is untrusted (a job's log lines and labels reach it): the HTML
// part escapes every value, header values never carry CR/LF, and the mail is
// bounded (at most kEmailMaxEntries alerts listed, each field cut to
// kEmailMaxField bytes, at most 10 log templates of 300 bytes per alert).
//
// Thread safety: EmailMessage is pure; a channel's Send is called by one
// thread at a time (the engine's delivery thread).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "alert/notification.h"
#include "core/env.h"
#include "core/status.h"
#include "net/smtp_client.h"
#include "notify/message.h"

namespace vigil::notify {

inline constexpr size_t kEmailMaxEntries = 100;
inline constexpr size_t kEmailMaxField = 1024;

struct EmailOptions {
  // host, port, tls, username, password and the timeout; the envelope and
  // the message are filled per mail.
  net::SmtpRequest server;
  std::string from;             // "Vigil <vigil@lab.example>" or a bare address
  std::vector<std::string> to;  // mailboxes, the same forms
  Language language = Language::kEnglish;
  net::TlsOptions tls;
  Env* env = Env::Default();  // the Date header
};

// The address of a mailbox: "a@b" for "Name <a@b>" or "a@b".
std::string MailboxAddress(std::string_view mailbox);
// OK for a mailbox From and To can carry: an address with one "@", no
// spaces, angle brackets or control characters, optionally after a display
// name. InvalidArgument saying what is wrong otherwise.
Status CheckMailbox(std::string_view mailbox);

// The whole RFC 5322 message (CRLF line ends) for `n` sent at `now_ms`;
// `sequence` distinguishes mails sent within one millisecond (Message-ID).
std::string EmailMessage(const EmailOptions& options, const alert::Notification& n, int64_t now_ms,
                         uint64_t sequence);

class EmailChannel final : public alert::Notifier {
 public:
  explicit EmailChannel(EmailOptions options) : options_(std::move(options)) {}
  // As SmtpSend: Unavailable worth retrying, FailedPrecondition a refusal.
  Status Send(const alert::Notification& n) override;
  bool MergesGroups() const override { return true; }

 private:
  EmailOptions options_;
  uint64_t sequence_ = 0;
};

}  // namespace vigil::notify
