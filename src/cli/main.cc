// vigil: the one binary. Composition root: the only place that sees both the
// agent side and the server side (DESIGN.md "Data flow").
#include <malloc.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  // glibc gives each thread that allocates its own arena and keeps freed
  // memory there; two arenas keep a small agent's resident memory small.
  mallopt(M_ARENA_MAX, 2);
  // Every followed log file holds a descriptor: the soft limit's usual 1024
  // is too few for a busy node; the hard limit is what the admin allows.
  if (struct rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 65536);
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "run") {
    auto run = ParseRunArgs(argc - 2, argv + 2);
    if (!run.ok()) {
      std::fprintf(stderr, "vigil run: %s\n", run.status().message().c_str());
      return 2;
    }
    return RunRun(*run);
  }
  CLI::App app{"Vigil: zero-config observability for GPU machines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return std::string("vigil ") + VersionString(); });

  // `up`, `server` and `agent` share their flags; they differ in what runs.
  UpFlags up;
  up.listen.clear();  // the default depends on the subcommand (below)
  auto add_up_flags = [&up](CLI::App* cmd, const char* default_listen) {
    cmd->add_flag("--foreground", up.foreground, "Run in this terminal; stop with Ctrl-C");
    cmd->add_option("--listen", up.listen,
                    std::string("HTTP address to listen on (default: ") + default_listen + ")");
    cmd->add_option("--home", up.home,
                    "State directory (default: $VIGIL_HOME, /var/lib/vigil for root, "
                    "~/.local/share/vigil otherwise)");
    cmd->add_option("--node", up.node, "Node name recorded on every series (default: hostname)");
    cmd->add_option("--interval-ms", up.interval_ms, "Metric collection period in milliseconds")
        ->check(CLI::Range(100, 60000))
        ->capture_default_str();
    cmd->add_flag("--no-logs", up.no_logs, "Do not collect logs");
    cmd->add_flag("--daemon-child", up.daemon_child)->group("");  // internal
    cmd->add_option("--role", up.role)->group("");                // internal
  };
  auto* up_cmd = app.add_subcommand(
      "up", "Start Vigil on this machine (in the background unless --foreground)");
  add_up_flags(up_cmd, "127.0.0.1:9300");
  auto* server_cmd = app.add_subcommand(
      "server", "Start only Vigil's server (stores, API, UI) for agents on other machines");
  add_up_flags(server_cmd, "127.0.0.1:9300");
  auto* agent_cmd = app.add_subcommand(
      "agent", "Start only Vigil's agent, shipping this machine's metrics and logs to a server");
  add_up_flags(agent_cmd, "127.0.0.1:9302");
  agent_cmd->add_option("--server", up.server, "URL of the Vigil server (http://host:9300)")
      ->required();

  DownFlags down;
  auto* down_cmd = app.add_subcommand("down", "Stop the Vigil instance of this home");
  down_cmd->add_option("--home", down.home, "State directory of the instance");
  down_cmd->add_option("--timeout", down.timeout_s, "Seconds to wait for a clean stop")
      ->capture_default_str();

  StatusFlags status;
  auto* status_cmd =
      app.add_subcommand("status", "Show what runs, since when, data size and what was detected");
  status_cmd->add_option("--home", status.home, "State directory of the instance");
  status_cmd->add_option("--server", status.server,
                         "URL of a Vigil instance (default: $VIGIL_URL, else the one of --home)");
  status_cmd->add_flag("--json", status.json, "Print the raw JSON status");

  DemoFlags demo;
  auto* demo_cmd = app.add_subcommand(
      "demo", "Run Vigil on 8 simulated H100 GPUs (no GPU needed), in this terminal");
  demo_cmd->add_option("--listen", demo.listen, "HTTP address to listen on")->capture_default_str();
  demo_cmd->add_option("--home", demo.home,
                       "State directory (default: the normal one + \"-demo\")");
  demo_cmd->add_option("--node", demo.node, "Node name (default: hostname)");

  LogsFlags logs;
  auto* logs_cmd = app.add_subcommand(
      "logs", "Print log lines of every job, container and `vigil run` on this node");
  logs_cmd->add_option("query", logs.query,
                       "Words to search for, or LogQL: '{job=\"train\"} |= \"loss\"'");
  logs_cmd->add_flag("-f,--follow", logs.follow, "Keep printing new lines as they arrive");
  logs_cmd->add_option("--since", logs.since, "How far back to look (30s, 10m, 2h, 7d)")
      ->capture_default_str();
  logs_cmd->add_option("--until", logs.until, "End of the time range (RFC3339 or Unix seconds)");
  logs_cmd->add_option("-n,--lines", logs.lines, "Number of lines (the newest)")
      ->check(CLI::Range(1, 5000))
      ->capture_default_str();
  logs_cmd->add_option("-C,--context", logs.context, "Lines of context around each match")
      ->check(CLI::Range(0, 1000));
  logs_cmd->add_option("--home", logs.home, "State directory of the instance");
  logs_cmd->add_option("--server", logs.server,
                       "URL of a Vigil instance (default: $VIGIL_URL, else the one of --home)");

  JobsFlags jobs;
  auto* jobs_cmd = app.add_subcommand(
      "jobs", "List the training and inference jobs on this node: state, framework, why it ended");
  jobs_cmd->add_option("--home", jobs.home, "State directory of the instance");
  jobs_cmd->add_option("--server", jobs.server,
                       "URL of a Vigil instance (default: $VIGIL_URL, else the one of --home)");
  jobs_cmd->add_flag("--json", jobs.json, "Print the raw JSON (GET /api/v1/jobs)");

  InspectLogFlags inspect;
  auto* inspect_cmd = app.add_subcommand(
      "inspect-log",
      "Print what Vigil extracts from a training log (metric values, failure events), one JSON "
      "object per line: answers \"why is my loss not showing?\"");
  inspect_cmd->add_option("file", inspect.path, "Log file to read, or - for standard input")
      ->required();
  inspect_cmd->footer(
      "Each output line is {\"line\": N, \"metric\": NAME, \"value\": V[, \"step\": S]} for a "
      "metric value or {\"line\": N, \"event\": KIND, ...} for an event (cuda_oom, nccl_error, "
      "nccl_timeout, device_assert, cuda_error, no_kernel_image, driver_too_old, traceback, "
      "nan_loss, loss_overflow, dataloader_killed, segfault, oom_killed, xid, completed). "
      "A value not printed here is not seen by Vigil either. See docs/training-events.md.");

  // `run` takes the rest of the line as the command, verbatim: it is parsed
  // before CLI11 (below) and only described here for --help.
  app.add_subcommand("run",
                     "Run a command, show its output as usual and record it for Vigil's logs: "
                     "vigil run [--name NAME] [--home DIR] -- CMD ARGS...");

  app.add_subcommand("version", "Print the version");

  CLI11_PARSE(app, argc, argv);

  if (up.listen.empty()) up.listen = *agent_cmd ? "127.0.0.1:9302" : "127.0.0.1:9300";
  if (*up_cmd) return RunUp(up);
  if (*server_cmd) {
    if (up.role == "all") up.role = "server";
    return RunUp(up);
  }
  if (*agent_cmd) {
    up.role = "agent";
    return RunUp(up);
  }
  if (*down_cmd) return RunDown(down);
  if (*status_cmd) return RunStatus(status);
  if (*demo_cmd) return RunDemo(demo);
  if (*logs_cmd) return RunLogs(logs);
  if (*inspect_cmd) return RunInspectLog(inspect);
  if (*jobs_cmd) return RunJobs(jobs);
  return RunVersion();
}
