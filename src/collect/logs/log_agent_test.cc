#include "collect/logs/log_agent.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/temp_dir.h"
#include "wire/frame.h"
#include "wire/log_batch.h"

namespace vigil::collect::logs {
namespace {

// Decodes frames and keeps records the way the server does: per source id,
// records that begin before the committed end offset are duplicates.
class DedupReceiver {
 public:
  Status Receive(std::string_view frame) {
    auto f = wire::DecodeFrame(frame);
    if (!f.ok()) return f.status();
    EXPECT_EQ(f->kind, wire::FrameKind::kLogs);
    auto b = wire::DecodeLogBatch(f->payload);
    if (!b.ok()) return b.status();
    EXPECT_EQ(b->source, "node-a");
    ++batches;
    for (const auto& s : b->streams) {
      bool known = committed_.count(s.source_id) > 0;
      uint64_t& committed = committed_[s.source_id];
      for (const auto& r : s.records) {
        if (r.offset < committed) {
          ++duplicates;
          continue;
        }
        records.push_back(r);
        labels.push_back(s.labels);
      }
      // As the store does: a stream that ends at or before the committed
      // offset was stored before, and its counters count no more.
      if (!known || s.end_offset > committed) {
        counters.sampled_lines += s.counters.sampled_lines;
        counters.truncated_lines += s.counters.truncated_lines;
        counters.lost_bytes += s.counters.lost_bytes;
        if (s.counters.lost_bytes > 0) loss_streams.push_back(s);
      }
      committed = std::max(committed, s.end_offset);
    }
    return Status::Ok();
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const auto& r : records) out.push_back(r.line);
    return out;
  }

  std::vector<wire::LogRecord> records;
  std::vector<wire::Labels> labels;
  wire::LogSourceCounters counters;
  std::vector<wire::LogStream> loss_streams;  // those whose lost bytes counted
  int batches = 0;
  int duplicates = 0;

 private:
  std::map<std::string, uint64_t> committed_;
};

class LogAgentTest : public ::testing::Test {
 protected:
  std::unique_ptr<LogAgent> NewAgent(discover::LogFormat format = discover::LogFormat::kPlain,
                                     const std::function<void(LogAgentOptions*)>& tweak = nullptr) {
    LogAgentOptions o;
    o.node = "node-a";
    o.state_dir = dir_.path() + "/state";
    o.discovery_interval_ms = 0;
    std::string path = log_;
    o.discover_override = [path, format] {
      discover::LogSource s;
      s.path = path;
      s.format = format;
      s.labels = {{"job", "train"}, {"source", path}};
      return std::vector<discover::LogSource>{s};
    };
    if (tweak) tweak(&o);
    return std::make_unique<LogAgent>(
        o, FrameSender(
               [this](std::string_view frame) {
                 if (flaky_ && (ack_lost_ = !ack_lost_)) {
                   (void)server_.Receive(frame);  // every frame stored, then resent once
                   return Unavailable("acknowledgement lost");
                 }
                 if (fail_next_ > 0) {
                   --fail_next_;
                   if (store_then_fail_)
                     (void)server_.Receive(frame);  // stored, but the ack is lost
                   return Unavailable("server away");
                 }
                 return server_.Receive(frame);
               },
               /*compress=*/false));
  }
  void Write(const std::string& text) {
    std::ofstream f(log_, std::ios::app | std::ios::binary);
    f << text;
  }

  TempDir dir_;
  std::string log_ = dir_.path() + "/train.log";
  DedupReceiver server_;
  int fail_next_ = 0;
  bool store_then_fail_ = false;
  bool flaky_ = false;
  bool ack_lost_ = false;
};

TEST_F(LogAgentTest, ShipsLinesWithOffsetsLabelsAndLevels) {
  // An error line may be followed by indented detail lines, so it is held
  // until a line that does not continue it arrives (or a timeout).
  Write("step 1 loss=2.5\nWARNING:root:lr is high\nE1129 10:00:00.1 1 x.cc:1] bad\n");
  auto agent = NewAgent();
  auto n = agent->RunOnce();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 2u);
  Write("step 2\n");
  ASSERT_TRUE(agent->RunOnce().ok());
  ASSERT_EQ(server_.records.size(), 4u);
  EXPECT_EQ(server_.records[3].line, "step 2");
  EXPECT_EQ(server_.records[0].offset, 0u);
  EXPECT_EQ(server_.records[1].offset, 16u);
  EXPECT_EQ(server_.records[1].level, wire::LogLevel::kWarn);
  EXPECT_EQ(server_.records[2].level, wire::LogLevel::kError);
  EXPECT_EQ(wire::LabelsToString(server_.labels[0]), "{job=\"train\",source=\"" + log_ + "\"}");
  EXPECT_EQ(agent->Stats().lines_read, 4u);
}

