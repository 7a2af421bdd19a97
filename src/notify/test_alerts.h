// Test alerts shared by the channels' unit tests: a critical GPU temperature
// alert on gpu-07 and a group of them, as the engine hands them over.
#pragma once

#include <string>

#include "alert/notification.h"

namespace vigil::notify::testing {

inline alert::Alert Firing(const std::string& gpu, alert::Severity s = alert::Severity::kCritical) {
  alert::Alert a;
  a.id = "a1b2c3d4e5f60718";
  a.rule = "gpu_temperature_high";
  a.severity = s;
  a.state = alert::AlertState::kFiring;
  a.labels = {{"UUID", "GPU-1"},  {"alertname", "gpu_temperature_high"},
              {"gpu", gpu},       {"modelName", "NVIDIA H100 80GB HBM3"},
              {"node", "gpu-07"}, {"severity", "critical"}};
  a.value = 95;
  a.threshold = 90;
  a.fired_at_ms = 1'764'641'139'000;
  a.summary_en = "GPU " + gpu + " on gpu-07 at 95 °C (alert at 90 °C)";
  a.summary_zh = "gpu-07 上的 GPU " + gpu + " 温度 95 °C（告警阈值 90 °C）";
  return a;
}

// `alerts` firing alerts on GPUs 0, 1, ... of gpu-07.
inline alert::Notification Group(int alerts, const std::string& group_key = "im/node=gpu-07") {
  alert::Notification n;
  n.receiver = "im";
  n.group_key = group_key;
  n.group_labels = {{"node", "gpu-07"}};
  n.external_url = "http://vigil.example:9300";
  for (int i = 0; i < alerts; ++i) n.alerts.push_back(Firing(std::to_string(i)));
  return n;
}

}  // namespace vigil::notify::testing
