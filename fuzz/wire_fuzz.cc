// Fuzz target: the agent -> server wire decoders (metrics and logs) (untrusted network input).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "wire/frame.h"
#include "wire/log_batch.h"
#include "wire/metric_batch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)vigil::wire::DecodeFrame(in);
  auto batch = vigil::wire::DecodeMetricBatch(in);
  if (batch.ok()) {
    // Whatever decodes must re-encode to something that decodes the same.
    auto again = vigil::wire::DecodeMetricBatch(vigil::wire::EncodeMetricBatch(*batch));
    if (!again.ok() || again->series.size() != batch->series.size()) std::abort();
  }
  auto logs = vigil::wire::DecodeLogBatch(in);
  if (logs.ok()) {
    auto again = vigil::wire::DecodeLogBatch(vigil::wire::EncodeLogBatch(*logs));
    if (!again.ok() || again->streams != logs->streams) std::abort();
  }
  return 0;
}
