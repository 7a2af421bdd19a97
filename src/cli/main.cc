// vigil: the one binary. Composition root: the only place that sees both the
// agent side and the server side (DESIGN.md "Data flow").
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  CLI::App app{"Vigil: zero-config observability for GPU machines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return std::string("vigil ") + VersionString(); });

  UpFlags up;
  auto* up_cmd = app.add_subcommand(
      "up", "Start Vigil on this machine (in the background unless --foreground)");
  up_cmd->add_flag("--foreground", up.foreground, "Run in this terminal; stop with Ctrl-C");
  up_cmd->add_option("--listen", up.listen, "HTTP address to listen on")->capture_default_str();
  up_cmd->add_option("--home", up.home,
                     "State directory (default: $VIGIL_HOME, /var/lib/vigil for root, "
                     "~/.local/share/vigil otherwise)");
  up_cmd->add_option("--node", up.node, "Node name recorded on every series (default: hostname)");
  up_cmd->add_option("--interval-ms", up.interval_ms, "Metric collection period in milliseconds")
      ->check(CLI::Range(100, 60000))
      ->capture_default_str();
  up_cmd->add_flag("--daemon-child", up.daemon_child)->group("");  // internal

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

  app.add_subcommand("version", "Print the version");

  CLI11_PARSE(app, argc, argv);

  if (*up_cmd) return RunUp(up);
  if (*down_cmd) return RunDown(down);
  if (*status_cmd) return RunStatus(status);
  if (*demo_cmd) return RunDemo(demo);
  return RunVersion();
}