// Each job run's lines carry its id: the agent asks whose run the writer is
// in, has the tracker look again once when it does not know (a job's file is
// often found before its job), and follows a file whose run stays unknown
// without the label.
TEST_F(LogAgentTest, LinesCarryTheirWritersRun) {
  std::string other = dir_.path() + "/daemon.log";
  Write("step 1 loss=2.5\n");
  { std::ofstream(other) << "started\n"; }
  LogAgentOptions o;
  o.node = "node-a";
  o.state_dir = dir_.path() + "/state";
  o.discovery_interval_ms = 0;
  std::string path = log_;
  o.discover_override = [path, other] {
    discover::LogSource train, daemon;
    train.path = path;
    train.labels = {{"job", "train"}, {"source", path}};
    train.writer_pid = 4242;
    daemon.path = other;
    daemon.labels = {{"job", "daemon"}, {"source", other}};
    daemon.writer_pid = 77;
    return std::vector<discover::LogSource>{train, daemon};
  };
  bool tracker_looked = false;
  int refreshes = 0;
  o.run_of = [&tracker_looked](const discover::LogSource& s) -> std::string {
    return s.writer_pid == 4242 && tracker_looked ? "4242-851740-90b22de2" : "";
  };
  o.refresh_runs = [&] {
    ++refreshes;
    tracker_looked = true;
  };
  LogAgent agent(o, FrameSender([this](std::string_view f) { return server_.Receive(f); },
                                /*compress=*/false));
  ASSERT_TRUE(agent.RunOnce().ok());
  ASSERT_TRUE(agent.RunOnce().ok());
  EXPECT_EQ(refreshes, 1);  // once, for the pass that found them; never for followed files
  ASSERT_EQ(server_.records.size(), 2u) << testing::PrintToString(server_.Lines());
  std::map<std::string, std::string> by_line;
  for (size_t i = 0; i < server_.records.size(); ++i) {
    by_line[server_.records[i].line] = wire::LabelsToString(server_.labels[i]);
  }
  EXPECT_EQ(by_line["step 1 loss=2.5"],
            "{job=\"train\",run=\"4242-851740-90b22de2\",source=\"" + log_ + "\"}");
  EXPECT_EQ(by_line["started"], "{job=\"daemon\",source=\"" + other + "\"}");
}

TEST_F(LogAgentTest, JoinsATracebackIntoOneErrorRecord) {
  Write(
      "epoch 1\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
      "    main()\nRuntimeError: CUDA error: out of memory\nnext line\n");
  auto agent = NewAgent();
  ASSERT_TRUE(agent->RunOnce().ok());
  // The traceback's end is only known when a line that does not continue it
  // arrives; "next line" does, so three records.
  ASSERT_EQ(server_.Lines().size(), 3u) << testing::PrintToString(server_.Lines());
  EXPECT_EQ(server_.records[1].line.substr(0, 34), "Traceback (most recent call last):");
  EXPECT_NE(server_.records[1].line.find("RuntimeError: CUDA error"), std::string::npos);
  EXPECT_EQ(server_.records[1].level, wire::LogLevel::kError);
}

