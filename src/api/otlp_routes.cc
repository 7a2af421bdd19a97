#include "api/otlp_routes.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "ingest/otlp.h"

namespace vigil::api {
namespace {

// gRPC status codes used in google.rpc.Status bodies.
constexpr int kInvalidArgument = 3;
constexpr int kResourceExhausted = 8;
constexpr int kUnimplemented = 12;
constexpr int kUnavailable = 14;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The media type without parameters ("application/json; charset=utf-8").
std::optional<ingest::otlp::Encoding> EncodingOf(std::string_view content_type) {
  std::string type = Lower(Trim(content_type.substr(0, content_type.find(';'))));
  if (type == "application/x-protobuf" || type == "application/protobuf") {
    return ingest::otlp::Encoding::kProtobuf;
  }
  if (type == "application/json") return ingest::otlp::Encoding::kJson;
  return std::nullopt;
}

const char* MediaType(ingest::otlp::Encoding e) {
  return e == ingest::otlp::Encoding::kJson ? "application/json" : "application/x-protobuf";
}

net::HttpResponse Reply(ingest::otlp::Encoding e, int http_status, std::string body) {
  net::HttpResponse r;
  r.status = http_status;
  r.content_type = MediaType(e);
  r.body = std::move(body);
  return r;
}

net::HttpResponse Failure(ingest::otlp::Encoding e, int http_status, int grpc_code,
                          std::string_view msg) {
  return Reply(e, http_status, ingest::otlp::EncodeStatus(e, grpc_code, msg));
}

net::HttpResponse Export(const OtlpRouteDeps& deps, const net::HttpRequest& req) {
  std::string_view content_type = req.Header("Content-Type").value_or("");
  std::optional<ingest::otlp::Encoding> enc = EncodingOf(content_type);
  if (!enc) {
    return Failure(ingest::otlp::Encoding::kJson, 415, kUnimplemented,
                   "unsupported Content-Type '" + std::string(content_type) +
                       "': send application/x-protobuf or application/json");
  }
  std::string_view body = req.body;
  std::string inflated;
  std::string coding = Lower(Trim(req.Header("Content-Encoding").value_or("")));
  if (coding == "gzip") {
    auto r = ingest::otlp::Gunzip(body, ingest::otlp::kMaxBodyBytes);
    if (!r.ok()) {
      bool big = r.status().code() == StatusCode::kResourceExhausted;
      return Failure(*enc, big ? 413 : 400, big ? kResourceExhausted : kInvalidArgument,
                     r.status().message());
    }
    inflated = std::move(r).value();
    body = inflated;
  } else if (!coding.empty() && coding != "identity") {
    return Failure(*enc, 415, kUnimplemented,
                   "unsupported Content-Encoding '" + coding + "': send gzip or no encoding");
  }
  ingest::otlp::DecodeOptions options;
  options.node = deps.node;
  options.now_ms = deps.env->NowMillis();
  auto decoded = ingest::otlp::DecodeMetrics(body, *enc, options);
  if (!decoded.ok()) return Failure(*enc, 400, kInvalidArgument, decoded.status().message());
  if (!decoded->batch.series.empty()) {
    Status st = deps.ingester->AppendMetrics(&decoded->batch);
    if (!st.ok()) {
      bool bad = st.code() == StatusCode::kInvalidArgument;
      return Failure(*enc, bad ? 400 : 503, bad ? kInvalidArgument : kUnavailable,
                     "cannot store the metrics: " + st.ToString());
    }
  }
  return Reply(
      *enc, 200,
      ingest::otlp::EncodeResponse(*enc, decoded->rejected_points, decoded->rejected_reason));
}

}  // namespace

void AddOtlpRoutes(net::Router* router, OtlpRouteDeps deps) {
  net::RouteOptions options;
  options.max_body_bytes = ingest::otlp::kMaxBodyBytes;
  router->Handle(
      "POST", "/v1/metrics", [deps](const net::HttpRequest& req) { return Export(deps, req); },
      options);
}

}  // namespace vigil::api
