#include "api/push_routes.h"

#include <algorithm>

#include "api/params.h"
#include "core/strings.h"
#include "ingest/exposition.h"

namespace vigil::api {
namespace {

constexpr std::string_view kPrefix = "/metrics/job";

// RFC 4648 base64url (the Pushgateway's `@base64` values); '+' and '/' are
// accepted too, padding is optional.
Result<std::string> DecodeBase64Url(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || c == '+') return 62;
    if (c == '_' || c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) return InvalidArgument("invalid base64 in a grouping label value");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// The grouping labels of "/metrics/job/<job>{/<label>/<value>}", from the raw
// target so that an encoded '/' stays inside its value.
Result<wire::Labels> GroupingLabels(const net::HttpRequest& req) {
  std::string_view path = req.target;
  path = path.substr(0, path.find('?'));
  if (!StartsWith(path, kPrefix)) return InvalidArgument("not a push path");
  path.remove_prefix(kPrefix.size() - 3);  // "job/<job>/...": "job" is the first name
  std::vector<std::string_view> parts = Split(path, '/');
  if (!parts.empty() && parts.back().empty()) parts.pop_back();  // a trailing '/'
  if (parts.size() < 2 || parts.size() % 2 != 0) {
    return InvalidArgument("push path must be /metrics/job/<job>{/<label>/<value>}");
  }
  wire::Labels labels;
  for (size_t i = 0; i < parts.size(); i += 2) {
    VIGIL_ASSIGN_OR_RETURN(std::string name, net::PercentDecode(parts[i], false));
    VIGIL_ASSIGN_OR_RETURN(std::string value, net::PercentDecode(parts[i + 1], false));
    if (EndsWith(name, "@base64")) {
      name.resize(name.size() - 7);
      VIGIL_ASSIGN_OR_RETURN(value, DecodeBase64Url(value));
    }
    if (!net::IsValidLabelName(name) || name == wire::kMetricNameLabel) {
      return InvalidArgument("invalid grouping label name \"" + name + "\"");
    }
    if (value.size() > wire::kMaxLabelBytes) {
      return InvalidArgument("grouping label \"" + name + "\" is too long");
    }
    if (i == 0 && value.empty()) return InvalidArgument("the job name is empty");
    labels.push_back({std::move(name), std::move(value)});
  }
  return labels;
}

wire::MetricType TypeOf(std::string_view type) {
  if (type == "counter") return wire::MetricType::kCounter;
  if (type == "gauge") return wire::MetricType::kGauge;
  return wire::MetricType::kUnknown;
}

// Sets `label` in a sorted label set, replacing a value of the same name.
void Override(wire::Labels* labels, const wire::Label& label) {
  auto it =
      std::lower_bound(labels->begin(), labels->end(), label,
                       [](const wire::Label& a, const wire::Label& b) { return a.name < b.name; });
  if (it != labels->end() && it->name == label.name) {
    it->value = label.value;
  } else {
    labels->insert(it, label);
  }
}

net::HttpResponse Push(const PushRouteDeps& deps, const net::HttpRequest& req) {
  auto grouping = GroupingLabels(req);
  if (!grouping.ok()) return Error(400, "bad_data", grouping.status().message());
  // The group's series this request replaces and lacks stop answering now
  // (Ingester::PushGroup): a DELETE replaces every one with nothing; stored
  // history stays.
  const std::string group = wire::LabelsToString(*grouping);
  const int64_t now = deps.env->NowMillis();
  if (req.method == "DELETE") {
    wire::MetricBatch none;
    none.source = deps.node;
    none.pass_time_ms = now;
    Status st = deps.ingester->PushGroup(group, /*whole_group=*/true, &none);
    if (!st.ok()) return FromStatus(st);
    return net::HttpResponse::Text(202, "");
  }
  if (auto ct = req.Header("Content-Type");
      ct && ct->find("application/vnd.google.protobuf") != std::string_view::npos) {
    return Error(415, "bad_data",
                 "the protobuf push format is not supported: push the text format "
                 "(text/plain; version=0.0.4), as the Python client does");
  }
  ingest::ExpositionLimits limits;
  limits.max_bytes = deps.max_body_bytes;
  limits.max_samples = deps.max_samples;
  std::vector<ingest::ParsedFamily> families;
  auto samples = ingest::ParseExposition(req.body, &families, limits);
  if (!samples.ok()) return Error(400, "bad_data", samples.status().message());

  wire::MetricBatch batch;
  batch.source = deps.node;
  batch.pass_time_ms = now;  // lines with timestamps of their own are not the push's
  for (const ingest::ParsedFamily& f : families) {
    batch.families.push_back({f.name, TypeOf(f.type), f.help});
  }
  for (ingest::ParsedSample& s : *samples) {
    wire::Series series;
    series.labels = std::move(s.labels);
    for (const wire::Label& l : *grouping) Override(&series.labels, l);
    series.samples.push_back({s.timestamp_ms.value_or(now), s.value});
    batch.series.push_back(std::move(series));
  }
  // PUT replaces the whole group, POST the metrics of the names it pushes
  // (the Pushgateway's rules).
  Status st = deps.ingester->PushGroup(group, /*whole_group=*/req.method == "PUT", &batch);
  if (!st.ok()) return FromStatus(st);
  return net::HttpResponse::Text(200, "");
}

}  // namespace

void AddPushRoutes(net::Router* router, PushRouteDeps deps) {
  net::RouteOptions options;
  options.max_body_bytes = deps.max_body_bytes;
  auto handler = [deps](const net::HttpRequest& req) { return Push(deps, req); };
  for (const char* method : {"PUT", "POST", "DELETE"}) {
    router->HandlePrefix(method, std::string(kPrefix) + "/", handler, options);
  }
}

}  // namespace vigil::api
