// TfEventsCollector: the scalars a running job writes to TensorBoard event
// files, as `training_<tag>` series ("train/loss" -> training_train_loss)
// labelled with the job's name, with no path to configure: TensorBoard
// writers (torch.utils.tensorboard, tf.summary, Lightning, Hugging Face)
// keep their `events.out.tfevents.*` file open while the job runs, so the
// files are found among the open files of the job's processes (JobTracker):
// a process's open files are listed when it is first seen and every
// `rescan_every_passes` passes after (writers open their file at start;
// listing /proc/PID/fd of every job process each second was this
// collector's main cost).
//
// Each pass reads what the files gained (at most max_bytes_per_pass per
// file) and adds every scalar at the time the writer recorded it. A file
// is followed from its start; re-reading it after a restart adds nothing,
// because the store keeps one value per series and time. A file whose job
// has ended is read to its end once, then forgotten; a damaged file is
// reported once and no longer read.
//
// Thread safety: Collect() from the collection loop's thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collect/jobs/job_tracker.h"
#include "collect/metrics/collector.h"
#include "parse/training/tfevents.h"

namespace vigil::collect::jobs {

struct TfEventsCollectorOptions {
  std::string proc_root = "/proc";
  size_t max_files = 256;
  size_t max_bytes_per_pass = 4u << 20;
  uint64_t rescan_every_passes = 5;
  // The files a process holds open (tests may replace /proc).
  std::function<std::vector<std::string>(const std::string& proc_root, int pid)> open_files;
};

class TfEventsCollector final : public MetricCollector {
 public:
  TfEventsCollector(const JobTracker* tracker, TfEventsCollectorOptions options = {});
  ~TfEventsCollector() override;
  std::string_view name() const override { return "tfevents"; }
  Status Collect(wire::MetricBatchBuilder* out) override;

  size_t files() const { return files_.size(); }

 private:
  struct File;
  void FindEventFiles(const std::string& job, int pid);

  const JobTracker* tracker_;
  TfEventsCollectorOptions options_;
  std::map<std::string, std::unique_ptr<File>> files_;  // by path
  uint64_t pass_ = 0;
  std::map<int, uint64_t> scanned_;  // running pid -> the pass that last listed its files
};

// Paths of the files `pid` holds open, read from <proc_root>/<pid>/fd.
std::vector<std::string> OpenFilesOf(const std::string& proc_root, int pid);

}  // namespace vigil::collect::jobs
