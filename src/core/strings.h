// Small string helpers used across modules. Parsers of untrusted text use the
// Parse* functions, which reject trailing garbage and never throw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

std::string_view TrimSpace(std::string_view s);
// Splits on any run of ASCII whitespace; no empty fields.
std::vector<std::string_view> SplitFields(std::string_view s);
// Splits on every occurrence of `sep`; keeps empty fields.
std::vector<std::string_view> Split(std::string_view s, char sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// `s` cut to at most `max` bytes without splitting a UTF-8 sequence (a
// sequence the cut would split is left out whole).
std::string_view CutUtf8(std::string_view s, size_t max);

// `in` with every URL in it cut to its scheme and host ("https://host/..."):
// a URL's path, query and user info may carry a secret (a Slack hook path,
// WeCom's `key`, DingTalk's `access_token`, a token in a webhook URL), so
// what a person or a log sees of a channel's URL goes through this.
std::string RedactUrls(std::string_view in);

std::optional<int64_t> ParseInt64(std::string_view s);
std::optional<uint64_t> ParseUint64(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);

// "1.5 GiB", "320 KiB": for messages a person reads.
std::string HumanBytes(uint64_t bytes);
// "3d 4h", "12m 5s": for uptimes and ages.
std::string HumanDuration(int64_t seconds);

// Unix ms as RFC 3339 in UTC, milliseconds without trailing zeros, as Go's
// RFC3339Nano prints them: "2026-12-02T02:05:39Z", "2026-12-02T02:05:39.25Z".
std::string FormatRfc3339(int64_t unix_ms);

}  // namespace vigil
