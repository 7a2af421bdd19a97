// One function per `vigil` subcommand (each in its own cmd_*.cc). main.cc
// parses flags into these option structs; a command returns the exit code.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace vigil::cli {

struct UpFlags {
  // "all" (`vigil up`), "server" (`vigil server`) or "agent" (`vigil agent`).
  std::string role = "all";
  std::string server;    // agent: the server's URL
  bool no_logs = false;  // do not collect logs
  bool foreground = false;
  bool daemon_child = false;  // internal: the background process `up` starts
  std::string listen = "127.0.0.1:9300";
  std::string home;
  std::string node;
  int interval_ms = 1000;
};
int RunUp(const UpFlags& flags);

struct DownFlags {
  std::string home;
  int timeout_s = 30;
};
int RunDown(const DownFlags& flags);

struct StatusFlags {
  std::string home;
  std::string server;  // URL of an instance; overrides --home
  bool json = false;
};
int RunStatus(const StatusFlags& flags);

struct DemoFlags {
  // Beside a real instance's 9300, so the demo can run next to `vigil up`.
  std::string listen = "127.0.0.1:9301";
  std::string home;  // default: the normal home with "-demo" appended
  std::string node;
};
int RunDemo(const DemoFlags& flags);

struct LogsFlags {
  std::string home;
  std::string server;  // URL of an instance; overrides --home
  bool follow = false;
  std::string since = "1h";
  std::string until;    // RFC3339 or Unix seconds; default now
  int64_t lines = 100;  // any number: the CLI pages through the API's 5000-line cap
  bool all = false;     // every line in the range, oldest first, streamed
  int context = 0;
  std::string query;  // LogQL or plain words
};
int RunLogs(const LogsFlags& flags);

struct JobsFlags {
  std::string home;
  std::string server;  // URL of an instance; overrides --home
  bool json = false;
};
int RunJobs(const JobsFlags& flags);

struct AlertsFlags {
  std::string home;
  std::string server;
  bool json = false;
  bool all = false;  // add the resolved history
};
int RunAlerts(const AlertsFlags& flags);

struct RulesFlags {
  std::string home;
  std::string server;
  std::string action = "ls";          // ls | export
  std::string format = "prometheus";  // export
  bool json = false;
};
int RunRules(const RulesFlags& flags);

struct NotifyFlags {
  std::string home;
  std::string action = "test";  // test
  std::string channel;
};
int RunNotify(const NotifyFlags& flags);

// `vigil silence add|ls|rm` (alert/silence.h): mute matching alerts for a time.
struct SilenceFlags {
  std::string home;
  std::string server;
  std::string action;                 // add | ls | rm
  std::vector<std::string> matchers;  // add: name=value, name!=value, name=~re, name!~re
  std::string duration = "2h";        // add
  std::string comment;                // add
  std::string author;                 // add: createdBy; default $USER
  std::string id;                     // rm
  bool json = false;                  // ls
};
int RunSilence(const SilenceFlags& flags);
// The POST /api/v1/silences body `vigil silence add` sends. InvalidArgument
// for a bad matcher or duration, before anything is sent.
Result<std::string> SilenceAddBody(const SilenceFlags& flags);

struct RunFlags {
  std::string name;  // job name; default: from the command line ("python train.py" -> train)
  std::string home;
  std::vector<std::string> command;
};
int RunRun(const RunFlags& flags);
// [--name NAME] [--home DIR] [--] CMD ARGS...: options end at "--" or at the
// first argument that is not one of them.
Result<RunFlags> ParseRunArgs(int argc, char** argv);

// `vigil inspect-log FILE|-`: what Vigil reads from a training log.
struct InspectLogFlags {
  std::string path;  // "-" for standard input
};
int RunInspectLog(const InspectLogFlags& flags);

// `vigil env SUBCOMMAND ...` (cmd_env.cc): `args` are the words after `env`.
int RunEnv(const std::vector<std::string>& args);
std::string EnvUsage();  // the subcommands, for `vigil env --help`

int RunVersion();
const char* VersionString();

}  // namespace vigil::cli
