#include "cli/instance.h"

#include <unistd.h>

#include "net/http_server.h"
#include "api/job_routes.h"
#include "api/log_routes.h"
#include "api/otlp_routes.h"
#include "api/push_routes.h"
#include "api/query_routes.h"
#include "api/routes.h"
#include "api/web_routes.h"
#include "collect/jobs/job_shipper.h"
#include "collect/jobs/job_tracker.h"
#include "collect/jobs/mlruns_collector.h"
#include "collect/jobs/tfevents_collector.h"
#include "collect/logs/log_agent.h"
#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/loop.h"
#include "core/env.h"
#include "core/log.h"
#include "core/version.h"
#include "ingest/ingester.h"
#include "ship/http_transport.h"
#include "ship/transport.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::cli {

namespace {

// The stores and the ingest that feeds them (absent in `vigil agent`).
struct ServerSide {
  std::unique_ptr<tsdb::Db> db;
  std::unique_ptr<logstore::LogStore> logs;
  std::unique_ptr<ingest::RemoteJobs> remote_jobs;  // other nodes' jobs, from their agents
  std::unique_ptr<ingest::Ingester> ingester;
};

}  // namespace

struct Instance::Impl {
  InstanceOptions options;
  std::string url;
  // Declaration order is teardown order in reverse: the agent side stops
  // before the server side it feeds.
  std::unique_ptr<InstanceLock> lock;
  ServerSide server;
  // Before http and loop, which refer to it (the jobs route, the tfevents
  // collector) and are destroyed first.
  std::unique_ptr<collect::jobs::JobTracker> jobs;
  std::unique_ptr<net::HttpServer> http;
  // One transport per sender, so a slow log batch never holds up metrics.
  std::unique_ptr<ship::Transport> transport;
  std::unique_ptr<ship::Transport> log_transport;
  std::unique_ptr<ship::Transport> jobs_transport;
  std::unique_ptr<collect::jobs::JobShipper> job_shipper;  // `vigil agent` only
  std::unique_ptr<collect::CollectionLoop> loop;
  std::unique_ptr<collect::logs::LogAgent> log_agent;
  bool stopped = false;
};

// The URL a local client uses: a wildcard listen address is reached through
// loopback, and an IPv6 literal needs brackets.
std::string LocalUrl(const std::string& listen, uint16_t port) {
  std::string host = "127.0.0.1";
  auto addr = net::ParseListenAddress(listen);
  if (addr.ok() && !addr->host.empty() && addr->host != "0.0.0.0" && addr->host != "::") {
    host = addr->host.find(':') != std::string::npos ? "[" + addr->host + "]" : addr->host;
  }
  return "http://" + host + ":" + std::to_string(port);
}

std::string DefaultNodeName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

namespace {

Status OpenServerSide(const InstanceOptions& options, int64_t started_ms, ServerSide* impl,
                      net::Router* router) {
  const HomePaths& paths = options.paths;
  tsdb::Options db_options;
  db_options.dir = paths.tsdb_dir();
  auto db = tsdb::Db::Open(db_options);
  if (!db.ok())
    return db.status().WithContext("cannot open the metrics store in " + db_options.dir);
  impl->db = std::move(db).value();
  logstore::Options log_options;
  log_options.dir = paths.log_store_dir();
  auto logs = logstore::LogStore::Open(log_options);
  if (!logs.ok()) {
    return logs.status().WithContext("cannot open the log store in " + log_options.dir);
  }
  impl->logs = std::move(logs).value();
  ingest::RemoteJobsOptions remote_options;
  remote_options.dir = paths.nodes_dir();
  impl->remote_jobs = std::make_unique<ingest::RemoteJobs>(remote_options);
  ingest::IngesterOptions ingest_options;
  ingest_options.remote_jobs = impl->remote_jobs.get();
  impl->ingester =
      std::make_unique<ingest::Ingester>(impl->db.get(), impl->logs.get(), ingest_options);

  api::CoreRouteDeps deps;
  deps.info = {kVersion,       started_ms,        paths.home,
               options.listen, options.node_name, paths.data_dir()};
  deps.db = impl->db.get();
  deps.logs = impl->logs.get();
  deps.ingester = impl->ingester.get();
  api::AddCoreRoutes(router, deps);
  api::AddQueryRoutes(router, impl->db.get());
  api::AddLogRoutes(router, impl->logs.get());
  api::PushRouteDeps push;
  push.ingester = impl->ingester.get();
  push.node = options.node_name;
  api::AddPushRoutes(router, push);
  api::OtlpRouteDeps otlp;
  otlp.ingester = impl->ingester.get();
  otlp.node = options.node_name;
  api::AddOtlpRoutes(router, otlp);
  api::AddWebRoutes(router);
  return Status::Ok();
}

collect::logs::LogAgentOptions LogAgentOptionsFor(const InstanceOptions& options) {
  const HomePaths& paths = options.paths;
  collect::logs::LogAgentOptions o;
  o.node = options.node_name;
  o.state_dir = paths.agent_dir();
  o.discovery.self_home = paths.home;
  o.discovery.run_spool_dir = paths.run_spool_dir();
  o.discovery.extra_globs = options.logs.paths;
  o.discovery.exclude_globs = options.logs.exclude;
  o.volume.min_level = options.logs.level_floor;
  o.volume.lines_per_second = options.logs.lines_per_second;
  o.volume.burst = options.logs.burst;
  return o;
}

}  // namespace

