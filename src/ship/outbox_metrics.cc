#include "ship/outbox_metrics.h"

namespace vigil::ship {

void AddOutboxMetrics(const std::string& outbox, const OutboxStats& s, int64_t now_ms,
                      wire::MetricBatchBuilder* out) {
  using wire::MetricType;
  const wire::Labels labels = {{"outbox", outbox}};
  auto add = [&](const char* name, MetricType type, const char* help, double v) {
    out->Family(name, type, help);
    out->Add(name, labels, v);
  };
  add("vigil_outbox_queued_frames", MetricType::kGauge,
      "Frames waiting in the agent's outbox for the server.", static_cast<double>(s.queued_frames));
  add("vigil_outbox_queued_bytes", MetricType::kGauge, "Bytes waiting in the agent's outbox.",
      static_cast<double>(s.queued_bytes));
  add("vigil_outbox_oldest_age_seconds", MetricType::kGauge,
      "Age of the oldest frame waiting in the outbox (0 when empty).",
      s.oldest_queued_ms > 0 ? static_cast<double>(now_ms - s.oldest_queued_ms) / 1000.0 : 0.0);
  add("vigil_outbox_sent_frames_total", MetricType::kCounter,
      "Frames the server acknowledged since the agent started.",
      static_cast<double>(s.sent_frames));
  add("vigil_outbox_dropped_frames_total", MetricType::kCounter,
      "Frames dropped, oldest first, because the outbox was over its size or age budget.",
      static_cast<double>(s.dropped_frames));
  add("vigil_outbox_dropped_bytes_total", MetricType::kCounter,
      "Bytes of the frames dropped by the outbox's budget.", static_cast<double>(s.dropped_bytes));
  add("vigil_outbox_refused_frames_total", MetricType::kCounter,
      "Frames the outbox refused because it was full (their sender keeps them and retries).",
      static_cast<double>(s.refused_frames));
  add("vigil_outbox_rejected_frames_total", MetricType::kCounter,
      "Frames the server refused as invalid (skipped, not retried).",
      static_cast<double>(s.rejected_frames));
  add("vigil_outbox_send_failures_total", MetricType::kCounter,
      "Sends that failed and were retried (server away or busy).",
      static_cast<double>(s.send_failures));
}

}  // namespace vigil::ship
