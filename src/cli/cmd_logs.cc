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
#include <functional>
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

// The server answers at most this many lines a request (docs/log-api.md);
// the CLI pages through longer answers.
constexpr int64_t kPageLines = 5000;

// Pages through the lines of `query` in [start, end): newest first
// (backward) or oldest first (forward), until `max_lines` (or all, when
// negative). Each page continues after the last entry of the one before
// (the API's cursor: its time and append order), so pages meet cleanly even
// inside one timestamp. `fn(data, entry)` gets each line once; false from it
// stops. Errors are the server's.
Status ForEachLine(const std::string& base, const std::string& query, const std::string& start,
                   const std::string& end, bool forward, int64_t max_lines,
                   const std::function<bool(const json& data, const json& entry)>& fn) {
  std::string cursor;
  int64_t given = 0;
  while (max_lines < 0 || given < max_lines) {
    const int64_t want = max_lines < 0 ? kPageLines : std::min(kPageLines, max_lines - given);
    std::string url = base + "/api/v1/logs/query?query=" + UrlEncode(query) +
                      "&start=" + UrlEncode(start) + "&limit=" + std::to_string(want) +
                      "&direction=" + (forward ? "forward" : "backward");
    if (!end.empty()) url += "&end=" + UrlEncode(end);
    if (!cursor.empty()) url += "&cursor=" + cursor;
    VIGIL_ASSIGN_OR_RETURN(json r, GetJson(url));
    const json& data = r["data"];
    const json& entries = data["entries"];
    for (const json& e : entries) {
      ++given;
      if (!fn(data, e)) return Status::Ok();
    }
    if (static_cast<int64_t>(entries.size()) < want) return Status::Ok();  // the range is done
    const json& last = entries.back();
    cursor = last.value("ts", "0") + "-" + last.value("seq", "0");
  }
  return Status::Ok();
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

  Printer printer(::isatty(STDOUT_FILENO) != 0);
  uint64_t cursor = 0;
  bool first_match = true;
  Status ctx_error;
  // One line, with its context when asked.
  auto print = [&](const json& data, const json& e) {
    cursor = std::max<uint64_t>(cursor, std::stoull(e.value("seq", "0")));
    if (flags.context == 0) {
      printer.Print(e, StreamLabels(data, e));
      return true;
    }
    auto ctx = GetJson(*base + "/api/v1/logs/context?stream=" + e.value("stream", "") +
                       "&line=" + std::to_string(e.value("line", 0)) + "&before=" +
                       std::to_string(flags.context) + "&after=" + std::to_string(flags.context));
    if (!ctx.ok()) {
      ctx_error = ctx.status();
      return false;
    }
    if (!first_match) printer.Separator();
    first_match = false;
    const json& cdata = (*ctx)["data"];
    for (const auto& c : cdata["entries"]) printer.Print(c, StreamLabels(cdata, c));
    return true;
  };
  const std::string start = std::to_string(now_ns - *since);
  Status st;
  if (flags.all) {
    // Everything in the range, oldest first, as it arrives page by page.
    st = ForEachLine(*base, query, start, flags.until, /*forward=*/true, -1, print);
  } else {
    // The newest N, printed oldest first, as `tail` would.
    std::vector<std::pair<json, json>> newest;  // (page data's streams, entry)
    st = ForEachLine(*base, query, start, flags.until, /*forward=*/false, flags.lines,
                     [&](const json& data, const json& e) {
                       json streams = json::object();
                       std::string id = e.value("stream", "");
                       streams["streams"][id] = StreamLabels(data, e);
                       newest.emplace_back(std::move(streams), e);
                       return true;
                     });
    for (auto it = newest.rbegin(); st.ok() && it != newest.rend(); ++it) {
      if (!print(it->first, it->second)) break;
    }
  }
  if (st.ok()) st = ctx_error;
  if (!st.ok()) {
    std::fprintf(stderr, "vigil logs: %s\n", st.message().c_str());
    return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
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
