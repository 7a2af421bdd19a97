// Write-ahead log of the log store's heads: format.h records in the shared WAL
// segment files (core/wal_segments.h; layout in docs/logstore.md).
//
// Thread safety: none; LogStoreImpl serialises all calls (see log_store_impl.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "core/wal_segments.h"

namespace vigil::logstore {

// Frames larger than this are taken as corruption, not allocated.
inline constexpr uint32_t kMaxWalFrameBytes = 512u << 20;

using ::vigil::AppendWalFrame;
using ::vigil::ListWalSegments;
using ::vigil::WalReplayStats;
using ::vigil::WalSegmentPath;
using ::vigil::WalWriter;

// A writer for the log WAL (frames up to kMaxWalFrameBytes).
Result<std::unique_ptr<WalWriter>> OpenWalWriter(Env* env, std::string wal_dir, uint64_t segment);

// Calls fn(segment, body) for each valid frame of each segment, in order.
// `fn` returning an error stops replay with that error.
Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace vigil::logstore
