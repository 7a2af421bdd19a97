#include "cli/instance.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "alert/engine.h"
#include "api/alert_routes.h"
#include "api/job_routes.h"
#include "api/log_routes.h"
#include "api/notify_settings_routes.h"
#include "api/otlp_routes.h"
#include "api/push_routes.h"
#include "api/query_routes.h"
#include "api/routes.h"
#include "api/web_routes.h"
#include "cli/channels.h"
#include "cli/notify_settings.h"
#include "collect/jobs/job_shipper.h"
#include "collect/jobs/job_tracker.h"
#include "collect/jobs/mlruns_collector.h"
#include "collect/jobs/tfevents_collector.h"
#include "collect/logs/log_agent.h"
#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/loop.h"
#include "core/env.h"
#include "core/json_writer.h"
#include "core/log.h"
#include "core/version.h"
#include "diagnose/efficiency.h"
#include "diagnose/job_report.h"
#include "ingest/ingester.h"
#include "net/exposition.h"
#include "net/http_server.h"
#include "ship/http_transport.h"
#include "ship/outbox.h"
#include "ship/outbox_metrics.h"
#include "ship/transport.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::cli {

namespace {

// The stores and the ingest that feeds them (absent in `vigil agent`).
struct ServerSide {
  std::unique_ptr<tsdb::Db> db;
  std::unique_ptr<logstore::LogStore> logs;
  std::unique_ptr<ingest::JobStore> jobs;  // every node's jobs, this one's included
  std::unique_ptr<ingest::Ingester> ingester;
  std::unique_ptr<diagnose::JobReporter> reporter;  // the jobs API's reports
  // Jobs' efficiency reports (the jobs API), priced as the run summaries are.
  std::unique_ptr<query::Engine> efficiency_query;
  std::unique_ptr<diagnose::EfficiencyReporter> efficiency;
  // The alert engine reads the store through a query engine of its own; the
  // channels it notifies outlive it (declared before it), and so does every
  // channel the settings API replaced (one may still be sending).
  std::unique_ptr<query::Engine> alert_query;
  std::unique_ptr<diagnose::Diagnoser> diagnoser;  // fills each firing alert's diagnosis
  std::unique_ptr<LiveChannels> channels;
  std::unique_ptr<alert::AlertEngine> alerts;
  // What the UI changes of config.json's channels, applied to `channels`.
  std::unique_ptr<NotifySettingsFile> notify_settings;
};

// How the agent side reaches the server. `vigil up`: straight into this
// process's ingester. `vigil agent`: over HTTP, every frame through an outbox
// (ship/outbox.h) that keeps it on disk until the server has it: one for
// metrics and jobs snapshots (oldest dropped, and counted, past its budget),
// one for log batches (refused when full: the log files and their checkpoints
// are the buffer behind it).
struct AgentLink {
  std::unique_ptr<ship::Transport> transport;      // metrics and jobs
  std::unique_ptr<ship::Transport> log_transport;  // logs: a slow batch never holds up metrics
  std::unique_ptr<ship::Outbox> outbox;
  std::unique_ptr<ship::Outbox> log_outbox;
  // Where frames go: the outbox, or the in-process ingester. In process,
  // metric and log batches skip the frame (set only then).
  std::function<Status(std::string_view frame)> send;
  collect::CollectionLoop::BatchSink send_metrics;
  collect::logs::LogAgent::Sender send_logs;

  void Stop() {
    if (outbox) outbox->Stop();
    if (log_outbox) log_outbox->Stop();
  }
  // Each outbox's name (its `outbox` label) and stats; none in `vigil up`.
  std::vector<std::pair<std::string, ship::OutboxStats>> OutboxStats() const {
    std::vector<std::pair<std::string, ship::OutboxStats>> out;
    if (outbox) out.emplace_back("metrics", outbox->Stats());
    if (log_outbox) out.emplace_back("logs", log_outbox->Stats());
    return out;
  }
};

// The outboxes' health, shipped with the other metrics (ship/outbox_metrics.h).
class OutboxCollector final : public collect::MetricCollector {
 public:
  explicit OutboxCollector(const AgentLink* link) : link_(link) {}
  std::string_view name() const override { return "outbox"; }
  Status Collect(wire::MetricBatchBuilder* out) override {
    for (const auto& [name, stats] : link_->OutboxStats()) {
      ship::AddOutboxMetrics(name, stats, out->timestamp_ms(), out);
    }
    return Status::Ok();
  }

