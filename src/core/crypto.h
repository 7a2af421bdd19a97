// Small cryptographic and encoding helpers: what signed requests need (the
// IM bots' HMAC-SHA256 signatures, base64, percent-encoding of a query
// value) and content digests. SHA-256 is FIPS 180-4's, HMAC RFC 2104's,
// written here rather than linked from libcrypto: linking it costs every
// `vigil up` 1.4 MiB of resident memory for a few signatures a minute
// (docs/design-notes.md). Checked against the RFCs' test vectors.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace vigil {

// HMAC-SHA256 of `message` under `key`: 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view message);
// SHA-256 of `data`: 32 raw bytes.
std::string Sha256(std::string_view data);
// Standard base64 (RFC 4648 section 4) with padding.
std::string Base64Encode(std::string_view data);
// Lowercase hexadecimal.
std::string HexEncode(std::string_view data);
// `value` percent-encoded for a URL query component: every byte except
// ALPHA / DIGIT / "-" / "." / "_" / "~" becomes %XX (uppercase hex).
std::string UrlEncodeComponent(std::string_view value);

}  // namespace vigil
