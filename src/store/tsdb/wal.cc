#include "store/tsdb/wal.h"

#include <cstdio>

#include "core/coding.h"
#include "core/strings.h"

namespace vigil::tsdb {
namespace {

constexpr size_t kMaxSegmentRead = size_t{4} << 30;

bool DecodeSamples(std::string_view* in, std::vector<WalSample>* out) {
  uint64_t n;
  // Each sample takes at least 10 bytes: bounds the reservation by the input.
  if (!GetVarint64(in, &n) || n > in->size() / 10) return false;
  out->reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    WalSample s;
    if (!GetVarint64(in, &s.series_id) || !GetVarsint64(in, &s.t_ms) || !GetDouble(in, &s.value)) {
      return false;
    }
    out->push_back(s);
  }
  return true;
}

}  // namespace

std::string EncodeSeriesRecord(uint64_t id, const wire::Labels& labels) {
  std::string out(1, static_cast<char>(WalRecordType::kSeries));
  PutVarint64(&out, id);
  wire::PutLabels(&out, labels);
  return out;
}

std::string EncodeSamplesRecord(std::span<const WalSample> samples) {
  std::string out(1, static_cast<char>(WalRecordType::kSamples));
  out.reserve(1 + 10 + samples.size() * 16);
  PutVarint64(&out, samples.size());
  for (const auto& s : samples) {
    PutVarint64(&out, s.series_id);
    PutVarsint64(&out, s.t_ms);
    PutDouble(&out, s.value);
  }
  return out;
}

std::string EncodeFamilyRecord(const wire::MetricFamily& family) {
  std::string out(1, static_cast<char>(WalRecordType::kFamily));
  PutLengthPrefixed(&out, family.name);
  out.push_back(static_cast<char>(family.type));
  PutLengthPrefixed(&out, family.help);
  return out;
}

Status DecodeWalRecord(std::string_view body, WalRecord* out) {
  if (body.empty()) return Corruption("empty WAL record");
  auto type = static_cast<WalRecordType>(body.front());
  body.remove_prefix(1);
  out->type = type;
  bool ok = false;
  switch (type) {
    case WalRecordType::kSeries:
      ok = GetVarint64(&body, &out->series_id) &&
           wire::GetLabels(&body, &out->labels, wire::kMaxLabelsPerSeries);
      break;
    case WalRecordType::kSamples:
      ok = DecodeSamples(&body, &out->samples);
      break;
    case WalRecordType::kFamily: {
      std::string_view name, help;
      ok = GetLengthPrefixed(&body, &name) && !body.empty();
      if (!ok) break;
      auto t = static_cast<uint8_t>(body.front());
      body.remove_prefix(1);
      ok = t <= static_cast<uint8_t>(wire::MetricType::kCounter) && GetLengthPrefixed(&body, &help);
      out->family = {std::string(name), static_cast<wire::MetricType>(t), std::string(help)};
      break;
    }
  }
  if (!ok || !body.empty()) return Corruption("malformed WAL record");
  return Status::Ok();
}

Result<std::unique_ptr<WalWriter>> OpenWalWriter(Env* env, std::string wal_dir, uint64_t segment) {
  return WalWriter::Open(env, std::move(wal_dir), segment, kMaxWalRecordBytes);
}

Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn) {
  ::vigil::WalReplayOptions o;
  o.max_body_bytes = kMaxWalRecordBytes;
  o.max_segment_bytes = kMaxSegmentRead;
  o.body_ok = [](std::string_view body) {
    WalRecord probe;
    return DecodeWalRecord(body, &probe).ok();
  };
  return ::vigil::ReplayWal(env, wal_dir, o, fn);
}

}  // namespace vigil::tsdb
