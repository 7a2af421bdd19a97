// Sends one mail over SMTP through libcurl (loaded at run time, as
// https_client.h), for the email notification channel. libcurl speaks the
// protocol: EHLO, STARTTLS or implicit TLS, AUTH (the best mechanism the
// server offers), MAIL FROM, one RCPT TO per recipient, DATA with dot
// stuffing.
//
// TLS: kImplicit connects with TLS from the first byte (smtps://, port 465);
// kStartTls requires the server to upgrade with STARTTLS and fails if it
// cannot (never falls back to plain text); kNone is plain text (a local
// relay). Certificates are verified against the system's store, or
// `ca_file`. Credentials are passed to libcurl as options, never in a URL.
//
// Bounds: the whole exchange within `timeout`, the message at most
// `max_message_bytes`. Errors name the scheme, host and port only (never the
// user name or the password) and the server's last SMTP reply code.
//
// Thread safety: SmtpSend may be called from several threads at once (each
// call has its own curl handle).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/https_client.h"

namespace vigil::net {

enum class SmtpTls { kStartTls, kImplicit, kNone };

struct SmtpRequest {
  std::string host;
  int port = 587;
  SmtpTls tls = SmtpTls::kStartTls;
  std::string username;  // AUTH when not empty
  std::string password;
  std::string mail_from;        // envelope sender: a bare address
  std::vector<std::string> to;  // envelope recipients: bare addresses
  std::string message;          // RFC 5322 headers and body, CRLF line ends
  std::chrono::milliseconds timeout{30'000};
  size_t max_message_bytes = 4 * 1024 * 1024;
};

// "smtps://host:port" or "smtp://host:port": what errors name.
std::string SmtpServerName(const SmtpRequest& request);

// OK when the server accepted the message for every recipient. Unavailable
// when it may go later (connect, TLS, timeout, a 4xx reply); FailedPrecondition
// when the server refused it (a 5xx reply, login denied, STARTTLS not
// offered); InvalidArgument for a request that cannot be sent (no
// recipient, too large); FailedPrecondition when libcurl is missing.
Status SmtpSend(const SmtpRequest& request, const TlsOptions& tls = {});

}  // namespace vigil::net
