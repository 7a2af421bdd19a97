// Prometheus' own client against Vigil: `promtool query instant|range|series|
// labels` talks to an net::HttpServer serving AddQueryRoutes over a Db with known
// data. Skipped when promtool (Debian `prometheus`) is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "api/query_routes.h"
#include "core/temp_dir.h"

namespace vigil::api {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

std::string Shell(const std::string& cmd, int* rc) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p != nullptr && (n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  *rc = p != nullptr ? ::pclose(p) : -1;
  return out;
}

class PromtoolQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* pt = std::getenv("VIGIL_PROMTOOL");
    if (pt == nullptr || ::access(pt, X_OK) != 0)
      GTEST_SKIP() << "promtool not found (Debian `prometheus`)";
    promtool_ = pt;
    tsdb::Options o;
    o.dir = dir_;
    o.retention_ms = 100LL * 365 * 86'400'000;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    wire::MetricBatch b;
    for (int gpu = 0; gpu < 2; ++gpu) {
      wire::Series s{{{"__name__", "gpu_util"}, {"gpu", std::to_string(gpu)}, {"host", "h1"}}, {}};
      for (int i = 0; i <= 20; ++i) s.samples.push_back({kT0 + i * 15'000, 10.0 * gpu + i});
      b.series.push_back(s);
    }
    ASSERT_TRUE(db_->Append(b).ok());
    net::Router router;
    AddQueryRoutes(&router, db_.get());
    net::HttpServer::Options so;
    so.listen = "127.0.0.1:0";
    server_ = std::make_unique<net::HttpServer>(so, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    url_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (db_) (void)db_->Close();
  }

  TempDir tmp_;  // outlives db_ (declared first)
  std::string dir_ = tmp_.path();
  std::string promtool_, url_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<net::HttpServer> server_;
};

TEST_F(PromtoolQueryTest, Instant) {
  int rc = 0;
  std::string out =
      Shell(promtool_ + " query instant --time=1700000150 " + url_ + " 'gpu_util > 15'", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("gpu_util{gpu=\"1\", host=\"h1\"} => 20 @[1700000150]"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("gpu=\"0\""), std::string::npos) << out;
}

TEST_F(PromtoolQueryTest, Range) {
  int rc = 0;
  std::string out =
      Shell(promtool_ + " query range --start=1700000000 --end=1700000120 --step=60s " + url_ +
                " 'sum by (host) (gpu_util)'",
            &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("{host=\"h1\"} =>"), std::string::npos) << out;
  EXPECT_NE(out.find("10 @[1700000000]"), std::string::npos) << out;
  EXPECT_NE(out.find("26 @[1700000120]"), std::string::npos) << out;
}

TEST_F(PromtoolQueryTest, SeriesAndLabels) {
  int rc = 0;
  std::string out = Shell(
      promtool_ +
          " query series --start=1700000000 --end=1700000300 --match='gpu_util{gpu=\"0\"}' " + url_,
      &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("{__name__=\"gpu_util\", gpu=\"0\", host=\"h1\"}"), std::string::npos) << out;
  out =
      Shell(promtool_ + " query labels --start=1700000000 --end=1700000300 " + url_ + " gpu", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "0\n1\n");
}

TEST_F(PromtoolQueryTest, BadQueryIsAnError) {
  int rc = 0;
  std::string out = Shell(promtool_ + " query instant " + url_ + " 'sum(('", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("bad_data"), std::string::npos) << out;
}

}  // namespace
}  // namespace vigil::api
