// MetricCollector: one source of metrics on the agent side (system, GPU, ...).
//
// Each pass, the collection loop calls Collect() on every collector with the
// same builder, whose timestamp is the pass time. A collector must return
// within its own time bound (BoundedWorker), reporting a stuck source as a
// metric rather than blocking the loop: one stuck source must never stall the
// others.
#pragma once

#include <string_view>

#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::collect {

class MetricCollector {
 public:
  virtual ~MetricCollector() = default;
  virtual std::string_view name() const = 0;
  // Adds this pass's samples (and their families) to `out`. A non-OK status is
  // logged by the loop; samples added before the failure are kept.
  virtual Status Collect(wire::MetricBatchBuilder* out) = 0;
};

}  // namespace vigil::collect
