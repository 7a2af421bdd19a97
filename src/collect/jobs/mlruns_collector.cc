#include "collect/jobs/mlruns_collector.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <vector>

#include "core/strings.h"
#include "parse/training/log_metrics.h"

namespace vigil::collect::jobs {

struct MlrunsCollector::File {
  std::string job, run, key;
  uint64_t offset = 0;
  std::string partial;  // a last line not yet complete
  bool seen = true;     // found again in this pass
};

namespace {

constexpr int kMaxKeyDepth = 4;  // "a/b/c/d" keys

std::vector<std::string> Entries(const std::string& dir, size_t limit) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    out.emplace_back(e->d_name);
    if (out.size() >= limit) break;
  }
  ::closedir(d);
  return out;
}

bool IsDir(const std::string& path, int64_t* mtime_ms = nullptr) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if (mtime_ms) *mtime_ms = st.st_mtim.tv_sec * 1000LL + st.st_mtim.tv_nsec / 1'000'000;
  return true;
}

std::string CwdOf(const std::string& proc_root, int pid) {
  char buf[4096];
  std::string link = proc_root + "/" + std::to_string(pid) + "/cwd";
  ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

bool ParseMlflowMetricLine(std::string_view line, int64_t* t_ms, double* value, int64_t* step) {
  std::vector<std::string_view> f = SplitFields(line);
  if (f.size() != 2 && f.size() != 3) return false;
  auto t = ParseInt64(f[0]);
  auto v = ParseDouble(f[1]);
  if (!t || !v) return false;
  *t_ms = *t;
  *value = *v;
  *step = 0;
  if (f.size() == 3) {
    auto s = ParseInt64(f[2]);
    if (!s) return false;
    *step = *s;
  }
  return true;
}

MlrunsCollector::MlrunsCollector(const JobTracker* tracker, MlrunsCollectorOptions options)
    : tracker_(tracker), options_(std::move(options)) {
  if (!options_.cwd_of) options_.cwd_of = CwdOf;
}

MlrunsCollector::~MlrunsCollector() = default;

void MlrunsCollector::Discover(const std::string& mlruns, const std::string& job,
                               int64_t since_ms) {
  for (const std::string& exp : Entries(mlruns, options_.max_experiments)) {
    std::string exp_dir = mlruns + "/" + exp;
    if (!IsDir(exp_dir)) continue;
    for (const std::string& run : Entries(exp_dir, options_.max_runs)) {
      int64_t mtime = 0;
      std::string metrics = exp_dir + "/" + run + "/metrics";
      if (!IsDir(exp_dir + "/" + run, &mtime) || !IsDir(metrics)) continue;
      // The run directory changes when the run starts, ends or logs a param.
      int64_t metrics_mtime = 0;
      IsDir(metrics, &metrics_mtime);
      if (std::max(mtime, metrics_mtime) < since_ms) continue;
      // Metric files, keys with '/' as nested directories.
      std::vector<std::pair<std::string, int>> todo = {{"", 0}};
      while (!todo.empty()) {
        auto [rel, depth] = todo.back();
        todo.pop_back();
        std::string dir = rel.empty() ? metrics : metrics + "/" + rel;
        for (const std::string& name : Entries(dir, options_.max_files)) {
          std::string key = rel.empty() ? name : rel + "/" + name;
          std::string path = metrics + "/" + key;
          if (IsDir(path)) {
            if (depth + 1 < kMaxKeyDepth) todo.push_back({key, depth + 1});
            continue;
          }
          auto it = files_.find(path);
          if (it == files_.end()) {
            if (files_.size() >= options_.max_files) continue;
            auto f = std::make_unique<File>();
            f->run = run;
            f->key = key;
            it = files_.emplace(path, std::move(f)).first;
          }
          it->second->job = job;
          it->second->seen = true;
        }
      }
    }
  }
}

Status MlrunsCollector::Collect(wire::MetricBatchBuilder* out) {
  for (auto& [path, f] : files_) f->seen = false;
  for (const TrackedJob& t : tracker_->Jobs()) {
    if (t.ended || t.job.processes.empty()) continue;
    std::string cwd = options_.cwd_of(options_.proc_root, t.job.processes.front().pid);
    if (cwd.empty() || !IsDir(cwd + "/mlruns")) continue;
    Discover(cwd + "/mlruns", t.job.name, t.job.start_time_ms - 60'000);
  }
  std::string buf;
  for (auto it = files_.begin(); it != files_.end();) {
    File& f = *it->second;
    int fd = ::open(it->first.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      buf.resize(options_.max_bytes_per_pass);
      ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(f.offset));
      ::close(fd);
      if (n > 0) {
        f.offset += static_cast<uint64_t>(n);
        f.partial.append(buf.data(), static_cast<size_t>(n));
        size_t start = 0;
        const std::string name = parse::training::TrainingSeriesName(f.key);
        for (size_t nl; (nl = f.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
          int64_t t_ms, step;
          double value;
          if (name.size() > parse::training::kTrainingMetricPrefix.size() &&
              ParseMlflowMetricLine(std::string_view(f.partial).substr(start, nl - start), &t_ms,
                                    &value, &step)) {
            out->AddAt(name, {{"job", f.job}, {"mlflow_run", f.run}}, value, t_ms);
          }
        }
        f.partial.erase(0, start);
        if (f.partial.size() > 4096) f.partial.clear();  // not a metric line
      }
    }
    // A run no longer under a running job: forgotten (its history is stored).
    if (!f.seen) {
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

}  // namespace vigil::collect::jobs
