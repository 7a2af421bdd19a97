#include "net/smtp_client.h"

#include <algorithm>
#include <cstring>

#include "net/curl_lib.h"

namespace vigil::net {
namespace {

// What libcurl reads the message from.
struct Upload {
  const std::string* data = nullptr;
  size_t offset = 0;
};

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  size_t len = std::min(size * n, u->data->size() - u->offset);
  std::memcpy(buffer, u->data->data() + u->offset, len);
  u->offset += len;
  return len;
}

// `text` with every occurrence of `secret` replaced: libcurl's messages do
// not carry credentials, and this makes sure of it.
std::string Scrubbed(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "***");
  }
  return text;
}

// The failure as a Status a caller can act on: refused (5xx, login,
// STARTTLS) is not worth retrying as is; the rest may go later.
Status Failure(const SmtpRequest& r, CURLcode rc, long reply, const std::string& detail) {
  std::string what = SmtpServerName(r) + ": " + Scrubbed(Scrubbed(detail, r.password), r.username);
  if (reply != 0) what += " (SMTP reply " + std::to_string(reply) + ")";
  switch (rc) {
    case CURLE_LOGIN_DENIED:
      return FailedPrecondition(what + ": the server refused the user name or password");
    case CURLE_USE_SSL_FAILED:
      return FailedPrecondition(what + ": the server does not offer STARTTLS");
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgument(what);
    default:
      break;
  }
  if (reply >= 500 && reply < 600)
    return FailedPrecondition(what + ": the server refused the mail");
  return Unavailable(what);
}

}  // namespace

std::string SmtpServerName(const SmtpRequest& r) {
  bool v6 = r.host.find(':') != std::string::npos;
  std::string host = v6 ? "[" + r.host + "]" : r.host;
  return std::string(r.tls == SmtpTls::kImplicit ? "smtps://" : "smtp://") + host + ":" +
         std::to_string(r.port);
}

Status SmtpSend(const SmtpRequest& r, const TlsOptions& tls) {
  const Curl& curl = LoadCurl();
  if (!curl.status.ok()) return curl.status;
  if (r.to.empty()) return InvalidArgument(SmtpServerName(r) + ": a mail needs a recipient");
  if (r.message.size() > r.max_message_bytes) {
    return InvalidArgument(SmtpServerName(r) + ": the mail is larger than " +
                           std::to_string(r.max_message_bytes) + " bytes");
  }
  CurlHandle h{curl};
  h.easy = curl.easy_init();
  if (h.easy == nullptr) return Unavailable("libcurl could not make a handle");
  auto set = [&](CURLoption opt, auto value) { curl.easy_setopt(h.easy, opt, value); };
  std::string url = SmtpServerName(r);
  set(CURLOPT_URL, url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  if (r.tls == SmtpTls::kStartTls) set(CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  if (!tls.ca_file.empty()) set(CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!r.username.empty()) {
    set(CURLOPT_USERNAME, r.username.c_str());
    set(CURLOPT_PASSWORD, r.password.c_str());
  }
  std::string from = "<" + r.mail_from + ">";
  set(CURLOPT_MAIL_FROM, from.c_str());
  for (const std::string& to : r.to) h.list = curl.slist_append(h.list, ("<" + to + ">").c_str());
  set(CURLOPT_MAIL_RCPT, h.list);
  Upload upload{&r.message, 0};
  set(CURLOPT_READFUNCTION, &OnRead);
  set(CURLOPT_READDATA, &upload);
  set(CURLOPT_UPLOAD, 1L);
  set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.message.size()));
  char error[CURL_ERROR_SIZE] = {0};
  set(CURLOPT_ERRORBUFFER, error);
  CURLcode rc = curl.easy_perform(h.easy);
  if (rc == CURLE_OK) return Status::Ok();
  long reply = 0;
  curl.easy_getinfo(h.easy, CURLINFO_RESPONSE_CODE, &reply);
  return Failure(r, rc, reply, error[0] != '\0' ? error : curl.easy_strerror(rc));
}

}  // namespace vigil::net
