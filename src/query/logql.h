// The log query language: the subset of Grafana Loki's LogQL that selects and
// filters lines (docs/log-query.md):
//
//   {job="train", level=~"warn|error"} |= "loss" != "debug" |~ "step [0-9]+"
//
// A stream selector with =, !=, =~, !~ on stream labels (and the per-line
// pseudo-label `level`), then any number of line filters. Regexes are RE2:
// linear time, safe on untrusted patterns. Anything else of LogQL (parsers
// such as `| json`, metric queries such as `rate(...)`) is refused with a
// message naming the unsupported part.
#pragma once

#include <string_view>

#include "core/status.h"
#include "store/logs/log_store.h"

namespace vigil::query {

// Fills matchers and filters of a LogQuery (time range, limit and direction
// are the caller's). Errors are InvalidArgument with a position.
Result<logstore::LogQuery> ParseLogQuery(std::string_view text);

// For people typing at a prompt: a text that does not start with '{' is a
// keyword search over every stream ("CUDA out of memory" means
// `{} |= "CUDA out of memory"`); otherwise as ParseLogQuery.
Result<logstore::LogQuery> ParseLogSearch(std::string_view text);

}  // namespace vigil::query
