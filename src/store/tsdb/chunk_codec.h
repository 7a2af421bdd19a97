// Chunk codec: turns one series' samples over one chunk window into compact
// bytes and back (format in docs/tsdb-chunk.md).
//
// Approach (DESIGN.md "Storage"): timestamps as delta-of-delta; values that are
// decimal (most GPU and system metrics carry 0-3 decimals) become scaled
// integers, then delta coding, then a general-purpose compressor over the
// closed chunk. Values that are not decimal fall back to a lossless float path.
// Decoding is exact: every double comes back bit for bit, NaN payloads
// included (staleness markers, stale.h, are a NaN payload).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::tsdb {

// `samples` are sorted by time with unique timestamps.
std::string EncodeChunk(std::span<const wire::Sample> samples);
// Appends the decoded samples to `out`. Corrupt or hostile input returns an
// error and never crashes or allocates without bound.
Status DecodeChunk(std::string_view data, std::vector<wire::Sample>* out);

}  // namespace vigil::tsdb