 private:
  const AgentLink* link_;
};

}  // namespace

struct Instance::Impl {
  InstanceOptions options;
  std::string url;
  // Declaration order is teardown order in reverse: the agent side stops
  // before the server side it feeds.
  std::unique_ptr<InstanceLock> lock;
  ServerSide server;
  // Before http and loop, which refer to it (the tfevents collector) and are
  // destroyed first.
  std::unique_ptr<collect::jobs::JobTracker> jobs;
  std::unique_ptr<net::HttpServer> http;
  AgentLink link;
  std::unique_ptr<collect::jobs::JobShipper> job_shipper;
  // The shipper as the tracker's thread may reach it (JobTrackerOptions::
  // on_change), set once it exists; the tracker stops before it goes.
  std::atomic<collect::jobs::JobShipper*> shipper_for_tracker{nullptr};
  std::atomic<bool> jobs_changed{false};  // since the last snapshot was sent
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

// The alert engine on the server's stores, its channels from config.json's
// `notify` (docs/alerts.md); every preset on unless the config says not.
Status OpenAlerts(const InstanceOptions& options, ServerSide* impl) {
  // Rules are evaluated every second or two in the background: one thread
  // per query costs less in all than starting helper threads for each rule
  // with a long range (8 thread starts a second with the presets), and no
  // one waits on the answer.
  query::EngineOptions serial;
  serial.select_threads = 1;
  impl->alert_query = std::make_unique<query::Engine>(impl->db.get(), serial);
  alert::AlertEngineOptions o;
  o.config = options.alerts;
  o.dispatch = options.notify.dispatch;
  // time_scale plays every duration faster, the group intervals included.
  auto scaled = [&](int64_t ms) {
    return std::max<int64_t>(1,
                             static_cast<int64_t>(static_cast<double>(ms) * o.config.time_scale));
  };
  o.dispatch.group_wait_ms = scaled(o.dispatch.group_wait_ms);
  o.dispatch.group_interval_ms = scaled(o.dispatch.group_interval_ms);
  o.dispatch.repeat_interval_ms = scaled(o.dispatch.repeat_interval_ms);
  o.delivery = options.notify.delivery;
  o.delivery.initial_backoff_ms = scaled(o.delivery.initial_backoff_ms);
  o.delivery.max_backoff_ms = scaled(o.delivery.max_backoff_ms);
  o.delivery.max_age_ms = scaled(o.delivery.max_age_ms);
  auto listen = net::ParseListenAddress(options.listen);
  o.dispatch.external_url = LocalUrl(options.listen, listen.ok() ? listen->port : 9300);
  o.store.path = options.paths.data_dir() + "/alerts.db";
  o.actions.actions = options.notify.actions;  // the UI's link: dispatch.external_url
  impl->channels = std::make_unique<LiveChannels>();
  o.channels = impl->channels->Build(options.notify);
  const std::string external_url = o.dispatch.external_url;
  alert::AlertEngineSources sources;
  sources.query = impl->alert_query.get();
  sources.reporter = impl->reporter.get();
  sources.jobs = impl->jobs.get();
  impl->diagnoser = std::make_unique<diagnose::Diagnoser>(
      diagnose::DiagnoserSources{sources.query, impl->logs.get()});
  sources.diagnoser = impl->diagnoser.get();
  auto engine = alert::AlertEngine::Create(sources, std::move(o));
  if (!engine.ok()) return engine.status().WithContext("cannot start the alert engine");
  impl->alerts = std::move(engine).value();
  impl->channels->Attach(impl->alerts.get());
  impl->notify_settings =
      std::make_unique<NotifySettingsFile>(options.paths.home, external_url, impl->channels.get());
  return Status::Ok();
}

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
  ingest::JobStoreOptions jobs_options;
  jobs_options.dir = paths.nodes_dir();
  impl->jobs = std::make_unique<ingest::JobStore>(jobs_options);
  ingest::IngesterOptions ingest_options;
  ingest_options.job_store = impl->jobs.get();
  impl->ingester =
      std::make_unique<ingest::Ingester>(impl->db.get(), impl->logs.get(), ingest_options);
  diagnose::JobReportSources sources;
  sources.jobs = impl->jobs.get();
  sources.logs = impl->logs.get();
  sources.db = impl->db.get();
  impl->reporter = std::make_unique<diagnose::JobReporter>(sources);

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
  impl->efficiency_query = std::make_unique<query::Engine>(impl->db.get());
  diagnose::EfficiencyOptions efficiency;
  efficiency.price_per_gpu_hour = options.alerts.price_per_gpu_hour;
  efficiency.currency = options.alerts.currency;
  impl->efficiency =
      std::make_unique<diagnose::EfficiencyReporter>(impl->efficiency_query.get(), efficiency);
  api::AddJobRoutes(router, {impl->reporter.get(), impl->efficiency.get()});
  VIGIL_RETURN_IF_ERROR(OpenAlerts(options, impl));
  api::AddAlertRoutes(router, impl->alerts.get());
  api::AddNotifySettingsRoutes(router, impl->notify_settings.get());
  api::AddWebRoutes(router);
  return Status::Ok();
}

