// The encodings an email needs (RFC 2045, 2047, 5322), written for the email
// channel (email.h): quoted-printable and base64 bodies, encoded-words for a
// header value that is not ASCII (a Chinese subject), the Date format, and
// HTML escaping of untrusted text. Every output is 7-bit ASCII with CRLF line
// ends and lines within RFC 5322's 78 characters, so no relay has to
// re-encode the mail.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::notify {

// Quoted-printable (RFC 2045 6.7): `text`'s line ends ("\n" or "\r\n")
// become CRLF hard breaks; lines longer than 76 characters get soft breaks
// ("=" CRLF) that never split an "=XX" triplet; trailing spaces are encoded.
std::string QuotedPrintable(std::string_view text);

// Base64 in lines of 76 characters, each ending CRLF.
std::string Base64Lines(std::string_view data);

// How a body part is encoded: quoted-printable when the text is mostly
// ASCII (readable in the raw mail), base64 when it is mostly other scripts
// (quoted-printable would triple its size).
struct EncodedBody {
  std::string transfer_encoding;  // "quoted-printable" or "base64"
  std::string data;
};
EncodedBody EncodeBody(std::string_view utf8_text);

// A header value: unchanged when it is printable ASCII, else RFC 2047
// B-encoded UTF-8 words ("=?UTF-8?B?...?="), each at most 39 bytes of text
// (never split inside a character) and folded onto continuation lines.
// Control characters (CR, LF) are replaced by spaces first: a value never
// adds a header.
std::string HeaderText(std::string_view utf8_value);

// A mailbox for From/To: `display` encoded as HeaderText (quoted when it
// has RFC 5322 specials) and the address in angle brackets; the address
// alone when `display` is empty.
std::string Mailbox(std::string_view display, std::string_view address);

// RFC 5322 date-time in UTC: "Tue, 02 Dec 2025 02:05:39 +0000".
std::string Rfc5322Date(int64_t unix_ms);

// `text` safe inside HTML text and quoted attribute values: & < > " '
// escaped.
std::string HtmlEscape(std::string_view text);

}  // namespace vigil::notify
