// Fuzz target: what Vigil reads from a job's output and files: the metric
// extractor and event detector behind `vigil inspect-log` (fed in uneven
// pieces, as a growing file is), the kernel's Xid lines, and TensorBoard
// event files. All of it is written by programs Vigil does not control.
#include <cstdint>
#include <string_view>
#include <vector>

#include "parse/training/inspector.h"
#include "parse/training/tfevents.h"
#include "parse/training/xid.h"

namespace training = vigil::parse::training;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t printed = 0;
  training::Inspector inspector([&](std::string_view json) { printed += json.size(); });
  for (size_t at = 0, piece = 1; at < in.size(); at += piece, piece = piece * 3 % 61 + 1) {
    inspector.Feed(in.substr(at, piece));
  }
  inspector.Finish();

  for (size_t start = 0; start < in.size();) {
    size_t nl = in.find('\n', start);
    if (nl == std::string_view::npos) nl = in.size();
    (void)training::ParseXidLine(in.substr(start, nl - start));
    start = nl + 1;
  }

  training::TfEventsReader reader;
  std::vector<training::TfScalar> scalars;
  (void)reader.Feed(in.substr(0, in.size() / 2), &scalars);
  (void)reader.Feed(in.substr(in.size() / 2), &scalars);
  return 0;
}
