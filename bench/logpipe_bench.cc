// The log path of `vigil up`, in one process, for bench/log_pipeline_compare.py
// (bench/RESULTS.md "Logs"): LogAgent (tail -> envelope -> encoding ->
// multiline -> level -> volume -> batch) -> Ingester::ReceiveLogBatch ->
// LogStore (production options: WAL fsync per batch, background block cuts),
// wired exactly as src/cli/instance.cc wires `vigil up` (no wire frame).
//
// Differences from the binary, and why: discovery is replaced by the one file
// to tail (the binary's discovery finds it through its writer's stdout), and
// the per-source rate limit (VolumeOptions::lines_per_second, 10,000 lines/s
// by default in the binary, with no flag to change it) is off unless
// LINES_PER_SECOND is set, so every line of a burst is stored, as rsyslog
// stores them. No HTTP server and no metric collectors run.
//
//   [TRAINING_METRICS=0] logpipe_bench FILE STATE_DIR   (0: no training_* series)
//
// Runs until SIGTERM/SIGINT. Every 50 ms it writes the store's line count
// (lines + sampled + filtered as "accounted") to STATE_DIR/progress, one line
// "<stored> <accounted>", for the driver to poll.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "collect/logs/log_agent.h"
#include "ingest/ingester.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace {

using namespace vigil;  // NOLINT: a benchmark program

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_ARENA_MAX, 2);  // as src/cli/main.cc does
  if (argc != 3) {
    std::fprintf(stderr, "usage: logpipe_bench FILE STATE_DIR\n");
    return 2;
  }
  std::string file = argv[1], state = argv[2];
  Env* env = Env::Default();
  for (const char* sub : {"/tsdb", "/logs", "/agent"}) {
    Status st = env->CreateDirs(state + sub);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  tsdb::Options db_options;
  db_options.dir = state + "/tsdb";
  auto db = tsdb::Db::Open(db_options);
  logstore::Options log_options;
  log_options.dir = state + "/logs";
  auto logs = logstore::LogStore::Open(log_options);
  if (!db.ok() || !logs.ok()) {
    std::fprintf(stderr, "open: %s %s\n", db.status().ToString().c_str(),
                 logs.status().ToString().c_str());
    return 1;
  }
  // TRAINING_METRICS=0 measures the log path alone (no training_* series).
  ingest::IngesterOptions ingest_options;
  const char* tm = std::getenv("TRAINING_METRICS");
  ingest_options.training_metrics = tm == nullptr || std::string_view(tm) != "0";
  ingest::Ingester ingester(db->get(), logs->get(), ingest_options);

  collect::logs::LogAgentOptions o;
  o.node = "bench";
  o.state_dir = state + "/agent";
  o.discover_override = [file] {
    discover::LogSource s;
    s.path = file;
    s.format = discover::LogFormat::kPlain;
    s.labels = {{"job", "train"}, {"source", file}};
    s.origin = "config";
    return std::vector<discover::LogSource>{s};
  };
  const char* lps = std::getenv("LINES_PER_SECOND");
  o.volume.lines_per_second = lps ? static_cast<uint32_t>(std::strtoul(lps, nullptr, 10)) : 0;
  // Wired as `vigil up` wires it (src/cli/instance.cc): the batch goes to
  // the ingester in-process, without a wire frame.
  collect::logs::LogAgent agent(
      o, [&ingester](wire::LogBatch* batch) { return ingester.ReceiveLogBatch(batch); });
  Status st = agent.Start();
  if (!st.ok()) {
    std::fprintf(stderr, "agent: %s\n", st.ToString().c_str());
    return 1;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  std::string progress = state + "/progress";
  int fd = ::open(progress.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  while (!g_stop) {
    uint64_t stored = 0, accounted = 0;
    for (const auto& s : (*logs)->Sources()) {
      stored += s.lines;
      accounted += s.lines + s.counters.sampled_lines + s.counters.filtered_lines;
    }
    char buf[64];
    int n =
        std::snprintf(buf, sizeof(buf), "%20llu %20llu\n", static_cast<unsigned long long>(stored),
                      static_cast<unsigned long long>(accounted));
    if (fd >= 0 && ::pwrite(fd, buf, static_cast<size_t>(n), 0) < 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fd >= 0) ::close(fd);
  agent.Stop();
  Status c1 = (*logs)->Close();
  Status c2 = (*db)->Close();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak_rss_kib: %ld\n", ru.ru_maxrss);
  return c1.ok() && c2.ok() ? 0 : 1;
}
