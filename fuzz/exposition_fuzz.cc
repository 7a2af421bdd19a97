// Fuzz target: the Prometheus text exposition parser (scraped, untrusted text).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/exposition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<vigil::ingest::ParsedFamily> families;
  auto samples = vigil::ingest::ParseExposition(in, &families);
  if (!samples.ok()) return 0;
  // Render what was parsed and parse it again: the renderer's output must
  // always be valid exposition text.
  std::vector<vigil::net::ExpositionPoint> points;
  for (auto& s : *samples) points.push_back({s.labels, {0, s.value}});
  std::string text = vigil::net::RenderExposition({}, points);
  if (!vigil::ingest::ParseExposition(text).ok()) std::abort();
  return 0;
}
