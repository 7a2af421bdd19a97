// `vigil status`: asks the running instance for /api/v1/status and prints it
// for a person (or raw with --json).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/home.h"
#include "core/strings.h"
#include "net/http_client.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) { return JsonString(j, key); }
double Num(const json& j, const char* key) { return JsonNumber(j, key); }

void PrintGpu(const json& gpu) {
  std::string state = Str(gpu, "state");
  if (state == "ok") {
    std::printf("GPUs:      %zu detected, driver %s, CUDA %s\n",
                gpu.value("gpus", json::array()).size(), Str(gpu, "driver_version").c_str(),
                Str(gpu, "cuda_version").c_str());
    for (const auto& g : gpu.value("gpus", json::array())) {
      std::printf("           gpu %s  %s  %s\n", Str(g, "gpu").c_str(), Str(g, "modelName").c_str(),
                  Str(g, "UUID").c_str());
    }
  } else if (state == "no_driver") {
    std::printf("GPUs:      none (no NVIDIA driver found: libnvidia-ml.so.1 is not installed)\n");
  } else if (state == "starting") {
    std::printf(
        "GPUs:      NVIDIA driver found, still initialising (this can take a while "
        "without persistence mode)\n");
  } else if (state.empty()) {
    std::printf("GPUs:      not reported yet\n");
  } else {
    std::printf("GPUs:      NVIDIA driver found but not working (%s)%s%s\n", state.c_str(),
                gpu.contains("message") ? ": " : "", Str(gpu, "message").c_str());
  }
  if (gpu.contains("responsive") && !gpu["responsive"].get<bool>()) {
    std::printf(
        "           WARNING: the NVIDIA driver is not responding; GPU metrics are paused "
        "until it does (check `dmesg` for Xid errors)\n");
  }
}

void PrintHuman(const json& s, const std::string& url) {
  std::printf("Vigil %s is running at %s (pid %d)\n", Str(s, "version").c_str(), url.c_str(),
              static_cast<int>(Num(s, "pid")));
  std::printf("Node:      %s\n", Str(s, "node").c_str());
  std::printf("Up:        %s (since %s)\n",
              HumanDuration(static_cast<int64_t>(Num(s, "uptime_seconds"))).c_str(),
              Str(s, "started_at").c_str());
  std::printf("Home:      %s\n", Str(s, "home").c_str());
  const json& t = s.value("tsdb", json::object());
  std::printf("Data:      %s on disk, %.0f series, %.0f samples since start\n",
              HumanBytes(static_cast<uint64_t>(Num(s, "data_bytes"))).c_str(), Num(t, "series"),
              Num(t, "samples_appended"));
  if (s.contains("logs")) {
    const json& l = s["logs"];
    std::printf("Logs:      %.0f streams, %.0f lines stored, %s on disk\n", Num(l, "streams"),
                Num(l, "lines"), HumanBytes(static_cast<uint64_t>(Num(l, "disk_bytes"))).c_str());
  }
  PrintGpu(s.value("gpu", json::object()));
  for (const auto& c : s.value("collectors", json::array())) {
    bool ok = c.value("success", false);
    std::printf("Collector: %-8s %s (last pass %.0f ms)\n", Str(c, "name").c_str(),
                ok ? "ok" : "FAILING", Num(c, "duration_seconds") * 1000);
  }
}

// `vigil agent`: where it ships and what waits in its outboxes. A dropped
// frame is said plainly: it is data that never reached the server.
void PrintAgent(const json& s, const std::string& url) {
  std::printf("Vigil %s agent is running at %s (pid %d)\n", Str(s, "version").c_str(), url.c_str(),
              static_cast<int>(Num(s, "pid")));
  std::printf("Node:      %s\n", Str(s, "node").c_str());
  std::printf("Server:    %s\n", Str(s, "server_url").c_str());
  std::printf("Home:      %s\n", Str(s, "home").c_str());
  for (const auto& o : s.value("outboxes", json::array())) {
    const auto queued = static_cast<uint64_t>(Num(o, "queued_frames"));
    std::printf("Outbox:    %-7s %llu frames (%s) waiting, %.0f sent", Str(o, "name").c_str(),
                static_cast<unsigned long long>(queued),
                HumanBytes(static_cast<uint64_t>(Num(o, "queued_bytes"))).c_str(),
                Num(o, "sent_frames"));
    if (Num(o, "dropped_frames") > 0) {
      std::printf(", DROPPED %.0f oldest frames (%s): the outbox was full",
                  Num(o, "dropped_frames"),
                  HumanBytes(static_cast<uint64_t>(Num(o, "dropped_bytes"))).c_str());
    }
    std::printf("\n");
    if (queued > 0 && !Str(o, "last_error").empty()) {
      std::printf("           the server is not taking them: %s\n", Str(o, "last_error").c_str());
    }
  }
}

// The delivery log's counts, and each failing channel with its last
// refusal (docs/notify.md "Delivery log"). Says nothing when the instance
// has no alert engine (the route is missing) or nothing was ever sent.
void PrintNotifications(const std::string& base) {
  auto resp = net::HttpGet(base + "/api/v1/notifications?limit=0", std::chrono::seconds(5));
  if (!resp.ok() || resp->status != 200) return;
  json j = json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return;
  const json& d = j.value("data", json::object());
  const json& c = d.value("counts", json::object());
  double total = 0;
  for (const auto& [state, n] : c.items()) total += n.is_number() ? n.get<double>() : 0;
  if (total == 0) return;
  std::printf("Notify:    %.0f delivered, %.0f pending, %.0f failed, %.0f capped\n",
              Num(c, "delivered"), Num(c, "pending"), Num(c, "failed"), Num(c, "capped"));
  for (const auto& ch : d.value("channels", json::array())) {
    if (!ch.value("failing", false)) continue;
    const json& cc = ch.value("counts", json::object());
    std::printf("           channel %s FAILING (%.0f pending, %.0f failed): %s\n",
                Str(ch, "name").c_str(), Num(cc, "pending"), Num(cc, "failed"),
                Str(ch, "last_error").c_str());
  }
}

}  // namespace

int RunStatus(const StatusFlags& flags) {
  auto url = ResolveServerUrl(flags.server, flags.home);
  if (!url.ok()) {
    std::printf("%s\n", url.status().message().c_str());
    return 3;  // LSB "program is not running"
  }
  const std::string& base = *url;
  auto resp = net::HttpGet(base + "/api/v1/status", std::chrono::seconds(5));
  if (!resp.ok()) {
    std::fprintf(stderr, "cannot reach Vigil at %s: %s\n", base.c_str(),
                 resp.status().ToString().c_str());
    return 1;
  }
  if (resp->status != 200) {
    std::fprintf(stderr, "Vigil at %s answered %d: %s\n", base.c_str(), resp->status,
                 resp->body.c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", resp->body.c_str());
    return 0;
  }
  json s = json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded() || !s.is_object()) {
    std::fprintf(stderr, "Vigil at %s sent a status that is not JSON\n", base.c_str());
    return 1;
  }
  if (Str(s, "role") == "agent") {
    PrintAgent(s, base);
  } else {
    PrintHuman(s, base);
    PrintNotifications(base);
  }
  return 0;
}

}  // namespace vigil::cli