// The agent's own endpoints in `vigil agent` (the server has the rest):
// /healthz, and its outboxes on /metrics and /api/v1/status.
void AddAgentRoutes(const InstanceOptions& options, int64_t started_ms, const AgentLink* link,
                    net::Router* router) {
  router->Handle("GET", "/healthz",
                 [](const net::HttpRequest&) { return net::HttpResponse::Text(200, "ok\n"); });
  auto outboxes = [link] { return link->OutboxStats(); };
  // Jobs are judged and listed by the server the agent reports to.
  const std::string server_url = options.server_url;
  router->Handle("GET", "/api/v1/jobs", [server_url](const net::HttpRequest&) {
    return net::HttpResponse::Text(
        404, "this is a vigil agent: its jobs are listed by its server, " + server_url +
                 " (vigil jobs --server " + server_url + ")\n");
  });
  router->Handle("GET", "/metrics", [outboxes](const net::HttpRequest&) {
    const int64_t now = Env::Default()->NowMillis();
    wire::MetricBatchBuilder b("", now);
    for (const auto& [name, stats] : outboxes()) ship::AddOutboxMetrics(name, stats, now, &b);
    wire::MetricBatch batch = b.Release();
    std::vector<net::ExpositionPoint> points;
    for (wire::Series& s : batch.series) points.push_back({std::move(s.labels), s.samples[0]});
    net::HttpResponse r;
    r.content_type = std::string(net::kExpositionContentType);
    r.body = net::RenderExposition(batch.families, points);
    return r;
  });
  router->Handle("GET", "/api/v1/status", [options, started_ms, outboxes](const net::HttpRequest&) {
    const int64_t now = Env::Default()->NowMillis();
    JsonWriter w;
    w.BeginObject().Key("role").String("agent").Key("version").String(kVersion);
    w.Key("pid").Int(static_cast<int64_t>(::getpid()));
    w.Key("node").String(options.node_name).Key("home").String(options.paths.home);
    w.Key("server_url").String(options.server_url);
    w.Key("uptime_seconds").Int((now - started_ms) / 1000);
    w.Key("outboxes").BeginArray();
    for (const auto& [name, s] : outboxes()) {
      w.BeginObject().Key("name").String(name);
      w.Key("queued_frames").Uint(s.queued_frames).Key("queued_bytes").Uint(s.queued_bytes);
      w.Key("oldest_queued_ms").Int(s.oldest_queued_ms);
      w.Key("sent_frames").Uint(s.sent_frames).Key("dropped_frames").Uint(s.dropped_frames);
      w.Key("dropped_bytes").Uint(s.dropped_bytes).Key("refused_frames").Uint(s.refused_frames);
      w.Key("rejected_frames").Uint(s.rejected_frames);
      w.Key("send_failures").Uint(s.send_failures);
      w.Key("last_success_ms").Int(s.last_success_ms).Key("last_error").String(s.last_error);
      w.EndObject();
    }
    w.EndArray().EndObject();
    net::HttpResponse r;
    r.content_type = "application/json";
    r.body = w.Release();
    return r;
  });
}

