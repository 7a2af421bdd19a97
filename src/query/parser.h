// Parser of Vigil's PromQL subset. Errors are InvalidArgument with a message
// in Prometheus' form, "1:14: parse error: ...", where 1:14 is line:column of
// the offending token. A valid PromQL construct that Vigil does not evaluate
// is rejected with a message naming it ("histogram_quantile is not supported
// by Vigil yet") rather than a generic syntax error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "query/ast.h"

namespace vigil::query {

Result<NodePtr> ParseExpr(std::string_view query);

// Prometheus durations: "15s", "1m30s", "2h", "1d", "500ms" (units ms s m h d w y).
Result<int64_t> ParseDurationMs(std::string_view s);

// `s` as a PromQL string literal: quoted, with \ and " escaped (and a newline
// as \n), so a label value from an agent is matched, never parsed as query.
std::string PromQLString(std::string_view s);

}  // namespace vigil::query
