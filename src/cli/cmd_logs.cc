// `vigil logs [-f] [--since 10m] [--until T] [-n N] [-C N] [QUERY]`: prints
// stored log lines, oldest first, from the local instance (--home) or a
// server (--server / $VIGIL_URL). QUERY is LogQL ({job="train"} |= "loss") or
// plain words, searched in every stream.
//
// On a terminal each line gets its time, job and a colour by level; piped,
// each record is printed verbatim, one after another, so `vigil logs | grep`
// sees exactly what the program wrote.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/home.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "query/parser.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// "10m", "2h", "90s" (PromQL durations) as nanoseconds.
Result<int64_t> DurationNs(const std::string& text, const char* flag) {
  auto ms = query::ParseDurationMs(text);
  if (!ms.ok()) {
    return InvalidArgument(std::string("invalid ") + flag + " \"" + text +
                           "\": use a duration such as 30s, 10m, 2h or 7d");
  }
  return *ms * 1'000'000;
}

class Printer {
 public:
  explicit Printer(bool tty) : tty_(tty) {}

  // Prints one entry of a response ("streams" gives its labels).
  void Print(const json& entry, const json& labels) {
    std::string text = entry.value("text", "");
    if (!tty_) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fputc('\n', stdout);
      return;
    }
    std::string level = entry.value("level", "unknown");
    const char* colour = level == "error" || level == "fatal"   ? "\x1b[31m"
                         : level == "warn"                      ? "\x1b[33m"
                         : level == "debug" || level == "trace" ? "\x1b[2m"
                                                                : "";
    int64_t ns = std::stoll(entry.value("ts", "0"));
    time_t secs = static_cast<time_t>(ns / 1'000'000'000);
    struct tm tm {};
    localtime_r(&secs, &tm);
    char when[32];
    std::strftime(when, sizeof(when), "%H:%M:%S", &tm);
    std::string who = labels.value("job", labels.value("container", labels.value("source", "")));
    std::printf("\x1b[2m%s.%03d\x1b[0m \x1b[36m%s\x1b[0m %s%s%s\n", when,
                static_cast<int>((ns / 1'000'000) % 1000), who.c_str(), colour, text.c_str(),
                *colour ? "\x1b[0m" : "");
  }

  void Separator() { std::printf(tty_ ? "\x1b[2m--\x1b[0m\n" : "--\n"); }

 private:
  bool tty_;
};

const json& StreamLabels(const json& data, const json& entry) {
  static const json kEmpty = json::object();
  const json& streams = data.contains("streams") ? data["streams"] : kEmpty;
  std::string id = entry.value("stream", "");
  return streams.contains(id) ? streams[id] : kEmpty;
}

}  // namespace

int RunLogs(const LogsFlags& flags) {
  auto base = ResolveServerUrl(flags.server, flags.home);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 3;
  }
  // Plain words are a keyword search over every stream.
  std::string query = flags.query;
  size_t first = query.find_first_not_of(" \t");
  if (first == std::string::npos) {
    query = "{}";
  } else if (query[first] != '{') {
    json quoted = query.substr(first);
    query = "{} |= " + quoted.dump();
  }
  int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto since = DurationNs(flags.since, "--since");
  if (!since.ok()) {
    std::fprintf(stderr, "%s\n", since.status().message().c_str());
    return 2;
  }
  std::string range = "&start=" + std::to_string(now_ns - *since);
  if (!flags.until.empty()) range += "&end=" + UrlEncode(flags.until);

  Printer printer(::isatty(STDOUT_FILENO) != 0);
  // Newest N first from the server, printed oldest first, as `tail` would.
  auto r = GetJson(*base + "/api/v1/logs/query?query=" + UrlEncode(query) + range +
                   "&direction=backward&limit=" + std::to_string(flags.lines));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil logs: %s\n", r.status().message().c_str());
    return r.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const json& data = (*r)["data"];
  const json& entries = data["entries"];
  uint64_t cursor = 0;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    cursor = std::max<uint64_t>(cursor, std::stoull(it->value("seq", "0")));
    if (flags.context == 0) {
      printer.Print(*it, StreamLabels(data, *it));
      continue;
    }
    auto ctx = GetJson(*base + "/api/v1/logs/context?stream=" + it->value("stream", "") +
                       "&line=" + std::to_string(it->value("line", 0)) + "&before=" +
                       std::to_string(flags.context) + "&after=" + std::to_string(flags.context));
    if (!ctx.ok()) {
      std::fprintf(stderr, "vigil logs: %s\n", ctx.status().message().c_str());
      return 1;
    }
    if (it != entries.rbegin()) printer.Separator();
    const json& cdata = (*ctx)["data"];
    for (const auto& e : cdata["entries"]) printer.Print(e, StreamLabels(cdata, e));
  }
  std::fflush(stdout);
  if (!flags.follow) return 0;

  // Follow: what is new after the newest line printed, twice a second.
  if (cursor == 0) {
    auto t = net::HttpGet(*base + "/api/v1/logs/tail?query=" + UrlEncode(query),
                          std::chrono::seconds(10));
    if (t.ok()) {
      size_t id = t->body.find("id: ");
      if (id != std::string::npos) cursor = std::stoull(t->body.substr(id + 4));
    }
  }
  while (true) {
    auto t = net::HttpGet(
        *base + "/api/v1/logs/tail?query=" + UrlEncode(query) + "&after=" + std::to_string(cursor),
        std::chrono::seconds(10));
    if (t.ok() && t->status == 200) {
      // Server-sent events: "id: N\nevent: entry\ndata: {json}\n\n".
      size_t pos = 0;
      while ((pos = t->body.find("\ndata: ", pos)) != std::string::npos) {
        size_t end = t->body.find('\n', pos + 7);
        json ev = json::parse(t->body.substr(pos + 7, end - pos - 7), nullptr, false);
        pos = end;
        if (!ev.is_object() || !ev.contains("entry")) continue;
        cursor = std::max<uint64_t>(cursor, std::stoull(ev["entry"].value("seq", "0")));
        printer.Print(ev["entry"], ev.value("labels", json::object()));
      }
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace vigil::cli
