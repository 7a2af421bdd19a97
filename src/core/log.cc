#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>

namespace vigil {
namespace {
std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}
}  // namespace

void SetMinLogLevel(LogLevel level) { g_min_level = static_cast<int>(level); }

void Log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < g_min_level.load()) return;
  using namespace std::chrono;
  auto now = system_clock::now();
  time_t secs = system_clock::to_time_t(now);
  int ms = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char prefix[64];
  int n = std::snprintf(prefix, sizeof(prefix), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %-5s ",
                        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                        tm.tm_sec, ms, LevelName(level));
  std::string line(prefix, static_cast<size_t>(n));
  line.append(message);
  line.push_back('\n');
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;  // nowhere to report a failure to write the log
}

void Logf(LogLevel level, const char* format, ...) {
  if (static_cast<int>(level) < g_min_level.load()) return;
  char buf[2048];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  if (n < 0) return;
  Log(level, std::string_view(buf, std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1)));
}

}  // namespace vigil
