// The whole diagnosis of one alert (src/diagnose/diagnosis.h,
// Diagnoser::Diagnose): the metric signals' instant queries on a TSDB of a
// GPU node's series, the job's signals from its report (events, verdict,
// learning-rate queries), its log templates read from a log store and
// mined, the ranking, and the suggestion from its settings (command line);
// for bench/RESULTS.md "Issue 16: diagnosis time per alert".
//
//   diagnosis_bench LOG_STORE_DIR [RUNS] [MINUTES] [NODES]
//                  (defaults: 20 runs, 60 minutes of metrics, 1 node)
//
// LOG_STORE_DIR is a store built by `logstore_bench ingest FILE DIR` from a
// genlog.py file: job "train" on node "bench", lines 37 ms apart ending at
// ingest time. The alert is gpu_underutilized on GPU 0 of node "bench" at
// the newest line of job "train".
//
// The TSDB is made here, in a temporary directory, before anything is timed:
// for each of NODES nodes ("bench", then "node-1", ...) the series Vigil's
// collectors write (node_exporter's names with a `node` label: 32 CPUs x 8
// modes, memory, pressure; dcgm-exporter's per GPU for 8 GPUs and the clock
// event reasons; the job's training series), one sample a second for
// MINUTES minutes ending at the alert, appended as an agent sends them (one
// batch per node and 10 s). The host is CPU-bound (idle 3 %) with the GPUs'
// memory 25 % used, so the top cause is input_pipeline_cpu and its
// suggestion reads num_workers from the job's command line.
//
// The job's report is given (a running job "train" on node "bench" with its
// 8 GPUs and one process whose command line carries its settings), as the
// alert engine passes the report it already holds: building reports is the
// engine's per-evaluation work, not the diagnosis'.
//
// Timed: Diagnose() and DiagnosisJson() (what the engine stores), wall clock
// and thread CPU time, RUNS times on one Diagnoser; the first run (a freshly
// opened log store, cold caches) is reported apart, and the median, min and
// max of all runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "diagnose/diagnosis.h"
#include "diagnose/job_report.h"
#include "ingest/job_store.h"
#include "query/engine.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace {

using namespace vigil;

constexpr int kGpus = 8;
constexpr int kCpus = 32;
constexpr int64_t kBatchMs = 10'000;

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct Timings {
  double first_ms = 0, first_cpu_ms = 0;                            // the first run
  double median_ms = 0, median_cpu_ms = 0, min_ms = 0, max_ms = 0;  // of all runs
};

// Runs `f` `runs` times, timing each (wall clock and this thread's CPU).
template <typename F>
Timings Time(int runs, F f) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = CpuMs();
    f();
    cpu.push_back(CpuMs() - c0);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
  }
  Timings t{.first_ms = wall[0], .first_cpu_ms = cpu[0]};
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  t.median_ms = wall[wall.size() / 2];
  t.median_cpu_ms = cpu[cpu.size() / 2];
  t.min_ms = wall.front();
  t.max_ms = wall.back();
  return t;
}

// One series' shape: its labels and its value at second `i` from the start.
struct Shape {
  wire::Labels labels;
  double (*value)(int i, int k);  // k: the series' own index among its kind
  int k = 0;
};

