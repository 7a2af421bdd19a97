// Vigil's own diagnostic log: one line per event, "2026-11-30T02:05:00.123Z
// INFO message", to stderr (which `vigil up` points at $VIGIL_HOME/logs/vigil.log).
//
// Thread safety: callable from any thread; each line is written with a single
// write(2), so lines from different threads never interleave.
#pragma once

#include <string_view>

namespace vigil {

enum class LogLevel { kDebug = 0, kInfo, kWarn, kError };

void SetMinLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view message);
// printf-style convenience; the format is checked by the compiler.
void Logf(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace vigil
