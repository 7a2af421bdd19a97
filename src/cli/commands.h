// One function per `vigil` subcommand (each in its own cmd_*.cc). main.cc
// parses flags into these option structs; a command returns the exit code.
#pragma once

#include <string>

namespace vigil::cli {

struct UpFlags {
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

int RunVersion();
const char* VersionString();

}  // namespace vigil::cli
