// Fuzz target: the encoding stage (log lines are arbitrary bytes). Whatever
// comes in, what comes out must be valid UTF-8.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "parse/logs/encoding.h"

namespace logs = vigil::parse::logs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (const char* charset : {"", "GB18030", "CP932", "BIG5-HKSCS", "WINDOWS-1252"}) {
    logs::EncodingNormalizer n({.charset = charset, .sample_bytes = 256});
    // Line by line, as the agent feeds it, so detection state builds up.
    size_t start = 0;
    while (start <= in.size()) {
      size_t nl = in.find('\n', start);
      if (nl == std::string_view::npos) nl = in.size();
      uint8_t flags = 0;
      std::string_view out = n.Normalize(in.substr(start, nl - start), &flags);
      if (!logs::IsValidUtf8(out)) std::abort();
      start = nl + 1;
    }
  }
  (void)logs::GuessCharsetFromBytes(in);
  return 0;
}
