#include "collect/metrics/system_collector.h"

#include <re2/re2.h>

#include <mutex>
#include <optional>

namespace vigil::collect {
namespace {

using Clock = std::chrono::steady_clock;
using SourceFn = Status (*)(const SourceConfig&, CpuHistory*, Sink*);

struct Source {
  const char* name;  // node_exporter's collector name
  SourceFn fn;
};

// In node_exporter's collector names, so node_scrape_collector_* line up.
const Source kSources[] = {
    {"cpu", [](const SourceConfig& c, CpuHistory* h, Sink* s) { return CollectCpu(c, h, s); }},
    {"stat", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectStat(c, s); }},
    {"meminfo", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectMeminfo(c, s); }},
    {"loadavg", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectLoadavg(c, s); }},
    {"diskstats",
     [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectDiskstats(c, s); }},
    {"netdev", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectNetdev(c, s); }},
    {"netclass", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectNetclass(c, s); }},
    {"vmstat", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectVmstat(c, s); }},
    {"pressure", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectPressure(c, s); }},
    {"filefd", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectFilefd(c, s); }},
    {"uname", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectUname(c, s); }},
    {"time", [](const SourceConfig& c, CpuHistory*, Sink* s) { return CollectTime(c, s); }},
};

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Result<std::unique_ptr<re2::RE2>> Compile(const std::string& pattern, const char* what) {
  if (pattern.empty()) return std::unique_ptr<re2::RE2>();
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(pattern, opts);
  if (!re->ok()) {
    return InvalidArgument(std::string("system collector: bad ") + what + " regex \"" + pattern +
                           "\": " + re->error());
  }
  return re;
}

void EmitScrape(const char* collector, bool ok, double seconds, wire::MetricBatchBuilder* out) {
  wire::Labels l = {{"collector", collector}};
  out->Family("node_scrape_collector_duration_seconds", wire::MetricType::kGauge,
              "node_exporter: Duration of a collector scrape.");
  out->Family("node_scrape_collector_success", wire::MetricType::kGauge,
              "node_exporter: Whether a collector succeeded.");
  out->Add("node_scrape_collector_duration_seconds", l, seconds);
  out->Add("node_scrape_collector_success", l, ok ? 1 : 0);
}

}  // namespace

// What one pass job hands back. Shared with the job, which may still be
// running (stuck) when Collect() gives up on it.
struct SystemCollector::PassState {
  struct Done {
    Sink sink;
    Status status;
    double seconds = 0;
  };
  std::mutex mu;
  std::vector<Done> done;  // guarded by mu; one per kSources entry, in order
  size_t finished = 0;     // guarded by mu; sources done (done may be moved out)
  std::optional<Result<std::vector<proc::MountEntry>>> mounts;  // guarded by mu
  double mounts_seconds = 0;                                    // guarded by mu
};

Result<std::unique_ptr<SystemCollector>> SystemCollector::Create(SystemCollectorOptions options) {
  auto config = std::make_shared<SourceConfig>();
  config->env = options.env != nullptr ? options.env : Env::Default();
  config->proc_root = options.proc_root;
  config->sys_root = options.sys_root;
  config->udev_data_root = options.udev_data_root;
  config->mounts_file = options.mounts_file.empty() ? JoinPath(options.proc_root, "self/mounts")
                                                    : options.mounts_file;
  VIGIL_ASSIGN_OR_RETURN(config->disk_exclude, Compile(options.disk_device_exclude, "disk device"));
  VIGIL_ASSIGN_OR_RETURN(config->netdev_exclude,
                         Compile(options.netdev_device_exclude, "network device"));
  VIGIL_ASSIGN_OR_RETURN(config->mount_points_exclude,
                         Compile(options.mount_points_exclude, "mount point"));
  VIGIL_ASSIGN_OR_RETURN(config->fs_types_exclude, Compile(options.fs_types_exclude, "fs type"));
  VIGIL_ASSIGN_OR_RETURN(config->vmstat_include, Compile(options.vmstat_fields, "vmstat field"));
  if (!options.statfs) options.statfs = StatFsSyscall;
  return std::unique_ptr<SystemCollector>(
      new SystemCollector(std::move(config), std::move(options)));
}

