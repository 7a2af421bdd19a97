#include "collect/jobs/tfevents_collector.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/log.h"
#include "parse/training/log_metrics.h"

namespace vigil::collect::jobs {

struct TfEventsCollector::File {
  std::string job;
  int pid = 0;  // the process that holds it open
  int fd = -1;
  uint64_t offset = 0;
  bool alive = true;  // its job still runs
  bool failed = false;
  parse::training::TfEventsReader reader;
  ~File() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

bool IsEventFile(const std::string& path) {
  size_t slash = path.rfind('/');
  return path.find("tfevents", slash == std::string::npos ? 0 : slash) != std::string::npos;
}

}  // namespace

std::vector<std::string> OpenFilesOf(const std::string& proc_root, int pid) {
  std::vector<std::string> out;
  std::string dir = proc_root + "/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  char target[4096];
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    if (n <= 0 || target[0] != '/') continue;  // pipes, sockets, anon inodes
    out.emplace_back(target, static_cast<size_t>(n));
  }
  ::closedir(d);
  return out;
}

TfEventsCollector::TfEventsCollector(const JobTracker* tracker, TfEventsCollectorOptions options)
    : tracker_(tracker), options_(std::move(options)) {
  if (!options_.open_files) options_.open_files = OpenFilesOf;
}

TfEventsCollector::~TfEventsCollector() = default;

void TfEventsCollector::FindEventFiles(const std::string& job, int pid) {
  for (const std::string& path : options_.open_files(options_.proc_root, pid)) {
    if (!IsEventFile(path)) continue;
    auto it = files_.find(path);
    if (it == files_.end()) {
      if (files_.size() >= options_.max_files) continue;
      auto f = std::make_unique<File>();
      f->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (f->fd < 0) continue;
      it = files_.emplace(path, std::move(f)).first;
    }
    it->second->job = job;
    it->second->pid = pid;
  }
}

Status TfEventsCollector::Collect(wire::MetricBatchBuilder* out) {
  ++pass_;
  std::map<int, uint64_t> scanned;  // the running processes, each with its last scan
  for (const TrackedJob& t : tracker_->Jobs()) {
    if (t.ended) continue;
    for (const discover::JobProcess& p : t.job.processes) {
      auto last = scanned_.find(p.pid);
      bool due = last == scanned_.end() || pass_ - last->second >= options_.rescan_every_passes;
      scanned[p.pid] = due ? pass_ : last->second;
      if (due) FindEventFiles(t.job.name, p.pid);
    }
  }
  scanned_ = std::move(scanned);
  for (auto& [path, f] : files_) f->alive = scanned_.count(f->pid) > 0;

  std::string buf;
  std::vector<parse::training::TfScalar> scalars;
  for (auto it = files_.begin(); it != files_.end();) {
    File& f = *it->second;
    bool at_end = false;
    if (!f.failed) {
      buf.resize(options_.max_bytes_per_pass);
      ssize_t n = ::pread(f.fd, buf.data(), buf.size(), static_cast<off_t>(f.offset));
      at_end = n <= 0 || static_cast<size_t>(n) < buf.size();
      if (n > 0) {
        f.offset += static_cast<uint64_t>(n);
        scalars.clear();
        Status st = f.reader.Feed(std::string_view(buf.data(), static_cast<size_t>(n)), &scalars);
        for (const parse::training::TfScalar& s : scalars) {
          std::string name = parse::training::TrainingSeriesName(s.tag);
          if (name.size() == parse::training::kTrainingMetricPrefix.size()) continue;
          out->AddAt(name, {{"job", f.job}, {"source", it->first}}, s.value,
                     static_cast<int64_t>(s.wall_time * 1000));
        }
        if (!st.ok()) {
          Logf(LogLevel::kWarn, "TensorBoard file %s: %s; no longer read", it->first.c_str(),
               st.ToString().c_str());
          f.failed = true;
        }
      }
    }
    // A finished job's file is read to its end, then let go.
    if (!f.alive && (at_end || f.failed)) {
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

}  // namespace vigil::collect::jobs
