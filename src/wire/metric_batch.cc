#include "wire/metric_batch.h"

#include <algorithm>
#include <cmath>

#include "core/coding.h"

namespace vigil::wire {
namespace {
constexpr uint64_t kPayloadVersion = 1;

// Interns strings into the batch's symbol table.
class SymbolTable {
 public:
  uint64_t Ref(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, symbols_.size());
    if (inserted) symbols_.push_back(&it->first);
    return it->second;
  }
  void EncodeTo(std::string* out) const {
    PutVarint64(out, symbols_.size());
    for (const std::string* s : symbols_) PutLengthPrefixed(out, *s);
  }

 private:
  std::unordered_map<std::string, uint64_t> index_;
  std::vector<const std::string*> symbols_;  // points into index_ keys (stable in a node map)
};

bool GetSymbol(std::string_view* in, const std::vector<std::string_view>& syms,
               std::string_view* out) {
  uint64_t ref;
  if (!GetVarint64(in, &ref) || ref >= syms.size()) return false;
  *out = syms[ref];
  return true;
}
}  // namespace

const char* MetricTypeName(MetricType t) {
  switch (t) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kUnknown:
      break;
  }
  return "untyped";
}

void NormalizeLabels(Labels* labels) {
  std::erase_if(*labels, [](const Label& l) { return l.value.empty(); });
  std::sort(labels->begin(), labels->end());
}

std::string_view MetricName(const Labels& labels) {
  for (const auto& l : labels) {
    if (l.name == kMetricNameLabel) return l.value;
  }
  return {};
}

std::string LabelsToString(const Labels& labels, std::string_view sep) {
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += sep;
    out += labels[i].name;
    out += "=\"";
    for (char c : labels[i].value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

void PutLabels(std::string* dst, const Labels& labels) {
  PutVarint64(dst, labels.size());
  for (const auto& l : labels) {
    PutLengthPrefixed(dst, l.name);
    PutLengthPrefixed(dst, l.value);
  }
}

bool GetLabels(std::string_view* in, Labels* out, size_t max_labels) {
  uint64_t n;
  if (!GetVarint64(in, &n) || n > max_labels) return false;
  out->clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view name, value;
    if (!GetLengthPrefixed(in, &name) || !GetLengthPrefixed(in, &value)) return false;
    out->push_back({std::string(name), std::string(value)});
  }
  return true;
}

bool DecodeSymbolTable(std::string_view* in, std::vector<std::string_view>* symbols) {
  uint64_t n;
  // Each symbol takes at least one byte: bounds the reservation by the input.
  if (!GetVarint64(in, &n) || n > in->size()) return false;
  symbols->clear();
  symbols->reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    if (!GetLengthPrefixed(in, &s)) return false;
    symbols->push_back(s);
  }
  return true;
}

Status DecodePayloadHead(std::string_view* in, const char* what, uint64_t max_version,
                         PayloadHead* head) {
  uint64_t version;
  if (!GetVarint64(in, &version))
    return InvalidArgument(std::string("malformed ") + what + ": no version");
  if (version == 0 || version > max_version) {
    std::string supported = max_version == 1 ? "1" : "1 to " + std::to_string(max_version);
    return InvalidArgument(std::string(what) + " version " + std::to_string(version) +
                           " is not supported by this server (supports " + supported +
                           "); upgrade the server");
  }
  head->version = version;
  if (!GetLengthPrefixed(in, &head->source) || !GetVarint64(in, &head->sequence) ||
      !GetVarsint64(in, &head->base_time)) {
    return InvalidArgument(std::string("malformed ") + what + ": truncated header");
  }
  if (!DecodeSymbolTable(in, &head->symbols)) {
    return InvalidArgument(std::string("malformed ") + what + ": bad or truncated symbol table");
  }
  return Status::Ok();
}

bool SortedUniqueNames(const Labels& labels) {
  for (size_t i = 1; i < labels.size(); ++i) {
    if (!(labels[i - 1].name < labels[i].name)) return false;
  }
  return true;
}

size_t MetricBatch::SampleCount() const {
  size_t n = 0;
  for (const auto& s : series) n += s.samples.size();
  return n;
}

