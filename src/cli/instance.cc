#include "cli/instance.h"

#include <unistd.h>

#include "api/http_server.h"
#include "api/query_routes.h"
#include "api/routes.h"
#include "api/web_routes.h"
#include "collect/metrics/loop.h"
#include "core/env.h"
#include "core/log.h"
#include "core/version.h"
#include "ingest/ingester.h"
#include "ship/transport.h"
#include "store/tsdb/db.h"

namespace vigil::cli {

struct Instance::Impl {
  InstanceOptions options;
  std::string url;
  // Declaration order is teardown order in reverse: the loop (agent side)
  // stops before the server side it feeds.
  std::unique_ptr<InstanceLock> lock;
  std::unique_ptr<tsdb::Db> db;
  std::unique_ptr<ingest::Ingester> ingester;
  std::unique_ptr<api::HttpServer> http;
  std::unique_ptr<ship::InProcessTransport> transport;
  std::unique_ptr<collect::CollectionLoop> loop;
  bool stopped = false;
};

// The URL a local client uses: a wildcard listen address is reached through
// loopback, and an IPv6 literal needs brackets.
std::string LocalUrl(const std::string& listen, uint16_t port) {
  std::string host = "127.0.0.1";
  auto addr = api::ParseListenAddress(listen);
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

Result<std::unique_ptr<Instance>> Instance::Start(
    const InstanceOptions& options,
    std::vector<std::unique_ptr<collect::MetricCollector>> collectors) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Env* env = Env::Default();
  const HomePaths& paths = options.paths;
  for (const std::string& dir : {paths.tsdb_dir(), paths.logs_dir(), paths.run_dir()}) {
    VIGIL_RETURN_IF_ERROR(env->CreateDirs(dir));
  }
  VIGIL_ASSIGN_OR_RETURN(impl->lock, InstanceLock::Acquire(paths));
  // A state file left by a killed instance names a dead pid and URL; with the
  // lock now ours, it must not be read as ours until we write the new one.
  (void)env->RemoveFile(paths.state_file());

  tsdb::Options db_options;
  db_options.dir = paths.tsdb_dir();
  auto db = tsdb::Db::Open(db_options);
  if (!db.ok())
    return db.status().WithContext("cannot open the metrics store in " + db_options.dir);
  impl->db = std::move(db).value();
  impl->ingester = std::make_unique<ingest::Ingester>(impl->db.get());

  int64_t started_ms = env->NowMillis();
  api::CoreRouteDeps deps;
  deps.info = {kVersion,       started_ms,        paths.home,
               options.listen, options.node_name, paths.data_dir()};
  deps.db = impl->db.get();
  deps.ingester = impl->ingester.get();
  api::Router router;
  api::AddCoreRoutes(&router, deps);
  api::AddQueryRoutes(&router, impl->db.get());
  api::AddWebRoutes(&router);
  api::HttpServer::Options http_options;
  http_options.listen = options.listen;
  http_options.error_log = [](std::string_view msg) { Log(LogLevel::kWarn, msg); };
  impl->http = std::make_unique<api::HttpServer>(http_options, std::move(router));
  VIGIL_RETURN_IF_ERROR(impl->http->Start());

  impl->url = LocalUrl(options.listen, impl->http->bound_port());

  RunState state{static_cast<int>(::getpid()), impl->url, options.listen, started_ms, kVersion};
  VIGIL_RETURN_IF_ERROR(env->WriteFileAtomic(paths.state_file(), FormatRunState(state)));

  ingest::Ingester* ingester = impl->ingester.get();
  impl->transport = std::make_unique<ship::InProcessTransport>(
      [ingester](std::string_view frame) { return ingester->Receive(frame); });
  collect::LoopOptions loop_options;
  loop_options.source = options.node_name;
  loop_options.interval_ms = options.interval_ms;
  ship::Transport* transport = impl->transport.get();
  impl->loop = std::make_unique<collect::CollectionLoop>(
      loop_options, std::move(collectors),
      [transport](std::string frame) { return transport->Send(frame); });
  impl->loop->Start();
  Logf(LogLevel::kInfo, "vigil %s started: %s, home %s, node %s", kVersion, impl->url.c_str(),
       paths.home.c_str(), options.node_name.c_str());
  return std::unique_ptr<Instance>(new Instance(std::move(impl)));
}

Instance::Instance(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Instance::~Instance() { Stop(); }

void Instance::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->loop->Stop();
  impl_->http->Stop();
  Status st = impl_->db->Close();
  if (!st.ok()) Logf(LogLevel::kError, "closing the metrics store: %s", st.ToString().c_str());
  (void)Env::Default()->RemoveFile(impl_->options.paths.state_file());
  impl_->lock.reset();
}

const std::string& Instance::url() const { return impl_->url; }

}  // namespace vigil::cli