std::vector<Shape> NodeShapes(const std::string& node) {
  std::vector<Shape> out;
  auto add = [&](wire::Labels labels, double (*value)(int, int), int k = 0) {
    labels.push_back({"node", node});
    wire::NormalizeLabels(&labels);
    out.push_back({std::move(labels), value, k});
  };
  // CPU seconds per mode: 3 % idle, 1 % iowait, the rest busy.
  static constexpr const char* kModes[] = {"idle",    "iowait", "irq",    "nice",
                                           "softirq", "steal",  "system", "user"};
  static constexpr double kShare[] = {0.03, 0.01, 0.005, 0, 0.015, 0, 0.14, 0.80};
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    for (int m = 0; m < 8; ++m) {
      add(
          {{"__name__", "node_cpu_seconds_total"},
           {"cpu", std::to_string(cpu)},
           {"mode", kModes[m]}},
          [](int i, int k) { return 1e5 + i * kShare[k]; }, m);
    }
  }
  const double gib = 1024.0 * 1024 * 1024;
  static const double kMemTotal = 512 * gib;
  add({{"__name__", "node_memory_MemTotal_bytes"}}, [](int, int) { return kMemTotal; });
  add({{"__name__", "node_memory_MemAvailable_bytes"}},
      [](int i, int) { return kMemTotal * (0.4 + 0.01 * (i % 7)); });
  for (const char* name :
       {"node_memory_MemFree_bytes", "node_memory_Cached_bytes", "node_memory_Buffers_bytes",
        "node_memory_SwapTotal_bytes", "node_memory_SwapFree_bytes", "node_memory_Dirty_bytes"}) {
    add({{"__name__", name}}, [](int i, int) { return 1e9 + i * 4096.0; });
  }
  for (const char* name :
       {"node_pressure_io_stalled_seconds_total", "node_pressure_memory_stalled_seconds_total",
        "node_pressure_cpu_waiting_seconds_total"}) {
    add({{"__name__", name}}, [](int i, int) { return 100 + i * 0.02; });
  }
  for (const char* name : {"node_load1", "node_load5", "node_load15"}) {
    add({{"__name__", name}}, [](int i, int) { return 30 + (i % 11) * 0.1; });
  }
  // Per GPU: busy a third of the time (the alert), memory a quarter used.
  struct GpuMetric {
    const char* name;
    double (*value)(int, int);
  };
  static constexpr GpuMetric kGpuMetrics[] = {
      {"DCGM_FI_DEV_GPU_UTIL", [](int i, int) { return i % 3 == 0 ? 90.0 : 5.0; }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", [](int i, int) { return i % 3 == 0 ? 40.0 : 1.0; }},
      {"DCGM_FI_DEV_FB_USED", [](int, int k) { return 20'000.0 + k; }},
      {"DCGM_FI_DEV_FB_FREE", [](int, int k) { return 61'000.0 - k; }},
      {"DCGM_FI_DEV_GPU_TEMP", [](int i, int k) { return 55.0 + k + (i % 5); }},
      {"DCGM_FI_DEV_POWER_USAGE", [](int i, int) { return i % 3 == 0 ? 600.0 : 150.0; }},
      {"DCGM_FI_DEV_SM_CLOCK", [](int, int) { return 1980.0; }},
      {"DCGM_FI_DEV_MEM_CLOCK", [](int, int) { return 2619.0; }},
      {"DCGM_FI_PROF_SM_ACTIVE", [](int i, int) { return i % 3 == 0 ? 0.8 : 0.02; }},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", [](int i, int) { return i % 3 == 0 ? 0.5 : 0.0; }},
      {"DCGM_FI_PROF_DRAM_ACTIVE", [](int i, int) { return i % 3 == 0 ? 0.6 : 0.01; }},
  };
  static constexpr const char* kReasons[] = {"gpu_idle",
                                             "sw_power_cap",
                                             "hw_slowdown",
                                             "sw_thermal_slowdown",
                                             "hw_thermal_slowdown",
                                             "hw_power_brake_slowdown"};
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    const wire::Labels g = {{"gpu", std::to_string(gpu)},
                            {"UUID", "GPU-" + std::to_string(1000 + gpu)},
                            {"modelName", "NVIDIA H100 80GB HBM3"}};
    for (const GpuMetric& m : kGpuMetrics) {
      wire::Labels l = g;
      l.push_back({"__name__", m.name});
      add(std::move(l), m.value, gpu);
    }
    for (const char* reason : kReasons) {
      wire::Labels l = g;
      l.push_back({"__name__", "vigil_gpu_clock_event_reason_active"});
      l.push_back({"reason", reason});
      add(std::move(l), [](int, int) { return 0.0; });
    }
  }
  // The job's training series (read by job name, as its report says).
  add({{"__name__", "training_learning_rate"}, {"job", "train"}}, [](int, int) { return 3e-3; });
  add({{"__name__", "training_loss"}, {"job", "train"}}, [](int i, int) { return 2.0 - i * 1e-5; });
  add({{"__name__", "training_step"}, {"job", "train"}}, [](int i, int) { return 5000.0 + i; });
  return out;
}

// Seconds [first, last) of every shape, as one agent batch.
wire::MetricBatch Batch(const std::string& node, const std::vector<Shape>& shapes, int64_t t0_ms,
                        int first, int last) {
  wire::MetricBatch b;
  b.source = node;
  for (const Shape& s : shapes) {
    wire::Series& series = b.series.emplace_back();
    series.labels = s.labels;
    for (int i = first; i < last; ++i) {
      series.samples.push_back({t0_ms + i * 1000LL, s.value(i, s.k)});
    }
  }
  return b;
}

struct Tsdb {
  uint64_t series = 0;
  uint64_t samples = 0;
  double build_s = 0;
};

Result<Tsdb> FillTsdb(tsdb::Db* db, int64_t at_ms, int minutes, int nodes) {
  Tsdb out;
  const auto w0 = std::chrono::steady_clock::now();
  const int seconds = minutes * 60;
  const int64_t t0 = at_ms - (seconds - 1) * 1000LL;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = n == 0 ? "bench" : "node-" + std::to_string(n);
    const std::vector<Shape> shapes = NodeShapes(node);
    out.series += shapes.size();
    for (int first = 0; first < seconds; first += kBatchMs / 1000) {
      const int last = std::min<int>(seconds, first + kBatchMs / 1000);
      VIGIL_RETURN_IF_ERROR(db->Append(Batch(node, shapes, t0, first, last)));
      out.samples += shapes.size() * (last - first);
    }
  }
  out.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  return out;
}

diagnose::JobReport Report(int64_t at_ms) {
  diagnose::JobReport r;
  r.node = "bench";
  r.job.id = "bench-train-1";
  r.job.name = "train";
  r.job.kind = "training";
  r.job.framework = "pytorch";
  r.job.world_size = 1;
  r.job.user = "alice";
  r.job.start_time_ms = at_ms - 6 * 3'600'000;
  r.job.first_seen_ms = r.job.start_time_ms;
  r.job.last_seen_ms = at_ms;
  wire::JobProcessRecord& p = r.job.processes.emplace_back();
  p.pid = 4242;
  p.role = "rank";
  p.rank = 0;
  p.cmdline =
      "python train.py --model llama-7b --batch-size 16 --num-workers 2 --lr 3e-3 --bf16 "
      "--gradient-accumulation-steps 4 trainer.max_steps=100000";
  for (int gpu = 0; gpu < kGpus; ++gpu) r.gpus.push_back({.gpu = std::to_string(gpu)});
  r.state = "running";
  r.verdict.state = diagnose::JobState::kRunning;
  return r;
}

// The time of the newest line of job "train" on node "bench" (the alert's).
std::optional<int64_t> NewestLineMs(const logstore::LogStore& logs) {
  auto last = logs.Query({.matchers = {{logstore::MatchType::kEqual, "job", "train"},
                                       {logstore::MatchType::kEqual, "node", "bench"}},
                          .limit = 1});
  if (!last.ok() || last->entries.empty()) return std::nullopt;
  return last->entries[0].time_ns / 1'000'000;
}

int Run(const char* log_dir, int runs, int minutes, int nodes) {
  logstore::Options lo;
  lo.dir = log_dir;
  lo.retention_days = 0;  // the bench store's lines stay, however old
  lo.background_maintenance = false;
  auto logs = logstore::LogStore::Open(lo);
  const std::optional<int64_t> newest = logs.ok() ? NewestLineMs(**logs) : std::nullopt;
  if (!newest) {
    std::fprintf(
        stderr, "%s: %s\n", log_dir,
        logs.ok() ? "no line of job train on node bench" : logs.status().ToString().c_str());
    return 1;
  }
  const int64_t at_ms = *newest;

  TempDir tmp;
  tsdb::Options to;
  to.dir = tmp.path() + "/tsdb";
  to.retention_ms = 365LL * 86'400'000;
  auto db = tsdb::Db::Open(to);
  if (!db.ok()) {
    std::fprintf(stderr, "tsdb: %s\n", db.status().ToString().c_str());
    return 1;
  }
  auto filled = FillTsdb(db->get(), at_ms, minutes, nodes);
  if (!filled.ok()) {
    std::fprintf(stderr, "tsdb append: %s\n", filled.status().ToString().c_str());
    return 1;
  }
  query::Engine engine(db->get());
  diagnose::Diagnoser diagnoser({&engine, logs->get()});
  const diagnose::JobReport report = Report(at_ms);
  const diagnose::AlertFacts alert = {
      "gpu_underutilized", {{"gpu", "0"}, {"job", "train"}, {"node", "bench"}}, 35, at_ms};

  diagnose::Diagnosis d;
  size_t json_bytes = 0;
  const Timings all = Time(runs, [&] {
    d = diagnoser.Diagnose(alert, &report);
    json_bytes = diagnose::DiagnosisJson(d).size();
  });
  // The same without the log store: the metric and job signals alone.
  diagnose::Diagnoser metrics_only({&engine, nullptr});
  const Timings metrics = Time(runs, [&] { (void)metrics_only.Diagnose(alert, &report); });
  // The same with the report made as the engine makes it, at the alert's
  // time: JobReporter over the node's jobs snapshot (the job's events from
  // its newest log lines, its progress from training_step), then Diagnose.
  ManualClockEnv clock(at_ms);
  ingest::JobStore jobs({.env = &clock});
  if (Status st = jobs.Receive(
          wire::EncodeJobsSnapshot({.node = "bench", .time_ms = at_ms, .jobs = {report.job}}));
      !st.ok()) {
    std::fprintf(stderr, "jobs snapshot: %s\n", st.ToString().c_str());
    return 1;
  }
  diagnose::JobReporter reporter(
      {.jobs = &jobs, .logs = logs->get(), .db = db->get(), .env = &clock});
  diagnose::Diagnosis reported;
  size_t events = 0;
  const Timings with_report = Time(runs, [&] {
    std::vector<diagnose::JobReport> reports = reporter.Reports("bench");
    reported = diagnoser.Diagnose(alert, reports.empty() ? nullptr : &reports[0]);
    events = reports.empty() ? 0 : reports[0].events.size();
  });
  const diagnose::Suggestion* s = d.suggestions.empty() ? nullptr : &d.suggestions[0];
  std::printf("log_store_lines: %llu\n", static_cast<unsigned long long>((*logs)->Stats().lines));
  std::printf("tsdb_nodes: %d\ntsdb_series: %llu\ntsdb_samples: %llu\ntsdb_build_s: %.1f\n", nodes,
              static_cast<unsigned long long>(filled->series),
              static_cast<unsigned long long>(filled->samples), filled->build_s);
  std::printf("signal_count: %zu\ntop_cause: %s\nconfidence: %.2f\n", d.signals.size(),
              d.causes[0].id.c_str(), d.causes[0].confidence);
  std::printf("suggestion: %s %s -> %s\n", s ? s->parameter.c_str() : "-",
              s && s->current ? s->current->c_str() : "?",
              s && s->suggested ? s->suggested->c_str() : "?");
  if (d.templates) {
    std::printf("template_lines: %llu baseline + %llu window\ntemplates: %zu\nread_capped: %d\n",
                static_cast<unsigned long long>(d.templates->totals.baseline_lines),
                static_cast<unsigned long long>(d.templates->totals.window_lines),
                d.templates->window_templates, d.templates->read_capped ? 1 : 0);
  }
  std::printf("signals:");
  for (const diagnose::Signal& sig : d.signals) std::printf(" %s", sig.id.c_str());
  std::printf("\njson_bytes: %zu\nruns: %d\n", json_bytes, runs);
  std::printf("first_run_ms: %.1f (cpu %.1f)\n", all.first_ms, all.first_cpu_ms);
  std::printf("median_ms: %.1f (cpu %.1f)\nmin_ms: %.1f\nmax_ms: %.1f\n", all.median_ms,
              all.median_cpu_ms, all.min_ms, all.max_ms);
  std::printf("without_logs_median_ms: %.1f (cpu %.1f)\n", metrics.median_ms,
              metrics.median_cpu_ms);
  std::printf(
      "with_report_median_ms: %.1f (cpu %.1f, first %.1f; report: %zu events, top cause %s)\n",
      with_report.median_ms, with_report.median_cpu_ms, with_report.first_ms, events,
      reported.causes[0].id.c_str());
  return (*logs)->Close().ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LOG_STORE_DIR [RUNS] [MINUTES] [NODES]\n", argv[0]);
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  const int minutes = argc > 3 ? std::max(3, std::atoi(argv[3])) : 60;
  const int nodes = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  return Run(argv[1], runs, minutes, nodes);
}
