// Fuzz target: log template mining (src/diagnose/log_templates.h). Log text
// is untrusted: any bytes, mined with small bounds so that eviction, leaf
// caps and token caps run all the time. The bounds must hold and every
// template must render as JSON (nlohmann throws on invalid UTF-8).
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "diagnose/log_templates.h"

namespace diagnose = vigil::diagnose;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  diagnose::LogTemplateOptions o;
  o.max_templates = 8;
  o.max_leaf_templates = 2;
  o.max_children = 2;
  o.max_tokens = 16;
  o.max_line_bytes = 64;
  o.max_record_lines = 4;
  o.max_bytes = 16 * 1024;
  diagnose::LogTemplateMiner miner(o);
  // Records are separated by NUL (a record may hold '\n'); the window
  // starts half way.
  size_t start = 0;
  for (int64_t t = 0; start <= in.size(); ++t) {
    size_t end = in.find('\0', start);
    if (end == std::string_view::npos) end = in.size();
    if (start >= in.size() / 2 && !miner.in_window()) miner.StartWindow();
    const auto level = static_cast<vigil::wire::LogLevel>(t % vigil::wire::kLogLevelCount);
    miner.Add(in.substr(start, end - start), 1000 - t, level, static_cast<uint8_t>(1u << (t % 3)));
    if (miner.totals().templates > o.max_templates) std::abort();
    if (miner.MemoryBytes() > o.max_bytes) std::abort();
    start = end + 1;
  }
  auto summary = diagnose::RankTemplates(miner, 100);
  (void)diagnose::LogTemplatesJson(summary).dump();
  (void)diagnose::TemplateExcerpt(summary);
  return 0;
}
