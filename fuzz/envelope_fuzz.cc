// Fuzz target: the log envelope parsers (docker json-file, CRI) and the
// multiline and level stages behind them. Container log files are untrusted:
// a process can write anything, and a file can be cut or overwritten. A
// second joiner is given each line as the agent gives it, in a string it may
// take over (Push's `owner`): its records must equal the first joiner's.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "parse/logs/envelope.h"
#include "parse/logs/level.h"
#include "parse/logs/multiline.h"

namespace logs = vigil::parse::logs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)logs::ParseRfc3339Nano(in);
  (void)logs::DetectLevel(in);
  constexpr size_t kMax = 64;
  for (auto format :
       {logs::EnvelopeFormat::kAuto, logs::EnvelopeFormat::kDocker, logs::EnvelopeFormat::kCri}) {
    logs::EnvelopeParser parser({.format = format, .max_bytes = kMax});
    logs::MultilineJoiner joiner({.max_bytes = 256, .max_lines = 8});
    logs::MultilineJoiner owning({.max_bytes = 256, .max_lines = 8});
    std::vector<vigil::wire::LogRecord> out, owned;
    uint64_t offset = 0;
    size_t start = 0;
    int64_t now = 0;
    while (start <= in.size()) {
      size_t nl = in.find('\n', start);
      if (nl == std::string_view::npos) nl = in.size();
      std::string line(in.substr(start, nl - start));  // as the tailer hands it over
      const logs::EnvelopeRecord* r = parser.Push(line, offset);
      if (r != nullptr) {
        if (r->text.size() > kMax || r->offset > offset) std::abort();
        joiner.Push(r->text, r->offset, r->time_ns, r->flags, now, &out);
        owning.Push(r->text, r->offset, r->time_ns, r->flags, now, &owned, &line);
      }
      auto pending = parser.PendingStartOffset();
      if (pending && *pending > offset) std::abort();
      offset += line.size() + 1;
      start = nl + 1;
      now += 100;
    }
    while (const logs::EnvelopeRecord* r = parser.Flush()) {
      joiner.Push(r->text, r->offset, r->time_ns, r->flags, now, &out);
      owning.Push(r->text, r->offset, r->time_ns, r->flags, now, &owned);
    }
    if (parser.PendingStartOffset()) std::abort();
    joiner.FlushAll(&out);
    owning.FlushAll(&owned);
    if (owned.size() != out.size()) std::abort();
    for (size_t i = 0; i < out.size(); ++i) {
      if (owned[i].line != out[i].line || owned[i].offset != out[i].offset ||
          owned[i].level != out[i].level || owned[i].flags != out[i].flags) {
        std::abort();
      }
    }
    if (joiner.PendingStartOffset()) std::abort();
    for (const auto& rec : out) {
      if (rec.line.size() > 256 + kMax) std::abort();
    }
  }
  return 0;
}
