// What a server outage costs an agent (bench/RESULTS.md "Outbox"): the
// outbox's bytes per hour of one 8-GPU node's metrics, and how long the
// agent takes to deliver a 1-hour backlog once the server is back.
//
// The node is simulated as `vigil agent` runs it: the system collector on
// this machine's /proc and /sys, the GPU collector on the fake NVML with the
// 8×H100 scenario (VIGIL_NVML_LIBRARY, VIGIL_FAKE_NVML_SCENARIO), one pass a
// second of a simulated clock, frames zstd-compressed as over the network.
// The server is away for the whole hour; then a real `vigil server`-like
// ingest (HTTP on loopback -> ingester -> metrics store) comes up and the
// outbox drains into it.
//
//   export VIGIL_NVML_LIBRARY=build/tests/fake_nvml/libnvidia-ml-fake.so
//   export VIGIL_FAKE_NVML_SCENARIO=tests/fake_nvml/scenarios/h100x8.scenario
//   build/bench/outbox_bench [seconds=3600]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/routes.h"
#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/loop.h"
#include "collect/metrics/system_collector.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "ingest/ingester.h"
#include "net/http_server.h"
#include "ship/http_transport.h"
#include "ship/outbox.h"
#include "store/tsdb/db.h"

namespace vigil {
namespace {

// The server, away: every send fails as a refused connection does.
class Away final : public ship::Transport {
 public:
  Status Send(std::string_view) override { return Unavailable("connection refused"); }
};

// Forwards to whichever transport is current (the outbox keeps one pointer).
class Switch final : public ship::Transport {
 public:
  Status Send(std::string_view frame) override { return to->Send(frame); }
  ship::Transport* to = nullptr;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 3600;
  TempDir dir;
  ManualClockEnv env(ManualClockEnv::kDefaultStartMs, /*follow_monotonic=*/true);
  Away away;
  Switch link;
  link.to = &away;
  ship::OutboxOptions oo;
  oo.dir = dir.path() + "/outbox";
  oo.env = &env;
  auto outbox = ship::Outbox::Open(oo, &link);
  if (!outbox.ok()) {
    std::fprintf(stderr, "outbox: %s\n", outbox.status().ToString().c_str());
    return 1;
  }
  std::vector<std::unique_ptr<collect::MetricCollector>> collectors;
  auto system = collect::SystemCollector::Create({});
  if (system.ok()) collectors.push_back(std::move(system).value());
  collect::GpuCollectorOptions go;
  go.hostname = "gpu-node-1";
  collectors.push_back(std::make_unique<collect::GpuCollector>(go));
  collect::LoopOptions lo;
  lo.source = "gpu-node-1";
  lo.env = &env;
  lo.compress = true;
  ship::Outbox* box = outbox->get();
  collect::CollectionLoop loop(lo, std::move(collectors),
                               [box](std::string frame) { return box->Enqueue(frame); });
  // The GPU collector opens NVML on its worker: give it a few real passes.
  for (int i = 0; i < 5; ++i) {
    env.now += 1000;
    loop.RunPass(env.now);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const auto collect_start = std::chrono::steady_clock::now();
  for (int i = 0; i < seconds; ++i) {
    env.now += 1000;
    loop.RunPass(env.now);
    if (i % 30 == 0) (void)box->SendOne();  // the sender keeps trying
  }
  const double collect_s = Seconds(collect_start);
  ship::OutboxStats queued = box->Stats();
  const uint64_t disk = Env::Default()->DirSize(oo.dir).value_or(0);
  std::printf(
      "outage of %d s: %llu frames queued, %.2f MiB in the outbox (%.2f MiB on disk), "
      "%.0f bytes/frame, %.1f MiB per hour; collecting took %.1f s\n",
      seconds, static_cast<unsigned long long>(queued.queued_frames),
      queued.queued_bytes / 1048576.0, disk / 1048576.0,
      queued.queued_frames ? static_cast<double>(queued.queued_bytes) / queued.queued_frames : 0.0,
      queued.queued_bytes / 1048576.0 * 3600.0 / seconds, collect_s);

  // The server comes back: HTTP on loopback, the agent ingest route, a real store.
  tsdb::Options to;
  to.dir = dir.path() + "/tsdb";
  auto db = tsdb::Db::Open(to);
  if (!db.ok()) return 1;
  ingest::Ingester ingester(db->get());
  net::Router router;
  api::CoreRouteDeps deps;
  deps.db = db->get();
  deps.ingester = &ingester;
  api::AddCoreRoutes(&router, deps);
  net::HttpServer::Options ho;
  ho.listen = "127.0.0.1:0";
  net::HttpServer server(ho, std::move(router));
  if (!server.Start().ok()) return 1;
  ship::HttpTransport http("http://127.0.0.1:" + std::to_string(server.bound_port()));
  link.to = &http;
  const auto drain_start = std::chrono::steady_clock::now();
  size_t sent = box->Drain();
  const double drain_s = Seconds(drain_start);
  ingest::IngestStats in = ingester.Stats();
  std::printf(
      "catch-up: %zu frames (%llu samples) delivered over HTTP in %.2f s "
      "(%.0f frames/s, %.0f samples/s); %llu left queued\n",
      sent, static_cast<unsigned long long>(in.samples), drain_s, sent / drain_s,
      in.samples / drain_s, static_cast<unsigned long long>(box->Stats().queued_frames));
  server.Stop();
  (void)(*db)->Close();
  return 0;
}

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) { return vigil::Main(argc, argv); }
