#include "api/log_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "net/http_client.h"

namespace vigil::api {
namespace {

using nlohmann::json;

constexpr int64_t kSec = 1'000'000'000;

class LogRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logstore::Options o;
    o.dir = tmp_.path();
    o.background_maintenance = false;
    o.retention_days = 0;  // the lines are from 2023
    auto store = logstore::LogStore::Open(o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    net::Router router;
    AddLogRoutes(&router, store_.get());
    net::HttpServer::Options ho;
    ho.listen = "127.0.0.1:0";
    server_ = std::make_unique<net::HttpServer>(ho, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    base_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  void TearDown() override {
    server_->Stop();
    ASSERT_TRUE(store_->Close().ok());
  }

  // Lines "line 0".."line n-1" one second apart from t0, in job `job`.
  void Append(const std::string& job, int n, int64_t t0, uint64_t first_offset = 0,
              const std::string& text_prefix = "line ") {
    wire::LogBatch b;
    b.source = "node-a";
    wire::LogStream s;
    s.source_id = "file:1:" + job;
    s.labels = {{"job", job}, {"node", "node-a"}, {"source", "/runs/" + job + ".log"}};
    s.start_offset = first_offset;
    uint64_t off = first_offset;
    for (int i = 0; i < n; ++i) {
      wire::LogRecord r;
      r.time_ns = t0 + i * kSec;
      r.offset = off;
      r.level = i % 10 == 9 ? wire::LogLevel::kError : wire::LogLevel::kInfo;
      r.line = text_prefix + std::to_string(i);
      off += r.line.size() + 1;
      s.records.push_back(r);
    }
    s.end_offset = off;
    b.streams.push_back(s);
    ASSERT_TRUE(store_->Append("node-a", b).ok());
  }

  json Get(const std::string& path_and_query, int want_status = 200) {
    auto r = net::HttpGet(base_ + path_and_query, std::chrono::seconds(10));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return json();
    EXPECT_EQ(r->status, want_status) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  TempDir tmp_;
  std::unique_ptr<logstore::LogStore> store_;
  std::unique_ptr<net::HttpServer> server_;
  std::string base_;
  int64_t t0_ = 1'700'000'000 * kSec;
};

std::string Range(int64_t start_ns, int64_t end_ns) {
  return "&start=" + std::to_string(start_ns) + "&end=" + std::to_string(end_ns);
}

TEST_F(LogRoutesTest, QueryFiltersAndOrders) {
  Append("train", 30, t0_);
  Append("eval", 5, t0_);
  json j = Get("/api/v1/logs/query?query=%7Bjob%3D%22train%22%7D%20%7C%3D%20%22line%202%22" +
               Range(t0_, t0_ + 100 * kSec));
  ASSERT_EQ(j["status"], "success");
  const json& entries = j["data"]["entries"];
  // "line 2", "line 20".."line 29": 11 lines, newest first.
  ASSERT_EQ(entries.size(), 11u);
  EXPECT_EQ(entries[0]["text"], "line 29");
  EXPECT_EQ(entries[0]["level"], "error");
  EXPECT_EQ(entries[10]["text"], "line 2");
  EXPECT_EQ(entries[10]["ts"], std::to_string(t0_ + 2 * kSec));
  std::string stream = entries[0]["stream"];
  EXPECT_EQ(j["data"]["streams"][stream]["job"], "train");
  EXPECT_EQ(j["data"]["truncated"], false);

  json fwd = Get("/api/v1/logs/query?query=%7Bjob%3D%22train%22%7D&direction=forward&limit=3" +
                 Range(t0_, t0_ + 100 * kSec));
  ASSERT_EQ(fwd["data"]["entries"].size(), 3u);
  EXPECT_EQ(fwd["data"]["entries"][0]["text"], "line 0");
  EXPECT_EQ(fwd["data"]["truncated"], true);

  json errors =
      Get("/api/v1/logs/query?query=%7Blevel%3D%22error%22%7D" + Range(t0_, t0_ + 100 * kSec));
  EXPECT_EQ(errors["data"]["entries"].size(), 3u);  // lines 9, 19, 29 of train
}

TEST_F(LogRoutesTest, BadInputGetsPrometheusStyleErrors) {
  json j = Get("/api/v1/logs/query?query=%7Bjob%3D", 400);
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["errorType"], "bad_data");
  EXPECT_NE(j["error"].get<std::string>().find("parse error"), std::string::npos);
  EXPECT_EQ(Get("/api/v1/logs/query", 400)["errorType"], "bad_data");
  EXPECT_EQ(Get("/api/v1/logs/query?query=%7B%7D&direction=sideways", 400)["errorType"],
            "bad_data");
  EXPECT_EQ(Get("/api/v1/logs/query?query=%7B%7D&start=yesterday", 400)["errorType"], "bad_data");
  EXPECT_EQ(Get("/api/v1/logs/context?stream=1", 400)["errorType"], "bad_data");
}

TEST_F(LogRoutesTest, ContextAroundALine) {
  Append("train", 30, t0_);
  json j = Get("/api/v1/logs/query?query=%7B%7D%20%7C%3D%20%22line%2015%22" +
               Range(t0_, t0_ + 100 * kSec));
  ASSERT_EQ(j["data"]["entries"].size(), 1u);
  const json& e = j["data"]["entries"][0];
  json ctx = Get("/api/v1/logs/context?stream=" + e["stream"].get<std::string>() +
                 "&line=" + std::to_string(e["line"].get<int>()) + "&before=2&after=3");
  const json& lines = ctx["data"]["entries"];
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0]["text"], "line 13");
  EXPECT_EQ(lines[2]["text"], "line 15");
  EXPECT_EQ(lines[5]["text"], "line 18");
}

TEST_F(LogRoutesTest, TailIsServerSentEventsAfterACursor) {
  Append("train", 3, t0_);
  auto first = net::HttpGet(base_ + "/api/v1/logs/tail?query=%7B%7D", std::chrono::seconds(5));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->content_type.substr(0, 17), "text/event-stream");
  size_t id = first->body.find("id: ");
  ASSERT_NE(id, std::string::npos) << first->body;
  std::string cursor = first->body.substr(id + 4, first->body.find('\n', id) - id - 4);
  EXPECT_NE(first->body.find("retry: "), std::string::npos);
  EXPECT_EQ(first->body.find("event: entry"), std::string::npos);