TEST_F(LogAgentTest, RestartFromCheckpointSendsNothingTwice) {
  Write("a\nb\n");
  ASSERT_TRUE(NewAgent()->RunOnce().ok());
  Write("c\n");
  ASSERT_TRUE(NewAgent()->RunOnce().ok());
  EXPECT_EQ(server_.Lines(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(server_.duplicates, 0);
}

TEST_F(LogAgentTest, ServerAwayKeepsTheBatchAndRetriesIt) {
  Write("one\ntwo\n");
  auto agent = NewAgent();
  fail_next_ = 2;
  EXPECT_FALSE(agent->RunOnce().ok());
  EXPECT_FALSE(agent->RunOnce().ok());
  EXPECT_TRUE(server_.records.empty());
  Write("three\n");
  ASSERT_TRUE(agent->RunOnce().ok());
  EXPECT_EQ(server_.Lines(), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(agent->Stats().send_failures, 2u);
}

TEST_F(LogAgentTest, LostAcknowledgementThenCrashIsDeduplicatedByOffsets) {
  Write("one\ntwo\n");
  {
    auto agent = NewAgent();
    fail_next_ = 1;
    store_then_fail_ = true;  // the server stored it; the agent never heard
    EXPECT_FALSE(agent->RunOnce().ok());
  }  // the agent dies without a checkpoint past "two"
  Write("three\n");
  ASSERT_TRUE(NewAgent()->RunOnce().ok());
  EXPECT_EQ(server_.Lines(), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(server_.duplicates, 2);
}

// A truncation while the agent had read only part of what the tailer saw
// (the server was away): the bytes no copy holds reach the server as
// lost_bytes, on the file's labels, once, although every batch after the
// truncation is delivered twice (stored, then the acknowledgement lost).
TEST_F(LogAgentTest, BytesLostInATruncationReachTheServerOnce) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(100 + i) + "\n";  // 9 bytes
  Write(text);
  auto agent = NewAgent(discover::LogFormat::kPlain, [](LogAgentOptions* o) {
    o->read_chunk_bytes = 200;  // the tailer sees all 900 bytes, reads 200
    o->batch_max_bytes = 64;    // and the batch is full after that one read
    o->tailer.rotate_wait_ms = 0;
  });
  fail_next_ = 1;  // the server is away: the agent reads nothing more
  EXPECT_FALSE(agent->RunOnce().ok());
  ASSERT_EQ(::truncate(log_.c_str(), 0), 0);  // no copy: 700 bytes never read
  Write("after 1\nafter 2\n");
  flaky_ = true;
  for (int i = 0; i < 20; ++i) (void)agent->RunOnce();
  std::vector<std::string> want;
  for (int i = 0; i < 22; ++i) want.push_back("line " + std::to_string(100 + i));
  want.insert(want.end(), {"li", "after 1", "after 2"});  // "li": the line the truncation cut
  EXPECT_EQ(server_.Lines(), want);
  EXPECT_EQ(server_.duplicates, static_cast<int>(want.size()));  // each batch came twice

  EXPECT_EQ(server_.counters.lost_bytes, 900u - 200u);
  ASSERT_EQ(server_.loss_streams.size(), 1u);
  const wire::LogStream& loss = server_.loss_streams[0];
  EXPECT_TRUE(loss.source_id.ends_with("#lost")) << loss.source_id;
  EXPECT_TRUE(loss.records.empty());
  EXPECT_EQ(loss.start_offset, 200u);
  EXPECT_EQ(loss.end_offset, 900u);
  EXPECT_EQ(wire::LabelsToString(loss.labels), "{job=\"train\",source=\"" + log_ + "\"}");
  EXPECT_EQ(agent->Stats().lost_sources, 1u);
}

TEST_F(LogAgentTest, DockerStreamsGetTheirOwnIdsAndLabels) {
  Write(R"({"log":"out 1\n","stream":"stdout","time":"2024-01-02T03:04:05.5Z"})"
        "\n"
        R"({"log":"err 1\n","stream":"stderr","time":"2024-01-02T03:04:06Z"})"
        "\n"
        R"({"log":"out 2\n","stream":"stdout","time":"2024-01-02T03:04:07Z"})"
        "\n");
  auto agent = NewAgent(discover::LogFormat::kDockerJson);
  ASSERT_TRUE(agent->RunOnce().ok());
  ASSERT_EQ(server_.records.size(), 3u);
  std::map<std::string, std::vector<std::string>> by_stream;
  for (size_t i = 0; i < server_.records.size(); ++i) {
    std::string stream;
    for (const auto& l : server_.labels[i]) {
      if (l.name == "stream") stream = l.value;
    }
    by_stream[stream].push_back(server_.records[i].line);
  }
  EXPECT_EQ(by_stream["stdout"], (std::vector<std::string>{"out 1", "out 2"}));
  EXPECT_EQ(by_stream["stderr"], (std::vector<std::string>{"err 1"}));
  EXPECT_EQ(server_.records[0].time_ns, 1704164645500000000);
}

TEST_F(LogAgentTest, APartialLineIsHeldThenCompleted) {
  Write("whole\nhal");
  auto agent = NewAgent();
  ASSERT_TRUE(agent->RunOnce().ok());
  EXPECT_EQ(server_.Lines(), (std::vector<std::string>{"whole"}));
  Write("f done\n");
  ASSERT_TRUE(agent->RunOnce().ok());
  EXPECT_EQ(server_.Lines(), (std::vector<std::string>{"whole", "half done"}));
}

// The agent's own thread: lines written while it runs arrive; while the
// server refuses, it retries the same frame (backoff) and loses nothing; Stop
// returns promptly even mid-backoff.
TEST_F(LogAgentTest, BackgroundThreadRetriesAndStopsCleanly) {
  std::mutex mu;
  int refusals = 3;
  LogAgentOptions o;
  o.node = "node-a";
  o.state_dir = dir_.path() + "/state";
  o.discovery_interval_ms = 50;
  o.backoff.initial_ms = 10;
  std::string path = log_;
  o.discover_override = [path] {
    discover::LogSource s;
    s.path = path;
    s.labels = {{"job", "train"}};
    return std::vector<discover::LogSource>{s};
  };
  LogAgent agent(o, FrameSender(
                        [&](std::string_view frame) {
                          std::lock_guard<std::mutex> lock(mu);
                          if (refusals > 0) {
                            --refusals;
                            return Unavailable("server away");
                          }
                          return server_.Receive(frame);
                        },
                        /*compress=*/false));
  Write("a\nb\n");
  ASSERT_TRUE(agent.Start().ok());
  for (int i = 0; i < 100; ++i) Write("line " + std::to_string(i) + "\n");
  auto received = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return server_.records.size();
  };
  for (int i = 0; i < 500 && received() < 102; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(received(), 102u);
  agent.Stop();
  LogAgentStats st = agent.Stats();
  EXPECT_EQ(st.send_failures, 3u);
  EXPECT_EQ(st.records_sent, 102u);
  EXPECT_TRUE(st.server_reachable);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(server_.records.front().line, "a");
  EXPECT_EQ(server_.records.back().line, "line 99");
  EXPECT_EQ(server_.duplicates, 0);
}

}  // namespace
}  // namespace vigil::collect::logs