SystemCollector::SystemCollector(std::shared_ptr<const SourceConfig> config,
                                 SystemCollectorOptions options)
    : config_(std::move(config)),
      cpu_history_(std::make_shared<CpuHistory>()),
      pass_timeout_(options.pass_timeout),
      pass_worker_("vigil-sysmetric"),
      filesystems_(std::move(options.statfs), options.statfs_timeout, options.max_stuck_mounts) {}

SystemCollector::~SystemCollector() = default;

Status SystemCollector::Collect(wire::MetricBatchBuilder* out) {
  auto pass = std::make_shared<PassState>();
  // While an earlier pass is stuck, say where it is stuck, not where this one stopped.
  if (!last_pass_ || !pass_worker_.stuck()) last_pass_ = pass;
  std::shared_ptr<PassState> stuck = last_pass_;
  auto job = [config = config_, history = cpu_history_, pass] {
    for (const Source& src : kSources) {
      PassState::Done d;
      auto t0 = Clock::now();
      d.status = src.fn(*config, history.get(), &d.sink);
      d.seconds = SecondsSince(t0);
      std::lock_guard<std::mutex> lock(pass->mu);
      pass->done.push_back(std::move(d));
      ++pass->finished;
    }
    auto t0 = Clock::now();
    auto mounts = ReadMounts(*config);
    std::lock_guard<std::mutex> lock(pass->mu);
    pass->mounts.emplace(std::move(mounts));
    pass->mounts_seconds = SecondsSince(t0);
  };
  auto t0 = Clock::now();
  Status pass_status = pass_worker_.Run(std::move(job), pass_timeout_);
  double waited = SecondsSince(t0);

  std::vector<PassState::Done> done;
  {
    std::lock_guard<std::mutex> lock(pass->mu);
    done = std::move(pass->done);
  }
  Status first_error;
  for (size_t i = 0; i < std::size(kSources); ++i) {
    if (i >= done.size()) {  // stuck here, or not reached
      EmitScrape(kSources[i].name, false, i == done.size() ? waited : 0, out);
      continue;
    }
    done[i].sink.AppendTo(out);
    EmitScrape(kSources[i].name, done[i].status.ok(), done[i].seconds, out);
    if (!done[i].status.ok() && first_error.ok()) {
      first_error = done[i].status.WithContext(kSources[i].name);
    }
  }
  Status fs_status = CollectFilesystems(*pass, out);
  if (!pass_status.ok()) {
    size_t at;
    {
      std::lock_guard<std::mutex> lock(stuck->mu);
      at = stuck->finished;
    }
    const char* where = at < std::size(kSources) ? kSources[at].name : "filesystem";
    return pass_status.WithContext(std::string("system metrics: the read for ") + where +
                                   " is stuck");
  }
  return first_error.ok() ? fs_status : first_error;
}

Status SystemCollector::CollectFilesystems(PassState& pass, wire::MetricBatchBuilder* out) {
  std::optional<Result<std::vector<proc::MountEntry>>> mounts;
  double read_seconds = 0;
  {
    std::lock_guard<std::mutex> lock(pass.mu);
    mounts = std::move(pass.mounts);
    read_seconds = pass.mounts_seconds;
  }
  if (!mounts || !mounts->ok()) {
    EmitScrape("filesystem", false, read_seconds, out);
    return mounts ? mounts->status().WithContext("filesystem") : Status::Ok();
  }
  auto t0 = Clock::now();
  Sink sink;
  filesystems_.Collect(**mounts, &sink);
  sink.AppendTo(out);
  EmitScrape("filesystem", true, read_seconds + SecondsSince(t0), out);
  return Status::Ok();
}

}  // namespace vigil::collect
