// Staleness markers: the value that says "this series ended here".
//
// When a series disappears from a collection pass, the ingester appends one
// sample with this value at the pass time (ingest/staleness.h), as Prometheus
// does when a series vanishes from a scrape. It is a NaN with one particular
// bit pattern, Prometheus' own (model/value.StaleNaN), so the store keeps it
// like any other value and a standard tool reading our data sees the same
// marker. Ordinary NaN values (a collector's "unknown") are different bits and
// stay ordinary values.
//
// The store keeps markers exactly (WAL, head and chunk codec are bit-exact);
// readers decide what they mean: the PromQL engine treats one as "no sample
// from here on" (docs/query-api.md "Staleness"), Db::Select and Db::Latest
// leave them out (they return values), Db::SelectSeries returns them.
#pragma once

#include <bit>
#include <cstdint>

namespace vigil::tsdb {

inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;

inline constexpr double StaleNaN() { return std::bit_cast<double>(kStaleNaNBits); }

// Compares bits, not values: every NaN compares unequal to itself.
inline constexpr bool IsStaleNaN(double v) { return std::bit_cast<uint64_t>(v) == kStaleNaNBits; }

}  // namespace vigil::tsdb
