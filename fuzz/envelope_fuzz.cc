// Fuzz target: the log envelope parsers (docker json-file, CRI) and the
// multiline and level stages behind them. Container log files are untrusted:
// a process can write anything, and a file can be cut or overwritten.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "collect/logs/envelope.h"
#include "collect/logs/level.h"
#include "collect/logs/multiline.h"

namespace logs = vigil::collect::logs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)logs::ParseRfc3339Nano(in);
  (void)logs::DetectLevel(in);
  constexpr size_t kMax = 64;
  for (auto format :
       {logs::EnvelopeFormat::kAuto, logs::EnvelopeFormat::kDocker, logs::EnvelopeFormat::kCri}) {
    logs::EnvelopeParser parser({.format = format, .max_bytes = kMax});
    logs::MultilineJoiner joiner({.max_bytes = 256, .max_lines = 8});
    std::vector<vigil::wire::LogRecord> out;
    uint64_t offset = 0;
    size_t start = 0;
    int64_t now = 0;
    while (start <= in.size()) {
      size_t nl = in.find('\n', start);
      if (nl == std::string_view::npos) nl = in.size();
      std::string_view line = in.substr(start, nl - start);
      const logs::EnvelopeRecord* r = parser.Push(line, offset);
      if (r != nullptr) {
        if (r->text.size() > kMax || r->offset > offset) std::abort();
        joiner.Push(r->text, r->offset, r->time_ns, r->flags, now, &out);
      }
      auto pending = parser.PendingStartOffset();
      if (pending && *pending > offset) std::abort();
      offset += line.size() + 1;
      start = nl + 1;
      now += 100;
    }
    while (const logs::EnvelopeRecord* r = parser.Flush()) {
      joiner.Push(r->text, r->offset, r->time_ns, r->flags, now, &out);
    }
    if (parser.PendingStartOffset()) std::abort();
    joiner.FlushAll(&out);
    if (joiner.PendingStartOffset()) std::abort();
    for (const auto& rec : out) {
      if (rec.line.size() > 256 + kMax) std::abort();
    }
  }
  return 0;
}
