// The alert record as JSON (docs/alerts.md "Alert record"): what `vigil
// alerts --json`, /api/v1/alerts (inside Prometheus' envelope) and the
// alert store all read and write, so there is one shape.
//
//   {"id": "8ecf526fd71c7717", "rule": "gpu_temperature_high",
//    "state": "firing", "severity": "critical",
//    "labels": {"alertname": ..., "gpu": "3", "node": "n1", "severity": ...},
//    "value": 91, "threshold": 90,
//    "started_at": "2026-12-02T02:05:39Z", "resolved_at": null,
//    "summary": "...", "summary_zh": "...", "diagnosis": {},
//    "active_at_ms": ..., "fired_at_ms": ..., "resolved_at_ms": ...,
//    "last_eval_ms": ..., "keep_firing_since_ms": ...}
//
// `started_at` is when it fired (when it became pending, while pending).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "alert/alert.h"
#include "core/json_writer.h"
#include "core/status.h"

namespace vigil::alert {

// Writes the object; `inhibited` adds "inhibited": true and `silenced`
// "silenced": true (the API's view: another alert, or a silence, mutes it).
void WriteAlert(JsonWriter* w, const Alert& alert, bool inhibited = false, bool silenced = false);
std::string AlertJson(const Alert& alert);

// Reads what WriteAlert wrote. InvalidArgument for anything else.
Result<Alert> ParseAlert(std::string_view json);

// Writes labels as a JSON object, names in order.
void WriteLabels(JsonWriter* w, const wire::Labels& labels);

}  // namespace vigil::alert
