#include "ship/http_transport.h"

namespace vigil::ship {

HttpTransport::HttpTransport(std::string server_url, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  while (!server_url.empty() && server_url.back() == '/') server_url.pop_back();
  ingest_url_ = server_url + "/api/v1/ingest";
}

Status HttpTransport::Send(std::string_view frame) {
  net::HttpClientRequest request;
  request.method = "POST";
  request.url = ingest_url_;
  request.body = std::string(frame);
  request.timeout = timeout_;
  request.headers.Add("Content-Type", "application/x-vigil-wire");
  Result<net::HttpResponse> r = [&] {
    std::lock_guard lock(mu_);
    return connection_.Fetch(request);
  }();
  if (!r.ok())
    return Unavailable("cannot reach the server at " + ingest_url_ + ": " + r.status().message());
  if (r->status >= 200 && r->status < 300) return Status::Ok();
  std::string msg = "server answered " + std::to_string(r->status) + " to " + ingest_url_ + ": " +
                    r->body.substr(0, 512);
  if (r->status >= 400 && r->status < 500 && r->status != 408 && r->status != 429) {
    return InvalidArgument(msg);
  }
  return Unavailable(msg);
}

}  // namespace vigil::ship
