#include "store/tsdb/wal.h"

#include <cstdio>

#include "core/coding.h"
#include "core/strings.h"

namespace vigil::tsdb {
namespace {

constexpr std::string_view kSegmentSuffix = ".wal";
constexpr size_t kFrameHeader = 8;
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

// Length of the valid prefix of a segment; calls fn for each valid record.
Result<size_t> ScanSegment(std::string_view data, uint64_t segment, uint64_t* records,
                           const std::function<Status(uint64_t, std::string_view)>& fn) {
  size_t pos = 0;
  while (data.size() - pos >= kFrameHeader) {
    uint32_t len = DecodeFixed32(data.data() + pos);
    uint32_t crc = DecodeFixed32(data.data() + pos + 4);
    if (len == 0 || len > kMaxWalRecordBytes || len > data.size() - pos - kFrameHeader) break;
    std::string_view body = data.substr(pos + kFrameHeader, len);
    if (Crc32c(body) != crc) break;
    WalRecord probe;
    if (!DecodeWalRecord(body, &probe).ok()) break;
    VIGIL_RETURN_IF_ERROR(fn(segment, body));
    ++*records;
    pos += kFrameHeader + len;
  }
  return pos;
}

}  // namespace

void PutLabels(std::string* dst, const wire::Labels& labels) {
  PutVarint64(dst, labels.size());
  for (const auto& l : labels) {
    PutLengthPrefixed(dst, l.name);
    PutLengthPrefixed(dst, l.value);
  }
}

bool GetLabels(std::string_view* in, wire::Labels* out) {
  uint64_t n;
  if (!GetVarint64(in, &n) || n > wire::kMaxLabelsPerSeries) return false;
  out->clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view name, value;
    if (!GetLengthPrefixed(in, &name) || !GetLengthPrefixed(in, &value)) return false;
    out->push_back({std::string(name), std::string(value)});
  }
  return true;
}

std::string EncodeSeriesRecord(uint64_t id, const wire::Labels& labels) {
  std::string out(1, static_cast<char>(WalRecordType::kSeries));
  PutVarint64(&out, id);
  PutLabels(&out, labels);
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
      ok = GetVarint64(&body, &out->series_id) && GetLabels(&body, &out->labels);
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

std::string WalSegmentPath(const std::string& wal_dir, uint64_t segment) {
  char name[32];
  std::snprintf(name, sizeof(name), "%08llu.wal", static_cast<unsigned long long>(segment));
  return JoinPath(wal_dir, name);
}

Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& wal_dir) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListDir(wal_dir));
  std::vector<uint64_t> out;
  for (const auto& n : names) {
    if (!EndsWith(n, kSegmentSuffix)) continue;
    auto num = ParseUint64(std::string_view(n).substr(0, n.size() - kSegmentSuffix.size()));
    if (num) out.push_back(*num);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::unique_ptr<WalWriter>> WalWriter::Open(Env* env, std::string wal_dir,
                                                   uint64_t segment) {
  std::unique_ptr<WalWriter> w(new WalWriter(env, std::move(wal_dir)));
  VIGIL_RETURN_IF_ERROR(w->OpenSegment(segment));
  return w;
}

Status WalWriter::OpenSegment(uint64_t segment) {
  VIGIL_ASSIGN_OR_RETURN(file_, env_->OpenAppendable(WalSegmentPath(dir_, segment)));
  segment_ = segment;
  return Status::Ok();
}

Status WalWriter::Add(std::string_view body) {
  if (!file_) return FailedPrecondition("WAL is closed");
  if (body.size() > kMaxWalRecordBytes) return InvalidArgument("WAL record too large");
  frame_.clear();
  PutFixed32(&frame_, static_cast<uint32_t>(body.size()));
  PutFixed32(&frame_, Crc32c(body));
  frame_.append(body);
  dirty_ = true;
  return file_->Append(frame_);
}

Status WalWriter::Sync() {
  if (!file_ || !dirty_) return Status::Ok();
  VIGIL_RETURN_IF_ERROR(file_->Sync());
  dirty_ = false;
  return Status::Ok();
}

Status WalWriter::Rotate() {
  // Moves on even if closing failed: after a write error the old segment may
  // end in a partial frame, and new records must not land behind it.
  Status closed = Close();
  VIGIL_RETURN_IF_ERROR(OpenSegment(segment_ + 1));
  return closed;
}

Status WalWriter::Close() {
  if (!file_) return Status::Ok();
  Status st = Sync();
  Status closed = file_->Close();
  file_.reset();
  dirty_ = false;
  return st.ok() ? closed : st;
}

Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn) {
  WalReplayStats stats;
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> segments, ListWalSegments(env, wal_dir));
  for (uint64_t seg : segments) {
    std::string path = WalSegmentPath(wal_dir, seg);
    VIGIL_ASSIGN_OR_RETURN(std::string data, env->ReadFile(path, kMaxSegmentRead));
    VIGIL_ASSIGN_OR_RETURN(size_t valid, ScanSegment(data, seg, &stats.records, fn));
    ++stats.segments;
    if (valid == data.size()) continue;
    // Cut the torn tail so that later appends and replays never meet it again.
    stats.truncated_bytes += data.size() - valid;
    ++stats.torn_segments;
    Status st = valid == 0 ? env->RemoveFile(path)
                           : env->WriteFileAtomic(path, std::string_view(data).substr(0, valid));
    VIGIL_RETURN_IF_ERROR(st.WithContext("truncating torn WAL segment"));
  }
  return stats;
}

}  // namespace vigil::tsdb
