// MlrunsCollector: the metrics a running job logs with MLflow's local file
// store (`mlruns/` in its working directory, MLflow's default), as
// `training_<key>` series labelled with the job's name and `mlflow_run`, with
// no path to configure. The store writes
// mlruns/<experiment>/<run>/metrics/<key> (a key with '/' nests
// directories), one "<timestamp ms> <value> <step>" line per logged value,
// opening and closing the file each time: so the runs are found from the
// job's working directory (/proc/<pid>/cwd), not its open files.
//
// Each pass reads what the files gained (complete lines only; at most
// max_bytes_per_pass per file) and adds every value at its own timestamp.
// Runs whose directory is older than the job are left alone (a previous
// run's history is not news). Bounded: experiments, runs, metric files and
// directory depth are capped.
//
// Thread safety: Collect() from the collection loop's thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "collect/jobs/job_tracker.h"
#include "collect/metrics/collector.h"

namespace vigil::collect::jobs {

struct MlrunsCollectorOptions {
  std::string proc_root = "/proc";
  size_t max_experiments = 64;
  size_t max_runs = 256;    // per experiment looked at
  size_t max_files = 1024;  // followed in all
  size_t max_bytes_per_pass = 1u << 20;
  // A process's working directory (tests may replace /proc).
  std::function<std::string(const std::string& proc_root, int pid)> cwd_of;
};

// Parses one MLflow metric line: "<timestamp ms> <value> <step>" (the step
// may be absent in files of old versions). False for anything else.
bool ParseMlflowMetricLine(std::string_view line, int64_t* t_ms, double* value, int64_t* step);

class MlrunsCollector final : public MetricCollector {
 public:
  MlrunsCollector(const JobTracker* tracker, MlrunsCollectorOptions options = {});
  ~MlrunsCollector() override;
  std::string_view name() const override { return "mlruns"; }
  Status Collect(wire::MetricBatchBuilder* out) override;

  size_t files() const { return files_.size(); }

 private:
  struct File;
  void Discover(const std::string& mlruns, const std::string& job, int64_t since_ms);
  const JobTracker* tracker_;
  MlrunsCollectorOptions options_;
  std::map<std::string, std::unique_ptr<File>> files_;  // by path
};

}  // namespace vigil::collect::jobs
