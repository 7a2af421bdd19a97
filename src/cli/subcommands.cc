#include "cli/subcommands.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/commands.h"

namespace vigil::cli {
namespace {

// The flags a subcommand fills live as long as its run closure: CLI11 writes
// into them while parsing, the closure reads them after. (shared_ptr: both
// the closure's copies and the Subcommand share one set of flags.)
template <typename Flags>
std::shared_ptr<Flags> NewFlags() {
  return std::make_shared<Flags>();
}

void AddHomeAndServer(CLI::App* cmd, std::string* home, std::string* server) {
  cmd->add_option("--home", *home, "State directory of the instance");
  cmd->add_option("--server", *server,
                  "URL of a Vigil instance (default: $VIGIL_URL, else the one of --home)");
}

// `up`, `server` and `agent` take the same flags; they differ in what runs.
Subcommand AddUpLike(CLI::App* app, const char* name, const char* about, const char* listen,
                     const char* role) {
  auto up = NewFlags<UpFlags>();
  up->listen = listen;
  CLI::App* cmd = app->add_subcommand(name, about);
  cmd->add_flag("--foreground", up->foreground, "Run in this terminal; stop with Ctrl-C");
  cmd->add_option("--listen", up->listen, "HTTP address to listen on")->capture_default_str();
  cmd->add_option("--home", up->home,
                  "State directory (default: $VIGIL_HOME, /var/lib/vigil for root, "
                  "~/.local/share/vigil otherwise)");
  cmd->add_option("--node", up->node, "Node name recorded on every series (default: hostname)");
  cmd->add_option("--interval-ms", up->interval_ms, "Metric collection period in milliseconds")
      ->check(CLI::Range(100, 60000))
      ->capture_default_str();
  cmd->add_flag("--no-logs", up->no_logs, "Do not collect logs");
  cmd->add_flag("--daemon-child", up->daemon_child)->group("");  // internal
  cmd->add_option("--role", up->role)->group("");                // internal
  std::string fixed_role = role;
  if (fixed_role == "agent") {
    cmd->add_option("--server", up->server, "URL of the Vigil server (http://host:9300)")
        ->required();
  }
  return {cmd, [up, fixed_role] {
            // The background child of `up`/`server` is started with --role.
            if (fixed_role == "agent" || (fixed_role == "server" && up->role == "all")) {
              up->role = fixed_role;
            }
            return RunUp(*up);
          }};
}

Subcommand AddDown(CLI::App* app) {
  auto down = NewFlags<DownFlags>();
  CLI::App* cmd = app->add_subcommand("down", "Stop the Vigil instance of this home");
  cmd->add_option("--home", down->home, "State directory of the instance");
  cmd->add_option("--timeout", down->timeout_s, "Seconds to wait for a clean stop")
      ->capture_default_str();
  return {cmd, [down] { return RunDown(*down); }};
}

Subcommand AddStatus(CLI::App* app) {
  auto status = NewFlags<StatusFlags>();
  CLI::App* cmd =
      app->add_subcommand("status",
                          "Show what runs, since when, data size and what was detected (or, for an "
                          "agent, what waits in its outbox)");
  AddHomeAndServer(cmd, &status->home, &status->server);
  cmd->add_flag("--json", status->json, "Print the raw JSON status");
  return {cmd, [status] { return RunStatus(*status); }};
}

Subcommand AddDemo(CLI::App* app) {
  auto demo = NewFlags<DemoFlags>();
  CLI::App* cmd = app->add_subcommand(
      "demo", "Run Vigil on 8 simulated H100 GPUs (no GPU needed), in this terminal");
  cmd->add_option("--listen", demo->listen, "HTTP address to listen on")->capture_default_str();
  cmd->add_option("--home", demo->home, "State directory (default: the normal one + \"-demo\")");
  cmd->add_option("--node", demo->node, "Node name (default: hostname)");
  return {cmd, [demo] { return RunDemo(*demo); }};
}

Subcommand AddLogs(CLI::App* app) {
  auto logs = NewFlags<LogsFlags>();
  CLI::App* cmd = app->add_subcommand(
      "logs", "Print log lines of every job, container and `vigil run` on this node");
  cmd->add_option("query", logs->query,
                  "Words to search for, or LogQL: '{job=\"train\"} |= \"loss\"'");
  cmd->add_flag("-f,--follow", logs->follow, "Keep printing new lines as they arrive");
  cmd->add_option("--since", logs->since, "How far back to look (30s, 10m, 2h, 7d)")
      ->capture_default_str();
  cmd->add_option("--until", logs->until, "End of the time range (RFC3339 or Unix seconds)");
  cmd->add_option("-n,--lines", logs->lines, "Number of lines (the newest); any number")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--all", logs->all, "Every line in the range, oldest first (ignores -n)");
  cmd->add_option("-C,--context", logs->context, "Lines of context around each match")
      ->check(CLI::Range(0, 1000));
  AddHomeAndServer(cmd, &logs->home, &logs->server);
  return {cmd, [logs] { return RunLogs(*logs); }};
}

Subcommand AddJobs(CLI::App* app) {
  auto jobs = NewFlags<JobsFlags>();
  CLI::App* cmd = app->add_subcommand(
      "jobs", "List the training and inference jobs on this node: state, framework, why it ended");
  AddHomeAndServer(cmd, &jobs->home, &jobs->server);
  cmd->add_flag("--json", jobs->json, "Print the raw JSON (GET /api/v1/jobs)");
  return {cmd, [jobs] { return RunJobs(*jobs); }};
}

Subcommand AddAlerts(CLI::App* app) {
  auto alerts = NewFlags<AlertsFlags>();
  CLI::App* cmd = app->add_subcommand(
      "alerts", "List the firing and pending alerts (presets need no setup: docs/alerts.md)");
  AddHomeAndServer(cmd, &alerts->home, &alerts->server);
  cmd->add_flag("--json", alerts->json, "Print the alert records as JSON (an array)");
  cmd->add_flag("--all", alerts->all, "Also the resolved ones (history, newest first)");
  return {cmd, [alerts] { return RunAlerts(*alerts); }};
}

Subcommand AddRules(CLI::App* app) {
  auto rules = NewFlags<RulesFlags>();
  CLI::App* cmd = app->add_subcommand(
      "rules",
      "The alert rules in effect: ls (thresholds, state) or export (a Prometheus rule file)");
  cmd->add_option("action", rules->action, "ls or export")
      ->check(CLI::IsMember({"ls", "export"}))
      ->capture_default_str();
  cmd->add_option("--format", rules->format, "export: prometheus")
      ->check(CLI::IsMember({"prometheus"}))
      ->capture_default_str();
  cmd->add_flag("--json", rules->json, "ls: print GET /api/v1/rules as it is");
  AddHomeAndServer(cmd, &rules->home, &rules->server);
  return {cmd, [rules] { return RunRules(*rules); }};
}

Subcommand AddNotify(CLI::App* app) {
  auto notify = NewFlags<NotifyFlags>();
  CLI::App* cmd = app->add_subcommand(
      "notify", "Notification channels: test CHANNEL sends a test message through one");
  cmd->add_option("action", notify->action, "test")->check(CLI::IsMember({"test"}))->required();
  cmd->add_option("channel", notify->channel, "a channel's name in notify.channels")->required();
  cmd->add_option("--home", notify->home, "Vigil's home (default: $VIGIL_HOME or ~/.vigil)");
  return {cmd, [notify] { return RunNotify(*notify); }};
}

Subcommand AddSilence(CLI::App* app) {
  auto silence = NewFlags<SilenceFlags>();
  CLI::App* cmd = app->add_subcommand(
      "silence", "Mute matching alerts for a while: add, ls or rm (Alertmanager's silences)");
  cmd->require_subcommand(1);
  CLI::App* add = cmd->add_subcommand(
      "add", "Silence the alerts every matcher matches; prints the silence's id");
  add->add_option("matchers", silence->matchers,
                  "name=value, name!=value, name=~regex or name!~regex (regexes match the whole "
                  "value), e.g. node=gpu-07 alertname=gpu_underutilized")
      ->required();
  add->add_option("-d,--duration", silence->duration, "How long, from now: 30m, 2h, 1h30m, 7d")
      ->capture_default_str();
  add->add_option("-c,--comment", silence->comment, "Why (shown by vigil silence ls)");
  add->add_option("--author", silence->author, "Who (default: $USER)");
  AddHomeAndServer(add, &silence->home, &silence->server);
  CLI::App* ls = cmd->add_subcommand("ls", "List the silences: active, pending, expired (a week)");
  ls->add_flag("--json", silence->json, "Print GET /api/v1/silences as it is");
  AddHomeAndServer(ls, &silence->home, &silence->server);
  CLI::App* rm = cmd->add_subcommand("rm", "Expire a silence now");
  rm->add_option("id", silence->id, "The silence's id (vigil silence ls)")->required();
  AddHomeAndServer(rm, &silence->home, &silence->server);
  return {cmd, [silence, add, rm] {
            silence->action = *add ? "add" : *rm ? "rm" : "ls";
            return RunSilence(*silence);
          }};
}

Subcommand AddInspectLog(CLI::App* app) {
  auto inspect = NewFlags<InspectLogFlags>();
  CLI::App* cmd = app->add_subcommand(
      "inspect-log",
      "Print what Vigil extracts from a training log (metric values, failure events), one JSON "
      "object per line: answers \"why is my loss not showing?\"");
  cmd->add_option("file", inspect->path, "Log file to read, or - for standard input")->required();
  cmd->footer(
      "Each output line is {\"line\": N, \"metric\": NAME, \"value\": V[, \"step\": S]} for a "
      "metric value or {\"line\": N, \"event\": KIND, ...} for an event (cuda_oom, nccl_error, "
      "nccl_timeout, device_assert, cuda_error, no_kernel_image, driver_too_old, traceback, "
      "nan_loss, loss_overflow, dataloader_killed, segfault, oom_killed, xid, completed). "
      "A value not printed here is not seen by Vigil either. See docs/training-events.md.");
  return {cmd, [inspect] { return RunInspectLog(*inspect); }};
}

// `env` takes its own subcommands (cmd_env.cc's table, which others extend
// without touching CLI11): everything after `env` goes to RunEnv as it is.
Subcommand AddEnv(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "env", "GPU software environments: the driver/CUDA/cuDNN/framework compatibility matrix");
  cmd->prefix_command();
  cmd->footer(EnvUsage());
  return {cmd, [cmd] { return RunEnv(cmd->remaining()); }};
}

}  // namespace

