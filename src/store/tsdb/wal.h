// Write-ahead log of the head: numbered segment files wal/NNNNNNNN.wal, each a
// sequence of framed records (format in docs/tsdb.md):
//
//   fixed32 length of body | fixed32 crc32c of body | body = type byte + payload
//
// A crash can leave a torn or garbled tail; replay stops at the first frame
// that fails its checks and cuts the segment back to the valid prefix, so the
// next writer never appends after garbage.
//
// Thread safety: none. WalWriter is used under the Db's head mutex; replay runs
// in Db::Open before any other thread exists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::tsdb {

enum class WalRecordType : uint8_t { kSeries = 1, kSamples = 2, kFamily = 3 };

struct WalSample {
  uint64_t series_id = 0;
  int64_t t_ms = 0;
  double value = 0;
};

struct WalRecord {
  WalRecordType type = WalRecordType::kSamples;
  uint64_t series_id = 0;          // kSeries
  wire::Labels labels;             // kSeries
  std::vector<WalSample> samples;  // kSamples
  wire::MetricFamily family;       // kFamily
};

// Label sets as stored in the WAL and the catalog: varint count, then
// length-prefixed name and value of each label.
void PutLabels(std::string* dst, const wire::Labels& labels);
bool GetLabels(std::string_view* in, wire::Labels* out);

std::string EncodeSeriesRecord(uint64_t id, const wire::Labels& labels);
std::string EncodeSamplesRecord(std::span<const WalSample> samples);
std::string EncodeFamilyRecord(const wire::MetricFamily& family);
// Fails (Corruption) on a body that passed its checksum but does not parse.
Status DecodeWalRecord(std::string_view body, WalRecord* out);

// Frames larger than this are taken as corruption, not allocated.
inline constexpr uint32_t kMaxWalRecordBytes = 256u << 20;

std::string WalSegmentPath(const std::string& wal_dir, uint64_t segment);
// Segment numbers present in wal_dir, ascending (other files are ignored).
Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& wal_dir);

class WalWriter {
 public:
  // Starts writing a fresh segment numbered `segment`.
  static Result<std::unique_ptr<WalWriter>> Open(Env* env, std::string wal_dir, uint64_t segment);

  // Appends one record (a body from Encode*Record). Not durable until Sync.
  Status Add(std::string_view body);
  Status Sync();
  // Syncs and closes the current segment and starts the next one.
  Status Rotate();
  Status Close();

  uint64_t segment() const { return segment_; }
  uint64_t segment_bytes() const { return file_ ? file_->Size() : 0; }
  bool dirty() const { return dirty_; }

 private:
  WalWriter(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}
  Status OpenSegment(uint64_t segment);

  Env* env_;
  std::string dir_;
  uint64_t segment_ = 0;
  std::unique_ptr<AppendableFile> file_;
  bool dirty_ = false;
  std::string frame_;  // reused buffer
};

struct WalReplayStats {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t truncated_bytes = 0;  // cut from torn or corrupt tails
  uint64_t torn_segments = 0;
};

// Calls `fn(segment, body)` for every valid record of every segment, in order.
// A segment whose tail fails its checks is truncated to its valid prefix;
// replay goes on with the next segment. `fn` returning an error stops replay.
Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace vigil::tsdb
