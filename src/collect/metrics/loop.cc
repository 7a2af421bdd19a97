#include "collect/metrics/loop.h"

#include <unistd.h>

#include <chrono>

#include "core/log.h"
#include "core/strings.h"
#include "core/thread_name.h"
#include "wire/frame.h"

namespace vigil::collect {
namespace {

// Process resource use in the Prometheus client-library convention, read from
// /proc/self/stat (fields after the parenthesised command name).
struct ProcessUsage {
  double cpu_seconds = 0;
  double rss_bytes = 0;
  double vsize_bytes = 0;
  double start_time_seconds = 0;
  double threads = 0;
};

// The boot time never changes: read once, so a pass reads 4 KiB, not /proc/stat.
double BootTimeSeconds(Env* env) {
  auto boot = env->ReadFile("/proc/stat", 1 << 16);
  if (!boot.ok()) return 0;
  size_t pos = boot->find("\nbtime ");
  if (pos == std::string::npos) return 0;
  auto fields = SplitFields(std::string_view(*boot).substr(pos + 7, 24));
  return fields.empty() ? 0 : ParseDouble(fields[0]).value_or(0);
}

bool ReadProcessUsage(Env* env, double boot_time_s, ProcessUsage* u) {
  auto stat = env->ReadFile("/proc/self/stat", 4096);
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  if (close == std::string::npos) return false;
  auto f = SplitFields(std::string_view(*stat).substr(close + 1));
  // f[0] is field 3 (state); utime=14, stime=15, threads=20, starttime=22, vsize=23, rss=24.
  if (f.size() < 22) return false;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  auto num = [&](size_t field) { return ParseDouble(f[field - 3]).value_or(0); };
  u->cpu_seconds = (num(14) + num(15)) / hz;
  u->threads = num(20);
  u->vsize_bytes = num(23);
  u->rss_bytes = num(24) * page;
  u->start_time_seconds = boot_time_s + num(22) / hz;
  return true;
}

}  // namespace

CollectionLoop::CollectionLoop(LoopOptions options,
                               std::vector<std::unique_ptr<MetricCollector>> collectors,
                               FrameSink sink)
    : options_(std::move(options)),
      collectors_(std::move(collectors)),
      sink_(std::move(sink)),
      // Seeded from the clock so sequences keep increasing across agent
      // restarts; the server drops a batch whose sequence it has seen.
      next_sequence_(static_cast<uint64_t>(options_.env->NowMillis()) * 1000) {}

CollectionLoop::CollectionLoop(LoopOptions options,
                               std::vector<std::unique_ptr<MetricCollector>> collectors,
                               BatchSink sink)
    : CollectionLoop(std::move(options), std::move(collectors), FrameSink()) {
  batch_sink_ = std::move(sink);
}

CollectionLoop::~CollectionLoop() { Stop(); }

void CollectionLoop::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "vigil-collect");
}

void CollectionLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CollectionLoop::Run() {
  const int64_t interval = options_.interval_ms;
  int64_t next = (options_.env->NowMillis() / interval + 1) * interval;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    int64_t wait = next - options_.env->NowMillis();
    if (wait > 0) {
      cv_.wait_for(lock, std::chrono::milliseconds(wait));
      continue;  // re-check stop_ and the clock (spurious wake-ups, clock steps)
    }
    lock.unlock();
    RunPass(next);
    lock.lock();
    int64_t now = options_.env->NowMillis();
    next += interval;
    if (next <= now) {  // the pass overran: skip to the next future boundary
      int64_t skipped = (now - next) / interval + 1;
      skipped_ticks_ += static_cast<uint64_t>(skipped);
      next += skipped * interval;
    }
  }
}

void CollectionLoop::RunPass(int64_t t_ms) {
  wire::MetricBatchBuilder b(options_.source, t_ms);
  b.Family("vigil_collector_success", wire::MetricType::kGauge,
           "Whether the collector's last pass succeeded (1) or failed (0).");
  b.Family("vigil_collector_duration_seconds", wire::MetricType::kGauge,
           "How long the collector's last pass took.");
  for (auto& c : collectors_) {
    int64_t t0 = options_.env->MonotonicMillis();
    Status st = c->Collect(&b);
    double secs = static_cast<double>(options_.env->MonotonicMillis() - t0) / 1000.0;
    std::string name(c->name());
    LogIfChanged(name, st);
    b.Add("vigil_collector_success", {{"collector", name}}, st.ok() ? 1 : 0);
    b.Add("vigil_collector_duration_seconds", {{"collector", name}}, secs);
  }
  AddProcessMetrics(&b);

  wire::MetricBatch batch = b.Release();
  batch.sequence = next_sequence_++;
  Status st = batch_sink_
                  ? batch_sink_(&batch)
                  : sink_(wire::EncodeFrame(wire::FrameKind::kMetrics,
                                            wire::EncodeMetricBatch(batch), options_.compress));
  if (!st.ok()) {
    ++sink_errors_;
    // Once per outage, not once per pass, while a server is away.
    if (sink_ok_) Logf(LogLevel::kWarn, "metrics batch not delivered: %s", st.ToString().c_str());
  } else if (!sink_ok_) {
    Log(LogLevel::kInfo, "metrics are delivered again");
  }
  sink_ok_ = st.ok();
  ++passes_;
}

void CollectionLoop::LogIfChanged(const std::string& collector, const Status& st) {
  // A source that keeps failing (no /sys in a container, a dead driver) would
  // otherwise log every second; log when its state changes instead.
  std::string now = st.ok() ? "" : st.ToString();
  std::string& before = last_error_[collector];
  if (now == before) return;
  if (st.ok()) {
    Logf(LogLevel::kInfo, "collector %s recovered", collector.c_str());
  } else {
    Logf(LogLevel::kWarn, "collector %s: %s", collector.c_str(), now.c_str());
  }
  before = std::move(now);
}

void CollectionLoop::AddProcessMetrics(wire::MetricBatchBuilder* b) {
  ProcessUsage u;
  if (boot_time_s_ < 0) boot_time_s_ = BootTimeSeconds(options_.env);
  if (!ReadProcessUsage(options_.env, boot_time_s_, &u)) return;
  using wire::MetricType;
  b->Family("process_cpu_seconds_total", MetricType::kCounter,
            "Total user and system CPU time spent in seconds.");
  b->Add("process_cpu_seconds_total", u.cpu_seconds);
  b->Family("process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes.");
  b->Add("process_resident_memory_bytes", u.rss_bytes);
  b->Family("process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes.");
  b->Add("process_virtual_memory_bytes", u.vsize_bytes);
  b->Family("process_start_time_seconds", MetricType::kGauge,
            "Start time of the process since unix epoch in seconds.");
  b->Add("process_start_time_seconds", u.start_time_seconds);
  b->Family("vigil_process_threads", MetricType::kGauge, "Threads in the Vigil process.");
  b->Add("vigil_process_threads", u.threads);
}

LoopStats CollectionLoop::Stats() const {
  return {passes_.load(), sink_errors_.load(), skipped_ticks_.load()};
}

}  // namespace vigil::collect