std::vector<Subcommand> AddSubcommands(CLI::App* app) {
  std::vector<Subcommand> out;
  out.push_back(AddUpLike(app, "up",
                          "Start Vigil on this machine (in the background unless --foreground)",
                          "127.0.0.1:9300", "all"));
  out.push_back(AddUpLike(
      app, "server", "Start only Vigil's server (stores, API, UI) for agents on other machines",
      "127.0.0.1:9300", "server"));
  out.push_back(
      AddUpLike(app, "agent",
                "Start only Vigil's agent, shipping this machine's metrics and logs to a server",
                "127.0.0.1:9302", "agent"));
  out.push_back(AddDown(app));
  out.push_back(AddStatus(app));
  out.push_back(AddDemo(app));
  out.push_back(AddLogs(app));
  out.push_back(AddJobs(app));
  out.push_back(AddAlerts(app));
  out.push_back(AddRules(app));
  out.push_back(AddSilence(app));
  out.push_back(AddNotify(app));
  out.push_back(AddInspectLog(app));
  out.push_back(AddEnv(app));
  // `run` takes the rest of the line as the command, verbatim: main() parses
  // it before CLI11; it is only described here, for --help.
  app->add_subcommand("run",
                      "Run a command, show its output as usual and record it for Vigil's logs: "
                      "vigil run [--name NAME] [--home DIR] -- CMD ARGS...");
  out.push_back({app->add_subcommand("version", "Print the version"), [] { return RunVersion(); }});
  return out;
}

}  // namespace vigil::cli
