// Write-ahead log of the head: the records the metrics store writes into the
// shared WAL segment files (core/wal_segments.h; format in docs/tsdb.md):
// each body is a type byte and its payload.
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
#include "core/wal_segments.h"
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

std::string EncodeSeriesRecord(uint64_t id, const wire::Labels& labels);
std::string EncodeSamplesRecord(std::span<const WalSample> samples);
std::string EncodeFamilyRecord(const wire::MetricFamily& family);
// Fails (Corruption) on a body that passed its checksum but does not parse.
Status DecodeWalRecord(std::string_view body, WalRecord* out);

// Frames larger than this are taken as corruption, not allocated.
inline constexpr uint32_t kMaxWalRecordBytes = 256u << 20;

using ::vigil::ListWalSegments;
using ::vigil::WalReplayStats;
using ::vigil::WalSegmentPath;
using ::vigil::WalWriter;

// A writer for the metrics WAL (records up to kMaxWalRecordBytes).
Result<std::unique_ptr<WalWriter>> OpenWalWriter(Env* env, std::string wal_dir, uint64_t segment);

// Calls `fn(segment, body)` for every valid record of every segment, in order.
// A segment whose tail fails its checks is truncated to its valid prefix;
// replay goes on with the next segment. `fn` returning an error stops replay.
Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace vigil::tsdb