std::string EncodeMetricBatch(const MetricBatch& batch) {
  SymbolTable syms;
  std::string body;
  // A pass's time is its base, so a server can tell the pass's series from
  // values with times of their own (docs/wire.md); otherwise the first time.
  int64_t base = batch.pass_time_ms;
  for (size_t i = 0; base == 0 && i < batch.series.size(); ++i) {
    if (!batch.series[i].samples.empty()) base = batch.series[i].samples.front().t_ms;
  }
  PutVarint64(&body, batch.families.size());
  for (const auto& f : batch.families) {
    PutVarint64(&body, syms.Ref(f.name));
    body.push_back(static_cast<char>(f.type));
    PutVarint64(&body, syms.Ref(f.help));
  }
  PutVarint64(&body, batch.series.size());
  for (const auto& s : batch.series) {
    PutVarint64(&body, s.labels.size());
    for (const auto& l : s.labels) {
      PutVarint64(&body, syms.Ref(l.name));
      PutVarint64(&body, syms.Ref(l.value));
    }
    PutVarint64(&body, s.samples.size());
    int64_t prev = base;
    for (const auto& smp : s.samples) {
      PutVarsint64(&body, smp.t_ms - prev);
      prev = smp.t_ms;
      PutDouble(&body, smp.value);
    }
  }

  std::string out;
  PutVarint64(&out, kPayloadVersion);
  PutLengthPrefixed(&out, batch.source);
  PutVarint64(&out, batch.sequence);
  PutVarsint64(&out, base);
  syms.EncodeTo(&out);
  out += body;
  return out;
}

Result<MetricBatch> DecodeMetricBatch(std::string_view in) {
  auto bad = [](const char* what) {
    return InvalidArgument(std::string("malformed metric batch: ") + what);
  };
  MetricBatch b;
  PayloadHead head;
  VIGIL_RETURN_IF_ERROR(DecodePayloadHead(&in, "metric batch", kPayloadVersion, &head));
  b.source.assign(head.source);
  b.sequence = head.sequence;
  const int64_t base = head.base_time;
  b.pass_time_ms = base;
  const std::vector<std::string_view>& syms = head.symbols;

  uint64_t nfam;
  if (!GetVarint64(&in, &nfam) || nfam > in.size()) return bad("bad family count");
  for (uint64_t i = 0; i < nfam; ++i) {
    std::string_view name, help;
    if (!GetSymbol(&in, syms, &name) || in.empty()) return bad("truncated family");
    auto type = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if (type > static_cast<uint8_t>(MetricType::kCounter)) return bad("unknown metric type");
    if (!GetSymbol(&in, syms, &help)) return bad("truncated family help");
    b.families.push_back({std::string(name), static_cast<MetricType>(type), std::string(help)});
  }

  uint64_t nseries;
  if (!GetVarint64(&in, &nseries) || nseries > in.size()) return bad("bad series count");
  b.series.reserve(nseries);
  for (uint64_t i = 0; i < nseries; ++i) {
    Series s;
    uint64_t nlabels;
    if (!GetVarint64(&in, &nlabels)) return bad("truncated series");
    if (nlabels > kMaxLabelsPerSeries) return bad("too many labels on a series");
    // One spare slot: the ingester adds the node label to every series.
    s.labels.reserve(nlabels + 1);
    for (uint64_t j = 0; j < nlabels; ++j) {
      std::string_view name, value;
      if (!GetSymbol(&in, syms, &name) || !GetSymbol(&in, syms, &value)) {
        return bad("truncated label");
      }
      if (name.empty() || name.size() > kMaxLabelBytes || value.size() > kMaxLabelBytes) {
        return bad("label name empty or label too long");
      }
      s.labels.push_back({std::string(name), std::string(value)});
    }
    if (!SortedUniqueNames(s.labels)) return bad("labels not sorted or duplicated");
    uint64_t nsamples;
    // Each sample takes at least 9 bytes, which bounds the allocation below.
    if (!GetVarint64(&in, &nsamples) || nsamples > in.size() / 9) return bad("bad sample count");
    s.samples.reserve(nsamples);
    int64_t t = base;
    for (uint64_t j = 0; j < nsamples; ++j) {
      int64_t dt;
      double v;
      if (!GetVarsint64(&in, &dt) || !GetDouble(&in, &v)) return bad("truncated sample");
      t += dt;
      s.samples.push_back({t, v});
    }
    b.series.push_back(std::move(s));
  }
  if (!in.empty()) return bad("trailing bytes");
  return b;
}

void MetricBatchBuilder::Family(std::string_view name, MetricType type, std::string_view help) {
  auto [it, inserted] = family_index_.try_emplace(std::string(name), batch_.families.size());
  if (inserted) batch_.families.push_back({std::string(name), type, std::string(help)});
}

void MetricBatchBuilder::Add(std::string_view name, Labels labels, double value) {
  AddAt(name, std::move(labels), value, t_ms_);
}

void MetricBatchBuilder::AddAt(std::string_view name, Labels labels, double value, int64_t t_ms) {
  labels.push_back({std::string(kMetricNameLabel), std::string(name)});
  NormalizeLabels(&labels);
  batch_.series.push_back({std::move(labels), {{t_ms, value}}});
}

}  // namespace vigil::wire