// Opens the link to the server (see AgentLink).
Status OpenAgentLink(const InstanceOptions& options, ingest::Ingester* local, AgentLink* link) {
  if (local != nullptr) {
    link->send = [local](std::string_view frame) { return local->Receive(frame); };
    link->send_metrics = [local](wire::MetricBatch* batch) {
      return local->ReceiveMetricBatch(batch);
    };
    link->send_logs = [local](wire::LogBatch* batch) { return local->ReceiveLogBatch(batch); };
    return Status::Ok();
  }
  // A send in flight holds up a stop (the outbox waits for it): short enough
  // for `vigil down`, long enough for a large log batch on a slow link.
  constexpr std::chrono::seconds kSendTimeout{10};
  link->transport = std::make_unique<ship::HttpTransport>(options.server_url, kSendTimeout);
  link->log_transport = std::make_unique<ship::HttpTransport>(options.server_url, kSendTimeout);
  ship::OutboxOptions o;
  o.dir = options.paths.outbox_dir();
  o.name = "metrics";
  VIGIL_ASSIGN_OR_RETURN(link->outbox, ship::Outbox::Open(o, link->transport.get()));
  ship::OutboxOptions lo;
  lo.dir = options.paths.log_outbox_dir();
  lo.name = "logs";
  lo.max_bytes = 64ull << 20;
  lo.full_policy = ship::OutboxFullPolicy::kRefuseNew;
  lo.sync_each_enqueue = true;  // the log agent's checkpoint moves past what Enqueue took
  VIGIL_ASSIGN_OR_RETURN(link->log_outbox, ship::Outbox::Open(lo, link->log_transport.get()));
  link->outbox->Start();
  link->log_outbox->Start();
  ship::Outbox* outbox = link->outbox.get();
  ship::Outbox* log_outbox = link->log_outbox.get();
  link->send = [outbox](std::string_view frame) { return outbox->Enqueue(frame); };
  link->send_logs = collect::logs::FrameSender(
      [log_outbox](std::string_view frame) { return log_outbox->Enqueue(frame); },
      /*compress=*/true);
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

// Starts collection: metrics every interval, the job tracker and its
// snapshots (to the server's job store, in-process or remote alike), and the
// log agent.
void Instance::StartAgentSide(const InstanceOptions& options,
                              std::vector<std::unique_ptr<collect::MetricCollector>> collectors,
                              Impl* impl) {
  const bool remote = options.role == Role::kAgent;
  auto send = impl->link.send;
  collect::LoopOptions loop_options;
  loop_options.source = options.node_name;
  loop_options.interval_ms = options.interval_ms;
  loop_options.compress = remote;
  if (impl->link.send_metrics) {
    impl->loop = std::make_unique<collect::CollectionLoop>(loop_options, std::move(collectors),
                                                           impl->link.send_metrics);
  } else {
    impl->loop = std::make_unique<collect::CollectionLoop>(
        loop_options, std::move(collectors), [send](std::string frame) { return send(frame); });
  }
  impl->loop->Start();
  impl->jobs->Start();
  collect::jobs::JobShipperOptions shipper_options;
  shipper_options.node = options.node_name;
  shipper_options.compress = remote;
  // In-process, a snapshot costs a copy: often, so the jobs page keeps up
  // with the tracker.
  if (!remote) shipper_options.interval_ms = 2000;
  // A snapshot that reaches this process's alert engine has it evaluate at
  // once: a crash is news now, not at the next tick.
  alert::AlertEngine* alerts = impl->server.alerts.get();
  auto send_jobs = [send, alerts, impl](std::string_view frame) {
    Status st = send(frame);
    // Only a snapshot with news (a job started or ended): the periodic ones
    // wait for the engine's own schedule.
    if (alerts != nullptr && impl->jobs_changed.exchange(false)) alerts->Wake();
    return st;
  };
  impl->job_shipper =
      std::make_unique<collect::jobs::JobShipper>(impl->jobs.get(), shipper_options, send_jobs);
  impl->shipper_for_tracker = impl->job_shipper.get();
  impl->job_shipper->Start();
  if (!options.collect_logs) return;
  collect::logs::LogAgentOptions log_options = LogAgentOptionsFor(options);
  // The files of jobs that died before discovery could see them.
  collect::jobs::JobTracker* tracker = impl->jobs.get();
  log_options.extra_sources = [tracker] { return tracker->ShortLivedLogSources(); };
  // Each job run's lines and training series carry its id (`run`).
  log_options.run_of = [tracker](const discover::LogSource& s) { return tracker->RunIdOf(s); };
  log_options.refresh_runs = [tracker] { tracker->Refresh(/*timeout_ms=*/1500); };
  impl->log_agent =
      std::make_unique<collect::logs::LogAgent>(std::move(log_options), impl->link.send_logs);
  Status st = impl->log_agent->Start();
  if (!st.ok()) {
    // Metrics still work; say why logs do not.
    Logf(LogLevel::kError, "log collection not started: %s", st.ToString().c_str());
    impl->log_agent.reset();
  }
}

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
  }
  if (agent_side) {
    VIGIL_RETURN_IF_ERROR(OpenAgentLink(options, impl->server.ingester.get(), &impl->link));
    if (!server_side) AddAgentRoutes(options, started_ms, &impl->link, &router);
    // Jobs are found where they run; their verdict uses the stores when this
    // process has them (docs/jobs.md).
    collect::jobs::JobTrackerOptions jobs_options;
    jobs_options.run_spool_dir = paths.run_spool_dir();
    jobs_options.kernel_log = "/dev/kmsg";
    jobs_options.history_path = paths.job_history_file();
    // Process starts and exits as they happen (short-lived jobs, exit
    // statuses): the kernel's connector where permitted, else a poll;
    // VIGIL_PROC_EVENTS=poll forces the poll (docs/jobs.md "Short-lived jobs").
    jobs_options.watch_processes = true;
    // A job that started or ended is sent to the server at once.
    jobs_options.on_change = [impl = impl.get()] {
      impl->jobs_changed = true;
      if (auto* shipper = impl->shipper_for_tracker.load()) shipper->Wake();
    };
    const char* events = std::getenv("VIGIL_PROC_EVENTS");
    jobs_options.watch.use_connector = events == nullptr || std::string_view(events) != "poll";
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
    if (!server_side) collectors.push_back(std::make_unique<OutboxCollector>(&impl->link));
  }
  net::HttpServer::Options http_options;
  http_options.listen = options.listen;
  http_options.error_log = [](std::string_view msg) { Log(LogLevel::kWarn, msg); };
  impl->http = std::make_unique<net::HttpServer>(http_options, std::move(router));
  VIGIL_RETURN_IF_ERROR(impl->http->Start());

  impl->url = LocalUrl(options.listen, impl->http->bound_port());
  if (impl->server.alerts) impl->server.alerts->Start();

  RunState state{static_cast<int>(::getpid()), impl->url, options.listen, started_ms, kVersion};
  VIGIL_RETURN_IF_ERROR(env->WriteFileAtomic(paths.state_file(), FormatRunState(state)));

  if (agent_side) StartAgentSide(options, std::move(collectors), impl.get());
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
  impl_->link.Stop();  // after the last frames are queued
  impl_->http->Stop();
  if (impl_->server.alerts) impl_->server.alerts->Stop();  // before the stores close
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
