// An outbox's health as metrics (docs/outbox.md "Stats"), so that what a
// full outbox drops is never silent: the agent ships them with its other
// metrics (vigil_outbox_*{outbox="metrics"} on the server, with the node's
// label) and answers them on its own /metrics.
//
// Thread safety: pure function.
#pragma once

#include <string>

#include "ship/outbox.h"
#include "wire/metric_batch.h"

namespace vigil::ship {

// Adds the families and samples of `stats` with label outbox="<outbox>".
void AddOutboxMetrics(const std::string& outbox, const OutboxStats& stats, int64_t now_ms,
                      wire::MetricBatchBuilder* out);

}  // namespace vigil::ship