Result<std::unique_ptr<Instance>> Instance::Start(
    const InstanceOptions& options,
    std::vector<std::unique_ptr<collect::MetricCollector>> collectors) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Env* env = Env::Default();
  const HomePaths& paths = options.paths;
  for (const std::string& dir : {paths.data_dir(), paths.logs_dir(), paths.run_dir()}) {
    VIGIL_RETURN_IF_ERROR(env->CreateDirs(dir));
  }
  VIGIL_ASSIGN_OR_RETURN(impl->lock, InstanceLock::Acquire(paths));
  // A state file left by a killed instance names a dead pid and URL; with the
  // lock now ours, it must not be read as ours until we write the new one.
  (void)env->RemoveFile(paths.state_file());

  int64_t started_ms = env->NowMillis();
  bool server_side = options.role != Role::kAgent;
  bool agent_side = options.role != Role::kServer;
  net::Router router;
  if (server_side) {
    VIGIL_RETURN_IF_ERROR(OpenServerSide(options, started_ms, &impl->server, &router));
  } else {
    router.Handle("GET", "/healthz",
                  [](const net::HttpRequest&) { return net::HttpResponse::Text(200, "ok\n"); });
  }
  if (agent_side) {
    // Jobs are found where they run; their verdict uses the stores when this
    // process has them (docs/jobs.md).
    collect::jobs::JobTrackerOptions jobs_options;
    jobs_options.run_spool_dir = paths.run_spool_dir();
    jobs_options.kernel_log = "/dev/kmsg";
    jobs_options.history_path = paths.job_history_file();
    // A process running CUDA work is a job even when nothing else says so.
    for (const auto& c : collectors) {
      if (auto* gpu = dynamic_cast<collect::GpuCollector*>(c.get())) {
        jobs_options.gpu_pids = [gpu] { return gpu->status().compute_pids; };
      }
    }
    impl->jobs = std::make_unique<collect::jobs::JobTracker>(jobs_options);
    // What jobs write to TensorBoard files (found among their open files) and
    // to MLflow's local store (found in their working directory).
    collectors.push_back(std::make_unique<collect::jobs::TfEventsCollector>(impl->jobs.get()));
    collectors.push_back(std::make_unique<collect::jobs::MlrunsCollector>(impl->jobs.get()));
  }
  // This node's jobs (agent side) and the jobs other nodes' agents report
  // (server side), with the stores where this process has them.
  api::JobRouteDeps job_deps;
  job_deps.tracker = impl->jobs.get();
  job_deps.remote = impl->server.remote_jobs.get();
  job_deps.logs = impl->server.logs.get();
  job_deps.db = impl->server.db.get();
  job_deps.node = options.node_name;
  api::AddJobRoutes(&router, job_deps);
  net::HttpServer::Options http_options;
  http_options.listen = options.listen;
  http_options.error_log = [](std::string_view msg) { Log(LogLevel::kWarn, msg); };
  impl->http = std::make_unique<net::HttpServer>(http_options, std::move(router));
  VIGIL_RETURN_IF_ERROR(impl->http->Start());

  impl->url = LocalUrl(options.listen, impl->http->bound_port());

  RunState state{static_cast<int>(::getpid()), impl->url, options.listen, started_ms, kVersion};
  VIGIL_RETURN_IF_ERROR(env->WriteFileAtomic(paths.state_file(), FormatRunState(state)));

  if (agent_side) {
    if (server_side) {
      ingest::Ingester* ingester = impl->server.ingester.get();
      impl->transport = std::make_unique<ship::InProcessTransport>(
          [ingester](std::string_view frame) { return ingester->Receive(frame); });
    } else {
      impl->transport = std::make_unique<ship::HttpTransport>(options.server_url);
    }
    ship::Transport* transport = impl->transport.get();
    collect::LoopOptions loop_options;
    loop_options.source = options.node_name;
    loop_options.interval_ms = options.interval_ms;
    loop_options.compress = !server_side;
    impl->loop = std::make_unique<collect::CollectionLoop>(
        loop_options, std::move(collectors),
        [transport](std::string frame) { return transport->Send(frame); });
    impl->loop->Start();
    impl->jobs->Start();
    if (!server_side) {
      // The server lists this node's jobs with every other node's.
      // A short timeout: the shipper's last send at shutdown must not hang.
      impl->jobs_transport =
          std::make_unique<ship::HttpTransport>(options.server_url, std::chrono::seconds(5));
      ship::Transport* jobs_transport = impl->jobs_transport.get();
      collect::jobs::JobShipperOptions shipper_options;
      shipper_options.node = options.node_name;
      impl->job_shipper = std::make_unique<collect::jobs::JobShipper>(
          impl->jobs.get(), shipper_options,
          [jobs_transport](std::string_view frame) { return jobs_transport->Send(frame); });
      impl->job_shipper->Start();
    }
    if (options.collect_logs) {
      collect::logs::LogAgent::Sender send_logs;
      if (server_side) {
        ingest::Ingester* ingester = impl->server.ingester.get();
        send_logs = [ingester](wire::LogBatch* batch) { return ingester->ReceiveLogBatch(batch); };
      } else {
        impl->log_transport = std::make_unique<ship::HttpTransport>(options.server_url);
        ship::Transport* log_transport = impl->log_transport.get();
        send_logs = collect::logs::FrameSender(
            [log_transport](std::string_view frame) { return log_transport->Send(frame); },
            /*compress=*/true);
      }
      impl->log_agent =
          std::make_unique<collect::logs::LogAgent>(LogAgentOptionsFor(options), send_logs);
      Status st = impl->log_agent->Start();
      if (!st.ok()) {
        // Metrics still work; say why logs do not.
        Logf(LogLevel::kError, "log collection not started: %s", st.ToString().c_str());
        impl->log_agent.reset();
      }
    }
  }
  Logf(LogLevel::kInfo, "vigil %s started: %s, home %s, node %s", kVersion, impl->url.c_str(),
       paths.home.c_str(), options.node_name.c_str());
  return std::unique_ptr<Instance>(new Instance(std::move(impl)));
}

Instance::Instance(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Instance::~Instance() { Stop(); }

void Instance::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->log_agent) impl_->log_agent->Stop();
  if (impl_->jobs) impl_->jobs->Stop();
  if (impl_->job_shipper) impl_->job_shipper->Stop();  // after the tracker's last pass
  if (impl_->loop) impl_->loop->Stop();
  impl_->http->Stop();
  if (impl_->server.logs) {
    Status st = impl_->server.logs->Close();
    if (!st.ok()) Logf(LogLevel::kError, "closing the log store: %s", st.ToString().c_str());
  }
  if (impl_->server.db) {
    Status st = impl_->server.db->Close();
    if (!st.ok()) Logf(LogLevel::kError, "closing the metrics store: %s", st.ToString().c_str());
  }
  (void)Env::Default()->RemoveFile(impl_->options.paths.state_file());
  impl_->lock.reset();
}

const std::string& Instance::url() const { return impl_->url; }

}  // namespace vigil::cli
