#include "ingest/ingester.h"

#include "wire/frame.h"
#include "wire/metric_batch.h"

namespace vigil::ingest {
namespace {

bool ValidName(std::string_view n, bool allow_colon) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Checks names against the Prometheus data model, so everything stored can be
// exposed and queried with standard tools.
Status Validate(const wire::MetricBatch& b) {
  if (b.source.empty()) return InvalidArgument("metric batch has no source node name");
  for (const auto& s : b.series) {
    std::string_view name = wire::MetricName(s.labels);
    if (!ValidName(name, true)) {
      return InvalidArgument("invalid metric name '" + std::string(name) + "'");
    }
    for (const auto& l : s.labels) {
      if (l.name != wire::kMetricNameLabel && !ValidName(l.name, false)) {
        return InvalidArgument("invalid label name '" + l.name + "' on " + std::string(name));
      }
    }
  }
  return Status::Ok();
}

void AddNodeLabel(wire::MetricBatch* b) {
  for (auto& s : b->series) {
    std::erase_if(s.labels, [](const wire::Label& l) { return l.name == kNodeLabel; });
    s.labels.push_back({std::string(kNodeLabel), b->source});
    wire::NormalizeLabels(&s.labels);
  }
}

}  // namespace

Status Ingester::Receive(std::string_view frame) {
  auto reject = [this](Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.rejected_batches;
    return st;
  };
  auto decoded = wire::DecodeFrame(frame);
  if (!decoded.ok()) return reject(decoded.status());
  auto batch = wire::DecodeMetricBatch(decoded->payload);
  if (!batch.ok()) return reject(batch.status());
  Status valid = Validate(*batch);
  if (!valid.ok()) return reject(valid);

  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_sequence_.find(batch->source);
    if (it != last_sequence_.end() && batch->sequence <= it->second) {
      ++stats_.duplicate_batches;
      return Status::Ok();  // already stored: acknowledge again, store nothing
    }
  }
  AddNodeLabel(&*batch);
  VIGIL_RETURN_IF_ERROR(db_->Append(*batch));

  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& last = last_sequence_[batch->source];
  last = std::max(last, batch->sequence);
  ++stats_.batches;
  stats_.samples += batch->SampleCount();
  return Status::Ok();
}

IngestStats Ingester::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace vigil::ingest