  Append("train", 5, t0_ + 10 * kSec, 1000, "new ");
  net::HttpClientRequest req;
  req.url = base_ + "/api/v1/logs/tail?query=%7B%7D%20%7C%3D%20%22new%22";
  req.headers.Add("Last-Event-ID", cursor);
  auto next = net::HttpFetch(req);
  ASSERT_TRUE(next.ok());
  size_t events = 0, pos = 0;
  while ((pos = next->body.find("event: entry", pos)) != std::string::npos) ++events, ++pos;
  EXPECT_EQ(events, 5u) << next->body;
  EXPECT_NE(next->body.find("\"text\":\"new 4\""), std::string::npos);
  EXPECT_EQ(next->body.find("\"text\":\"line 0\""), std::string::npos);
}

TEST_F(LogRoutesTest, HistogramLabelsAndSources) {
  Append("train", 120, t0_);
  // Unix seconds and RFC 3339 name the same range as nanoseconds.
  json secs = Get("/api/v1/logs/histogram?query=%7B%7D&step=60s&start=1700000000&end=1700000120");
  EXPECT_EQ(secs["data"]["start"], std::to_string(t0_));
  EXPECT_EQ(secs["data"]["buckets"].size(), 2u);
  json rfc =
      Get("/api/v1/logs/histogram?query=%7B%7D&step=60s&start=2023-11-14T22:13:20Z&end=1700000120");
  EXPECT_EQ(rfc["data"]["start"], std::to_string(t0_));
  json h = Get("/api/v1/logs/histogram?query=%7B%7D&step=60s" + Range(t0_, t0_ + 120 * kSec));
  ASSERT_EQ(h["status"], "success");
  const json& buckets = h["data"]["buckets"];
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0][3].get<int>() + buckets[1][3].get<int>(), 108);  // info
  EXPECT_EQ(buckets[0][5].get<int>() + buckets[1][5].get<int>(), 12);   // error
  EXPECT_EQ(h["data"]["levels"][5], "error");

  json names = Get("/api/v1/logs/labels?start=0");
  std::vector<std::string> n = names["data"];
  EXPECT_NE(std::find(n.begin(), n.end(), "job"), n.end());
  EXPECT_NE(std::find(n.begin(), n.end(), "level"), n.end());
  json values = Get("/api/v1/logs/label/job/values?start=0");
  EXPECT_EQ(values["data"], json::array({"train"}));

  json sources = Get("/api/v1/logs/sources");
  ASSERT_EQ(sources["data"].size(), 1u);
  EXPECT_EQ(sources["data"][0]["lines"], 120);
  EXPECT_EQ(sources["data"][0]["labels"]["job"], "train");
  EXPECT_EQ(sources["data"][0]["lost_bytes"], 0);
}

TEST_F(LogRoutesTest, SourcesCountBytesLostUnread) {
  Append("train", 3, t0_);
  // What the agent sends for a truncation no copy holds: the file's labels,
  // no records, the lost range.
  wire::LogBatch b;
  b.source = "node-a";
  wire::LogStream lost;
  lost.source_id = "file:1:train#lost";
  lost.labels = {{"job", "train"}, {"node", "node-a"}, {"source", "/runs/train.log"}};
  lost.start_offset = 24;
  lost.end_offset = 24 + 700;
  lost.counters.lost_bytes = 700;
  b.streams.push_back(lost);
  ASSERT_TRUE(store_->Append("node-a", b).ok());
  json sources = Get("/api/v1/logs/sources");
  ASSERT_EQ(sources["data"].size(), 1u) << sources.dump();
  EXPECT_EQ(sources["data"][0]["lines"], 3);
  EXPECT_EQ(sources["data"][0]["lost_bytes"], 700);
  EXPECT_EQ(sources["data"][0]["truncated_lines"], 0);
}

TEST_F(LogRoutesTest, HostileTextStaysInertJson) {
  Append("web", 1, t0_, 0, "<script>alert(1)</script>\"");
  auto r = net::HttpGet(base_ + "/api/v1/logs/query?query=%7B%7D" + Range(t0_, t0_ + kSec),
                        std::chrono::seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body.find("<script>"), std::string::npos) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["data"]["entries"][0]["text"], "<script>alert(1)</script>\"0");
}

}  // namespace
}  // namespace vigil::api
