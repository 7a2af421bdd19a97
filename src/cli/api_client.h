// What client subcommands (`vigil logs`, `vigil jobs`) share to talk to an
// instance's JSON API.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace vigil::cli {

// GETs `url` and parses the JSON body. A non-200 answer becomes an error
// carrying the API's own message: InvalidArgument for a 400 (the request was
// wrong), Unavailable otherwise.
Result<nlohmann::json> GetJson(const std::string& url,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

// GetJson for an API that answers a list: anything but a JSON array is an
// error too.
Result<nlohmann::json> GetJsonList(const std::string& url,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Sends `body` (JSON; none when empty) with `method` ("POST", "DELETE") and
// parses the JSON answer, with GetJson's errors (and NotFound for a 404).
Result<nlohmann::json> SendJson(const std::string& method, const std::string& url,
                                const std::string& body,
                                std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A member of a JSON object, or "" / 0 when absent or of another type
// (never throws: the answer comes from another process).
std::string JsonString(const nlohmann::json& obj, const char* key);
double JsonNumber(const nlohmann::json& obj, const char* key);

// For tables a person reads: Unix ms as local "MM-DD HH:MM:SS" ("-" for 0),
// and text from jobs and logs with control characters blanked (kept off
// the terminal) and cut to `max` bytes.
std::string LocalTime(int64_t ms);
std::string Printable(std::string s, size_t max);

}  // namespace vigil::cli
