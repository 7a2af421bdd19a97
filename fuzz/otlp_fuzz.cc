// Fuzz target: the OTLP/HTTP metrics decoders, protobuf and JSON, and gunzip
// (untrusted network input, docs/otlp.md).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/otlp.h"

namespace {

// What a decode hands to the store must always be storable.
void Check(const vigil::ingest::otlp::DecodeResult& r) {
  uint64_t samples = 0;
  for (const auto& s : r.batch.series) {
    samples += s.samples.size();
    if (s.labels.empty() || s.labels.size() > vigil::wire::kMaxLabelsPerSeries) std::abort();
    for (size_t i = 0; i < s.labels.size(); ++i) {
      const auto& l = s.labels[i];
      if (l.name.empty() || l.value.empty()) std::abort();
      if (l.name.size() + l.value.size() > vigil::wire::kMaxLabelBytes) std::abort();
      if (i > 0 && !(s.labels[i - 1].name < l.name)) std::abort();
    }
    if (vigil::wire::MetricName(s.labels).empty()) std::abort();
    for (size_t i = 1; i < s.samples.size(); ++i) {
      if (s.samples[i].t_ms < s.samples[i - 1].t_ms) std::abort();
    }
  }
  if (samples != r.accepted_points) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace otlp = vigil::ingest::otlp;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  otlp::DecodeOptions options;
  options.node = "fuzz";
  options.now_ms = 1'764'460'800'000;
  for (otlp::Encoding e : {otlp::Encoding::kProtobuf, otlp::Encoding::kJson}) {
    auto r = otlp::DecodeMetrics(in, e, options);
    if (r.ok()) Check(*r);
  }
  auto inflated = otlp::Gunzip(in, 1 << 20);
  if (inflated.ok()) {
    if (inflated->size() > (1 << 20)) std::abort();
    auto r = otlp::DecodeMetrics(*inflated, otlp::Encoding::kProtobuf, options);
    if (r.ok()) Check(*r);
  }
  return 0;
}
